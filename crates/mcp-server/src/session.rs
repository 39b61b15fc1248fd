//! One client's session: what it declared, and the requests and
//! notifications a server sends it.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::{CancellationToken, Peer, SendOptions, TransportContext};
use mcp_types::method::{Method, NotificationMethod, RequestMethod};
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitRequestedSchema, ElicitResult, ElicitationCompleteParams, EmptyResult, Implementation,
    InitializeRequestParams, InputRequest, InputResponse, InputResponses, ListRootsResult,
    LoggingLevel, LoggingMessageNotificationParams, ProgressNotificationParams, ProgressToken,
    RawJson, RelatedTaskMetadata, RequestId, RequestMeta, ResourceUpdatedNotificationParams,
    Revision, methods,
};
use serde_json::Value;

use crate::Error;
use crate::ask::{Asks, elicited, form_ask, rooted, sampled, url_ask};
use crate::states::AppState;

#[derive(Default)]
struct State {
    client: Option<Arc<InitializeRequestParams>>,
    revision: Option<Revision>,
    /// List changes are forwarded to this session (see `claim_forwarding`).
    forwarding: bool,
    log_level: Option<LoggingLevel>,
    subscriptions: HashSet<String>,
    /// The URIs the subscription hook was told this session follows, here
    /// (`ServerBuilder::on_subscribe`): each is told to the unsubscription
    /// hook once, at `resources/unsubscribe` or when the session ends.
    hooked: HashSet<String>,
    /// Subscriptions added (`true`) or removed here and not yet merged
    /// into the shared record (see `SessionState::persist`).
    #[cfg(feature = "http")]
    pending: Vec<(bool, String)>,
}

/// Per-connection state shared by the session handles and the runner.
#[derive(Default)]
pub(crate) struct SessionState {
    state: Mutex<State>,
    /// Whether the client sent `notifications/initialized`.
    initialized: std::sync::atomic::AtomicBool,
    /// Wakes the list-change forwarder waiting for `initialized`. Kept
    /// inline (a watch channel would be a separate allocation of a few
    /// hundred bytes in every session).
    initialized_notify: tokio::sync::Notify,
    /// Where the session's state is saved for other servers (an HTTP
    /// service with shared stores).
    #[cfg(feature = "http")]
    shared: std::sync::OnceLock<mcp_transport::store::SharedSession>,
}

impl SessionState {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn set_client(&self, params: InitializeRequestParams, revision: Revision) {
        let mut state = self.lock();
        state.client = Some(Arc::new(params));
        state.revision = Some(revision);
    }

    pub(crate) fn revision(&self) -> Option<Revision> {
        self.lock().revision
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized
            .store(true, std::sync::atomic::Ordering::Release);
        self.initialized_notify.notify_waiters();
    }

    /// Whether the client sent `notifications/initialized`.
    fn is_initialized(&self) -> bool {
        self.initialized.load(std::sync::atomic::Ordering::Acquire)
    }

    /// A request other than `ping` arrived after `initialize`: the client
    /// sent `notifications/initialized` first. A shared session takes it
    /// as such, since that notification may have reached another server
    /// (the one that minted the session would otherwise never forward it
    /// list changes and resource updates).
    pub(crate) fn request_after_initialize(&self) {
        #[cfg(feature = "http")]
        if self.shared.get().is_some() && !self.is_initialized() {
            self.mark_initialized();
        }
    }

    /// Resolves once the client sent `notifications/initialized`.
    pub(crate) async fn initialized(&self) {
        loop {
            // Made before the flag is read: `notify_waiters` wakes every
            // future made before it, so the wake-up cannot be missed.
            let notified = self.initialized_notify.notified();
            if self.is_initialized() {
                return;
            }
            notified.await;
        }
    }

    /// `true` the first time only: a client that sends `initialize` twice
    /// still gets each list change once.
    pub(crate) fn claim_forwarding(&self) -> bool {
        !std::mem::replace(&mut self.lock().forwarding, true)
    }

