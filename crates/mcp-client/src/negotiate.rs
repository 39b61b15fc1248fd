//! Which era a session speaks: `server/discover` (2026-07-28) or the
//! `initialize` handshake, by the configured [`Negotiation`](crate::Negotiation) policy.

use std::sync::Arc;

use mcp_core::TransportError;
use mcp_types::method::Method as _;
use mcp_types::{
    DiscoverResult, ErrorCode, InitializeRequestParams, InitializeResult, Revision, methods,
};
use serde_json::Value;

use crate::error::Error;
use crate::options::RequestOptions;
use crate::session::{ClientSession, parse_result};
use crate::settings::Negotiation;

/// What negotiation settled on: what [`ClientSession::adopt`] installs
/// again (`From` either result).
#[derive(Debug, Clone)]
pub enum Negotiated {
    /// The handshake era: the server's `initialize` answer.
    Handshake(Arc<InitializeResult>),
    /// The stateless era: the server's `server/discover` answer.
    Stateless(Arc<DiscoverResult>),
}

impl From<InitializeResult> for Negotiated {
    fn from(result: InitializeResult) -> Self {
        Negotiated::Handshake(Arc::new(result))
    }
}

impl From<Arc<InitializeResult>> for Negotiated {
    fn from(result: Arc<InitializeResult>) -> Self {
        Negotiated::Handshake(result)
    }
}

impl From<DiscoverResult> for Negotiated {
    fn from(result: DiscoverResult) -> Self {
        Negotiated::Stateless(Arc::new(result))
    }
}

impl From<Arc<DiscoverResult>> for Negotiated {
    fn from(result: Arc<DiscoverResult>) -> Self {
        Negotiated::Stateless(result)
    }
}

impl ClientSession {
    /// Settles the era with the server by the config's [`Negotiation`]
    /// policy and the newest revision it allows
    /// ([`ClientConfig::protocol_version`](crate::ClientConfig::protocol_version)).
    ///
    /// # Errors
    /// As [`initialize`](Self::initialize) and [`discover`](Self::discover):
    /// under [`Negotiation::Newest`] a discover refusal falls back to
    /// `initialize`, but a version negotiation failure or a closed
    /// connection does not.
    ///
    /// A session that already negotiated (or [adopted](Self::adopt) a
    /// result) answers with what it settled on, sending nothing.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request in flight; the session is then in
    /// no era: negotiate again or drop it.
    pub async fn negotiate(&self) -> Result<Negotiated, Error> {
        if let Some(negotiated) = self.negotiated() {
            return Ok(negotiated);
        }
        self.negotiate_anew().await
    }

