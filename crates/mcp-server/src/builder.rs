//! [`ServerBuilder`]: registering tools, resources, prompts and settings.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use mcp_core::DispatcherConfig;
use mcp_types::CacheScope;
use mcp_types::{Implementation, Prompt, Resource, ResourceTemplate, Tool};

use crate::Error;
use crate::catalog::Catalog;
use crate::handler::{Completions, Handler, Prompts, Resources, Tools, signature_of};
use crate::registration::{Registrations, ToolDefinition, completion_fn};
use crate::request_state::StateSealer;
use crate::session::ServerSession;
use crate::tool_io::IntoToolResult;

use crate::answer::*;
use crate::changes::ListChanges;
use crate::registry::*;
use crate::server::Server;

/// Builds a [`Server`]: register tools, resources, prompts and completions,
/// then [`build`](ServerBuilder::build).
///
/// Handlers are plain async functions taking [extractors](crate::handler).
///
/// # Examples
/// ```
/// use mcp_server::{Args, Json, Server, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { sum: i64 }
///
/// async fn add(Args(add): Args<Add>) -> Result<Json<Sum>, ToolError> {
///     let sum = add.a.checked_add(add.b).ok_or_else(|| ToolError::new("overflow"))?;
///     Ok(Json(Sum { sum }))
/// }
///
/// let server = Server::builder("calculator", "1.0.0")
///     .tool("add", "Adds two integers", add)
///     .build()
///     .expect("valid registrations");
/// assert_eq!(server.tools().len(), 1);
/// ```
pub struct ServerBuilder {
    registry: Registry,
    /// The tools, resources and templates registered so far (the server's
    /// own and its extensions'), indexed into `registry` by `build()`, with
    /// the states their handlers take and the registrations refused.
    items: Registrations,
    /// Whether [`list_cache`](Self::list_cache) set the list cache hints
    /// (else [`dynamic`](Self::dynamic) makes them 0 ms).
    list_cache_set: bool,
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// Starts building a server with a full implementation description.
    pub fn builder_with_info(info: Implementation) -> ServerBuilder {
        ServerBuilder::new(info)
    }
}

impl ServerBuilder {
    fn new(info: Implementation) -> Self {
        let changes = ListChanges::new();
        Self {
            registry: Registry {
                info,
                identity_json: std::sync::OnceLock::new(),
                instructions: None,
                catalog: Catalog::empty(changes.clone()),
                dynamic: false,
                on_subscribe: None,
                on_unsubscribe: None,
                completion: None,
                roots_list_changed: None,
                page_size: DEFAULT_PAGE_SIZE,
                max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
                sealer: StateSealer::random(),
                changes,
                list_cache: (60_000, CacheScope::Public),
                read_cache: (0, CacheScope::Private),
                list_changed: false,
                dispatcher: DispatcherConfig::default(),
                state: None,
                recorded: Recorded::default(),
                tasks: None,
                extensions: Vec::new(),
                extension_requests: HashMap::new(),
                extension_notifications: HashMap::new(),
            },
            items: Registrations::default(),
            list_cache_set: false,
        }
    }

