//! What a client is configured with, as plain data the session reads:
//! who it is, its limits and policies, and its callbacks. The callbacks'
//! types are generic over what a callback is told of a request (`I`, the
//! session's [`RequestInfo`](crate::RequestInfo)), so this floor need not
//! name the session that holds it.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::backoff::BackoffConfig;
use mcp_core::{BoxFuture, DispatcherConfig};
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorObject, Implementation, JsonObject, ListRootsResult,
    LoggingMessageNotificationParams, RequestId, Revision, RootsCapability, SamplingCapability,
    ServerNotification,
};

use crate::events::{EventFn, SessionEvent};
use crate::extension::declared::ExtensionConfig;
use crate::hosted::{Host, HostedTasks};
use crate::task_states::DEFAULT_TASK_STATUS_QUEUE;

/// About a notification the server sent, for
/// [`ClientConfig::on_notification_with`](crate::ClientConfig::on_notification_with).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct NotificationInfo {
    /// Our request the server sent this notification while answering,
    /// where the transport tells (streamable HTTP, either era: it came on
    /// that request's SSE stream); `None` over stdio and on the standalone
    /// GET or listen stream, where nothing on the wire ties it to a request.
    pub related_request: Option<RequestId>,
}

pub(crate) type SamplingFn<I> = Arc<
    dyn Fn(CreateMessageRequestParams, I) -> BoxFuture<Result<CreateMessageResult, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type ElicitationFn<I> = Arc<
    dyn Fn(ElicitRequestParams, I) -> BoxFuture<Result<ElicitResult, ErrorObject>> + Send + Sync,
>;
pub(crate) type RootsFn<I> =
    Arc<dyn Fn(I) -> BoxFuture<Result<ListRootsResult, ErrorObject>> + Send + Sync>;
pub(crate) type LoggingFn =
    Arc<dyn Fn(LoggingMessageNotificationParams) -> BoxFuture<()> + Send + Sync>;
pub(crate) type NotificationFn =
    Arc<dyn Fn(ServerNotification, NotificationInfo) -> BoxFuture<()> + Send + Sync>;

/// The settings of a [`ClientConfig`](crate::ClientConfig): what the
/// session keeps of it. `I` is what a callback is told of a request.
#[derive(Clone)]
pub(crate) struct Settings<I> {
    pub(crate) info: Implementation,
    pub(crate) protocol_version: Revision,
    pub(crate) negotiation: Negotiation,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) dispatcher: DispatcherConfig,
    pub(crate) sampling: Option<SamplingFn<I>>,
    pub(crate) sampling_capability: SamplingCapability,
    pub(crate) elicitation: Option<ElicitationFn<I>>,
    pub(crate) roots: Option<RootsFn<I>>,
    pub(crate) roots_list_changed: bool,
    pub(crate) logging: Option<LoggingFn>,
    pub(crate) notification: Option<NotificationFn>,
    pub(crate) validate_tool_output: bool,
    pub(crate) extensions: ExtensionConfig,
    pub(crate) task_status_queue: usize,
    pub(crate) hosted_tasks: Option<HostedTasks>,
    pub(crate) events: Option<EventFn>,
    pub(crate) list_limits: ListLimits,
    pub(crate) restarts: BackoffConfig,
    pub(crate) max_cache_ttl: Duration,
}

impl<I> Settings<I> {
    /// The defaults, for a client described by `info`.
    pub(crate) fn new(info: Implementation) -> Self {
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
            task_status_queue: DEFAULT_TASK_STATUS_QUEUE,
            hosted_tasks: None,
            events: None,
            list_limits: ListLimits::default(),
            restarts: BackoffConfig::new()
                .with_floor(Duration::from_millis(100))
                .with_budget(3, Duration::from_secs(60)),
            max_cache_ttl: Duration::from_secs(3600),
        }
    }

    /// Tells the host of `event`, if it listens.
    pub(crate) fn emit(&self, event: SessionEvent) {
        match &self.events {
            Some(callback) => callback(event),
            None => tracing::debug!(?event, "a session event no callback hears"),
        }
    }

    /// The capabilities this configuration declares to a server speaking
    /// `revision`: extensions whose [result claims](crate::extension) are
    /// all inactive there are left out.
    pub(crate) fn capabilities_at(&self, revision: Revision) -> ClientCapabilities {
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
            capabilities.tasks = Some(Host::capability(
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

/// How a client settles the protocol era with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Negotiation {
    /// The newest era both sides speak: `server/discover` first, falling
    /// back to `initialize` when the server does not answer it as a
    /// stateless server would (the default).
    #[default]
    Newest,
    /// The stateless era (2026-07-28) or fail: `server/discover` only.
    StatelessOnly,
    /// The handshake era only: `initialize`, never `server/discover`.
    HandshakeOnly,
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
