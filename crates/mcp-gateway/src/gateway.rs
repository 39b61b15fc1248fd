//! The gateway: its upstreams supervised, their catalog merged, requests
//! routed to the upstream that serves them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use mcp_client::{ClientConfig, RequestOptions};
use mcp_core::CancellationToken;
use mcp_server::{Server, ServerBuilder, TasksConfig};
use mcp_transport::http::{Authorizer, HttpServerConfig, ServeConfig};
use mcp_types::{
    CallToolResult, CompleteArgument, CompleteReference, CompleteResult, GetPromptResult,
    JsonObject, ReadResourceResult,
};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::asks::Inflight;
use crate::board::{Board, ReadyCheck, UpstreamStatus};
use crate::config::GatewayConfig;
use crate::downstream;
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::naming::{Merged, Naming, Prefix};
use crate::router::Router;
use crate::serving::GatewayHttpService;
use crate::supervisor::{Supervised, supervise};
use crate::task_table::{UpstreamTasks, cancel_orphans};

/// Events kept for a listener that falls behind (it then misses the
/// oldest and is told how many).
pub const DEFAULT_EVENT_QUEUE: usize = 1024;

/// How a [`Gateway`] is put together: its config, the naming of entries,
/// the client it presents to upstreams, which upstreams readiness waits
/// for.
pub struct GatewayBuilder {
    config: GatewayConfig,
    naming: Box<dyn Naming>,
    client: ClientConfig,
    ready_requires: Option<BTreeSet<String>>,
    event_queue: usize,
    authorizers: BTreeMap<String, Arc<dyn Authorizer>>,
    tasks: TasksConfig,
}

impl GatewayBuilder {
    /// How the gateway's [`server`](Gateway::server)s run their clients'
    /// tasks (retention, polling interval suggested, paging, the store;
    /// [`TasksConfig::new`] unless set). The servers run tools as tasks
    /// themselves: the builder handed to [`Gateway::server`] must not call
    /// [`ServerBuilder::tasks`].
    #[must_use]
    pub fn tasks(mut self, tasks: TasksConfig) -> Self {
        self.tasks = tasks;
        self
    }

    /// Names tools and prompts with `naming` instead of the default
    /// [`Prefix`] (`{upstream}_{name}`).
    #[must_use]
    pub fn naming(mut self, naming: impl Naming) -> Self {
        self.naming = Box::new(naming);
        self
    }

