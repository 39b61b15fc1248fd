//! How a client presents itself and answers what a server asks of it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcp_core::backoff::BackoffConfig;
use mcp_core::{CancellationToken, DispatcherConfig};

use crate::Negotiation;
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorObject, Implementation, JsonObject, ListRootsResult,
    LoggingMessageNotificationParams, RequestId, Revision, RootsCapability, SamplingCapability,
    ServerNotification,
};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
pub(crate) type SamplingFn = Arc<
    dyn Fn(
            CreateMessageRequestParams,
            RequestInfo,
        ) -> BoxFuture<Result<CreateMessageResult, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type ElicitationFn = Arc<
    dyn Fn(ElicitRequestParams, RequestInfo) -> BoxFuture<Result<ElicitResult, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type RootsFn =
    Arc<dyn Fn(RequestInfo) -> BoxFuture<Result<ListRootsResult, ErrorObject>> + Send + Sync>;
pub(crate) type LoggingFn =
    Arc<dyn Fn(LoggingMessageNotificationParams) -> BoxFuture<()> + Send + Sync>;
pub(crate) type NotificationFn = Arc<dyn Fn(ServerNotification) -> BoxFuture<()> + Send + Sync>;

/// About a request the server sent, for a callback that answers it (the
/// Python SDK's `ClientRequestContext`).
///
/// # Examples
/// A sampling callback that calls back into the server and reads the
/// request's `_meta`:
/// ```
/// use mcp_client::ClientConfig;
/// use mcp_types::{CreateMessageResult, ErrorObject, SamplingMessageContentBlock};
///
/// let config = ClientConfig::new("my-host", "1.0.0").on_sampling(|params, info| async move {
///     let task = info.meta.as_ref().and_then(|meta| meta.related_task.as_ref());
///     let tools = info.session.list_tools(None).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
///     let text = format!("{} messages, task {task:?}, {} tools", params.messages.len(), tools.tools.len());
///     Ok(CreateMessageResult::new(SamplingMessageContentBlock::text(text), "echo-model"))
/// });
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestInfo {
    /// The server's id for the request; in the stateless era, the input
    /// request's key.
    pub id: RequestId,
    /// Cancelled when the server cancels the request; the answer is then dropped.
    pub cancel: CancellationToken,
    /// The session the request came on, to call back into the server while
    /// answering (the callback runs in its own task, so it may).
    pub session: crate::ClientSession,
    /// The request's `_meta`: its progress token, the task it belongs to
    /// (`io.modelcontextprotocol/related-task`), trace context, and any
    /// other key the server set.
    pub meta: Option<mcp_types::RequestMeta>,
}

/// How a client presents itself, and the callbacks that answer the server.
///
/// The capabilities the client declares follow from the callbacks given:
/// `sampling` with [`on_sampling`](Self::on_sampling), `elicitation` (form
/// and URL) with [`on_elicitation`](Self::on_elicitation), `roots` with
/// [`on_list_roots`](Self::on_list_roots).
///
/// # Examples
/// ```
/// use mcp_client::ClientConfig;
/// use mcp_types::{CreateMessageResult, SamplingMessageContentBlock};
///
/// let config = ClientConfig::new("my-host", "1.0.0").on_sampling(|params, _info| async move {
///     Ok(CreateMessageResult::new(
///         SamplingMessageContentBlock::text(format!("{} messages read", params.messages.len())),
///         "echo-model",
///     ))
/// });
/// assert!(config.capabilities().sampling.is_some());
/// ```
#[derive(Clone)]
pub struct ClientConfig {
    pub(crate) info: Implementation,
    pub(crate) protocol_version: Revision,
    pub(crate) negotiation: Negotiation,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) dispatcher: DispatcherConfig,
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) sampling_capability: SamplingCapability,
    pub(crate) elicitation: Option<ElicitationFn>,
    pub(crate) roots: Option<RootsFn>,
    pub(crate) roots_list_changed: bool,
    pub(crate) logging: Option<LoggingFn>,
    pub(crate) notification: Option<NotificationFn>,
    pub(crate) validate_tool_output: bool,
    pub(crate) extensions: crate::extension::declared::ExtensionConfig,
    pub(crate) task_status_queue: usize,
    pub(crate) hosted_tasks: Option<crate::hosted::HostedTasks>,
    pub(crate) events: Option<crate::events::EventFn>,
    pub(crate) list_limits: ListLimits,
    pub(crate) restarts: BackoffConfig,
    pub(crate) max_cache_ttl: Duration,
}

