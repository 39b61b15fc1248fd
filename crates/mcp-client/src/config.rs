//! How a client presents itself and answers what a server asks of it: the
//! public builder over the plain `Settings` the session keeps.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_core::DispatcherConfig;
use mcp_core::backoff::BackoffConfig;
use mcp_types::extension::{ExtensionId, InvalidExtensionId};
use mcp_types::method::NotificationMethod;
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ErrorObject, Implementation, JsonObject, ListRootsResult,
    LoggingMessageNotificationParams, Revision, SamplingCapability, ServerNotification,
};

use crate::events::SessionEvent;
use crate::extension::bindings::{Binding, BindingFn, DEFAULT_BINDING_QUEUE};
use crate::extension::claims::ResultClaim;
use crate::extension::error::ExtensionConfigError;
use crate::hosted::HostedTasks;
use crate::session::RequestInfo;
use crate::settings::{ListLimits, Negotiation, Settings};

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
    pub(crate) settings: Settings<RequestInfo>,
}

impl ClientConfig {
    /// A client named `name` at `version`, with no callbacks.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self::with_info(Implementation::new(name, version))
    }

    /// A client with a full implementation description.
    pub fn with_info(info: Implementation) -> Self {
        Self {
            settings: Settings::new(info),
        }
    }

    /// The newest revision to speak (the latest, 2026-07-28, by default).
    /// A stateless revision lets [`Client`](crate::Client) try
    /// `server/discover` first; a handshake revision goes straight to
    /// `initialize` asking for it (the server may answer with an older one).
    pub fn protocol_version(mut self, revision: Revision) -> Self {
        self.settings.protocol_version = revision;
        self
    }

    /// How the era is settled with the server ([`Negotiation::Newest`]
    /// by default: `server/discover`, falling back to `initialize`).
    pub fn negotiation(mut self, policy: Negotiation) -> Self {
        self.settings.negotiation = policy;
        self
    }

    /// A timeout for every request that does not set its own.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.settings.request_timeout = Some(timeout);
        self
    }

    /// The dispatcher settings (queues, message limits).
    pub fn dispatcher_config(mut self, config: DispatcherConfig) -> Self {
        self.settings.dispatcher = config;
        self
    }

    /// Answers `sampling/createMessage`: run the host's model.
    pub fn on_sampling<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, RequestInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.settings.sampling = Some(Arc::new(move |params, info| {
            let callback = callback.clone();
            Box::pin(async move { callback(params, info).await })
        }));
        self
    }

    /// Declares `sampling.tools`: the sampling callback accepts `tools` and
    /// `toolChoice`.
    pub fn sampling_tools(mut self, enabled: bool) -> Self {
        self.settings.sampling_capability.tools = enabled.then(JsonObject::new);
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
        self.settings.sampling_capability = capability;
        self
    }

    /// Answers `elicitation/create` in form and URL mode: ask the user.
    pub fn on_elicitation<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ElicitRequestParams, RequestInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.settings.elicitation = Some(Arc::new(move |params, info| {
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
        self.settings.roots = Some(Arc::new(move |info| {
            let callback = callback.clone();
            Box::pin(async move { callback(info).await })
        }));
        self.settings.roots_list_changed = true;
        self
    }

    /// Receives `notifications/message` (the server's log).
    pub fn on_logging<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(LoggingMessageNotificationParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.settings.logging = Some(Arc::new(move |params| {
            let callback = callback.clone();
            Box::pin(async move { callback(params).await })
        }));
        self
    }

    /// Receives every notification from the server (log messages too, after
    /// [`on_logging`](Self::on_logging)), in order of arrival.
    pub fn on_notification<F, Fut>(self, callback: F) -> Self
    where
        F: Fn(ServerNotification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_notification_with(move |notification, _| callback(notification))
    }

    /// As [`on_notification`](Self::on_notification), the callback told
    /// also which of our requests the notification came in the course of,
    /// where the transport says ([`NotificationInfo::related_request`]):
    /// how a proxy hands an upstream's log messages to the call they
    /// belong to. Replaces an earlier `on_notification` (one callback).
    ///
    /// [`NotificationInfo::related_request`]: crate::NotificationInfo::related_request
    pub fn on_notification_with<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ServerNotification, crate::NotificationInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // The callback's own future, boxed: nothing shared to clone per
        // notification.
        self.settings.notification = Some(Arc::new(move |notification, info| {
            Box::pin(callback(notification, info))
        }));
        self
    }

    /// Whether `call_tool` checks structured results against the output
    /// schema of a tool the session has listed (on by default; needs the
    /// `output-validation` feature, without which nothing is checked).
    pub fn validate_tool_output(mut self, enabled: bool) -> Self {
        self.settings.validate_tool_output = enabled;
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
    pub fn on_event(mut self, callback: impl Fn(SessionEvent) + Send + Sync + 'static) -> Self {
        self.settings.events = Some(Arc::new(callback));
        self
    }

    /// How much one `list_all_*` call may read ([`ListLimits::default`]
    /// unless set).
    pub fn list_limits(mut self, limits: ListLimits) -> Self {
        self.settings.list_limits = limits;
        self
    }

    /// How often the client starts a session anew on its own when the
    /// server forgets it (HTTP 404) or stops accepting the negotiated
    /// revision: by default at most 3 times a minute, 100 ms apart at
    /// least and doubling; past that, calls fail with
    /// [`Error::SessionLost`](crate::Error::SessionLost).
    pub fn session_restarts(mut self, backoff: BackoffConfig) -> Self {
        self.settings.restarts = backoff;
        self
    }

    /// The longest a stateless-era result is reused, whatever `ttlMs` the
    /// server allows (1 hour by default).
    pub fn max_cache_ttl(mut self, ttl: Duration) -> Self {
        self.settings.max_cache_ttl = ttl;
        self
    }

    /// How many pushed task states the session holds for its
    /// [`TaskWatch`](crate::TaskWatch)es before the slowest loses the
    /// oldest ([`DEFAULT_TASK_STATUS_QUEUE`](crate::DEFAULT_TASK_STATUS_QUEUE)
    /// by default).
    pub fn task_status_queue(mut self, capacity: usize) -> Self {
        self.settings.task_status_queue = capacity.max(1);
        self
    }

    /// Runs the server's task-augmented `sampling/createMessage` and
    /// `elicitation/create` (2025-11-25) as tasks: the sampling and
    /// elicitation callbacks run on after the request is answered with the
    /// task, and the server follows them with `tasks/get`, `tasks/result`,
    /// `tasks/list` and `tasks/cancel` (see [`HostedTasks`](crate::HostedTasks)).
    /// Declares `capabilities.tasks` at 2025-11-25.
    pub fn host_tasks(mut self, tasks: HostedTasks) -> Self {
        self.settings.hosted_tasks = Some(tasks);
        self
    }

    /// The capabilities this configuration declares at the newest revision
    /// it speaks (see [`capabilities_at`](Self::capabilities_at)).
    pub fn capabilities(&self) -> ClientCapabilities {
        self.capabilities_at(self.settings.protocol_version)
    }

    /// The capabilities this configuration declares to a server speaking
    /// `revision`: extensions whose [result claims](crate::extension) are
    /// all inactive there are left out.
    pub fn capabilities_at(&self, revision: Revision) -> ClientCapabilities {
        self.settings.capabilities_at(revision)
    }
}

impl ClientConfig {
    /// Declares extension `id` with its `settings` (`{}` for none) under
    /// `capabilities.extensions`.
    ///
    /// # Errors
    /// [`InvalidExtensionId`] when `id` is not `vendor.prefix/name`.
    pub fn extension(
        mut self,
        id: impl Into<String>,
        settings: JsonObject,
    ) -> Result<Self, InvalidExtensionId> {
        let id = ExtensionId::new(id)?;
        self.settings
            .extensions
            .declared
            .retain(|(known, _)| *known != id);
        self.settings.extensions.declared.push((id, settings));
        Ok(self)
    }

    /// Accepts `tools/call` results of claim type `T` (and advertises its
    /// extension where the claim is active).
    ///
    /// # Errors
    /// [`ExtensionConfigError`] for an invalid identifier, a core or
    /// already claimed `resultType`.
    pub fn claim<T: ResultClaim>(mut self) -> Result<Self, ExtensionConfigError> {
        self.settings.extensions.claims.add::<T>()?;
        Ok(self)
    }

    /// Hands notification method `M` (one the core protocol does not define
    /// at the negotiated revision) to `handler`, through a FIFO of
    /// [`DEFAULT_BINDING_QUEUE`](crate::extension::DEFAULT_BINDING_QUEUE) notifications.
    ///
    /// # Errors
    /// [`ExtensionConfigError::DuplicateBinding`] when `M` is already bound.
    pub fn bind_notification<M, F, Fut>(self, handler: F) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.bind_notification_with_capacity::<M, F, Fut>(DEFAULT_BINDING_QUEUE, handler)
    }

    /// As [`bind_notification`](Self::bind_notification), with a FIFO of
    /// `capacity` notifications (at least 1).
    ///
    /// # Errors
    /// As [`bind_notification`](Self::bind_notification).
    pub fn bind_notification_with_capacity<M, F, Fut>(
        mut self,
        capacity: usize,
        handler: F,
    ) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if self
            .settings
            .extensions
            .bindings
            .iter()
            .any(|b| b.method == M::NAME)
        {
            return Err(ExtensionConfigError::DuplicateBinding { method: M::NAME });
        }
        let handler = Arc::new(handler);
        let handler: BindingFn = Arc::new(move |params| {
            let handler = handler.clone();
            Box::pin(async move {
                match mcp_types::parse_params::<M>(params.as_ref()) {
                    Ok(params) => handler(params).await,
                    Err(e) => tracing::warn!(
                        method = M::NAME,
                        error = %e,
                        "dropped a bound notification whose params do not fit"
                    ),
                }
            })
        });
        self.settings.extensions.bindings.push(Binding {
            method: M::NAME,
            handler,
            capacity: capacity.max(1),
        });
        Ok(self)
    }
}
