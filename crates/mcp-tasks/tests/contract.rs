//! The in-memory store against the contract every `TaskStore` backend must
//! pass (the Redis store meets it in `mcp-transport`'s `stores_redis`).

use std::sync::Arc;

use mcp_tasks::{InMemoryTaskStore, contract};

#[tokio::test]
async fn in_memory_task_store_meets_the_contract() {
    let store = Arc::new(InMemoryTaskStore::new());
    contract::task_store(store.clone(), store).await;
}
