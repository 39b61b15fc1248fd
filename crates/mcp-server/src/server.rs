//! The server a tool author builds, and the per-connection runner that
//! answers a client with it.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_core::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext, Transport,
};
use mcp_types::{
    BlobResourceContents, CallToolRequestParams, CallToolResult, ClientNotification, ClientRequest,
    CompleteReference, CompleteRequestParams, CompleteResult, Completion, EmptyResult, ErrorCode,
    ErrorObject, GetPromptRequestParams, GetPromptResult, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, PromptsCapability, RawJson, ReadResourceRequestParams, ReadResourceResult,
    RequestMeta, Resource, ResourceContents, ResourceTemplate, ResourcesCapability, Revision, Role,
    ServerCapabilities, TextResourceContents, Tool, ToolsCapability,
};
use mcp_types::{
    CacheScope, DiscoverResult, InputResponses, ResultOrInputRequired,
    SubscriptionsListenRequestParams, UnsupportedProtocolVersionData,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::request_state::StateSealer;
use crate::session::{Context, RequestInput, ServerSession, SessionState, StatelessRequest};
use crate::tool_io::{InputRequired, IntoToolResult, input_schema_for, parse_arguments};
use crate::{Error, UriTemplate};
use tokio::sync::broadcast;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type ToolFn = Arc<
    dyn Fn(
            Option<JsonObject>,
            Context,
        ) -> BoxFuture<Result<ResultOrInputRequired<CallToolResult>, ErrorObject>>
        + Send
        + Sync,
>;
type ResourceFn = Arc<
    dyn Fn(ResourceRequest, Context) -> BoxFuture<Result<Vec<ResourceContents>, ErrorObject>>
        + Send
        + Sync,
>;
type PromptFn = Arc<
    dyn Fn(
            BTreeMap<String, String>,
            Context,
        ) -> BoxFuture<Result<ResultOrInputRequired<GetPromptResult>, ErrorObject>>
        + Send
        + Sync,
>;
type SessionFn = Arc<dyn Fn(ServerSession) -> BoxFuture<()> + Send + Sync>;
type CompleteFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

/// The default number of items per page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

struct ToolEntry {
    tool: Tool,
    call: ToolFn,
}

struct ResourceEntry {
    resource: Resource,
    read: ResourceFn,
}

struct TemplateEntry {
    template: ResourceTemplate,
    matcher: UriTemplate,
    read: ResourceFn,
}

struct PromptEntry {
    prompt: Prompt,
    get: PromptFn,
}

struct Registry {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolEntry>,
    tool_index: HashMap<String, usize>,
    resources: Vec<ResourceEntry>,
    resource_index: HashMap<String, usize>,
    templates: Vec<TemplateEntry>,
    prompts: Vec<PromptEntry>,
    prompt_index: HashMap<String, usize>,
    completion: Option<CompleteFn>,
    roots_list_changed: Option<SessionFn>,
    page_size: usize,
    sealer: StateSealer,
    changes: ListChanges,
    list_cache: (u64, CacheScope),
    read_cache: (u64, CacheScope),
    list_changed: bool,
    dispatcher: DispatcherConfig,
}

/// What a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// For a resource template, the variables matched out of the URI.
    pub variables: BTreeMap<String, String>,
}

/// Arguments of a prompt that takes none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, JsonSchema)]
pub struct NoArguments {}

/// Binary resource contents, sent base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Converts what a resource handler returns into resource contents.
///
/// A `String` becomes text contents with the resource's URI and MIME type, a
/// [`Blob`] becomes base64 blob contents; ready `ResourceContents` pass as they are.
pub trait IntoResourceContents {
    /// The contents, given the URI read and the registered MIME type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let mut contents = TextResourceContents::new(uri, self);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0);
        let mut contents = BlobResourceContents::new(uri, encoded);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// Converts what a prompt handler returns into a `GetPromptResult` (or,
/// at 2026-07-28, a request for input first).
///
/// A `String` becomes one user message; a `PromptMessage` or a list of
/// them becomes the result's messages.
pub trait IntoPromptResult {
    /// The answer.
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        ResultOrInputRequired::Complete(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        GetPromptResult::new(self).into_prompt_answer()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        GetPromptResult::new(vec![self]).into_prompt_answer()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        PromptMessage::new(Role::User, mcp_types::ContentBlock::text(self)).into_prompt_answer()
    }
}

impl IntoPromptResult for InputRequired {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        ResultOrInputRequired::InputRequired(self.into_result())
    }
}

impl<T: IntoPromptResult> IntoPromptResult for crate::Answer<T> {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        match self {
            crate::Answer::Complete(value) => value.into_prompt_answer(),
            crate::Answer::InputRequired(input) => input.into_prompt_answer(),
        }
    }
}

/// Which list changed, for `subscriptions/listen` streams.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ListChange {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(String),
}

/// Announces changes to what the server offers to every open
/// `subscriptions/listen` stream (2026-07-28) that asked for them. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ListChanges {
    tx: broadcast::Sender<ListChange>,
}