/// How much one `list_all_*` call reads before it stops with
/// [`Error::ListLimit`](crate::Error::ListLimit): a server handing out
/// endless pages, or huge ones, is refused before it exhausts the host's
/// memory. Each limit has a default a real server stays far below.
///
/// # Examples
/// ```
/// use mcp_client::{ClientConfig, ListLimits};
/// let config = ClientConfig::new("my-host", "1.0.0")
///     .list_limits(ListLimits::new().with_max_items(5_000));
/// # let _ = config;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListLimits {
    /// Pages read at most. Default 1,000.
    pub max_pages: usize,
    /// Items (tools, resources, ...) kept at most, over all pages. Default
    /// 100,000.
    pub max_items: usize,
    /// Bytes of pages read at most, as they came on the wire. Default
    /// 64 MiB.
    pub max_bytes: usize,
}

impl Default for ListLimits {
    fn default() -> Self {
        Self {
            max_pages: 1_000,
            max_items: 100_000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

impl ListLimits {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`max_pages`](Self::max_pages).
    #[must_use]
    pub fn with_max_pages(self, pages: usize) -> Self {
        Self {
            max_pages: pages,
            ..self
        }
    }

    /// Sets [`max_items`](Self::max_items).
    #[must_use]
    pub fn with_max_items(self, items: usize) -> Self {
        Self {
            max_items: items,
            ..self
        }
    }

    /// Sets [`max_bytes`](Self::max_bytes).
    #[must_use]
    pub fn with_max_bytes(self, bytes: usize) -> Self {
        Self {
            max_bytes: bytes,
            ..self
        }
    }
}

impl ClientConfig {
    /// A client named `name` at `version`, with no callbacks.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self::with_info(Implementation::new(name, version))
    }

    /// A client with a full implementation description.
    pub fn with_info(info: Implementation) -> Self {
        Self {
            info,
            protocol_version: Revision::LATEST,
            negotiation: Negotiation::Newest,
            request_timeout: None,
            dispatcher: DispatcherConfig::default(),
            sampling: None,
            sampling_capability: SamplingCapability::new(),
            elicitation: None,
            roots: None,
            roots_list_changed: false,
            logging: None,
            notification: None,
            validate_tool_output: true,
            extensions: Default::default(),
            task_status_queue: crate::task_states::DEFAULT_TASK_STATUS_QUEUE,
            hosted_tasks: None,
            events: None,
            list_limits: ListLimits::default(),
            restarts: BackoffConfig::new()
                .with_floor(Duration::from_millis(100))
                .with_budget(3, Duration::from_secs(60)),
            max_cache_ttl: Duration::from_secs(3600),
        }
    }

    /// The newest revision to speak (the latest, 2026-07-28, by default).
    /// A stateless revision lets [`Client`](crate::Client) try
    /// `server/discover` first; a handshake revision goes straight to
    /// `initialize` asking for it (the server may answer with an older one).
    pub fn protocol_version(mut self, revision: Revision) -> Self {
        self.protocol_version = revision;
        self
    }

    /// How the era is settled with the server ([`Negotiation::Newest`]
    /// by default: `server/discover`, falling back to `initialize`).
    pub fn negotiation(mut self, policy: Negotiation) -> Self {
        self.negotiation = policy;
        self
    }

    /// A timeout for every request that does not set its own.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// The dispatcher settings (queues, message limits).
    pub fn dispatcher_config(mut self, config: DispatcherConfig) -> Self {
        self.dispatcher = config;
        self
    }

    /// Answers `sampling/createMessage`: run the host's model.
    pub fn on_sampling<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, RequestInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.sampling = Some(Arc::new(move |params, info| {
            let callback = callback.clone();
            Box::pin(async move { callback(params, info).await })
        }));
        self
    }

