//! One session with a server: its state, and the one path every request
//! takes (stamped for the negotiated era, sent, its result read).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::{Connection, Peer, Transport};
use mcp_types::method::{Method, NotificationMethod, RequestMethod};
use mcp_types::{
    DiscoverResult, Implementation, InitializeResult, RawJson, Revision, ServerCapabilities,
};
use serde::Serialize;

use crate::cache::ResultCache;
use crate::callbacks::Callbacks;
use crate::config::ClientConfig;
use crate::validation::OutputSchemas;
use crate::{Error, RequestOptions, stateless};

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
}

pub(crate) struct Shared {
    state: Mutex<State>,
    /// The task states the server pushes, for the session's task watches.
    pub(crate) task_states: crate::tasks::TaskStates,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // Plain bookkeeping: carrying on after a panic elsewhere is safer
        // than poisoning every later call.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A session with one server: negotiate (see [`negotiate`](Self::negotiate)),
/// then the typed calls. Server requests (sampling, elicitation, roots) and
/// notifications reach the callbacks of the [`ClientConfig`], in either era.
///
/// [`Client`](crate::Client) connects and negotiates in one call; use a
/// session directly to drive negotiation yourself or bring your own transport.
pub struct ClientSession {
    connection: Connection,
    /// The consumers of the config's notification bindings.
    bindings: crate::extension::Bindings,
    pub(crate) shared: Arc<Shared>,
    pub(crate) config: ClientConfig,
}

impl ClientSession {
    /// Starts a session over `transport`. Nothing is sent until
    /// [`negotiate`](Self::negotiate) (or `initialize`/`discover`). Must be
    /// called within a tokio runtime.
    pub fn new<T: Transport>(transport: T, config: ClientConfig) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                initialized: None,
                discovered: None,
                stateless: None,
                revision: config.protocol_version,
                output_schemas: OutputSchemas::default(),
                routes: HashMap::new(),
                envelope: None,
                cache: ResultCache::default(),
            }),
            task_states: crate::tasks::TaskStates::new(config.task_status_queue),
        });
        let bindings = crate::extension::Bindings::start(&config.extensions.bindings);
        let handler = Callbacks::new(config.clone(), shared.clone(), bindings.queues.clone());
        let connection = Connection::start(transport, handler, config.dispatcher.clone());
        Self {
            connection,
            bindings,
            shared,
            config,
        }
    }

    /// The dispatcher's peer, for requests this crate has no helper for
    /// (they are sent as given: no stateless-era stamping).
    pub fn peer(&self) -> &Peer {
        self.connection.peer()
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
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(d), _) => Some(d.capabilities.clone()),
            (_, _, Some(i)) => Some(i.capabilities.clone()),
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
    /// the session speaks it.
    pub(crate) async fn request_raw(
        &self,
        method: &'static str,
        params: Option<RawJson>,
        options: RequestOptions,
    ) -> Result<RawJson, Error> {
        let RequestOptions {
            dispatch: mut options,
            log_level,
        } = options;
        if options.timeout.is_none() {
            options.timeout = self.config.request_timeout;
        }
        let envelope = self
            .envelope()
            .map_err(|source| Error::Serialize { method, source })?;
        let params = match envelope {
            Some(envelope) => {
                let (params, headers) =
                    stateless::stamp(method, params, &envelope, log_level, |tool| {
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
        let envelope = Arc::new(stateless::Envelope::new(
            revision,
            &self.config.info,
            &self.config.capabilities_at(revision),
        )?);
        state.envelope = Some(envelope.clone());
        Ok(Some(envelope))
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

    /// Closes the session and waits for its tasks to end.
    pub async fn close(mut self) {
        self.connection.shutdown().await;
        self.bindings.stop().await;
    }

    /// Resolves when the connection ends (the server went away or it was closed).
    pub async fn closed(&self) {
        self.connection.wait().await
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