impl ListChanges {
    fn new() -> Self {
        Self {
            tx: broadcast::channel(64).0,
        }
    }

    fn subscribe(&self) -> broadcast::Receiver<ListChange> {
        self.tx.subscribe()
    }

    fn send(&self, change: ListChange) {
        // No listener is not an error: nobody asked.
        let _ = self.tx.send(change);
    }

    /// The tool list changed.
    pub fn tools_changed(&self) {
        self.send(ListChange::Tools);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.send(ListChange::Prompts);
    }

    /// The resource list changed.
    pub fn resources_changed(&self) {
        self.send(ListChange::Resources);
    }

    /// The resource at `uri` changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.send(ListChange::ResourceUpdated(uri.into()));
    }
}

/// Builds a [`Server`]: register tools, resources, prompts and completions,
/// then [`build`](ServerBuilder::build).
///
/// # Examples
/// ```
/// use mcp_server::{Context, Json, Server, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { sum: i64 }
///
/// let server = Server::builder("calculator", "1.0.0")
///     .tool("add", "Adds two integers", |args: Add, _cx: Context| async move {
///         let sum = args.a.checked_add(args.b).ok_or_else(|| ToolError::new("overflow"))?;
///         Ok(Json(Sum { sum }))
///     })
///     .build()
///     .expect("valid registrations");
/// assert_eq!(server.tools().len(), 1);
/// ```
pub struct ServerBuilder {
    registry: Registry,
    errors: Vec<Error>,
}

impl ServerBuilder {
    fn new(info: Implementation) -> Self {
        Self {
            registry: Registry {
                info,
                instructions: None,
                tools: Vec::new(),
                tool_index: HashMap::new(),
                resources: Vec::new(),
                resource_index: HashMap::new(),
                templates: Vec::new(),
                prompts: Vec::new(),
                prompt_index: HashMap::new(),
                completion: None,
                roots_list_changed: None,
                page_size: DEFAULT_PAGE_SIZE,
                sealer: StateSealer::random(),
                changes: ListChanges::new(),
                list_cache: (60_000, CacheScope::Public),
                read_cache: (0, CacheScope::Private),
                list_changed: false,
                dispatcher: DispatcherConfig::default(),
            },
            errors: Vec::new(),
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

    /// Declares `listChanged` for tools, resources and prompts: this server
    /// will send the `*/list_changed` notifications.
    pub fn list_changed(mut self, enabled: bool) -> Self {
        self.registry.list_changed = enabled;
        self
    }

    /// The key that seals `requestState` (2026-07-28 input-required
    /// results). Give every instance behind a load balancer the same key;
    /// without one, a random key makes state verifiable by this process only.
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.registry.sealer = StateSealer::new(key.into());
        self
    }

    /// The cache hints (2026-07-28 `ttlMs`, `cacheScope`) of `tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list` and
    /// `server/discover`; 60 s, public by default.
    pub fn list_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.registry.list_cache = (duration_ms(ttl), scope);
        self
    }

