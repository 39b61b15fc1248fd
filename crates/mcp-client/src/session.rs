//! One session with a server: its state, and the one path every request
//! takes (stamped for the negotiated era, sent, its result read).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Instant;

use mcp_core::backoff::Backoff;
use mcp_core::{CancellationToken, Connection, Peer, TransportError};
use mcp_types::method::{Method, NotificationMethod, RequestMethod};
use mcp_types::{
    DiscoverResult, ErrorCode, Implementation, InitializeResult, LoggingLevel, RawJson, RequestId,
    Revision, ServerCapabilities, SetLevelRequestParams, SubscribeRequestParams, methods,
};
use serde::Serialize;

use crate::cache::ResultCache;
use crate::error::{Error, SessionLoss};
use crate::events::{Restart, RestartReason, SessionEvent};
use crate::extension::bindings::Bindings;
use crate::options::RequestOptions;
use crate::settings::Settings;
use crate::stateless;
use crate::task_states::TaskStates;
use crate::validation::OutputSchemas;

/// What a session knows about its server.
pub(crate) struct State {
    pub(crate) initialized: Option<Arc<InitializeResult>>,
    pub(crate) discovered: Option<Arc<DiscoverResult>>,
    /// Set once the server is known to speak the stateless era.
    pub(crate) stateless: Option<Revision>,
    pub(crate) revision: Revision,
    /// Each listed tool's output schema, for checking its results.
    pub(crate) output_schemas: OutputSchemas,
    /// The listed tools' `x-mcp-header` annotations, by tool name.
    pub(crate) routes: HashMap<String, stateless::Routes>,
    /// The stateless `_meta` envelope, serialized once for its revision.
    pub(crate) envelope: Option<Arc<stateless::Envelope>>,
    /// Cacheable stateless results.
    pub(crate) cache: ResultCache,
    /// The resources subscribed to, made again in a restarted session.
    pub(crate) subscriptions: BTreeSet<String>,
    /// The session-wide log level set, set again in a restarted session.
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Starting a session anew when the server forgot the old one: one restart
/// at a time, paced and bounded by the config's
/// [`session_restarts`](crate::ClientConfig::session_restarts).
pub(crate) struct Restarts {
    /// Held while a session is started anew.
    backoff: tokio::sync::Mutex<Backoff>,
    /// Bumped by each restart: a call that failed in an older session
    /// learns that another call already started the new one.
    generation: AtomicU64,
}

/// The settings a session keeps of its [`ClientConfig`](crate::ClientConfig).
pub(crate) type SessionConfig = Settings<RequestInfo>;

pub(crate) struct Shared {
    state: Mutex<State>,
    restarts: Restarts,
    /// The task states the server pushes, for the session's task watches.
    pub(crate) task_states: TaskStates,
}

impl Shared {
    /// The state of a session not yet negotiated, by `config`.
    pub(crate) fn new(config: &SessionConfig) -> Self {
        Self {
            state: Mutex::new(State {
                initialized: None,
                discovered: None,
                stateless: None,
                revision: config.protocol_version,
                output_schemas: OutputSchemas::default(),
                routes: HashMap::new(),
                envelope: None,
                cache: ResultCache::default(),
                subscriptions: BTreeSet::new(),
                log_level: None,
            }),
            restarts: Restarts {
                backoff: tokio::sync::Mutex::new(Backoff::new(config.restarts)),
                generation: AtomicU64::new(0),
            },
            task_states: TaskStates::new(config.task_status_queue),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // Plain bookkeeping: carrying on after a panic elsewhere is safer
        // than poisoning every later call.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What a session owns: its connection and the consumers of its
/// notification bindings. Shared by the session's clones; the callbacks
/// hold it weakly, so a session nobody holds any more is not kept alive by
/// its own connection.
pub(crate) struct Owner {
    connection: Connection,
    bindings: tokio::sync::Mutex<Bindings>,
}

impl Owner {
    pub(crate) fn new(connection: Connection, bindings: Bindings) -> Self {
        Self {
            connection,
            bindings: tokio::sync::Mutex::new(bindings),
        }
    }
}

/// Where the callbacks find the session they answer for: set once the
/// connection runs.
pub(crate) type OwnerSlot = Arc<OnceLock<Weak<Owner>>>;

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
    pub session: ClientSession,
    /// The request's `_meta`: its progress token, the task it belongs to
    /// (`io.modelcontextprotocol/related-task`), trace context, and any
    /// other key the server set.
    pub meta: Option<mcp_types::RequestMeta>,
    /// Our request the server sent this one while answering, where the
    /// transport tells (streamable HTTP: it came on that request's SSE
    /// stream); `None` over stdio, on the standalone GET stream, and for a
    /// stateless input request (it belongs to the call that got it).
    pub related_request: Option<RequestId>,
}

/// A session with one server: negotiate (see [`negotiate`](Self::negotiate)),
/// then the typed calls. Server requests (sampling, elicitation, roots) and
/// notifications reach the callbacks of the
/// [`ClientConfig`](crate::ClientConfig), in either era; each callback is
/// handed the session too
/// ([`RequestInfo::session`](crate::RequestInfo::session)).
///
/// Cheap to clone: clones share one connection, and
/// [`close`](Self::close) on any of them closes it for all.
///
/// [`Client`](crate::Client) connects and negotiates in one call; use a
/// session directly to drive negotiation yourself or bring your own transport.
#[derive(Clone)]
pub struct ClientSession {
    pub(crate) owner: Arc<Owner>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) config: Arc<SessionConfig>,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("ClientSession")
            .field("revision", &state.revision)
            .field("stateless", &state.stateless.is_some())
            .field("closed", &self.peer().is_closed())
            .finish()
    }
}

impl ClientSession {
    /// The session of `slot`, while anyone holds it.
    pub(crate) fn from_slot(
        slot: &OwnerSlot,
        shared: &Arc<Shared>,
        config: &Arc<SessionConfig>,
    ) -> Option<Self> {
        let owner = slot.get()?.upgrade()?;
        Some(Self {
            owner,
            shared: shared.clone(),
            config: config.clone(),
        })
    }