    /// The URIs the client subscribed to.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.lock().subscriptions.iter().cloned().collect()
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.lock().log_level = Some(level);
    }

    /// Subscribes to `uri`, unless the session follows `max` others
    /// already; whether it follows `uri` now.
    pub(crate) fn subscribe(&self, uri: String, max: usize) -> bool {
        let mut state = self.lock();
        if !state.subscriptions.contains(&uri) && state.subscriptions.len() >= max {
            return false;
        }
        #[cfg(feature = "http")]
        if self.shared.get().is_some() {
            state.pending.push((true, uri.clone()));
        }
        state.subscriptions.insert(uri);
        true
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        let mut state = self.lock();
        #[cfg(feature = "http")]
        if self.shared.get().is_some() {
            state.pending.push((false, uri.to_owned()));
        }
        state.subscriptions.remove(uri);
    }

    /// Records that the subscription hook is told of `uri`; whether it was
    /// not yet.
    pub(crate) fn hook(&self, uri: &str) -> bool {
        self.lock().hooked.insert(uri.to_owned())
    }

    /// Records that the unsubscription hook is told of `uri`; whether the
    /// subscription hook was told of it.
    pub(crate) fn unhook(&self, uri: &str) -> bool {
        self.lock().hooked.remove(uri)
    }

    /// Every URI the subscription hook was told of and the unsubscription
    /// hook not yet, forgotten (the session ended).
    pub(crate) fn take_hooked(&self) -> Vec<String> {
        self.lock().hooked.drain().collect()
    }

    /// Whether the client subscribed to `uri`. A shared session's
    /// subscriptions may have changed on another server (a request of the
    /// session served there): when `uri` is not subscribed here, the
    /// stored record is read again first.
    pub(crate) async fn is_subscribed(&self, uri: &str) -> bool {
        if self.lock().subscriptions.contains(uri) {
            return true;
        }
        #[cfg(feature = "http")]
        if let Some(shared) = self.shared.get() {
            match shared.load().await {
                Ok(Some(record)) => {
                    let mut state = self.lock();
                    let mut subscriptions = record.subscriptions.into_iter().collect();
                    apply_pending(&mut subscriptions, &state.pending);
                    state.subscriptions = subscriptions;
                    return state.subscriptions.contains(uri);
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(
                    %error,
                    "the session's subscriptions could not be read from the shared store; \
                     an update of a resource subscribed on another server is not sent"
                ),
            }
        }
        false
    }

    /// Saves the session's state for the other servers sharing its store
    /// (nothing to do without one).
    #[cfg(feature = "http")]
    pub(crate) async fn persist(&self) -> Result<(), mcp_types::ErrorObject> {
        let Some(shared) = self.shared.get() else {
            return Ok(());
        };
        // On the heap: a store's futures are large, and this one nests in
        // the future of every request of the session (which is copied
        // whole when it is boxed), while only a shared session stores.
        Box::pin(self.store(shared)).await
    }

    /// [`Self::persist`] into a shared store.
    #[cfg(feature = "http")]
    async fn store(
        &self,
        shared: &mcp_transport::store::SharedSession,
    ) -> Result<(), mcp_types::ErrorObject> {
        let failed = |error: mcp_transport::Error| {
            tracing::warn!(%error, "the session's state could not be shared");
            mcp_types::ErrorObject::internal_error(format!(
                "the server could not store this session's state ({error}); retry the request"
            ))
        };
        // Other servers change the subscriptions too (each request of the
        // session may land elsewhere): what is stored is merged with what
        // changed here, not overwritten by this server's view.
        let stored = if self.lock().pending.is_empty() {
            None
        } else {
            shared.load().await.map_err(failed)?
        };
        let (record, merged) = {
            let mut state = self.lock();
            let (Some(client), Some(revision)) = (state.client.clone(), state.revision) else {
                return Ok(());
            };
            let pending = std::mem::take(&mut state.pending);
            if let Some(stored) = stored {
                state.subscriptions = stored.subscriptions.into_iter().collect();
                apply_pending(&mut state.subscriptions, &pending);
            }
            let mut record =
                mcp_types::SessionRecord::new(revision.as_str(), client.as_ref().clone());
            record.log_level = state.log_level;
            record.subscriptions = state.subscriptions.iter().cloned().collect();
            record.subscriptions.sort();
            (record, pending)
        };
        if let Err(error) = shared.save(&record).await {
            // Merged again by the next change.
            let mut state = self.lock();
            let later = std::mem::replace(&mut state.pending, merged);
            state.pending.extend(later);
            return Err(failed(error));
        }
        Ok(())
    }

    #[cfg(not(feature = "http"))]
    pub(crate) async fn persist(&self) -> Result<(), mcp_types::ErrorObject> {
        Ok(())
    }

    /// Takes the session's place in a shared store; a session another
    /// server minted takes up its state from the record (initialized: the
    /// client already uses it). `true` when restored.
    #[cfg(feature = "http")]
    pub(crate) fn share(&self, shared: mcp_transport::store::SharedSession) -> bool {
        let restored = shared.restored().cloned();
        let _ = self.shared.set(shared);
        let Some(record) = restored else {
            return false;
        };
        let revision = Revision::from_version(&record.protocol_version)
            .filter(|r| r.is_handshake())
            .unwrap_or(Revision::LATEST_HANDSHAKE);
        let mut state = self.lock();
        state.client = Some(Arc::new(record.client));
        state.revision = Some(revision);
        state.log_level = record.log_level;
        state.subscriptions = record.subscriptions.into_iter().collect();
        drop(state);
        self.mark_initialized();
        true
    }

    /// Whether the client's `initialize` declared extension `id`.
    pub(crate) fn client_declares_extension(&self, id: &str) -> bool {
        self.lock()
            .client
            .as_ref()
            .is_some_and(|p| declares(&p.capabilities, id))
    }
}