    /// Instructions for the model on how to use this server, sent at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.registry.instructions = Some(instructions.into());
        self
    }

    /// The number of items per page of `tools/list`, `resources/list`,
    /// `resources/templates/list` and `prompts/list` (at least 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.registry.page_size = page_size.max(1);
        self
    }

    /// The number of resources one client may follow at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS`](crate::DEFAULT_MAX_SUBSCRIPTIONS)): a
    /// handshake-era `resources/subscribe` beyond it is refused (`-32602`),
    /// as is a `subscriptions/listen` naming more `resourceSubscriptions`.
    /// Each subscription is kept for the session, and told to
    /// [`on_subscribe`](Self::on_subscribe) (a gateway subscribes
    /// upstream), so a client cannot grow either without end.
    pub fn max_subscriptions(mut self, max: usize) -> Self {
        self.registry.max_subscriptions = max;
        self
    }

    /// Declares `listChanged` for tools, resources and prompts: this server
    /// will send the `*/list_changed` notifications (announced with
    /// [`Server::list_changes`](crate::Server::list_changes)) to handshake-era
    /// sessions. Off by default: such sessions then get none.
    pub fn list_changed(mut self, enabled: bool) -> Self {
        self.registry.list_changed = enabled;
        self
    }

    /// The secret that seals `requestState` (2026-07-28 input-required
    /// results) with AES-256-GCM under a key derived from it with HKDF: at
    /// least 32 random bytes. Give every instance behind a load balancer the
    /// same secret; without one, a random key makes state usable with this
    /// process only (logged at `warn` the first time a state is sealed
    /// over HTTP, where replicas may exist; a stdio server is one process
    /// with one client, and is not warned).
    pub fn request_state_key(self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_keys(key, std::iter::empty::<Vec<u8>>())
    }

    /// Like [`request_state_key`](Self::request_state_key), with earlier
    /// secrets that still open state (never seal): to rotate across
    /// replicas, deploy the new secret in `previous` first, then as
    /// `current` with the old one in `previous`, then drop the old one once
    /// the [TTL](Self::request_state_ttl) has passed.
    pub fn request_state_keys<K: Into<Vec<u8>>>(
        mut self,
        current: impl Into<Vec<u8>>,
        previous: impl IntoIterator<Item = K>,
    ) -> Self {
        let current = current.into();
        let previous: Vec<Vec<u8>> = previous.into_iter().map(Into::into).collect();
        let previous: Vec<&[u8]> = previous.iter().map(Vec::as_slice).collect();
        let ttl = self.registry.sealer.ttl();
        self.registry.sealer = StateSealer::new(&current, &previous).with_ttl(ttl);
        self
    }

    /// How long a sealed `requestState` is accepted after it was issued
    /// (the client's retry must come within it); 10 minutes by default.
    /// A state past it is refused with `-32602`, and the client starts over.
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.registry.sealer = self.registry.sealer.clone().with_ttl(ttl);
        self
    }

    /// The cache hints (2026-07-28 `ttlMs`, `cacheScope`) of `tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list` and
    /// `server/discover`; 60 s, public by default (0 ms with
    /// [`dynamic`](Self::dynamic)). A client that listens for list changes
    /// drops what it cached when told of one; one that does not reuses a
    /// list for this long, so keep it short on a server whose
    /// [`Catalog`](crate::Catalog) changes.
    pub fn list_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.registry.list_cache = (duration_ms(ttl), scope);
        self.list_cache_set = true;
        self
    }

    /// The cache hints of `resources/read`; 0 ms, private by default.
    pub fn read_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.registry.read_cache = (duration_ms(ttl), scope);
        self
    }

    /// Shares `state` with every handler, which takes it with the
    /// [`State<S>`](crate::State) extractor (or reads it with
    /// [`Context::state`](crate::Context::state)): one value per type,
    /// a later call with a value of the same type replacing the earlier.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use mcp_server::{Server, State};
    ///
    /// struct Counter(AtomicU64);
    ///
    /// async fn next(State(counter): State<Counter>) -> String {
    ///     counter.0.fetch_add(1, Ordering::Relaxed).to_string()
    /// }
    ///
    /// let server = Server::builder("counter", "1.0.0")
    ///     .with_state(Counter(AtomicU64::new(0)))
    ///     .tool("next", "Counts calls", next)
    ///     .build();
    /// assert!(server.is_ok());
    /// ```
    pub fn with_state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        let states = self.registry.state.get_or_insert_with(Default::default);
        Arc::make_mut(states).insert(state);
        self
    }

    /// Records each `tools/call`'s arguments (as JSON) in its span's
    /// `gen_ai.tool.call.arguments`. Off by default: arguments may carry
    /// personal data or secrets; turn it on only where your tracing backend
    /// may keep them.
    pub fn record_tool_arguments(mut self, record: bool) -> Self {
        self.registry.recorded.tool_arguments = record;
        self
    }

    /// Records each `tools/call`'s result (as JSON) in its span's
    /// `gen_ai.tool.call.result`. Off by default, for the same reasons as
    /// [`record_tool_arguments`](Self::record_tool_arguments).
    pub fn record_tool_results(mut self, record: bool) -> Self {
        self.registry.recorded.tool_results = record;
        self
    }

    /// The dispatcher settings of each connection (queues, message limits).
    pub fn dispatcher_config(mut self, config: DispatcherConfig) -> Self {
        self.registry.dispatcher = config;
        self
    }

    /// Runs tools as tasks: a tool whose `execution.taskSupport` is
    /// `optional` or `required` (see [`Tool`]'s `execution`) can be called
    /// as a task, answered at once with a handle while its code runs on.
    ///
    /// Tasks are served in both eras from one engine: as the 2025-11-25
    /// core `tasks` capability, and as the 2026-07-28 tasks extension
    /// (`io.modelcontextprotocol/tasks`, SEP-2663), which this registers,
    /// so it is advertised under `capabilities.extensions` like any
    /// [extension](Self::extension) (the 2026 revision moved tasks into an
    /// extension; the two must share the engine, so they are one call).
    /// Call it once: a second call is refused by `build()`.
    pub fn tasks(mut self, config: crate::tasks::TasksConfig) -> Self {
        if self.registry.tasks.is_some() {
            self.items.errors.push(Error::Registration {
                what: "tasks".into(),
                reason: "`ServerBuilder::tasks` was called twice; configure tasks once".into(),
            });
            return self;
        }
        let engine = Arc::new(crate::tasks::engine(config, self.registry.changes.clone()));
        self.registry.tasks = Some(engine.clone());
        self.extension(crate::tasks::extension(engine))
    }

    /// Registers a tool served by `handler`, a plain async function taking
    /// [extractors](crate::handler). Its input schema comes from the
    /// handler's [`Args<T>`](crate::Args) (a tool without one takes no
    /// arguments: `{"type": "object", "additionalProperties": false}`),
    /// its output schema from the return type when it is
    /// [`Json<T>`](crate::Json).
    ///
    /// Arguments that do not fit answer with an `isError` result naming
    /// the offending argument, which the model can read and correct.
    pub fn tool<H, M>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::described(name, description, handler))
    }

    /// Registers a tool described by `tool` (title, annotations, icons…).
    /// Its input schema is replaced by the handler's, and its output
    /// schema, if it has none, is taken from the return type (see
    /// [`ToolDefinition::new`]).
    pub fn tool_with<H, M>(self, tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::new(tool, handler))
    }

    /// Registers a tool exactly as described by `tool` (its schemas are sent
    /// as given), whose handler reads the arguments with
    /// [`Args<JsonObject>`](crate::Args): for schemas that no Rust type
    /// describes, or tools defined at run time.
    pub fn tool_raw<H, M>(self, tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::raw(tool, handler))
    }

    /// Registers a tool and its handler made beforehand, such as the
    /// `add_tool()` that `#[tool]` generates for `async fn add`.
    pub fn register(mut self, definition: ToolDefinition) -> Self {
        self.items.register(definition);
        self
    }

    /// Registers a resource at a fixed URI, served by `handler` (a plain
    /// async function taking [extractors](crate::handler), such as
    /// [`Uri`](crate::Uri)), which returns anything
    /// [`IntoResourceResult`](crate::IntoResourceResult).
    pub fn resource<H, M>(mut self, resource: Resource, handler: H) -> Self
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        self.items.resource(resource, handler);
        self
    }

    /// Registers an extension (SEP-2133): advertises it under
    /// `capabilities.extensions` and serves its tools, resources, methods
    /// and `tools/call` interceptor; see [`crate::extension`].
    pub fn extension(mut self, extension: crate::extension::Extension) -> Self {
        let crate::extension::Extension { entry, items } = extension;
        let what = format!("extension `{}`", entry.id);
        if self.registry.extensions.iter().any(|e| e.id == entry.id) {
            self.items.errors.extend(items.errors);
            self.items.errors.push(Error::Registration {
                what,
                reason: "an extension with this identifier is already registered".into(),
            });
            return self;
        }
        let index = self.registry.extensions.len();
        for method in entry.requests.keys() {
            let core = mcp_types::MethodInfo::lookup(
                method,
                mcp_types::Revision::LATEST,
                mcp_types::Side::Client,
            )
            .is_some();
            if core || self.registry.extension_requests.contains_key(method) {
                self.items.errors.push(Error::Registration {
                    what: format!("method `{method}` of {what}"),
                    reason: "the core protocol or another extension already defines it; \
                             intercept `tools/call` instead of redefining a core method"
                        .into(),
                });
                continue;
            }
            self.registry
                .extension_requests
                .insert(method.clone(), index);
        }
        for method in entry.notifications.keys() {
            self.registry
                .extension_notifications
                .insert(method.clone(), index);
        }
        self.items.contribute(items, index);
        self.registry.extensions.push(entry);
        self
    }

    /// Registers a resource template: reads of URIs matching its RFC 6570
    /// template reach `handler`, which takes the matched variables with
    /// [`Variables<T>`](crate::Variables) (or the whole
    /// [`ResourceRequest`]).
    pub fn resource_template<H, M>(mut self, template: ResourceTemplate, handler: H) -> Self
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        self.items.resource_template(template, handler);
        self
    }

    /// Registers a prompt served by `handler`, whose arguments come from
    /// the fields of the handler's [`Args<T>`](crate::Args) (prompt
    /// arguments are strings: use `String` and `Option<String>` fields; doc
    /// comments become descriptions); a handler without one takes none. An
    /// argument that does not fit answers `-32602`.
    pub fn prompt<H, M>(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: Handler<Prompts, M>,
        H::Output: IntoPromptResult,
        M: 'static,
    {
        self.items.prompt(name, description, handler);
        self
    }

    /// Registers a prompt described by `prompt` (its arguments as given);
    /// the handler may take them as a `BTreeMap<String, String>`, after
    /// the required ones were checked present.
    pub fn prompt_with<H, M>(mut self, prompt: Prompt, handler: H) -> Self
    where
        H: Handler<Prompts, M>,
        H::Output: IntoPromptResult,
        M: 'static,
    {
        self.items.prompt_with(prompt, handler);
        self
    }

    /// Declares tools, prompts and resources (with `listChanged`, and
    /// `resources.subscribe`) whatever is registered when the server is
    /// built: for a server whose [`Catalog`](crate::Catalog) fills and
    /// changes while it serves (a gateway, say). Without it, a list is
    /// advertised only when it holds something as a client connects, and
    /// `listChanged` only with [`list_changed`](Self::list_changed).
    /// Completions are advertised when a [completion
    /// handler](Self::completion) is registered, either way.
    ///
    /// The lists' 2026-07-28 cache hint is then 0 ms unless
    /// [`list_cache`](Self::list_cache) sets one: a list may change at any
    /// moment, and a client that does not listen for changes would reuse a
    /// stale one for as long as the hint allows.
    pub fn dynamic(mut self) -> Self {
        self.registry.dynamic = true;
        self
    }

    /// Called when a client subscribes to the resource at a URI, with the
    /// URI and the client's session, in either era: a handshake-era
    /// `resources/subscribe` (awaited before it is answered; the URI was
    /// checked to name a resource or match a template), or a 2026-07-28
    /// `subscriptions/listen` stream's `resourceSubscriptions` (each URI
    /// once as the stream opens, awaited before it is acknowledged; those
    /// that name no resource and match no template are not told). A gateway
    /// subscribes upstream here, and routes the updates back with
    /// [`ListChanges::resource_updated`](crate::ListChanges::resource_updated).
    ///
    /// A session is told of once per URI however often it subscribes; calls
    /// are not counted across sessions: several sessions (or streams)
    /// subscribing to one URI make several calls, each ended by one
    /// [`on_unsubscribe`](Self::on_unsubscribe) call (a gateway counts them
    /// to subscribe upstream once). With sessions shared between servers,
    /// each server hears of the subscriptions made through it.
    pub fn on_subscribe<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(String, ServerSession) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.registry.on_subscribe = Some(subscribe_fn(hook));
        self
    }

    /// Called when a subscription [`on_subscribe`](Self::on_subscribe) was
    /// told of ends: a handshake-era `resources/unsubscribe` of that URI, or
    /// the end of the session (once per URI it still followed); the end of
    /// a `subscriptions/listen` stream (once per URI it followed).
    pub fn on_unsubscribe<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(String, ServerSession) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.registry.on_unsubscribe = Some(subscribe_fn(hook));
        self
    }

    /// Answers `completion/complete` for prompt arguments and template
    /// variables: `handler` takes the
    /// [`CompleteRequestParams`](crate::types::CompleteRequestParams) and
    /// returns anything [`IntoCompletionResult`](crate::IntoCompletionResult)
    /// (a `Completion`, or just the `Vec<String>` of values).
    pub fn completion<H, M>(mut self, handler: H) -> Self
    where
        H: Handler<Completions, M>,
        H::Output: IntoCompletionResult,
        M: 'static,
    {
        self.items.need(
            || "the completion handler".to_owned(),
            signature_of::<Completions, M, H>().states(),
        );
        self.registry.completion = Some(completion_fn(handler));
        self
    }

    /// Called when a client sends `notifications/roots/list_changed`, with
    /// that client's session (to call [`ServerSession::send_list_roots`]).
    /// Runs in its own task, so it may send requests to the client.
    pub fn on_roots_list_changed<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ServerSession) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.registry.roots_list_changed = Some(Arc::new(move |session| {
            let callback = callback.clone();
            Box::pin(async move { callback(session).await })
        }));
        self
    }

    /// The server, or the first registration that was refused.
    ///
    /// # Errors
    /// [`Error::Registration`] for a duplicate name or URI, an argument type
    /// or a structured output type that is not a JSON object, a URI
    /// template that does not parse, or a handler that takes a
    /// [`State<S>`](crate::State) the server was given no `S` for.
    pub fn build(self) -> Result<Server, Error> {
        let Self {
            mut registry,
            items,
            list_cache_set,
        } = self;
        if registry.dynamic && !list_cache_set {
            registry.list_cache.0 = 0;
        }
        registry.catalog = Catalog::new(items, registry.changes.clone(), registry.state.clone())?;
        Ok(Server {
            registry: Arc::new(registry),
        })
    }
}

fn duration_ms(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A subscription hook as the registry stores it.
fn subscribe_fn<F, Fut>(hook: F) -> SubscribeFn
where
    F: Fn(String, ServerSession) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let hook = Arc::new(hook);
    Arc::new(move |uri, session| {
        let hook = hook.clone();
        Box::pin(async move { hook(uri, session).await })
    })
}