    /// Declares `sampling.tools`: the sampling callback accepts `tools` and
    /// `toolChoice`.
    pub fn sampling_tools(mut self, enabled: bool) -> Self {
        self.sampling_capability.tools = enabled.then(JsonObject::new);
        self
    }

    /// The `sampling` capability declared with
    /// [`on_sampling`](Self::on_sampling), whole: `context` (the callback
    /// honours `includeContext` other than `none`; soft-deprecated),
    /// `tools`, and any other member (the Python SDK's
    /// `sampling_capabilities`). `{}` unless set.
    ///
    /// # Examples
    /// ```
    /// use mcp_client::ClientConfig;
    /// use mcp_types::{CreateMessageResult, JsonObject, SamplingCapability, SamplingMessageContentBlock};
    ///
    /// let config = ClientConfig::new("my-host", "1.0.0")
    ///     .on_sampling(|_, _| async {
    ///         Ok(CreateMessageResult::new(SamplingMessageContentBlock::text("done"), "model"))
    ///     })
    ///     .sampling_capability(
    ///         SamplingCapability::new().with_context(JsonObject::new()).with_tools(JsonObject::new()),
    ///     );
    /// let declared = config.capabilities().sampling.expect("sampling");
    /// assert!(declared.context.is_some() && declared.tools.is_some());
    /// ```
    pub fn sampling_capability(mut self, capability: SamplingCapability) -> Self {
        self.sampling_capability = capability;
        self
    }