    /// The cache hints of `resources/read`; 0 ms, private by default.
    pub fn read_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.registry.read_cache = (duration_ms(ttl), scope);
        self
    }

    /// The dispatcher settings of each connection (queues, message limits).
    pub fn dispatcher_config(mut self, config: DispatcherConfig) -> Self {
        self.registry.dispatcher = config;
        self
    }

    /// Registers a tool whose input schema comes from `A` and whose output
    /// schema, when it returns [`Json<T>`](crate::Json), from `T`.
    ///
    /// Arguments that do not fit `A` answer with an `isError` result naming
    /// the offending argument, which the model can read and correct.
    pub fn tool<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let name = name.into();
        let mut tool = Tool::new(name, JsonObject::new());
        tool.description = Some(description.into());
        self.tool_with(tool, handler)
    }

    /// Registers a tool described by `tool` (title, annotations, icons…).
    /// Its input schema is replaced by `A`'s, and its output schema, if it
    /// has none, is taken from the return type.
    pub fn tool_with<A, R, F, Fut>(mut self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let what = format!("tool `{}`", tool.name);
        match input_schema_for::<A>() {
            Ok(schema) => tool.input_schema = schema,
            Err(e) => {
                self.errors.push(Error::Registration {
                    what,
                    reason: e.to_string(),
                });
                return self;
            }
        }
        if tool.output_schema.is_none() {
            tool.output_schema = R::output_schema();
        }
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move {
                match parse_arguments::<A>(arguments.as_ref()) {
                    Ok(args) => handler(args, cx).await.into_tool_answer(),
                    Err(e) => e.into_answer().map(ResultOrInputRequired::Complete),
                }
            })
        });
        self.add_tool(tool, call);
        self
    }

    /// Registers a tool exactly as described by `tool` (its schemas are sent
    /// as given), with a handler that reads the raw `arguments` itself: for
    /// schemas that no Rust type describes, or tools defined at run time.
    pub fn tool_raw<R, F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        R: IntoToolResult + 'static,
        F: Fn(Option<JsonObject>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move { handler(arguments, cx).await.into_tool_answer() })
        });
        self.add_tool(tool, call);
        self
    }

    fn add_tool(&mut self, tool: Tool, call: ToolFn) {
        if self.registry.tool_index.contains_key(&tool.name) {
            self.errors.push(Error::Registration {
                what: format!("tool `{}`", tool.name),
                reason: "a tool with this name is already registered".into(),
            });
            return;
        }
        self.registry
            .tool_index
            .insert(tool.name.clone(), self.registry.tools.len());
        self.registry.tools.push(ToolEntry { tool, call });
    }

    /// Registers a resource at a fixed URI.
    pub fn resource<R, F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        R: IntoResourceContents + 'static,
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        if self.registry.resource_index.contains_key(&resource.uri) {
            self.errors.push(Error::Registration {
                what: format!("resource `{}`", resource.uri),
                reason: "a resource with this URI is already registered".into(),
            });
            return self;
        }
        let read = resource_fn(handler, resource.mime_type.clone());
        self.registry
            .resource_index
            .insert(resource.uri.clone(), self.registry.resources.len());
        self.registry
            .resources
            .push(ResourceEntry { resource, read });
        self
    }

    /// Registers a resource template: reads of URIs matching its RFC 6570
    /// template reach `handler` with the matched variables.
    pub fn resource_template<R, F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        R: IntoResourceContents + 'static,
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        let matcher = match UriTemplate::parse(&template.uri_template) {
            Ok(matcher) => matcher,
            Err(e) => {
                self.errors.push(Error::Registration {
                    what: format!("resource template `{}`", template.uri_template),
                    reason: e.to_string(),
                });
                return self;
            }
        };
        let read = resource_fn(handler, template.mime_type.clone());
        self.registry.templates.push(TemplateEntry {
            template,
            matcher,
            read,
        });
        self
    }

    /// Registers a prompt whose arguments come from the fields of `A`
    /// (prompt arguments are strings: use `String` and `Option<String>`
    /// fields; doc comments become descriptions).
    pub fn prompt<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoPromptResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        let mut prompt = Prompt::new(name);
        prompt.description = Some(description.into());
        let arguments = match input_schema_for::<A>() {
            Ok(schema) => prompt_arguments(&schema),
            Err(e) => {
                let mut this = self;
                this.errors.push(Error::Registration {
                    what: format!("prompt `{}`", prompt.name),
                    reason: e.to_string(),
                });
                return this;
            }
        };
        if !arguments.is_empty() {
            prompt.arguments = Some(arguments);
        }
        let handler = Arc::new(handler);
        self.prompt_with(prompt, move |arguments, cx| {
            let handler = handler.clone();
            async move {
                let object: serde_json::Map<String, Value> = arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                let args: A = parse_arguments(Some(&object))
                    .map_err(|e| ErrorObject::invalid_params(e.message().to_owned()))?;
                handler(args, cx).await
            }
        })
    }

    /// Registers a prompt described by `prompt`; `handler` gets the
    /// arguments as given, after the required ones were checked present.
    pub fn prompt_with<R, F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        R: IntoPromptResult + 'static,
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        if self.registry.prompt_index.contains_key(&prompt.name) {
            self.errors.push(Error::Registration {
                what: format!("prompt `{}`", prompt.name),
                reason: "a prompt with this name is already registered".into(),
            });
            return self;
        }
        let handler = Arc::new(handler);
        let get: PromptFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move { Ok(handler(arguments, cx).await?.into_prompt_answer()) })
        });
        self.registry
            .prompt_index
            .insert(prompt.name.clone(), self.registry.prompts.len());
        self.registry.prompts.push(PromptEntry { prompt, get });
        self
    }

    /// Answers `completion/complete` for prompt arguments and template variables.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompleteRequestParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.registry.completion = Some(Arc::new(move |params, cx| {
            let handler = handler.clone();
            Box::pin(async move { handler(params, cx).await })
        }));
        self
    }

    /// Called when a client sends `notifications/roots/list_changed`, with
    /// that client's session (to call [`ServerSession::list_roots`]).
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
    /// that is not a JSON object, or a URI template that does not parse.
    pub fn build(self) -> Result<Server, Error> {
        if let Some(error) = self.errors.into_iter().next() {
            return Err(error);
        }
        Ok(Server {
            registry: Arc::new(self.registry),
        })
    }
}

fn duration_ms(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn resource_fn<R, F, Fut>(handler: F, mime_type: Option<String>) -> ResourceFn
where
    R: IntoResourceContents + 'static,
    F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
{
    let handler = Arc::new(handler);
    let mime_type: Option<Arc<str>> = mime_type.map(Into::into);
    Arc::new(move |request, cx| {
        let handler = handler.clone();
        let mime_type = mime_type.clone();
        Box::pin(async move {
            let uri = request.uri.clone();
            let body = handler(request, cx).await?;
            Ok(body.into_contents(&uri, mime_type.as_deref()))
        })
    })
}

/// The prompt arguments an object schema describes.
fn prompt_arguments(schema: &JsonObject) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut argument = PromptArgument::new(name.clone());
            argument.description = property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            argument.required = Some(required.contains(&name.as_str()));
            argument
        })
        .collect()
}