/// Whether `capabilities` lists extension `id`.
pub(crate) fn declares(capabilities: &ClientCapabilities, id: &str) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.contains_key(id))
}

/// Applies subscriptions added (`true`) and removed, in order.
#[cfg(feature = "http")]
fn apply_pending(subscriptions: &mut HashSet<String>, pending: &[(bool, String)]) {
    for (added, uri) in pending {
        if *added {
            subscriptions.insert(uri.clone());
        } else {
            subscriptions.remove(uri);
        }
    }
}

/// What a stateless (2026-07-28) request says about its client: the era's
/// replacement for the session's `initialize` params.
#[derive(Debug, Clone)]
pub(crate) struct StatelessRequest {
    pub(crate) revision: Revision,
    /// Shared with the request's `_meta`, not copied from it.
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// A handle on one client's session: what it declared at initialization, and
/// every request and notification a server may send it. Cheap to clone.
///
/// Inside a handler, [`Context::session`] is the session, and what it sends
/// is related to the request being handled (so a streamable HTTP transport
/// can put it on that request's stream).
#[derive(Clone)]
pub struct ServerSession {
    peer: Peer,
    state: Arc<SessionState>,
    stateless: Option<Arc<StatelessRequest>>,
    changes: Option<crate::ListChanges>,
    /// The 2025-11-25 task the call runs as, if it does.
    task: Option<Arc<crate::tasks::TaskSeat>>,
}

impl ServerSession {
    pub(crate) fn new(peer: Peer, state: Arc<SessionState>) -> Self {
        Self {
            peer,
            state,
            stateless: None,
            changes: None,
            task: None,
        }
    }

    /// Runs in (2025-11-25) task `task`: asks park it in `input_required`.
    pub(crate) fn with_task(mut self, task: Option<Arc<crate::tasks::TaskSeat>>) -> Self {
        self.task = task;
        self
    }

    /// The id of the 2025-11-25 task this call runs as (a task-augmented
    /// `tools/call` of the handshake era), if it does. At 2026-07-28 a
    /// call becomes a task where its code first waits
    /// ([`Context::run_as_task`]), for a client that declared the tasks
    /// extension ([`Context::client_supports_extension`]).
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_deref().map(crate::tasks::TaskSeat::task_id)
    }

    pub(crate) fn with_changes(mut self, changes: crate::ListChanges) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Announces list changes to every client of the server, in both eras:
    /// each `subscriptions/listen` stream (2026-07-28) and each initialized
    /// handshake-era session (2024-11-05 to 2025-11-25), as each asked
    /// (see [`ListChanges`](crate::ListChanges)); `send_*_list_changed` tell
    /// this session only.
    pub fn list_changes(&self) -> Option<&crate::ListChanges> {
        self.changes.as_ref()
    }

    /// The connection's state (tasks key a connection's own tasks by it).
    pub(crate) fn session_state(&self) -> &Arc<SessionState> {
        &self.state
    }

    pub(crate) fn for_stateless_request(mut self, request: Arc<StatelessRequest>) -> Self {
        self.stateless = Some(request);
        self
    }

    /// Whether this is a stateless (2026-07-28) request, where the server
    /// cannot send requests to the client and asks for input in its result instead.
    pub fn is_stateless(&self) -> bool {
        self.stateless.is_some()
    }

