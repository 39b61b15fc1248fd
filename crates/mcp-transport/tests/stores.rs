//! The store contracts against the in-memory stores (the Redis backends
//! run the same suites in `stores_redis.rs`).

use std::sync::Arc;

use mcp_transport::store::{InMemoryBus, InMemoryEventStore, InMemorySessionStore, contract};

#[tokio::test]
async fn in_memory_event_store_meets_the_contract() {
    let store = Arc::new(InMemoryEventStore::new(8));
    contract::event_store(store.clone(), store, 8).await;
}

#[tokio::test]
async fn in_memory_event_store_is_bounded_in_bytes() {
    use bytes::Bytes;
    use mcp_transport::store::EventStore;
    let store = InMemoryEventStore::new(100).max_bytes_per_stream(10);
    let first = store.append("s", Bytes::from_static(b"12345"));
    let second = store.append("s", Bytes::from_static(b"12345"));
    store.append("s", Bytes::from_static(b"12345"));
    store.append("s", Bytes::from_static(b"12345"));
    assert!(
        store
            .replay_after(&first)
            .await
            .expect("in memory")
            .is_none(),
        "evicted"
    );
    let tail = store
        .replay_after(&second)
        .await
        .expect("in memory")
        .expect("kept");
    assert_eq!(tail.events.len(), 2);
}

#[tokio::test]
async fn in_memory_session_store_meets_the_contract() {
    let store = Arc::new(InMemorySessionStore::default());
    contract::session_store(store.clone(), store).await;
}

#[tokio::test]
async fn in_memory_bus_meets_the_contract() {
    let bus = Arc::new(InMemoryBus::default());
    contract::message_bus(bus.clone(), bus).await;
}
