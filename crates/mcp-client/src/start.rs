//! Starting a session: the config split into what the session keeps and
//! the handler that answers the server, wired to a running connection.
//! Above the session and its callbacks, so neither names the other's
//! construction.

use std::sync::Arc;

use mcp_core::{Connection, Transport};

use crate::callbacks::Callbacks;
use crate::config::ClientConfig;
use crate::extension::bindings::Bindings;
use crate::hosted::Host;
use crate::session::{ClientSession, Owner, OwnerSlot, Shared};

impl ClientSession {
    /// Starts a session over `transport`. Nothing is sent until
    /// [`negotiate`](Self::negotiate) (or `initialize`/`discover`). Must be
    /// called within a tokio runtime.
    pub fn new<T: Transport>(transport: T, config: ClientConfig) -> Self {
        let config = Arc::new(config.settings);
        let shared = Arc::new(Shared::new(&config));
        let bindings = Bindings::start(&config.extensions.bindings);
        let host = config.hosted_tasks.clone().map(|tasks| {
            // One store may serve many sessions: each keys its own tasks.
            let owner = format!("session:{:p}", Arc::as_ptr(&shared));
            Arc::new(Host::new(tasks, owner))
        });
        let slot = OwnerSlot::default();
        let handler = Callbacks::new(
            config.clone(),
            shared.clone(),
            bindings.queues.clone(),
            host,
            slot.clone(),
        );
        let connection = Connection::start(transport, handler, config.dispatcher.clone());
        let owner = Arc::new(Owner::new(connection, bindings));
        // Nothing of the server's reaches a callback before the client
        // speaks first (its first request goes out after this returns).
        let _ = slot.set(Arc::downgrade(&owner));
        Self {
            owner,
            shared,
            config,
        }
    }
}