    /// The client config each upstream connection starts from: the
    /// gateway's name and version, and the callbacks answering the
    /// upstreams' requests. The era, request timeout, list limits and
    /// session restarts are set per upstream from the [`GatewayConfig`];
    /// tool results are not checked against their output schemas (they
    /// are passed on as the upstream sent them, for the downstream client
    /// to check); its session events are the gateway's (a session the
    /// server forgot is started anew, the lists read again).
    #[must_use]
    pub fn client(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// Readiness waits for these upstreams only (by default: all of them).
    #[must_use]
    pub fn ready_requires<I, S>(mut self, upstreams: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.ready_requires = Some(upstreams.into_iter().map(Into::into).collect());
        self
    }

    /// Signs the HTTP upstream `upstream` in: credentials for each of its
    /// requests, renewed when it challenges (an
    /// `mcp_client::auth::OAuthClient`-backed login, say: feature `auth` of
    /// mcp-client, which this crate does not need itself).
    /// Only that upstream is sent them.
    #[must_use]
    pub fn authorizer(
        mut self,
        upstream: impl Into<String>,
        authorizer: Arc<dyn Authorizer>,
    ) -> Self {
        self.authorizers.insert(upstream.into(), authorizer);
        self
    }

    /// Events kept for a slow listener ([`DEFAULT_EVENT_QUEUE`] unless set).
    #[must_use]
    pub fn event_queue(mut self, events: usize) -> Self {
        self.event_queue = events;
        self
    }

    /// Starts one supervisor task per upstream (within the current tokio
    /// runtime) and returns at once: upstreams connect in the background
    /// (see [`Gateway::ready`]).
    ///
    /// # Errors
    /// [`Error::TooManyUpstreams`] past
    /// [`Limits::max_upstreams`](crate::Limits::max_upstreams);
    /// [`Error::Config`] when readiness names an upstream that is not
    /// configured.
    pub fn start(self) -> Result<Gateway, Error> {
        let GatewayBuilder {
            config,
            naming,
            client,
            ready_requires,
            event_queue,
            mut authorizers,
            tasks: tasks_config,
        } = self;
        let limits = config.limits;
        if config.upstreams.len() > limits.max_upstreams {
            return Err(Error::TooManyUpstreams {
                count: config.upstreams.len(),
                limit: limits.max_upstreams,
            });
        }
        let names: Vec<Arc<str>> = config
            .upstreams
            .keys()
            .map(|n| Arc::from(n.as_str()))
            .collect();
        let ready_requires: Vec<Arc<str>> = match ready_requires {
            None => names.clone(),
            Some(required) => required
                .into_iter()
                .map(|name| {
                    names
                        .iter()
                        .find(|known| ***known == *name)
                        .cloned()
                        .ok_or(Error::Config {
                            entry: name,
                            field: "ready_requires",
                            problem: "names an upstream that is not configured".into(),
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let board = Arc::new(Board::new(names.iter().cloned(), naming, event_queue));
        let inflight = Arc::new(Inflight::default());
        let cancel = CancellationToken::new();
        let (upstream_tasks, orphans) = UpstreamTasks::new(limits.max_tasks);
        let mut tasks: Vec<JoinHandle<()>> = config
            .upstreams
            .into_iter()
            .zip(names)
            .map(|((key, upstream), name)| {
                let job = Supervised {
                    name,
                    authorizer: authorizers.remove(&key),
                    upstream,
                    limits,
                    base: client.clone(),
                    inflight: inflight.clone(),
                };
                tokio::spawn(supervise(job, board.clone(), cancel.clone()))
            })
            .collect();
        tasks.push(tokio::spawn(cancel_orphans(orphans, cancel.clone())));
        let ready = ReadyCheck {
            board: board.clone(),
            requires: ready_requires.into(),
        };
        Ok(Gateway {
            router: Router {
                board,
                inflight,
                limits,
                tasks: Arc::new(upstream_tasks),
            },
            cancel,
            tasks: Mutex::new(tasks),
            ready,
            tasks_config,
        })
    }
}

/// Many MCP servers served as one: each upstream connected and supervised
/// by a task of its own, their tools, prompts, resources and templates
/// merged into one catalog ([`crate::naming`]), and each request routed to
/// the upstream that serves it under the name it knows.
///
/// Dropping the gateway stops its upstreams (their processes are killed);
/// [`shutdown`](Self::shutdown) stops them in order and waits until every
/// process is reaped.
///
/// # Examples
/// ```no_run
/// use mcp_gateway::{Gateway, GatewayConfig};
///
/// # async fn run() -> Result<(), mcp_gateway::Error> {
/// let config = GatewayConfig::from_json(r#"{"mcpServers": {
///     "files": {"command": "mcp-files"},
///     "search": {"url": "http://127.0.0.1:8080/mcp"}
/// }}"#)?;
/// let gateway = Gateway::builder(config).start()?;
/// gateway.ready().await;
/// for (route, tool) in &gateway.catalog().tools {
///     println!("{} (`{}` of {})", tool.name, route.name, route.upstream);
/// }
/// let result = gateway.call_tool("files_read", None, Default::default()).await?;
/// # let _ = result;
/// gateway.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct Gateway {
    router: Router,
    cancel: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    ready: ReadyCheck,
    tasks_config: TasksConfig,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.router.board.statuses())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway over `config`'s upstreams, named by [`Prefix`], presenting
    /// itself as `mcp-gateway`.
    pub fn builder(config: GatewayConfig) -> GatewayBuilder {
        GatewayBuilder {
            config,
            naming: Box::new(Prefix::default()),
            client: ClientConfig::new("mcp-gateway", env!("CARGO_PKG_VERSION")),
            ready_requires: None,
            event_queue: DEFAULT_EVENT_QUEUE,
            authorizers: BTreeMap::new(),
            tasks: TasksConfig::new(),
        }
    }

    /// The merged catalog as it is now: what to list downstream, and where
    /// each entry goes.
    pub fn catalog(&self) -> Arc<Merged> {
        self.router.board.merged()
    }

    /// Events from now on: catalog changes, resource updates, upstream
    /// logs, upstreams up and down.
    pub fn events(&self) -> broadcast::Receiver<GatewayEvent> {
        self.router.board.subscribe()
    }

    /// Every upstream's status, by name (for a health endpoint).
    pub fn statuses(&self) -> BTreeMap<Arc<str>, UpstreamStatus> {
        self.router.board.statuses()
    }

    /// How many upstream tasks the gateway follows now for its clients'
    /// tasks (at most [`Limits::max_tasks`](crate::Limits::max_tasks)).
    pub fn upstream_tasks(&self) -> usize {
        self.router.tasks.len()
    }

    /// Whether every upstream readiness waits for has connected at least
    /// once.
    pub fn is_ready(&self) -> bool {
        self.ready.waiting().is_empty()
    }

    /// Waits until [`is_ready`](Self::is_ready) (forever if an upstream
    /// never connects: bound it with a timeout).
    pub async fn ready(&self) {
        let mut changes = self.router.board.watch();
        while !self.is_ready() {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Calls the downstream tool `name` on the upstream that serves it,
    /// under its upstream name; the result as the upstream sent it. The
    /// upstream's asks (sampling, elicitation, roots) are refused: no
    /// client of the gateway's is there to answer them (a call through
    /// [`server`](Self::server) has one).
    ///
    /// # Errors
    /// [`Error::NotFound`] for a name not in the catalog;
    /// [`Error::Unavailable`] while its upstream is not connected;
    /// [`Error::UpstreamLost`] when the upstream's connection ended during
    /// the call; [`Error::Upstream`] for the upstream's own error.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the upstream call
    /// (`notifications/cancelled`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let route = self.router.tool(name)?;
        self.router.call_tool(&route, arguments, options).await
    }

    /// Gets the downstream prompt `name` from the upstream that serves it.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: RequestOptions,
    ) -> Result<GetPromptResult, Error> {
        let route = self.router.prompt(name)?;
        self.router.get_prompt(&route, arguments, options).await
    }

    /// Reads `uri` from the upstream that owns it (listed it, or lists a
    /// template matching it).
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn read_resource(
        &self,
        uri: &str,
        options: RequestOptions,
    ) -> Result<ReadResourceResult, Error> {
        let upstream = self.router.owner(uri)?;
        self.router.read_resource(&upstream, uri, options).await
    }

    /// Subscribes to `uri` at the upstream that owns it; its updates come
    /// as [`GatewayEvent::ResourceUpdated`]. The subscription is made
    /// again in each new session or connection of the upstream.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        let upstream = self.router.owner(uri)?;
        self.router.subscribe(&upstream, uri).await
    }

    /// Ends the subscription to `uri` at the upstream that owns it.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        let upstream = self.router.owner(uri)?;
        self.router.unsubscribe(&upstream, uri).await
    }

    /// Completes an argument of a downstream prompt (renamed back) or of a
    /// resource template (routed to the upstream that listed it).
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn complete(
        &self,
        reference: CompleteReference,
        argument: CompleteArgument,
        context: Option<BTreeMap<String, String>>,
        options: RequestOptions,
    ) -> Result<CompleteResult, Error> {
        let (upstream, reference) = self.router.completion(reference)?;
        self.router
            .complete(&upstream, reference, argument, context, options)
            .await
    }

    /// The gateway as one MCP server, built from `builder` (its name,
    /// instructions, HTTP or stdio serving are the caller's): the merged
    /// catalog's entries, kept in step with the upstreams (each change
    /// announced to its clients in both eras), each request forwarded to
    /// its upstream with the client's progress, cancellation and answers
    /// to the upstream's asks; resource subscriptions made upstream and
    /// their updates routed back. The task that keeps the catalog in step
    /// is the gateway's: [`shutdown`](Self::shutdown) stops it.
    ///
    /// Entries the builder registers itself stay beside the gateway's; a
    /// name both hold is refused (the change that brings it is logged and
    /// not served), so give the builder's own entries names no upstream
    /// takes. Downstream credentials are never passed upstream: an HTTP
    /// upstream gets only the headers its config names.
    ///
    /// The server runs tools as tasks ([`GatewayBuilder::tasks`]; so
    /// `builder` must not): a tool is advertised with the task support
    /// its upstream gives it, and a client's task of a tool whose upstream
    /// runs tasks is passed through to it (see the [crate] docs).
    ///
    /// # Errors
    /// [`Error::Server`] when the server cannot be built.
    pub fn server(&self, builder: ServerBuilder) -> Result<Server, Error> {
        // Listening before the first fill: no change falls in between.
        let events = self.router.board.subscribe();
        let builder = builder.tasks(self.tasks_config.clone());
        let server = downstream::build(&self.router, builder)?;
        let task = tokio::spawn(downstream::keep_in_step(
            self.router.clone(),
            server.clone(),
            events,
            self.cancel.clone(),
        ));
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task);
        Ok(server)
    }

    /// `server` (from [`server`](Self::server)) as an HTTP service: its
    /// own streamable HTTP service (both eras on one endpoint, the
    /// config's Origin and Host checks, limits and probes), whose
    /// readiness probe (`/readyz`) also answers `503` until the upstreams
    /// readiness waits for have connected
    /// ([`GatewayBuilder::ready_requires`]).
    pub fn http_service(&self, server: &Server, config: HttpServerConfig) -> GatewayHttpService {
        GatewayHttpService::new(server.streamable_http_service(config), self.ready.clone())
    }

    /// Serves `server` over streamable HTTP on `listener` (see
    /// [`http_service`](Self::http_service)) until `shutdown` resolves,
    /// then shuts the service down gracefully (as
    /// [`Server::serve_http`] does). The upstreams keep running: call
    /// [`shutdown`](Self::shutdown) after.
    ///
    /// # Errors
    /// When accepting connections fails persistently.
    pub async fn serve_http(
        &self,
        server: &Server,
        listener: tokio::net::TcpListener,
        config: HttpServerConfig,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let service = self.http_service(server, config);
        let serve = ServeConfig::new().service_shutdown(service.inner().shutdown_handle());
        mcp_transport::http::serve(listener, service, serve, shutdown).await
    }

    /// Stops every upstream: sessions closed, processes shut down (stdin
    /// closed, a bounded wait, then SIGTERM and SIGKILL) and reaped; and
    /// the tasks keeping [`server`](Self::server)s' catalogs in step.
    pub async fn shutdown(&self) {
        self.cancel.cancel();
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for task in tasks {
            if let Err(error) = task.await {
                // An upstream's supervisor, or a server's catalog keeper.
                tracing::error!("a task of the gateway failed: {error}");
            }
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // The supervisors stop; a process left is killed on drop.
        self.cancel.cancel();
    }
}