/// An MCP server: what it offers, ready to serve any number of connections.
/// Cheap to clone.
#[derive(Clone)]
pub struct Server {
    registry: Arc<Registry>,
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

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.registry.info
    }

    /// Announces list changes to `subscriptions/listen` streams.
    pub fn list_changes(&self) -> ListChanges {
        self.registry.changes.clone()
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> Vec<&Tool> {
        self.registry.tools.iter().map(|e| &e.tool).collect()
    }

    /// The capabilities this server declares, from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        let r = &self.registry;
        let list_changed = r.list_changed.then_some(true);
        let mut capabilities = ServerCapabilities::new();
        // Log messages can always be sent through the context.
        capabilities.logging = Some(JsonObject::new());
        if !r.tools.is_empty() {
            let mut tools = ToolsCapability::new();
            tools.list_changed = list_changed;
            capabilities.tools = Some(tools);
        }
        if !r.resources.is_empty() || !r.templates.is_empty() {
            let mut resources = ResourcesCapability::new();
            resources.subscribe = Some(true);
            resources.list_changed = list_changed;
            capabilities.resources = Some(resources);
        }
        if !r.prompts.is_empty() {
            let mut prompts = PromptsCapability::new();
            prompts.list_changed = list_changed;
            capabilities.prompts = Some(prompts);
        }
        if r.completion.is_some() {
            capabilities.completions = Some(JsonObject::new());
        }
        capabilities
    }

    /// Serves one client over `transport`. The connection runs in the
    /// background until the transport ends or [`ServerConnection::shutdown`].
    ///
    /// Must be called within a tokio runtime.
    pub fn serve<T: Transport>(&self, transport: T) -> ServerConnection {
        let state = Arc::new(SessionState::default());
        let handler = Runner {
            registry: self.registry.clone(),
            state: state.clone(),
        };
        let connection = Connection::start(transport, handler, self.registry.dispatcher.clone());
        let session = ServerSession::new(connection.peer().clone(), state)
            .with_changes(self.registry.changes.clone());
        ServerConnection {
            connection,
            session,
        }
    }

    /// Serves one client on this process's stdin and stdout until stdin
    /// closes. Nothing else may write to stdout: log with `tracing` to stderr.
    ///
    /// # Errors
    /// Never fails today; the `Result` leaves room for transport setup errors.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        let connection = self.serve(mcp_transport::stdio::stdio_server());
        connection.wait().await;
        Ok(())
    }
}

#[cfg(feature = "http")]
impl Server {
    /// This server as a streamable HTTP endpoint: a `tower::Service` to
    /// mount in a hyper or axum app. Each HTTP session gets its own
    /// connection to this server.
    pub fn streamable_http_service(
        &self,
        config: mcp_transport::http::HttpServerConfig,
    ) -> mcp_transport::http::StreamableHttpService {
        let server = self.clone();
        mcp_transport::http::StreamableHttpService::new(config, move |transport| {
            let connection = server.serve(transport);
            // The service runs this future, so it owns the connection until
            // its session (or exchange) ends.
            async move { connection.wait().await }
        })
    }

    /// Serves this server over streamable HTTP on `listener` until
    /// `shutdown` resolves (use `std::future::pending()` to run forever),
    /// then shuts down gracefully (see [`mcp_transport::http::serve`]).
    ///
    /// # Errors
    /// When accepting connections fails persistently.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        config: mcp_transport::http::HttpServerConfig,
        shutdown: impl Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let service = self.streamable_http_service(config);
        let serve_config =
            mcp_transport::http::ServeConfig::new().service_shutdown(service.shutdown_handle());
        mcp_transport::http::serve(listener, service, serve_config, shutdown).await
    }
}

/// One client being served.
pub struct ServerConnection {
    connection: Connection,
    session: ServerSession,
}

impl ServerConnection {
    /// The session, to send the client notifications and requests outside
    /// any request handler.
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// Resolves when the client disconnects.
    pub async fn wait(&self) {
        self.connection.wait().await
    }

    /// Closes the connection and waits for its tasks to end.
    pub async fn shutdown(self) {
        self.connection.shutdown().await
    }
}

struct Runner {
    registry: Arc<Registry>,
    state: Arc<SessionState>,
}

fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the result: {e}")))
}

fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{cursor}`")))?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

fn cursor_of(params: &Option<PaginatedRequestParams>) -> Option<&str> {
    params.as_ref().and_then(|p| p.cursor.as_deref())
}

/// Only `_meta` of a request's params, to choose the era.
fn request_meta(params: Option<&RawJson>) -> Option<RequestMeta> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "_meta", default)]
        meta: Option<RequestMeta>,
    }
    params?.parse::<Probe>().ok()?.meta
}

/// SEP-2243: over HTTP, each `x-mcp-header` argument of a stateless
/// `tools/call` travels as `Mcp-Param-*` too, and the two must agree; a
/// header without its value, a value without its header, or an undecodable
/// header is `-32020`.
fn check_param_headers(
    tool: &Tool,
    arguments: Option<&JsonObject>,
    headers: &mcp_core::Headers,
) -> Result<(), ErrorObject> {
    // Only HTTP requests carry routing headers (stdio and memory do not).
    if headers.get("mcp-method").is_none() {
        return Ok(());
    }
    let Ok(annotated) = mcp_types::routing::annotated_properties(tool) else {
        return Ok(());
    };
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    let mismatch = |why: String| Err(ErrorObject::new(ErrorCode::HEADER_MISMATCH, why));
    for (header, path) in annotated {
        let name = format!("mcp-param-{header}");
        let body = mcp_types::routing::lookup(arguments, &path).filter(|v| !v.is_null());
        match (headers.get(&name), body) {
            (None, None) => {}
            (None, Some(_)) => {
                return mismatch(format!(
                    "argument `{}` is set but the Mcp-Param-{header} header is missing",
                    path.join(".")
                ));
            }
            (Some(_), None) => {
                return mismatch(format!(
                    "the Mcp-Param-{header} header is set but argument `{}` is not",
                    path.join(".")
                ));
            }
            (Some(raw), Some(value)) => {
                let Some(decoded) = mcp_types::routing::decode_header_value(raw.trim()) else {
                    return mismatch(format!(
                        "the Mcp-Param-{header} header is not valid `=?base64?…?=` UTF-8"
                    ));
                };
                if !mcp_types::routing::header_matches(&decoded, value) {
                    return mismatch(format!(
                        "the Mcp-Param-{header} header differs from argument `{}`",
                        path.join(".")
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The era of the request being served.
enum Era {
    Handshake,
    Stateless(Arc<StatelessRequest>),
}

/// The answer to `tools/call` or `prompts/get` before it is serialized.
type Answer<R> = Result<ResultOrInputRequired<R>, ErrorObject>;

impl Runner {
    fn session(&self, cx: &RequestContext, era: &Era) -> ServerSession {
        let session = ServerSession::new(cx.peer.clone(), self.state.clone())
            .with_changes(self.registry.changes.clone());
        match era {
            Era::Handshake => session,
            Era::Stateless(request) => session.for_stateless_request(request.clone()),
        }
    }

    fn context(&self, cx: &RequestContext, era: &Era, meta: Option<RequestMeta>) -> Context {
        Context::new(
            self.session(cx, era),
            cx.id.clone(),
            cx.cancel.clone(),
            meta,
            cx.transport.clone(),
        )
    }

    fn initialize(&self, params: InitializeRequestParams) -> Result<RawJson, ErrorObject> {
        let revision = Revision::from_version(&params.protocol_version)
            .filter(|r| r.is_handshake())
            .unwrap_or(Revision::LATEST_HANDSHAKE);
        tracing::debug!(
            client = %params.client_info.name,
            requested = %params.protocol_version,
            answered = %revision,
            "initialize"
        );
        self.state.set_client(params, revision);
        let r = &self.registry;
        let mut result = InitializeResult::new(
            revision.as_str(),
            self.server().capabilities(),
            r.info.clone(),
        );
        result.instructions = r.instructions.clone();
        to_raw(&result)
    }

    fn server(&self) -> Server {
        Server {
            registry: self.registry.clone(),
        }
    }

    /// Verifies a retried request's `requestState` and hands the answers to
    /// the handler's context.
    fn with_input(
        &self,
        context: Context,
        binding: &str,
        responses: Option<InputResponses>,
        request_state: Option<String>,
    ) -> Result<Context, ErrorObject> {
        let state = match request_state {
            None => None,
            Some(sealed) => Some(self.registry.sealer.open(binding, &sealed).ok_or_else(|| {
                ErrorObject::invalid_params(
                    "requestState failed verification: it was altered, or issued for another \
                     request or by a server with another key",
                )
            })?),
        };
        Ok(context.with_input(RequestInput { responses, state }))
    }

    /// Seals the state of an input-required answer for `binding`.
    fn seal<R>(&self, answer: ResultOrInputRequired<R>, binding: &str) -> ResultOrInputRequired<R> {
        match answer {
            ResultOrInputRequired::InputRequired(mut input) => {
                input.request_state = input
                    .request_state
                    .map(|state| self.registry.sealer.seal(binding, &state));
                ResultOrInputRequired::InputRequired(input)
            }
            complete => complete,
        }
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        cx: &RequestContext,
        era: &Era,
    ) -> Answer<CallToolResult> {
        let Some(&index) = self.registry.tool_index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool `{}`",
                params.name
            )));
        };
        let entry = &self.registry.tools[index];
        if let Era::Stateless(_) = era {
            check_param_headers(
                &entry.tool,
                params.arguments.as_ref(),
                &cx.transport.headers,
            )?;
        }
        let binding = format!("tools/call:{}", params.name);
        let mut context = self.context(cx, era, params.meta);
        if let Era::Stateless(_) = era {
            context = self.with_input(
                context,
                &binding,
                params.input_responses,
                params.request_state,
            )?;
        }
        let answer = (entry.call)(params.arguments, context).await?;
        Ok(self.seal(answer, &binding))
    }

    async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        cx: &RequestContext,
        era: &Era,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let uri = params.uri;
        let context = self.context(cx, era, params.meta);
        let (read, variables) = if let Some(&i) = self.registry.resource_index.get(&uri) {
            (&self.registry.resources[i].read, BTreeMap::new())
        } else if let Some((entry, variables)) = self
            .registry
            .templates
            .iter()
            .find_map(|t| t.matcher.match_uri(&uri).map(|v| (t, v)))
        {
            (&entry.read, variables)
        } else {
            // SEP-2164: -32602 from 2026-07-28 on; -32002 before.
            let code = match era {
                Era::Handshake => ErrorCode::RESOURCE_NOT_FOUND,
                Era::Stateless(_) => ErrorCode::INVALID_PARAMS,
            };
            return Err(
                ErrorObject::new(code, format!("resource `{uri}` not found"))
                    .with_data(serde_json::json!({ "uri": uri })),
            );
        };
        let contents = read(ResourceRequest { uri, variables }, context).await?;
        Ok(ReadResourceResult::new(contents))
    }

    async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        cx: &RequestContext,
        era: &Era,
    ) -> Answer<GetPromptResult> {
        let Some(&index) = self.registry.prompt_index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown prompt `{}`",
                params.name
            )));
        };
        let entry = &self.registry.prompts[index];
        let arguments = params.arguments.unwrap_or_default();
        let missing: Vec<&str> = entry
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "prompt `{}` needs the argument(s) {}",
                params.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let binding = format!("prompts/get:{}", params.name);
        let mut context = self.context(cx, era, params.meta);
        if let Era::Stateless(_) = era {
            context = self.with_input(
                context,
                &binding,
                params.input_responses,
                params.request_state,
            )?;
        }
        let answer = (entry.get)(arguments, context).await?;
        Ok(self.seal(answer, &binding))
    }

    async fn complete(
        &self,
        params: CompleteRequestParams,
        cx: &RequestContext,
        era: &Era,
    ) -> Result<CompleteResult, ErrorObject> {
        let Some(complete) = &self.registry.completion else {
            return Err(ErrorObject::method_not_found("completion/complete"));
        };
        match &params.reference {
            CompleteReference::Prompt(p) if !self.registry.prompt_index.contains_key(&p.name) => {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown prompt `{}`",
                    p.name
                )));
            }
            _ => {}
        }
        let context = self.context(cx, era, params.meta.clone());
        let completion = complete(params, context).await?;
        Ok(CompleteResult::new(completion))
    }

    fn subscribe_target_exists(&self, uri: &str) -> bool {
        self.registry.resource_index.contains_key(uri)
            || self
                .registry
                .templates
                .iter()
                .any(|t| t.matcher.match_uri(uri).is_some())
    }

    fn list_tools(
        &self,
        params: &Option<PaginatedRequestParams>,
    ) -> Result<ListToolsResult, ErrorObject> {
        let r = &self.registry;
        let all: Vec<Tool> = r.tools.iter().map(|e| e.tool.clone()).collect();
        let (tools, next) = page(&all, cursor_of(params), r.page_size)?;
        let mut result = ListToolsResult::new(tools);
        result.next_cursor = next;
        Ok(result)
    }

    fn list_resources(
        &self,
        params: &Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, ErrorObject> {
        let r = &self.registry;
        let all: Vec<Resource> = r.resources.iter().map(|e| e.resource.clone()).collect();
        let (resources, next) = page(&all, cursor_of(params), r.page_size)?;
        let mut result = ListResourcesResult::new(resources);
        result.next_cursor = next;
        Ok(result)
    }

    fn list_templates(
        &self,
        params: &Option<PaginatedRequestParams>,
    ) -> Result<ListResourceTemplatesResult, ErrorObject> {
        let r = &self.registry;
        let all: Vec<ResourceTemplate> = r.templates.iter().map(|e| e.template.clone()).collect();
        let (templates, next) = page(&all, cursor_of(params), r.page_size)?;
        let mut result = ListResourceTemplatesResult::new(templates);
        result.next_cursor = next;
        Ok(result)
    }

    fn list_prompts(
        &self,
        params: &Option<PaginatedRequestParams>,
    ) -> Result<ListPromptsResult, ErrorObject> {
        let r = &self.registry;
        let all: Vec<Prompt> = r.prompts.iter().map(|e| e.prompt.clone()).collect();
        let (prompts, next) = page(&all, cursor_of(params), r.page_size)?;
        let mut result = ListPromptsResult::new(prompts);
        result.next_cursor = next;
        Ok(result)
    }

    async fn handshake(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.state.revision();
        let parsed = ClientRequest::parse(
            &request.method,
            request.params.as_ref(),
            revision.unwrap_or(Revision::LATEST_HANDSHAKE),
        )
        .map_err(|e| e.to_error_object())?;
        let era = Era::Handshake;
        match parsed {
            ClientRequest::Initialize(params) => self.initialize(params),
            ClientRequest::Ping(_) => to_raw(&EmptyResult::new()),
            _ if revision.is_none() => Err(ErrorObject::invalid_request(format!(
                "`{}` before initialization: send `initialize` first",
                request.method
            ))),
            ClientRequest::ListTools(params) => to_raw(&self.list_tools(&params)?),
            ClientRequest::CallTool(params) => match self.call_tool(params, &cx, &era).await? {
                ResultOrInputRequired::Complete(result) => to_raw(&result),
                ResultOrInputRequired::InputRequired(_) => Err(ErrorObject::internal_error(
                    "the tool asked for input in its result, which needs protocol revision \
                     2026-07-28; this session speaks an older one",
                )),
            },
            ClientRequest::ListResources(params) => to_raw(&self.list_resources(&params)?),
            ClientRequest::ListResourceTemplates(params) => to_raw(&self.list_templates(&params)?),
            ClientRequest::ReadResource(params) => {
                to_raw(&self.read_resource(params, &cx, &era).await?)
            }
            ClientRequest::Subscribe(params) => {
                if !self.subscribe_target_exists(&params.uri) {
                    return Err(ErrorObject::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        format!("resource `{}` not found", params.uri),
                    ));
                }
                self.state.subscribe(params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::Unsubscribe(params) => {
                self.state.unsubscribe(&params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::ListPrompts(params) => to_raw(&self.list_prompts(&params)?),
            ClientRequest::GetPrompt(params) => match self.get_prompt(params, &cx, &era).await? {
                ResultOrInputRequired::Complete(result) => to_raw(&result),
                ResultOrInputRequired::InputRequired(_) => Err(ErrorObject::internal_error(
                    "the prompt asked for input in its result, which needs protocol revision \
                     2026-07-28; this session speaks an older one",
                )),
            },
            ClientRequest::Complete(params) => to_raw(&self.complete(params, &cx, &era).await?),
            ClientRequest::SetLevel(params) => {
                self.state.set_log_level(params.level);
                to_raw(&EmptyResult::new())
            }
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    /// A 2026-07-28 request: everything the server needs is in it.
    async fn stateless(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
        meta: RequestMeta,
    ) -> Result<RawJson, ErrorObject> {
        let version = meta.protocol_version.clone().unwrap_or_default();
        let Some(revision) = Revision::from_version(&version).filter(|r| r.is_stateless()) else {
            let supported: Vec<String> = Revision::STATELESS
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect();
            let message = format!(
                "protocol version `{version}` is not supported; this server speaks {}",
                supported.join(", ")
            );
            return Err(UnsupportedProtocolVersionData::new(supported, version).into_error(message));
        };
        let Some(capabilities) = meta.client_capabilities.clone() else {
            return Err(ErrorObject::invalid_params(format!(
                "`params._meta` must carry `{}` at protocol version {revision}",
                mcp_types::meta::CLIENT_CAPABILITIES
            )));
        };
        let parsed = ClientRequest::parse(&request.method, request.params.as_ref(), revision)
            .map_err(|e| e.to_error_object())?;
        let era = Era::Stateless(Arc::new(StatelessRequest {
            revision,
            capabilities,
            client_info: meta.client_info.clone(),
            log_level: meta.log_level,
        }));
        let lists = Some(self.registry.list_cache);
        match parsed {
            ClientRequest::Discover(_) => {
                let supported = Revision::ALL
                    .iter()
                    .rev()
                    .map(|r| r.as_str().to_owned())
                    .collect();
                let mut result = DiscoverResult::new(supported, self.server().capabilities());
                result.instructions = self.registry.instructions.clone();
                self.stamp(&result, lists)
            }
            ClientRequest::ListTools(params) => self.stamp(&self.list_tools(&params)?, lists),
            ClientRequest::CallTool(params) => {
                let answer = self.call_tool(params, &cx, &era).await?;
                self.stamp(&answer, None)
            }
            ClientRequest::ListResources(params) => {
                self.stamp(&self.list_resources(&params)?, lists)
            }
            ClientRequest::ListResourceTemplates(params) => {
                self.stamp(&self.list_templates(&params)?, lists)
            }
            ClientRequest::ReadResource(params) => {
                let result = self.read_resource(params, &cx, &era).await?;
                self.stamp(&result, Some(self.registry.read_cache))
            }
            ClientRequest::ListPrompts(params) => self.stamp(&self.list_prompts(&params)?, lists),
            ClientRequest::GetPrompt(params) => {
                let answer = self.get_prompt(params, &cx, &era).await?;
                self.stamp(&answer, None)
            }
            ClientRequest::Complete(params) => {
                let result = self.complete(params, &cx, &era).await?;
                self.stamp(&result, None)
            }
            ClientRequest::SubscriptionsListen(params) => self.listen(params, &cx).await,
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    /// A 2026-07-28 result: `resultType` (complete unless the result says
    /// otherwise), the cache hints where the method is cacheable, and the
    /// server's identity in `_meta`.
    fn stamp<T: Serialize>(
        &self,
        result: &T,
        cache: Option<(u64, CacheScope)>,
    ) -> Result<RawJson, ErrorObject> {
        let mut value = serde_json::to_value(result).map_err(|e| {
            ErrorObject::internal_error(format!("could not serialize the result: {e}"))
        })?;
        if let Some(object) = value.as_object_mut() {
            object
                .entry("resultType")
                .or_insert_with(|| Value::from("complete"));
            if let Some((ttl, scope)) = cache {
                object.insert("ttlMs".into(), Value::from(ttl));
                object.insert(
                    "cacheScope".into(),
                    serde_json::to_value(scope).unwrap_or(Value::Null),
                );
            }
            let meta = object
                .entry("_meta")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    mcp_types::meta::SERVER_INFO.into(),
                    serde_json::to_value(&self.registry.info).unwrap_or(Value::Null),
                );
            }
        }
        to_raw(&value)
    }

    /// `subscriptions/listen`: acknowledges, then forwards the list changes
    /// the client asked for until it goes away.
    async fn listen(
        &self,
        params: SubscriptionsListenRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let filter = params.notifications;
        let mut changes = self.registry.changes.subscribe();
        let subscription = serde_json::to_value(&cx.id).unwrap_or(Value::Null);
        let meta = serde_json::json!({ mcp_types::meta::SUBSCRIPTION_ID: subscription });
        let ack = serde_json::json!({ "notifications": filter, "_meta": meta });
        let notify = |method: &'static str, params: Value| {
            let peer = cx.peer.clone();
            async move {
                let params = RawJson::from_serialize(&params).ok();
                peer.notify(method, params).await
            }
        };
        if notify("notifications/subscriptions/acknowledged", ack)
            .await
            .is_err()
        {
            return Err(ErrorObject::internal_error("the client went away"));
        }
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                () = cx.cancel.cancelled() => break,
            };
            let (method, mut params) = match change {
                Ok(ListChange::Tools) if filter.tools_list_changed == Some(true) => {
                    ("notifications/tools/list_changed", serde_json::json!({}))
                }
                Ok(ListChange::Prompts) if filter.prompts_list_changed == Some(true) => {
                    ("notifications/prompts/list_changed", serde_json::json!({}))
                }
                Ok(ListChange::Resources) if filter.resources_list_changed == Some(true) => (
                    "notifications/resources/list_changed",
                    serde_json::json!({}),
                ),
                Ok(ListChange::ResourceUpdated(uri))
                    if filter
                        .resource_subscriptions
                        .as_ref()
                        .is_some_and(|uris| uris.contains(&uri)) =>
                {
                    (
                        "notifications/resources/updated",
                        serde_json::json!({ "uri": uri }),
                    )
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            };
            params["_meta"] = meta.clone();
            if notify(method, params).await.is_err() {
                break;
            }
        }
        let mut result = serde_json::json!({});
        result["_meta"] = meta;
        self.stamp(&result, None)
    }
}

impl Handler for Runner {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        // A request whose `_meta` names a protocol version is a stateless
        // (2026-07-28) request; anything else follows the session.
        if request.method != "initialize" {
            if let Some(meta) =
                request_meta(request.params.as_ref()).filter(|m| m.protocol_version.is_some())
            {
                return self.stateless(request, cx, meta).await;
            }
        }
        self.handshake(request, cx).await
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        cx: NotificationContext,
    ) {
        let revision = self.state.revision().unwrap_or(Revision::LATEST_HANDSHAKE);
        match ClientNotification::parse(
            &notification.method,
            notification.params.as_ref(),
            revision,
        ) {
            Ok(ClientNotification::Initialized(_)) => self.state.mark_initialized(),
            Ok(ClientNotification::RootsListChanged(_)) => {
                if let Some(callback) = &self.registry.roots_list_changed {
                    let session = ServerSession::new(cx.peer.clone(), self.state.clone())
                        .with_changes(self.registry.changes.clone());
                    // Its own task: the callback may wait on requests to the client.
                    tokio::spawn(callback(session));
                }
            }
            Ok(other) => tracing::debug!(method = other.method(), "notification"),
            Err(e) => tracing::debug!(error = %e, "ignored a notification"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hand_out_cursors_until_the_end() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).expect("page");
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!((last, next), (vec![4], None));
        let error = page(&items, Some("nope"), 2).expect_err("a bad cursor");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(page(&items, Some("99"), 2).is_err());
    }

    #[test]
    fn prompt_arguments_come_from_the_schema() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Review {
            /// The code to review.
            code: String,
            language: Option<String>,
        }
        let schema = input_schema_for::<Review>().expect("object");
        let arguments = prompt_arguments(&schema);
        assert_eq!(arguments.len(), 2);
        let code = arguments.iter().find(|a| a.name == "code").expect("code");
        assert_eq!(code.required, Some(true));
        assert_eq!(code.description.as_deref(), Some("The code to review."));
        let language = arguments
            .iter()
            .find(|a| a.name == "language")
            .expect("language");
        assert_eq!(language.required, Some(false));
    }
}
