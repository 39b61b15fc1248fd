//! The [`Transport`] a dispatcher gets: one handshake session, or the hub
//! that serves every stateless exchange of the service.

use std::fmt;
use std::sync::Arc;

use mcp_core::{
    Direct, Inbound, Outbound, Transport, TransportError, TransportReceiver, TransportSender,
};
use tokio::sync::{mpsc, oneshot};

use super::session::Session;

/// One HTTP session, or the stateless hub, as a [`Transport`] for a
/// dispatcher.
///
/// The hub's dispatcher reads nothing: each stateless POST runs its request
/// through the dispatcher's [`Direct`] in the POST's own task, with the
/// exchange as the request's sink, so a stateless request costs no
/// dispatcher, task or queue of its own.
pub struct SessionTransport {
    sender: SessionSender,
    receiver: SessionReceiver,
    shared: Option<crate::store::SharedSession>,
}

impl fmt::Debug for SessionTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionTransport")
            .field("session_id", &self.session_id())
            .finish()
    }
}

impl SessionTransport {
    pub(super) fn session(
        session: Arc<Session>,
        rx: mpsc::Receiver<Inbound>,
        shared: Option<crate::store::SharedSession>,
    ) -> Self {
        Self {
            sender: SessionSender {
                route: Route::Session(session),
            },
            receiver: SessionReceiver { rx, ended: false },
            shared,
        }
    }

    /// The session's place in the shared session store, when the service
    /// shares its stores ([`HttpServerConfig::shared`](super::HttpServerConfig::shared)):
    /// the record it was restored from, and where the server layer saves
    /// each change of the session's state.
    pub fn shared_session(&self) -> Option<&crate::store::SharedSession> {
        self.shared.as_ref()
    }

    /// The stateless hub: `attached` gets the dispatcher's [`Direct`];
    /// `rx` ends when the service closes.
    pub(super) fn hub(attached: oneshot::Sender<Direct>, rx: mpsc::Receiver<Inbound>) -> Self {
        Self {
            sender: SessionSender {
                route: Route::Hub(Some(attached)),
            },
            receiver: SessionReceiver { rx, ended: false },
            shared: None,
        }
    }

    /// The session's `Mcp-Session-Id`; `None` for the stateless hub.
    pub fn session_id(&self) -> Option<&str> {
        match &self.sender.route {
            Route::Session(session) => Some(&session.id),
            Route::Hub(_) => None,
        }
    }
}

enum Route {
    Session(Arc<Session>),
    /// Until attached: where the hub's [`Direct`] goes.
    Hub(Option<oneshot::Sender<Direct>>),
}

/// The sending half of a [`SessionTransport`].
pub struct SessionSender {
    route: Route,
}

/// The receiving half of a [`SessionTransport`].
pub struct SessionReceiver {
    rx: mpsc::Receiver<Inbound>,
    /// Whether the end was reported: a session or exchange whose inbound
    /// channel ends was closed (DELETE, expiry, shutdown, the client gone),
    /// which is [`Inbound::Closed`], never a peer that merely finished sending.
    ended: bool,
}

impl TransportSender for SessionSender {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        match &self.route {
            Route::Session(session) => session.route(message),
            Route::Hub(_) => {
                // What a stateless handler sends for its request goes to its
                // exchange; anything else has no stream to go to.
                tracing::debug!(
                    method = message.message.method().unwrap_or(""),
                    "a stateless server message tied to no request has no stream; dropped"
                );
                Ok(())
            }
        }
    }

    async fn close(&mut self) {
        match &self.route {
            Route::Session(session) => session.close(),
            Route::Hub(_) => {}
        }
    }
}

impl TransportReceiver for SessionReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        match self.rx.recv().await {
            Some(inbound) => Some(inbound),
            None if !self.ended => {
                self.ended = true;
                Some(Inbound::Closed)
            }
            None => None,
        }
    }
}

impl Transport for SessionTransport {
    type Sender = SessionSender;
    type Receiver = SessionReceiver;

    fn network_transport(&self) -> Option<&'static str> {
        Some("tcp")
    }

    fn split(self) -> (SessionSender, SessionReceiver) {
        (self.sender, self.receiver)
    }

    fn attach(&mut self, direct: Direct) {
        match &mut self.sender.route {
            Route::Session(session) => session.attach(direct),
            Route::Hub(attached) => {
                if let Some(attached) = attached.take() {
                    let _ = attached.send(direct);
                }
            }
        }
    }
}
