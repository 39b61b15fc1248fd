//! What the service hands the server layer for each session it opens, and
//! once for all its stateless exchanges: an [`Opening`], answered with the
//! [`Dispatcher`] that serves it. The service drives that dispatcher itself:
//! each POST's messages are handed to it, a request is called in the POST's
//! own task, and what it sends the client goes to the session's streams (or,
//! statelessly, to the exchange of the request it serves).

use std::fmt;
use std::sync::{Arc, Weak};

use mcp_core::{Dispatcher, DispatcherConfig, Handler, Outbound, Outlet, TransportError};
use tokio_util::task::TaskTracker;

use super::session::Session;

/// A session opened by the service (or its stateless exchanges), for the
/// factory given to
/// [`StreamableHttpService::new`](super::StreamableHttpService::new) to
/// serve: it returns the [`Dispatcher`] of [`serve`](Self::serve).
pub struct Opening {
    pub(super) session_id: Option<Arc<str>>,
    pub(super) outlet: Arc<dyn Outlet>,
    pub(super) shared: Option<crate::store::SharedSession>,
    pub(super) tasks: TaskTracker,
}

impl fmt::Debug for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opening")
            .field(
                "session",
                &self.session_id.as_deref().map(mcp_core::session_tag),
            )
            .finish_non_exhaustive()
    }
}

impl Opening {
    /// The session's `Mcp-Session-Id`; `None` for the stateless exchanges.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The session's place in the shared session store, when the service
    /// shares its stores ([`HttpServerConfig::shared`](super::HttpServerConfig::shared)):
    /// the record it was restored from, and where the server layer saves
    /// each change of the session's state.
    pub fn shared_session(&self) -> Option<&crate::store::SharedSession> {
        self.shared.as_ref()
    }

    /// The service's tasks: what serves the session beyond its requests
    /// (forwarding list changes, say) runs here, so it is cancelled and
    /// awaited when the service shuts down. Each such task must end when
    /// the session's peer closes.
    pub fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// The dispatcher serving the session with `handler` under `config`:
    /// what the factory returns.
    pub fn serve<H: Handler>(self, handler: H, config: DispatcherConfig) -> Dispatcher {
        Dispatcher::new(handler, config, self.outlet, Some("tcp"))
    }
}

/// Where a session's dispatcher sends: the session's streams. Weak, so the
/// session (which holds its dispatcher) is not kept alive by it.
pub(super) struct SessionOutlet(pub(super) Weak<Session>);

impl Outlet for SessionOutlet {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        match self.0.upgrade() {
            Some(session) => session.route(message),
            None => Err(TransportError::Closed),
        }
    }
}

/// Where the stateless dispatcher sends what is tied to no exchange: each
/// request is called with its exchange as its own outlet, so only a
/// message sent outside any request lands here, with no stream to go to.
pub(super) struct NoStream;

impl Outlet for NoStream {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        tracing::debug!(
            method = message.message.method().unwrap_or(""),
            "a stateless server message tied to no request has no stream; dropped"
        );
        Ok(())
    }
}
