//! The three store contracts on two `connect`ions of one Redis
//! configuration, as two server processes would have them. Shared by the
//! Redis tests (included by path), with the error a lost Redis is.

use mcp_transport::store::contract;
use mcp_transport::store::redis::RedisConfig;

/// Connects twice with `config` (64 events per stream at most) and runs
/// the session, bus and event store contracts across the two.
pub(crate) async fn two_connections_meet_the_contracts(config: RedisConfig) {
    let config = config.max_per_stream(64, 1 << 20);
    let stores = config.clone().connect().await.expect("connect");
    let other = config.connect().await.expect("connect");
    contract::session_store(stores.sessions.clone(), other.sessions.clone()).await;
    contract::message_bus(stores.bus.clone(), other.bus.clone()).await;
    contract::event_store(stores.events.clone(), other.events.clone(), 64).await;
}

/// Whether `error` is the typed failure of `store` that an unreachable
/// Redis is: a store error or a timeout, naming the store.
pub(crate) fn is_store_failure(error: &mcp_transport::Error, store: &str) -> bool {
    match error {
        mcp_transport::Error::Store { store: named, .. }
        | mcp_transport::Error::StoreTimeout { store: named, .. } => *named == store,
        _ => false,
    }
}