    /// The client's capabilities: from `initialize`, or from this request's
    /// `_meta` in the stateless era.
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        match &self.stateless {
            Some(request) => Some(ClientCapabilities::clone(&request.capabilities)),
            None => self
                .client_params()
                .map(|p| ClientCapabilities::clone(&p.capabilities)),
        }
    }

    /// Whether the client declared extension `id` (SEP-2133) under
    /// `capabilities.extensions` for the session: in `initialize`, or in
    /// this stateless request's `_meta`. Inside a handler,
    /// [`Context::client_supports_extension`] also reads the request's own
    /// `_meta` declaration.
    pub fn client_declares_extension(&self, id: &str) -> bool {
        match &self.stateless {
            Some(request) => declares(&request.capabilities, id),
            None => self.state.client_declares_extension(id),
        }
    }

    /// The dispatcher's peer, for requests this crate has no helper for.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// This session with what it sends tied to the client's request `id`
    /// (Python's `related_request_id`). Inside a handler the session is
    /// tied to the handler's request already; this is for a session kept
    /// past its handler (a background job reporting on the request that
    /// started it). Over streamable HTTP what it sends goes on that
    /// request's stream while the request is open, then on the client's
    /// GET stream.
    #[must_use]
    pub fn related_to(&self, id: RequestId) -> Self {
        Self {
            peer: self.peer.related_to(id),
            ..self.clone()
        }
    }

    /// Sends a prebuilt JSON-RPC message as it is (Python's
    /// `send_message`): the escape hatch for traffic no helper shapes, such
    /// as delivering queued messages. Nothing is tracked: the client's
    /// answer to a request sent this way reaches no caller, and no
    /// capability, era or log-level check applies. Prefer the typed helpers
    /// or [`Peer::request`] to wait for an answer.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed or the transport
    /// cannot carry the message (over streamable HTTP, a request tied to
    /// no open request while the client has no GET stream:
    /// `TransportError::NoBackChannel`).
    pub async fn send_message(&self, message: mcp_types::JsonRpcMessage) -> Result<(), Error> {
        self.peer
            .send_message(message)
            .await
            .map_err(Error::Request)
    }

    /// The client's `initialize` params, once it has sent them.
    pub fn client_params(&self) -> Option<Arc<InitializeRequestParams>> {
        self.state.lock().client.clone()
    }

    /// The client's name and version, once initialized (or as this
    /// stateless request declares it).
    pub fn client_info(&self) -> Option<Implementation> {
        match &self.stateless {
            Some(request) => request.client_info.as_deref().cloned(),
            None => self.client_params().map(|p| p.client_info.clone()),
        }
    }

    /// The protocol revision: negotiated at initialization, or this
    /// stateless request's.
    pub fn protocol_version(&self) -> Option<Revision> {
        match &self.stateless {
            Some(request) => Some(request.revision),
            None => self.state.revision(),
        }
    }

    /// Whether the client sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.state.is_initialized()
    }

    /// The level set by the client's `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.state.lock().log_level
    }

    /// The least severe level [`send_log_message`](Self::send_log_message)
    /// passes on, `None` when it sends none: in the handshake era the
    /// level of the client's `logging/setLevel` (every level until it sets
    /// one); in the stateless era the level this request names in its
    /// `_meta` (`io.modelcontextprotocol/logLevel`), none without it. A
    /// proxy asks its upstream for as much.
    pub fn log_threshold(&self) -> Option<LoggingLevel> {
        match &self.stateless {
            // Stateless requests ask for log messages by naming a level.
            Some(request) => request.log_level,
            None => Some(self.log_level().unwrap_or(LoggingLevel::Debug)),
        }
    }

    /// The URIs the client subscribed to.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.state.subscriptions()
    }

    /// Whether the client subscribed to updates of `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.state.lock().subscriptions.contains(uri)
    }

    /// Whether the client declared every capability in `required` (and,
    /// within each, every sub-capability `required` names; `experimental`
    /// entries compared by value): see [`ClientCapabilities::covers`].
    pub fn check_client_capability(&self, required: &ClientCapabilities) -> bool {
        self.client_capabilities()
            .is_some_and(|capabilities| capabilities.covers(required))
    }

    /// Sends a request of method `M` and reads its typed result.
    ///
    /// # Errors
    /// [`Error::Request`] when the client answers with an error, the request
    /// times out or the connection closes; [`Error::InvalidResult`] when the
    /// answer does not fit `M::Result`.
    pub async fn send_request<M: RequestMethod>(
        &self,
        params: &M::Params,
        options: SendOptions,
    ) -> Result<M::Result, Error> {
        let params = raw_params::<M>(params)?;
        let result = self.peer.request(M::NAME, params, options).await?;
        result.parse().map_err(|source| Error::InvalidResult {
            method: M::NAME,
            source,
        })
    }

    /// Sends a notification of method `M`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_notification<M: NotificationMethod>(
        &self,
        params: &M::Params,
    ) -> Result<(), Error> {
        let params = raw_params::<M>(params)?;
        self.peer.notify(M::NAME, params).await?;
        Ok(())
    }

    /// Sends `notifications/message`, unless the client asked (with
    /// `logging/setLevel`) for a more severe level only.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_log_message(
        &self,
        level: LoggingLevel,
        data: impl Into<Value>,
        logger: Option<&str>,
    ) -> Result<(), Error> {
        match self.log_threshold() {
            Some(minimum) if level >= minimum => {}
            _ => return Ok(()),
        }
        let mut params = LoggingMessageNotificationParams::new(level, data);
        params.logger = logger.map(str::to_owned);
        self.send_notification::<methods::LoggingMessage>(&params)
            .await
    }

    /// Sends `notifications/progress` for `progress_token`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_progress_notification(
        &self,
        progress_token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), Error> {
        let mut params = ProgressNotificationParams::new(progress_token, progress);
        params.total = total;
        params.message = message;
        self.send_notification::<methods::Progress>(&params).await
    }

    /// Sends `notifications/resources/updated` for `uri` if the client
    /// subscribed to it (and nothing otherwise: the spec sends updates to
    /// subscribers only).
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_resource_updated(&self, uri: &str) -> Result<(), Error> {
        if !self.state.is_subscribed(uri).await {
            return Ok(());
        }
        self.send_notification::<methods::ResourceUpdated>(&ResourceUpdatedNotificationParams::new(
            uri,
        ))
        .await
    }

    /// Sends `notifications/resources/list_changed`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_resource_list_changed(&self) -> Result<(), Error> {
        self.send_notification::<methods::ResourceListChanged>(&None)
            .await
    }

    /// Sends `notifications/tools/list_changed`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_tool_list_changed(&self) -> Result<(), Error> {
        self.send_notification::<methods::ToolListChanged>(&None)
            .await
    }

    /// Sends `notifications/prompts/list_changed`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_prompt_list_changed(&self) -> Result<(), Error> {
        self.send_notification::<methods::PromptListChanged>(&None)
            .await
    }

    /// Sends `notifications/elicitation/complete`: the out-of-band
    /// interaction of a URL elicitation has finished.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_elicit_complete(&self, elicitation_id: &str) -> Result<(), Error> {
        self.send_notification::<methods::ElicitationComplete>(&ElicitationCompleteParams::new(
            elicitation_id,
        ))
        .await
    }

    /// Sends `ping` and waits for the answer.
    ///
    /// # Errors
    /// [`Error::Request`] when the client does not answer.
    pub async fn send_ping(&self) -> Result<(), Error> {
        self.send_request::<methods::Ping>(&None, SendOptions::new())
            .await
            .map(|_: EmptyResult| ())
    }

    /// Sends `sampling/createMessage` to the client (handshake era): asks
    /// its model for a completion.
    ///
    /// Checked first against what the client declared: sampling itself, and
    /// `sampling.tools` when `params` offers tools or a tool choice. Inside a
    /// handler, [`Context::create_message`] asks in either era.
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] before anything is sent;
    /// [`Error::NoServerRequests`] in the stateless era; [`Error::Request`]
    /// when the client refuses or fails.
    pub async fn send_create_message(
        &self,
        params: &CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        sampled(
            self.request_input(InputRequest::CreateMessage(params.clone()))
                .await?,
        )
    }

    /// Sends `elicitation/create` (form mode) to the client (handshake
    /// era): asks the user to fill in a form. Inside a handler, [`Context::elicit_form`] asks in either era.
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] when the client cannot elicit
    /// forms; [`Error::NoServerRequests`] in the stateless era;
    /// [`Error::Request`] when it fails.
    pub async fn send_elicit_form(
        &self,
        message: &str,
        requested_schema: ElicitRequestedSchema,
    ) -> Result<ElicitResult, Error> {
        elicited(
            self.request_input(form_ask(message, requested_schema))
                .await?,
        )
    }

    /// Sends `elicitation/create` (URL mode) to the client (handshake era):
    /// asks the user to visit `url`, for interactions that must not pass through the client, such as signing
    /// in. Inside a handler, [`Context::elicit_url`] asks in either era.
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] when the client cannot elicit URLs;
    /// [`Error::NoServerRequests`] in the stateless era; [`Error::Request`]
    /// when it fails.
    pub async fn send_elicit_url(
        &self,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> Result<ElicitResult, Error> {
        elicited(
            self.request_input(url_ask(message, url, elicitation_id))
                .await?,
        )
    }

    /// Sends `roots/list` to the client (handshake era): asks for its
    /// roots. Inside a handler,
    /// [`Context::list_roots`] asks in either era.
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] when the client has no roots;
    /// [`Error::NoServerRequests`] in the stateless era; [`Error::Request`]
    /// when it fails.
    pub async fn send_list_roots(&self) -> Result<ListRootsResult, Error> {
        rooted(self.request_input(InputRequest::list_roots()).await?)
    }

    /// Checks and sends one ask as a server-to-client request.
    async fn request_input(&self, request: InputRequest) -> Result<InputResponse, Error> {
        self.check_ask(&request)?;
        self.can_send(request.method())?;
        self.send_ask(request).await
    }

    /// Checks an ask against the capabilities the client declared.
    pub(crate) fn check_ask(&self, request: &InputRequest) -> Result<(), Error> {
        let method = request.method();
        let capabilities = self.capabilities_for(method)?;
        match request {
            InputRequest::CreateMessage(params) => {
                let Some(sampling) = &capabilities.sampling else {
                    return Err(self.missing("sampling", method));
                };
                if (params.tools.is_some() || params.tool_choice.is_some())
                    && sampling.tools.is_none()
                {
                    return Err(self.missing("sampling.tools", method));
                }
                mcp_types::check_tool_messages(&params.messages)
                    .map_err(Error::InvalidSamplingMessages)?;
            }
            InputRequest::Elicit(ElicitRequestParams::Url(_))
                if capabilities
                    .elicitation
                    .as_ref()
                    .and_then(|e| e.url.as_ref())
                    .is_none() =>
            {
                return Err(self.missing("elicitation.url", method));
            }
            InputRequest::Elicit(ElicitRequestParams::Url(_)) => {}
            InputRequest::Elicit(_) => {
                let Some(elicitation) = &capabilities.elicitation else {
                    return Err(self.missing("elicitation", method));
                };
                // An empty `elicitation` object (2025-06-18 style) means form mode.
                if elicitation.form.is_none() && elicitation.url.is_some() {
                    return Err(self.missing("elicitation.form", method));
                }
            }
            InputRequest::ListRoots(_) if capabilities.roots.is_none() => {
                return Err(self.missing("roots", method));
            }
            _ => {}
        }
        Ok(())
    }

    /// Sends an ask as a server-to-client request (handshake era); within a
    /// task, related to it and with the task `input_required` meanwhile.
    ///
    /// Boxed: the exchange's state is kilobytes (the request, its answer,
    /// the task seat), and every handler that may ask nests this future.
    /// Unboxed it made each request's future that large whether it asked or
    /// not, and that state is moved, so copied, as the future is built.
    pub(crate) fn send_ask(
        &self,
        request: InputRequest,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<InputResponse, Error>> + Send + '_>> {
        Box::pin(self.send_ask_inner(request))
    }

    async fn send_ask_inner(&self, mut request: InputRequest) -> Result<InputResponse, Error> {
        let Some(task) = &self.task else {
            return self.send_ask_now(request).await;
        };
        let related = Some(RelatedTaskMetadata::new(task.task_id()));
        match &mut request {
            InputRequest::CreateMessage(params) => {
                params
                    .meta
                    .get_or_insert_with(RequestMeta::new)
                    .related_task = related;
            }
            InputRequest::Elicit(ElicitRequestParams::Form(params)) => {
                params
                    .meta
                    .get_or_insert_with(RequestMeta::new)
                    .related_task = related;
            }
            InputRequest::Elicit(ElicitRequestParams::Url(params)) => {
                params
                    .meta
                    .get_or_insert_with(RequestMeta::new)
                    .related_task = related;
            }
            _ => {}
        }
        task.asking(self.send_ask_now(request)).await
    }

    async fn send_ask_now(&self, request: InputRequest) -> Result<InputResponse, Error> {
        let options = SendOptions::new;
        Ok(match request {
            InputRequest::CreateMessage(params) => InputResponse::CreateMessage(
                self.send_request::<methods::CreateMessage>(&params, options())
                    .await?,
            ),
            InputRequest::Elicit(params) => InputResponse::Elicit(
                self.send_request::<methods::Elicit>(&params, options())
                    .await?,
            ),
            InputRequest::ListRoots(_) => InputResponse::ListRoots(
                self.send_request::<methods::ListRoots>(&None, options())
                    .await?,
            ),
            other => {
                return Err(Error::NoServerRequests {
                    method: other.method(),
                });
            }
        })
    }

    /// The capabilities to check a request to the client against.
    fn capabilities_for(&self, method: &'static str) -> Result<ClientCapabilities, Error> {
        self.client_capabilities()
            .ok_or(Error::NotInitialized { method })
    }

    fn missing(&self, capability: &'static str, method: &'static str) -> Error {
        if self.stateless.is_some() {
            Error::MissingRequiredClientCapability { capability, method }
        } else {
            Error::MissingClientCapability { capability, method }
        }
    }

    /// Stateless requests cannot reach the client: checked after the
    /// capability, so a missing capability is reported as such.
    fn can_send(&self, method: &'static str) -> Result<(), Error> {
        match self.stateless {
            Some(_) => Err(Error::NoServerRequests { method }),
            None => Ok(()),
        }
    }
}