    /// The dispatcher's peer, for requests this crate has no helper for
    /// (they are sent as given: no stateless-era stamping).
    pub fn peer(&self) -> &Peer {
        self.owner.connection.peer()
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        self.shared.lock().initialized.clone()
    }

    /// The server's answer to `server/discover`, once discovered.
    pub fn discover_result(&self) -> Option<Arc<DiscoverResult>> {
        self.shared.lock().discovered.clone()
    }

    /// Whether requests are stateless (2026-07-28).
    pub fn is_stateless(&self) -> bool {
        self.shared.lock().stateless.is_some()
    }

    /// `Ok` when the session is in the stateless era exactly when
    /// `stateless` says so; else [`Error::NotInThisEra`] for `method`,
    /// naming what to use `instead`.
    pub(crate) fn require_era(
        &self,
        stateless: bool,
        method: &'static str,
        instead: &'static str,
    ) -> Result<(), Error> {
        let state = self.shared.lock();
        if state.stateless.is_some() == stateless {
            return Ok(());
        }
        Err(Error::NotInThisEra {
            method,
            revision: state.revision.as_str(),
            instead,
        })
    }

    /// The negotiated protocol revision (before negotiation: the newest
    /// this client is configured to speak).
    pub fn protocol_version(&self) -> Revision {
        self.shared.lock().revision
    }

    /// The server's capabilities, once negotiated.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.reading_server_capabilities(ServerCapabilities::clone)
    }

