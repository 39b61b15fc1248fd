//! The contracts a backend of the store seams must pass, each an async
//! function given two handles on one backend (two processes' views of one
//! Redis, or two clones of one in-memory store); each check panics with
//! what broke. Here: the [`TaskStore`] contract, and what every contract
//! suite shares ([`unique`]); the transport's stores have theirs in
//! `mcp_transport::store::contract`.
//!
//! ```no_run
//! # async fn f() {
//! use std::sync::Arc;
//! use mcp_tasks::{InMemoryTaskStore, contract};
//! let store = Arc::new(InMemoryTaskStore::new());
//! contract::task_store(store.clone(), store).await;
//! # }
//! ```

use std::sync::Arc;

use mcp_types::TaskStatus;

use crate::error::TaskStoreError;
use crate::record::{TaskRecord, TaskUpdate};
use crate::store::TaskStore;

/// A name no other run uses (the process, the clock, a counter), so a
/// suite can run again and again against one shared backend.
pub fn unique(what: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{what}-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn record(owner: &str, task_id: &str) -> TaskRecord {
    TaskRecord::working(
        task_id.into(),
        owner.into(),
        "tools/call".into(),
        1,
        Some(60_000),
        Some(500),
    )
}

/// The [`TaskStore`] contract on two handles `a` and `b` of one backend:
/// - what one creates the other reads unchanged (the request's params
///   too), scoped to its owner;
/// - `transition` applies the state machine against the stored status
///   (a terminal task never changes), with compare-and-set;
/// - `list` pages an owner's live tasks oldest first, each once.
pub async fn task_store(a: Arc<dyn TaskStore>, b: Arc<dyn TaskStore>) {
    let owner = unique("owner");
    let other = unique("other");
    // With the params a task keeps to run its request again.
    let params = serde_json::json!({"name": "ask", "arguments": {"n": 1}});
    let first = record(&owner, "t1").with_params(match params {
        serde_json::Value::Object(params) => params,
        _ => unreachable!("an object"),
    });
    let kept = first.params.clone();
    a.create(first.clone()).await.expect("create");
    assert_eq!(b.get(&owner, "t1").await.expect("get"), Some(first));
    assert_eq!(b.get(&other, "t1").await.expect("get"), None, "scoped");
    assert_eq!(b.get(&owner, "nope").await.expect("get"), None);

    // The state machine, through either handle.
    let waiting = b
        .transition(
            &owner,
            "t1",
            TaskUpdate::status(TaskStatus::InputRequired).with_message("asks"),
            5,
        )
        .await
        .expect("working -> input_required");
    assert_eq!(waiting.status, TaskStatus::InputRequired);
    assert_eq!(waiting.status_message.as_deref(), Some("asks"));
    assert_eq!(waiting.last_updated_at_ms, 5);
    assert_eq!(waiting.params, kept, "kept while the task may run again");
    let conflict = a
        .transition(
            &owner,
            "t1",
            TaskUpdate::status(TaskStatus::Working).expecting(TaskStatus::Working),
            6,
        )
        .await;
    assert!(
        matches!(conflict, Err(TaskStoreError::Conflict { .. })),
        "compare-and-set: {conflict:?}"
    );
    let done = a
        .transition(
            &owner,
            "t1",
            TaskUpdate::completed(serde_json::Map::new()).expecting(TaskStatus::InputRequired),
            7,
        )
        .await
        .expect("input_required -> completed");
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.params, None, "dropped once the task ended");
    assert_eq!(b.get(&owner, "t1").await.expect("get"), Some(done));
    let again = b
        .transition(&owner, "t1", TaskUpdate::status(TaskStatus::Cancelled), 8)
        .await;
    assert!(
        matches!(again, Err(TaskStoreError::InvalidTransition { .. })),
        "a terminal task never changes: {again:?}"
    );
    let missing = b
        .transition(&owner, "nope", TaskUpdate::status(TaskStatus::Cancelled), 8)
        .await;
    assert!(matches!(missing, Err(TaskStoreError::NotFound { .. })));

    // Concurrent compare-and-set: exactly one of two wins.
    a.create(record(&owner, "race")).await.expect("create");
    let cancel = || TaskUpdate::status(TaskStatus::Cancelled).expecting(TaskStatus::Working);
    let (x, y) = tokio::join!(
        a.transition(&owner, "race", cancel(), 9),
        b.transition(&owner, "race", cancel(), 9)
    );
    assert_eq!(
        usize::from(x.is_ok()) + usize::from(y.is_ok()),
        1,
        "one wins: {x:?} {y:?}"
    );

    // Listing: oldest first, paged, each once, only the owner's.
    for n in 2..=5 {
        b.create(record(&owner, &format!("t{n}")))
            .await
            .expect("create");
    }
    a.create(record(&other, "theirs")).await.expect("create");
    let mut seen = Vec::new();
    let mut cursor = None;
    for _ in 0..10 {
        let page = a.list(&owner, cursor.as_deref(), 2).await.expect("list");
        assert!(page.tasks.len() <= 2, "at most the limit");
        seen.extend(page.tasks.into_iter().map(|t| t.task_id));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["t1", "race", "t2", "t3", "t4", "t5"]);
}