fn raw_params<M: Method>(params: &M::Params) -> Result<Option<RawJson>, Error> {
    if M::is_absent(params) {
        return Ok(None);
    }
    RawJson::from_serialize(params)
        .map(Some)
        .map_err(|source| Error::Serialize {
            method: M::NAME,
            source,
        })
}

/// What a handler knows about the request it is serving, and how it talks
/// back to the client about it: progress, log messages, and asks that work
/// in either era. The [`session`](Self::session) it belongs to (a
/// [`ServerSession`], whose sends are related to this request) serves the
/// rest.
#[derive(Clone)]
pub struct Context {
    session: ServerSession,
    request_id: RequestId,
    cancel: CancellationToken,
    meta: Option<Arc<RequestMeta>>,
    transport: TransportContext,
    input: Option<Arc<RequestInput>>,
    asks: Arc<Asks>,
    app_state: Option<AppState>,
    /// Where an extension's request method is served (for
    /// [`ToolCall::rerun`](crate::extension::ToolCall::rerun)); `None` elsewhere.
    ///
    /// Opaque here: the site names the runner, which sits above this file
    /// (extension.rs reads it back as its `CallSite`).
    call_site: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// The answers and state a retried stateless request brought.
#[derive(Debug, Default)]
pub(crate) struct RequestInput {
    pub(crate) responses: Option<InputResponses>,
    pub(crate) state: Option<String>,
}

impl Context {
    pub(crate) fn new(
        session: ServerSession,
        request_id: RequestId,
        cancel: CancellationToken,
        meta: Option<Arc<RequestMeta>>,
        transport: TransportContext,
    ) -> Self {
        Self {
            session,
            request_id,
            cancel,
            meta,
            transport,
            input: None,
            asks: Arc::default(),
            app_state: None,
            call_site: None,
        }
    }