    /// `read` of the server's capabilities, once negotiated, under the
    /// session's lock: for a question about them that need not copy what
    /// the server declared (its extension settings are any size it likes).
    pub(crate) fn reading_server_capabilities<R>(
        &self,
        read: impl FnOnce(&ServerCapabilities) -> R,
    ) -> Option<R> {
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(d), _) => Some(read(&d.capabilities)),
            (_, _, Some(i)) => Some(read(&i.capabilities)),
            _ => None,
        }
    }

    /// The server's name and version, once negotiated (in the stateless era,
    /// when its discover result names them).
    pub fn server_info(&self) -> Option<Implementation> {
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(d), _) => d.meta.as_ref().and_then(|m| m.server_info.clone()),
            (_, _, Some(i)) => Some(i.server_info.clone()),
            _ => None,
        }
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(d), _) => d.instructions.clone(),
            (_, _, Some(i)) => i.instructions.clone(),
            _ => None,
        }
    }

    /// Sends a request of method `M` and reads its typed result, stamped for
    /// the negotiated era, with this session's default timeout unless
    /// `options` sets one.
    ///
    /// # Errors
    /// [`Error::Request`] when the server answers with an error, the request
    /// times out or the connection closes; [`Error::InvalidResult`] when the
    /// answer does not fit `M::Result`.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request: the server is sent
    /// `notifications/cancelled` and a late answer is discarded.
    pub async fn request<M: RequestMethod>(
        &self,
        params: &M::Params,
        options: RequestOptions,
    ) -> Result<M::Result, Error> {
        let params = raw_params::<M>(params)?;
        let result = self.request_raw(M::NAME, params, options).await?;
        parse_result(M::NAME, &result)
    }

    /// Sends `method` with raw params, stamped for the stateless era when
    /// the session speaks it. When the server no longer knows the session
    /// (HTTP 404) or no longer accepts the negotiated revision (`-32022`),
    /// a new session is started (see [`restart`](Self::restart)) and the
    /// request sent again once, if the server refused it before any handler
    /// ran; a request whose stream broke after it was delivered fails as
    /// it did, since its handler may have run.
    pub(crate) async fn request_raw(
        &self,
        method: &'static str,
        params: Option<RawJson>,
        options: RequestOptions,
    ) -> Result<RawJson, Error> {
        let generation = self.shared.restarts.generation.load(Ordering::Acquire);
        let first = self.send_raw(method, params.clone(), options.clone()).await;
        let Err(error) = &first else {
            return first;
        };
        let Some((reason, resend)) = self.restart_after(method, error) else {
            return first;
        };
        // Boxed: starting a session sends requests of its own through here.
        Box::pin(self.restart(generation, reason)).await?;
        if !resend {
            return first;
        }
        self.send_raw(method, params, options).await
    }

    /// Whether `error` of a `method` call calls for a new session, and
    /// whether the call may then be sent again.
    fn restart_after(&self, method: &str, error: &Error) -> Option<(RestartReason, bool)> {
        // The negotiation's own requests are never what restarts it.
        if method == methods::Initialize::NAME || method == methods::Discover::NAME {
            return None;
        }
        if let Some(TransportError::SessionExpired { reached_server }) = error.transport() {
            return Some((RestartReason::SessionExpired, !reached_server));
        }
        let changed = self.is_stateless()
            && error
                .remote()
                .is_some_and(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        // A version refusal comes before any handler runs.
        changed.then_some((RestartReason::ServerChanged, true))
    }

    /// Starts a new session after the old one was lost for `reason`,
    /// unless another call already did since `seen` (its generation when it
    /// was sent): negotiates again by the config's policy, subscribes again
    /// to the resources subscribed to, sets the log level again, forgets
    /// cached results, and tells the host
    /// ([`SessionEvent::Restarted`](crate::SessionEvent::Restarted)).
    ///
    /// # Errors
    /// [`Error::SessionLost`] past the config's restart budget, or when the
    /// new session could not be started.
    async fn restart(&self, seen: u64, reason: RestartReason) -> Result<(), Error> {
        let restarts = &self.shared.restarts;
        let mut backoff = restarts.backoff.lock().await;
        if restarts.generation.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        let lost = |reason| Error::SessionLost { reason };
        let wait = backoff.next(Instant::now(), None).map_err(|spent| {
            lost(SessionLoss::TooManyRestarts {
                attempts: spent.attempts,
                window: spent.window,
            })
        })?;
        tracing::info!(%reason, "starting a new session with the server");
        tokio::time::sleep(wait).await;
        let previous = self.protocol_version();
        {
            let mut state = self.shared.lock();
            state.cache.invalidate("");
            state.envelope = None;
        }
        // A handshake session is started again as one; a stateless server
        // that changed is asked anew which era it speaks.
        let started = if self.is_stateless() {
            self.negotiate_anew().await.map(drop)
        } else {
            self.handshake().await.map(drop)
        };
        started.map_err(|e| lost(SessionLoss::Failed(Box::new(e))))?;
        backoff.succeeded();
        restarts.generation.fetch_add(1, Ordering::AcqRel);
        let (subscriptions, log_level) = {
            let state = self.shared.lock();
            (state.subscriptions.clone(), state.log_level)
        };
        let mut resubscribed = 0;
        for uri in subscriptions {
            let params = SubscribeRequestParams::new(uri.clone());
            let params = raw_params::<methods::Subscribe>(&params)?;
            match self
                .send_raw(methods::Subscribe::NAME, params, RequestOptions::new())
                .await
            {
                Ok(_) => resubscribed += 1,
                Err(error) => tracing::warn!(%uri, %error, "could not subscribe again"),
            }
        }
        if let (Some(level), false) = (log_level, self.is_stateless()) {
            let params = raw_params::<methods::SetLevel>(&SetLevelRequestParams::new(level))?;
            if let Err(error) = self
                .send_raw(methods::SetLevel::NAME, params, RequestOptions::new())
                .await
            {
                tracing::warn!(%error, "could not set the log level again");
            }
        }
        self.config.emit(SessionEvent::Restarted(Restart {
            reason,
            previous,
            revision: self.protocol_version(),
            resubscribed,
        }));
        Ok(())
    }

    /// Sends `method` once, stamped for the era the session speaks now.
    async fn send_raw(
        &self,
        method: &'static str,
        params: Option<RawJson>,
        options: RequestOptions,
    ) -> Result<RawJson, Error> {
        let envelope = self
            .envelope()
            .map_err(|source| Error::Serialize { method, source })?;
        self.send_stamped(method, params, options, envelope.as_deref())
            .await
    }

    /// Sends `method` once with the caller's `_meta` merged in and, given
    /// a stateless `envelope`, stamped with it (its `_meta` members and
    /// routing headers), with this session's default timeout unless
    /// `options` sets one: no restart, whatever the answer.
    pub(crate) async fn send_stamped(
        &self,
        method: &'static str,
        params: Option<RawJson>,
        options: RequestOptions,
        envelope: Option<&stateless::Envelope>,
    ) -> Result<RawJson, Error> {
        let RequestOptions {
            dispatch: mut options,
            log_level,
            meta,
            extensions,
        } = options;
        // A request's own extensions: its envelope, for this request only.
        let own;
        let envelope = match (envelope, extensions.is_empty()) {
            (envelope, true) => envelope,
            (Some(session), false) => {
                own = session
                    .declaring(extensions)
                    .map_err(|source| Error::Serialize { method, source })?;
                Some(own.as_ref().unwrap_or(session))
            }
            (None, false) => {
                let ids: Vec<&str> = extensions.iter().map(|(id, _)| id.as_str()).collect();
                return Err(Error::ExtensionPerRequest {
                    method,
                    revision: self.protocol_version().as_str(),
                    extensions: ids.join(", "),
                });
            }
        };
        if options.timeout.is_none() {
            options.timeout = self.config.request_timeout;
        }
        let params = match &meta {
            Some(meta) => Some(
                crate::options::merge_meta(params, meta)
                    .map_err(|source| Error::Serialize { method, source })?,
            ),
            None => params,
        };
        let params = match envelope {
            Some(envelope) => {
                let (params, headers) =
                    stateless::stamp(method, params, envelope, log_level, |tool| {
                        self.shared.lock().routes.get(tool).cloned()
                    })
                    .map_err(|source| Error::Serialize { method, source })?;
                for (name, value) in headers.iter() {
                    options.headers.append(name, value);
                }
                Some(params)
            }
            None => params,
        };
        Ok(self.peer().request(method, params, options).await?)
    }

    /// The stateless envelope of the negotiated revision, serialized on first
    /// use; `None` in the handshake era.
    fn envelope(&self) -> Result<Option<Arc<stateless::Envelope>>, serde_json::Error> {
        let mut state = self.shared.lock();
        let Some(revision) = state.stateless else {
            return Ok(None);
        };
        if let Some(envelope) = state.envelope.as_ref().filter(|e| e.revision() == revision) {
            return Ok(Some(envelope.clone()));
        }
        let envelope = Arc::new(self.envelope_at(revision)?);
        state.envelope = Some(envelope.clone());
        Ok(Some(envelope))
    }

    /// The stateless envelope this client sends at `revision`.
    pub(crate) fn envelope_at(
        &self,
        revision: Revision,
    ) -> Result<stateless::Envelope, serde_json::Error> {
        stateless::Envelope::new(
            revision,
            &self.config.info,
            &self.config.capabilities_at(revision),
        )
    }

    /// Sends a notification of method `M`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn notify<M: NotificationMethod>(&self, params: &M::Params) -> Result<(), Error> {
        let params = raw_params::<M>(params)?;
        self.peer().notify(M::NAME, params).await?;
        Ok(())
    }

    /// Closes the session (for every clone of it) and waits for its tasks
    /// to end.
    pub async fn close(self) {
        self.owner.connection.peer().close();
        self.owner.connection.wait().await;
        self.owner.bindings.lock().await.stop().await;
    }

    /// Resolves when the connection ends (the server went away or it was closed).
    pub async fn closed(&self) {
        self.owner.connection.wait().await
    }
}

pub(crate) fn raw_params<M: Method>(params: &M::Params) -> Result<Option<RawJson>, Error> {
    if M::is_absent(params) {
        return Ok(None);
    }
    to_raw(M::NAME, params).map(Some)
}

pub(crate) fn to_raw(method: &'static str, value: &impl Serialize) -> Result<RawJson, Error> {
    RawJson::from_serialize(value).map_err(|source| Error::Serialize { method, source })
}

pub(crate) fn parse_result<R: serde::de::DeserializeOwned>(
    method: &'static str,
    raw: &RawJson,
) -> Result<R, Error> {
    raw.parse()
        .map_err(|source| Error::InvalidResult { method, source })
}
