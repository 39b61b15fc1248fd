//! The [`Transport`] a dispatcher gets: one handshake session, or one
//! stateless exchange.

use std::fmt;
use std::sync::Arc;

use mcp_core::{Inbound, Outbound, Transport, TransportError, TransportReceiver, TransportSender};
use tokio::sync::mpsc;

use super::session::Session;
use super::stateless::Exchange;

/// One HTTP session, or one stateless exchange, as a [`Transport`] for a
/// dispatcher.
pub struct SessionTransport {
    sender: SessionSender,
    receiver: SessionReceiver,
}

impl fmt::Debug for SessionTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionTransport")
            .field("session_id", &self.session_id())
            .finish()
    }
}

impl SessionTransport {
    pub(super) fn session(session: Arc<Session>, rx: mpsc::Receiver<Inbound>) -> Self {
        Self {
            sender: SessionSender {
                route: Route::Session(session),
            },
            receiver: SessionReceiver { rx, ended: false },
        }
    }

    pub(super) fn exchange(exchange: Arc<Exchange>, rx: mpsc::Receiver<Inbound>) -> Self {
        Self {
            sender: SessionSender {
                route: Route::Exchange(exchange),
            },
            receiver: SessionReceiver { rx, ended: false },
        }
    }

    /// The session's `Mcp-Session-Id`; `None` for a stateless exchange.
    pub fn session_id(&self) -> Option<&str> {
        match &self.sender.route {
            Route::Session(session) => Some(&session.id),
            Route::Exchange(_) => None,
        }
    }
}

enum Route {
    Session(Arc<Session>),
    Exchange(Arc<Exchange>),
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
            Route::Exchange(exchange) => exchange.route(message),
        }
    }

    async fn close(&mut self) {
        match &self.route {
            Route::Session(session) => session.close(),
            Route::Exchange(exchange) => exchange.close(),
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
}