    pub(crate) fn with_state(mut self, state: Option<AppState>) -> Self {
        self.app_state = state;
        self
    }

    pub(crate) fn with_call_site(mut self, site: impl std::any::Any + Send + Sync) -> Self {
        self.call_site = Some(Arc::new(site));
        self
    }

    pub(crate) fn call_site<T: 'static>(&self) -> Option<&T> {
        self.call_site.as_deref()?.downcast_ref()
    }

    /// The state the server was built with
    /// ([`ServerBuilder::with_state`](crate::ServerBuilder::with_state)).
    ///
    /// # Errors
    /// [`Error::NoState`] when the server holds no state of type `S`.
    pub fn state<S: Send + Sync + 'static>(&self) -> Result<&S, Error> {
        self.app_state
            .as_deref()
            .and_then(|state| state.get::<S>())
            .ok_or(Error::NoState {
                type_name: std::any::type_name::<S>(),
            })
    }

    /// The state of type `S`, shared (for the `State` extractor).
    pub(crate) fn shared_state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.app_state
            .as_deref()
            .and_then(|state| state.shared::<S>())
    }

    /// The request's `_meta`, shared (for the `Meta` extractor).
    pub(crate) fn shared_meta(&self) -> Option<&Arc<RequestMeta>> {
        self.meta.as_ref()
    }

    /// The token cancelled with this request (for the extractor).
    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// A retried stateless request: the handler sees this retry's answers
    /// and its own state; the SDK's asks resolve from `answered` (earlier
    /// rounds, sealed) and this retry's answers.
    pub(crate) fn with_input(mut self, input: RequestInput, answered: InputResponses) -> Self {
        let mut known = answered;
        if let Some(responses) = &input.responses {
            known.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        self.asks = Arc::new(Asks::resume(known));
        self.input = Some(Arc::new(input));
        self
    }

    /// The asks of this request (stateless era).
    pub(crate) fn asks(&self) -> &Asks {
        &self.asks
    }

    /// The client's answer to the input request `key` of the previous round
    /// (Multi Round-Trip Requests), if it sent one.
    pub fn input_response(&self, key: &str) -> Option<&InputResponse> {
        self.input
            .as_deref()
            .and_then(|i| i.responses.as_ref())
            .and_then(|r| r.get(key))
    }

    /// Every answer the client sent with this retry.
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.input.as_deref().and_then(|i| i.responses.as_ref())
    }

    /// The state the handler gave with its previous `InputRequired`, verified
    /// unchanged, unexpired and issued for this same call (a tampered,
    /// expired or replayed state never reaches the handler).
    pub fn request_state(&self) -> Option<&str> {
        self.input.as_deref().and_then(|i| i.state.as_deref())
    }

    /// What the transport knows about this request: HTTP headers, the
    /// transport session id.
    pub fn transport(&self) -> &TransportContext {
        &self.transport
    }

    /// Closes the HTTP connection carrying this request's SSE stream while
    /// the handler goes on (SSE polling): the client reconnects with
    /// `Last-Event-ID` and receives what was sent meanwhile, the result
    /// included. Does nothing on transports without streams (stdio, memory).
    pub fn close_sse_stream(&self) {
        if let Some(stream) = &self.transport.stream {
            stream.close_stream();
        }
    }

    /// The id of the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// Whether the client declared extension `id`: for its session or
    /// this stateless request (as [`ServerSession::client_declares_extension`]),
    /// or in this request's own `_meta` client capabilities (a per-request
    /// opt-in within a session that did not declare it).
    pub fn client_supports_extension(&self, id: &str) -> bool {
        self.session.client_declares_extension(id)
            || self
                .meta
                .as_deref()
                .and_then(|m| m.client_capabilities.as_ref())
                .is_some_and(|c| declares(c, id))
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_deref()
    }

    /// The progress token the client attached, if it wants progress.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta.as_deref().and_then(|m| m.progress_token.as_ref())
    }

    /// Reports progress on this request, if the client asked for it (and
    /// does nothing otherwise).
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        let Some(token) = self.progress_token() else {
            return Ok(());
        };
        self.session
            .send_progress_notification(token.clone(), progress, total, message.map(str::to_owned))
            .await
    }

    /// Sends a log message at `level` (see [`ServerSession::send_log_message`]).
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<Value>) -> Result<(), Error> {
        self.session.send_log_message(level, data, None).await
    }

    /// Whether the client cancelled this request (or the connection ended).
    ///
    /// A cancelled handler's future is dropped at its next await point and
    /// no answer is sent; this and [`cancelled`](Self::cancelled) serve
    /// work the handler spawned with a clone of the context, and blocking
    /// loops that never await.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this request or the connection ends.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// The session this request belongs to.
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// Whether this is a stateless (2026-07-28) request, where the server
    /// cannot send requests to the client and asks for input in its result
    /// instead (as [`ServerSession::is_stateless`]).
    pub fn is_stateless(&self) -> bool {
        self.session.is_stateless()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::{ElicitationCapability, RootsCapability, SamplingCapability};

    #[test]
    fn capability_checks_look_inside_each_capability() {
        let mut have = ClientCapabilities::new();
        let mut sampling = SamplingCapability::new();
        sampling.tools = Some(Default::default());
        have.sampling = Some(sampling);
        have.roots = Some(RootsCapability::new());
        let mut want = ClientCapabilities::new();
        want.sampling = Some(SamplingCapability::new());
        assert!(have.covers(&want));
        let mut roots = RootsCapability::new();
        roots.list_changed = Some(true);
        want.roots = Some(roots);
        assert!(!have.covers(&want), "listChanged was not declared");
        let mut want = ClientCapabilities::new();
        want.elicitation = Some(ElicitationCapability::new());
        assert!(!have.covers(&want));
    }
}