    /// What the session settled on, if it did.
    fn negotiated(&self) -> Option<Negotiated> {
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(discovered), _) => Some(Negotiated::Stateless(discovered.clone())),
            (None, _, Some(initialized)) => Some(Negotiated::Handshake(initialized.clone())),
            _ => None,
        }
    }

    /// [`negotiate`](Self::negotiate), sending whatever was settled before.
    pub(crate) async fn negotiate_anew(&self) -> Result<Negotiated, Error> {
        let policy = self.config.negotiation;
        let stateless_allowed =
            policy != Negotiation::HandshakeOnly && self.config.protocol_version.is_stateless();
        if policy == Negotiation::StatelessOnly || stateless_allowed {
            match self.probe().await {
                Ok(discovered) => return Ok(Negotiated::Stateless(discovered)),
                Err(error) if policy == Negotiation::StatelessOnly => return Err(error),
                Err(error)
                    if error
                        .remote()
                        .is_some_and(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
                        && error.remote().and_then(|e| e.data.as_ref()).is_some() =>
                {
                    return Err(error);
                }
                // No connection, or no credentials: `initialize` would
                // fail the same way (and sign the user in again).
                Err(error)
                    if error.is_connection_closed()
                        || matches!(error.transport(), Some(TransportError::Auth(_))) =>
                {
                    return Err(error);
                }
                Err(error) => {
                    tracing::debug!(%error, "server/discover refused; falling back to initialize");
                }
            }
        }
        self.handshake().await.map(Negotiated::Handshake)
    }

    /// Sends `initialize` and then `notifications/initialized`, unless the
    /// session already initialized: its result is then returned, and
    /// nothing is sent.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails;
    /// [`Error::UnsupportedProtocolVersion`] when the server answers with a
    /// revision this client does not speak (the session is then unusable).
    ///
    /// # Cancel safety
    /// Dropping the future leaves the session uninitialized (`initialize` cannot
    /// be cancelled on the wire): initialize again or drop the session.
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, Error> {
        if let Some(Negotiated::Handshake(result)) = self.negotiated() {
            return Ok(result);
        }
        self.handshake().await
    }

    /// [`initialize`](Self::initialize), sent whatever was settled before.
    pub(crate) async fn handshake(&self) -> Result<Arc<InitializeResult>, Error> {
        let requested = if self.config.protocol_version.is_handshake() {
            self.config.protocol_version
        } else {
            Revision::LATEST_HANDSHAKE
        };
        self.shared.lock().stateless = None;
        let params = InitializeRequestParams::new(
            requested.as_str(),
            self.config.capabilities_at(requested),
            self.config.info.clone(),
        );
        self.peer().begin_session(mcp_core::SessionSide::Client);
        let result = self
            .request::<methods::Initialize>(&params, RequestOptions::new())
            .await?;
        let Some(revision) =
            Revision::from_version(&result.protocol_version).filter(|r| r.is_handshake())
        else {
            return Err(Error::UnsupportedProtocolVersion {
                answered: result.protocol_version,
                supported: revisions(&Revision::HANDSHAKE),
            });
        };
        self.peer().settle_session(revision.as_str());
        let result = Arc::new(result);
        self.install(revision, Negotiated::Handshake(result.clone()));
        self.notify::<methods::Initialized>(&None).await?;
        Ok(result)
    }

    /// Asks the server what it is (`server/discover`, 2026-07-28) and, if it
    /// answers, speaks the stateless era with it from now on: every request
    /// then carries the `_meta` envelope and the routing headers. A session
    /// already in the stateless era answers with its result, sending
    /// nothing.
    ///
    /// A `-32022` naming a version both sides speak is retried once, as a
    /// new request, at the newest of them.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (a handshake-era server
    /// does: fall back to [`initialize`](Self::initialize)) or fails;
    /// [`Error::NoMutualRevision`] when its answer lists no stateless
    /// revision this client speaks.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn discover(&self) -> Result<Arc<DiscoverResult>, Error> {
        if let Some(Negotiated::Stateless(result)) = self.negotiated() {
            return Ok(result);
        }
        self.probe().await
    }

    /// [`discover`](Self::discover), sent whatever was settled before.
    async fn probe(&self) -> Result<Arc<DiscoverResult>, Error> {
        let preferred = if self.config.protocol_version.is_stateless() {
            self.config.protocol_version
        } else {
            Revision::LATEST_STATELESS
        };
        let result = match self.send_discover(preferred).await {
            Err(error) => match mutual_stateless_revision(&error) {
                Some(mutual) => self.send_discover(mutual).await?,
                None => return Err(error),
            },
            Ok(result) => result,
        };
        let result = Arc::new(result);
        self.adopt(result.clone())?;
        Ok(result)
    }

    /// Sends one `server/discover` stamped at `revision` (its `_meta`
    /// envelope and `MCP-Protocol-Version` header), whatever the session
    /// speaks, and returns the answer: no retry, nothing adopted. For a
    /// host that probes servers itself (and may [`adopt`](Self::adopt) the
    /// answer later, or keep it for its next connection).
    ///
    /// # Errors
    /// [`Error::NotInThisEra`] for a handshake revision (which has no
    /// `server/discover`); [`Error::Request`] when the server answers with
    /// an error (a handshake-era server does) or the transport fails it;
    /// [`Error::InvalidResult`] when the answer is not a discover result.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn send_discover(&self, revision: Revision) -> Result<DiscoverResult, Error> {
        let method = methods::Discover::NAME;
        if !revision.is_stateless() {
            return Err(Error::NotInThisEra {
                method,
                revision: revision.as_str(),
                instead: "initialize",
            });
        }
        let envelope = self
            .envelope_at(revision)
            .map_err(|source| Error::Serialize { method, source })?;
        let raw = self
            .send_stamped(method, None, RequestOptions::new(), Some(&envelope))
            .await?;
        parse_result(method, &raw)
    }

    /// Installs what an earlier negotiation settled (an `InitializeResult`
    /// or a `DiscoverResult` kept from an earlier connection, say), without
    /// asking the server: the era, the revision, the server's
    /// capabilities. A discover result is spoken at the newest revision
    /// both sides list; an initialize result at the revision it names.
    /// The session's cached results and stamped envelope are reset,
    /// extension result claims apply as the new revision allows, and a
    /// notification binding that can never fire at it is warned about (in
    /// the log). Era verdicts may be cached per server; re-run
    /// [`negotiate`](Self::negotiate) if requests then fail.
    ///
    /// # Errors
    /// [`Error::NoMutualRevision`] for a discover result listing no
    /// stateless revision this client speaks, and
    /// [`Error::UnsupportedProtocolVersion`] for an initialize result
    /// naming a revision it does not speak; the session is then unchanged.
    ///
    /// # Examples
    /// ```no_run
    /// use mcp_client::{ClientConfig, ClientSession, Negotiated};
    ///
    /// # async fn run(session: ClientSession, kept: Negotiated) -> Result<(), mcp_client::Error> {
    /// let revision = session.adopt(kept)?;
    /// println!("speaking {revision} without a handshake");
    /// # Ok(())
    /// # }
    /// ```
    pub fn adopt(&self, result: impl Into<Negotiated>) -> Result<Revision, Error> {
        let result = result.into();
        let revision = match &result {
            Negotiated::Stateless(discovered) => Revision::STATELESS
                .into_iter()
                .rev()
                .find(|r| {
                    discovered
                        .supported_versions
                        .iter()
                        .any(|v| v == r.as_str())
                })
                .ok_or_else(|| Error::NoMutualRevision {
                    offered: discovered.supported_versions.clone(),
                    supported: revisions(&Revision::STATELESS),
                })?,
            Negotiated::Handshake(initialized) => {
                Revision::from_version(&initialized.protocol_version)
                    .filter(|r| r.is_handshake())
                    .ok_or_else(|| Error::UnsupportedProtocolVersion {
                        answered: initialized.protocol_version.clone(),
                        supported: revisions(&Revision::HANDSHAKE),
                    })?
            }
        };
        self.install(revision, result);
        Ok(revision)
    }

    /// Speaks `revision` with the server `result` describes from now on.
    fn install(&self, revision: Revision, result: Negotiated) {
        {
            let mut state = self.shared.lock();
            match result {
                Negotiated::Stateless(discovered) => {
                    state.stateless = Some(revision);
                    state.discovered = Some(discovered);
                    state.initialized = None;
                }
                Negotiated::Handshake(initialized) => {
                    state.stateless = None;
                    state.initialized = Some(initialized);
                    state.discovered = None;
                }
            }
            state.revision = revision;
            state.envelope = None;
            state.cache.invalidate("");
        }
        self.config.extensions.check_bindings(revision);
    }
}

/// The revisions, as a reader would list them.
fn revisions(revisions: &[Revision]) -> String {
    revisions
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The newest stateless revision a `-32022` answer lists as supported.
fn mutual_stateless_revision(error: &Error) -> Option<Revision> {
    error
        .remote()
        .filter(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)?
        .data
        .as_ref()?
        .get("supported")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .filter_map(Revision::from_version)
        .filter(|r| r.is_stateless())
        .max_by_key(|r| r.as_str())
}
