//! The seams of what several server processes share: handshake-era
//! sessions ([`SessionStore`]), the SSE events that `Last-Event-ID`
//! resumption reads ([`EventStore`]) and a publish/subscribe
//! [`MessageBus`] (list changes, resource updates, answers to
//! server-to-client requests routed to the process whose handler waits).
//!
//! Each seam has an in-memory implementation (one process, or several
//! services in one process) and, with feature `redis`, a Redis backend
//! ([`redis`]); [`contract`] is the test suite every backend
//! must pass.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

mod bus;
pub mod contract;
mod events;
#[cfg(feature = "redis")]
pub mod redis;
mod session;

pub use bus::{InMemoryBus, MessageBus};
pub use events::{EventStore, InMemoryEventStore, Replay, parse_event_id};
pub use session::{InMemorySessionStore, SessionStore, SharedSession};

/// A boxed future a store answers with; a backend's failure is an
/// [`Error::Store`](crate::Error::Store) or
/// [`Error::StoreTimeout`](crate::Error::StoreTimeout), never a hang.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, crate::Error>> + Send + 'a>>;

/// The stores several server processes share: give the same to each
/// process (the same Redis, the same key prefix) and any of them serves
/// any session.
#[derive(Clone)]
pub struct SharedStores {
    /// Handshake-era sessions.
    pub sessions: Arc<dyn SessionStore>,
    /// SSE events for `Last-Event-ID` resumption.
    pub events: Arc<dyn EventStore>,
    /// Messages between the processes.
    pub bus: Arc<dyn MessageBus>,
}

impl std::fmt::Debug for SharedStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStores").finish_non_exhaustive()
    }
}

impl SharedStores {
    /// Whether the backends of the sessions and of the bus answer now
    /// (the event store shares the session store's backend in every
    /// backend here): what a replica's readiness reports.
    ///
    /// # Errors
    /// The first backend's failure ([`Error::Store`](crate::Error::Store)
    /// or [`Error::StoreTimeout`](crate::Error::StoreTimeout)).
    pub async fn ping(&self) -> Result<(), crate::Error> {
        self.sessions.ping().await?;
        self.bus.ping().await
    }

    /// In-memory stores: shared by the services of one process that are
    /// given clones of them (tests, or several listeners of one server).
    pub fn in_memory() -> Self {
        Self {
            sessions: Arc::new(InMemorySessionStore::default()),
            events: Arc::new(InMemoryEventStore::default()),
            bus: Arc::new(InMemoryBus::default()),
        }
    }
}
