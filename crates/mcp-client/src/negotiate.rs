//! Which era a session speaks: `server/discover` (2026-07-28) or the
//! `initialize` handshake, by the configured [`Negotiation`] policy.

use std::sync::Arc;

use mcp_core::TransportError;
use mcp_types::{
    DiscoverResult, ErrorCode, InitializeRequestParams, InitializeResult, Revision, methods,
};
use serde_json::Value;

use crate::{ClientSession, Error, RequestOptions};

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

/// What negotiation settled on.
#[derive(Debug, Clone)]
pub enum Negotiated {
    /// The handshake era: the server's `initialize` answer.
    Handshake(Arc<InitializeResult>),
    /// The stateless era: the server's `server/discover` answer.
    Stateless(Arc<DiscoverResult>),
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
    /// # Cancel safety
    /// Dropping the future cancels the request in flight; the session is then in
    /// no era: negotiate again or drop it.
    pub async fn negotiate(&self) -> Result<Negotiated, Error> {
        let policy = self.config.negotiation;
        let stateless_allowed =
            policy != Negotiation::HandshakeOnly && self.config.protocol_version.is_stateless();
        if policy == Negotiation::StatelessOnly || stateless_allowed {
            match self.discover().await {
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
        self.initialize().await.map(Negotiated::Handshake)
    }

    /// Sends `initialize` and then `notifications/initialized`.
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
        let result = self
            .request::<methods::Initialize>(&params, RequestOptions::new())
            .await?;
        let Some(revision) =
            Revision::from_version(&result.protocol_version).filter(|r| r.is_handshake())
        else {
            return Err(Error::UnsupportedProtocolVersion {
                answered: result.protocol_version,
                supported: Revision::HANDSHAKE
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let result = Arc::new(result);
        {
            let mut state = self.shared.lock();
            state.initialized = Some(result.clone());
            state.revision = revision;
        }
        self.config.extensions.check_bindings(revision);
        self.notify::<methods::Initialized>(&None).await?;
        Ok(result)
    }

    /// Asks the server what it is (`server/discover`, 2026-07-28) and, if it
    /// answers, speaks the stateless era with it from now on: every request
    /// then carries the `_meta` envelope and the routing headers.
    ///
    /// A `-32022` naming a version both sides speak is retried once, as a
    /// new request, at the newest of them.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (a handshake-era server
    /// does: fall back to [`initialize`](Self::initialize)) or fails.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn discover(&self) -> Result<Arc<DiscoverResult>, Error> {
        let preferred = if self.config.protocol_version.is_stateless() {
            self.config.protocol_version
        } else {
            Revision::LATEST_STATELESS
        };
        match self.discover_at(preferred).await {
            Err(error) => match mutual_stateless_revision(&error) {
                Some(mutual) => self.discover_at(mutual).await,
                None => Err(error),
            },
            ok => ok,
        }
    }

    async fn discover_at(&self, revision: Revision) -> Result<Arc<DiscoverResult>, Error> {
        self.shared.lock().stateless = Some(revision);
        let outcome = self
            .request::<methods::Discover>(&None, RequestOptions::new())
            .await;
        let mut state = self.shared.lock();
        match outcome {
            Ok(result) => {
                let result = Arc::new(result);
                state.discovered = Some(result.clone());
                state.revision = revision;
                self.config.extensions.check_bindings(revision);
                Ok(result)
            }
            Err(error) => {
                state.stateless = None;
                Err(error)
            }
        }
    }

    /// Speaks the stateless era at `revision` with a server already known
    /// to (a `DiscoverResult` kept from an earlier connection, say), without
    /// asking again. Era verdicts may be cached per server; re-run
    /// [`negotiate`](Self::negotiate) if requests then fail.
    pub fn adopt(&self, revision: Revision, discovered: DiscoverResult) -> Arc<DiscoverResult> {
        let discovered = Arc::new(discovered);
        let mut state = self.shared.lock();
        state.stateless = Some(revision);
        state.revision = revision;
        state.discovered = Some(discovered.clone());
        self.config.extensions.check_bindings(revision);
        discovered
    }
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