    /// Answers `elicitation/create` in form and URL mode: ask the user.
    pub fn on_elicitation<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ElicitRequestParams, RequestInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.elicitation = Some(Arc::new(move |params, info| {
            let callback = callback.clone();
            Box::pin(async move { callback(params, info).await })
        }));
        self
    }

    /// Answers `roots/list`. Declares `roots.listChanged`, so the host may
    /// call [`send_roots_list_changed`](crate::ClientSession::send_roots_list_changed).
    pub fn on_list_roots<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(RequestInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.roots = Some(Arc::new(move |info| {
            let callback = callback.clone();
            Box::pin(async move { callback(info).await })
        }));
        self.roots_list_changed = true;
        self
    }

    /// Receives `notifications/message` (the server's log).
    pub fn on_logging<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(LoggingMessageNotificationParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.logging = Some(Arc::new(move |params| {
            let callback = callback.clone();
            Box::pin(async move { callback(params).await })
        }));
        self
    }

    /// Receives every notification from the server (log messages too, after
    /// [`on_logging`](Self::on_logging)), in order of arrival.
    pub fn on_notification<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ServerNotification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.notification = Some(Arc::new(move |notification| {
            let callback = callback.clone();
            Box::pin(async move { callback(notification).await })
        }));
        self
    }

    /// Whether `call_tool` checks structured results against the output
    /// schema of a tool the session has listed (on by default; needs the
    /// `output-validation` feature, without which nothing is checked).
    pub fn validate_tool_output(mut self, enabled: bool) -> Self {
        self.validate_tool_output = enabled;
        self
    }

    /// Hears what happens to the session that no call returns: a session
    /// the client started anew after the server forgot the old one
    /// ([`SessionEvent::Restarted`](crate::SessionEvent::Restarted): refresh
    /// what you cached of it), and faults no caller waits for
    /// ([`SessionEvent::Fault`](crate::SessionEvent::Fault): an unreadable
    /// message, a response to nothing, an error with no id, the transport
    /// failing between requests, the connection dropping). Called on the
    /// connection's read loop or in the task of the call that noticed: keep
    /// it short, hand anything slow to a channel.
    pub fn on_event(
        mut self,
        callback: impl Fn(crate::SessionEvent) + Send + Sync + 'static,
    ) -> Self {
        self.events = Some(Arc::new(callback));
        self
    }

    /// How much one `list_all_*` call may read ([`ListLimits::default`]
    /// unless set).
    pub fn list_limits(mut self, limits: ListLimits) -> Self {
        self.list_limits = limits;
        self
    }

    /// How often the client starts a session anew on its own when the
    /// server forgets it (HTTP 404) or stops accepting the negotiated
    /// revision: by default at most 3 times a minute, 100 ms apart at
    /// least and doubling; past that, calls fail with
    /// [`Error::SessionLost`](crate::Error::SessionLost).
    pub fn session_restarts(mut self, backoff: BackoffConfig) -> Self {
        self.restarts = backoff;
        self
    }

    /// The longest a stateless-era result is reused, whatever `ttlMs` the
    /// server allows (1 hour by default).
    pub fn max_cache_ttl(mut self, ttl: Duration) -> Self {
        self.max_cache_ttl = ttl;
        self
    }

    /// How many pushed task states the session holds for its
    /// [`TaskWatch`](crate::TaskWatch)es before the slowest loses the
    /// oldest ([`DEFAULT_TASK_STATUS_QUEUE`](crate::DEFAULT_TASK_STATUS_QUEUE)
    /// by default).
    pub fn task_status_queue(mut self, capacity: usize) -> Self {
        self.task_status_queue = capacity.max(1);
        self
    }

    /// Runs the server's task-augmented `sampling/createMessage` and
    /// `elicitation/create` (2025-11-25) as tasks: the sampling and
    /// elicitation callbacks run on after the request is answered with the
    /// task, and the server follows them with `tasks/get`, `tasks/result`,
    /// `tasks/list` and `tasks/cancel` (see [`HostedTasks`](crate::HostedTasks)).
    /// Declares `capabilities.tasks` at 2025-11-25.
    pub fn host_tasks(mut self, tasks: crate::HostedTasks) -> Self {
        self.hosted_tasks = Some(tasks);
        self
    }

    /// Tells the host of `event`, if it listens.
    pub(crate) fn emit(&self, event: crate::SessionEvent) {
        match &self.events {
            Some(callback) => callback(event),
            None => tracing::debug!(?event, "a session event no callback hears"),
        }
    }

    /// The capabilities this configuration declares at the newest revision
    /// it speaks (see [`capabilities_at`](Self::capabilities_at)).
    pub fn capabilities(&self) -> ClientCapabilities {
        self.capabilities_at(self.protocol_version)
    }

    /// The capabilities this configuration declares to a server speaking
    /// `revision`: extensions whose [result claims](crate::extension) are
    /// all inactive there are left out.
    pub fn capabilities_at(&self, revision: Revision) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::new();
        capabilities.extensions = self.extensions.advertised(revision);
        if self.sampling.is_some() {
            capabilities.sampling = Some(self.sampling_capability.clone());
        }
        if self.elicitation.is_some() {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(JsonObject::new());
            elicitation.url = Some(JsonObject::new());
            capabilities.elicitation = Some(elicitation);
        }
        // The core tasks exist at 2025-11-25 only.
        if self.hosted_tasks.is_some() && revision == Revision::V2025_11_25 {
            capabilities.tasks = Some(crate::hosted::Host::capability(
                self.sampling.is_some(),
                self.elicitation.is_some(),
            ));
        }
        if self.roots.is_some() {
            let mut roots = RootsCapability::new();
            roots.list_changed = self.roots_list_changed.then_some(true);
            capabilities.roots = Some(roots);
        }
        capabilities
    }
}
