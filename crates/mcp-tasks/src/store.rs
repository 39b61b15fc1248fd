//! Where task state lives: the [`TaskStore`] trait every backend
//! implements (a shared one, Redis or a database, lets several processes
//! serve the same tasks; what only one process can hold, the running work
//! and its cancellation, stays with the side that runs it), the paging
//! helpers every backend shares, and the bounded in-memory default with TTL
//! expiry ([`InMemoryTaskStore`]).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::TaskStoreError;
use crate::record::{TaskRecord, TaskUpdate, apply};

/// A boxed future a [`TaskStore`] answers with.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a [`TaskStore::list`] page starts: after the task numbered by
/// `cursor` (stores that number tasks in creation order use the number as
/// the cursor), or at the start for none or one they did not write.
pub fn cursor_after(cursor: Option<&str>) -> Option<u64> {
    cursor.and_then(|c| c.parse::<u64>().ok())
}

/// The cursor of a page that ends at the task numbered `sequence`
/// ([`cursor_after`] reads it).
pub fn cursor_at(sequence: u64) -> String {
    sequence.to_string()
}

/// One page of [`TaskStore::list`].
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// Where the next page starts (opaque), if there is one.
    pub next_cursor: Option<String>,
}

/// Where task state lives. Every method is scoped to an owner; every
/// record is plain data, so a shared backend can implement this.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task.
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;

    /// The task `task_id` of `owner`, unless it does not exist or expired.
    fn get<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `update` atomically, checking the state machine
    /// ([`can_move`](crate::can_move)) against the stored status; answers the new record.
    fn transition<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, Result<TaskRecord, TaskStoreError>>;

    /// Up to `limit` tasks of `owner`, oldest first, after `cursor` (an
    /// opaque value from a previous page); the next page's cursor.
    fn list<'a>(
        &'a self,
        owner: &'a str,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskStoreError>>;
}

/// The default number of live tasks an [`InMemoryTaskStore`] keeps.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

struct Entry {
    record: TaskRecord,
    /// When the record expires, on tokio's clock (so a paused test clock
    /// drives expiry).
    expires: Option<Instant>,
    /// Creation order, for stable listing and eviction.
    sequence: u64,
}

#[derive(Default)]
struct Tasks {
    by_key: HashMap<(String, String), Entry>,
    /// (sequence) -> key, oldest first.
    order: BTreeMap<u64, (String, String)>,
    next: u64,
}

impl Tasks {
    fn remove(&mut self, key: &(String, String)) {
        if let Some(entry) = self.by_key.remove(key) {
            self.order.remove(&entry.sequence);
        }
    }

    fn purge_expired(&mut self, now: Instant) {
        let expired: Vec<(String, String)> = self
            .by_key
            .iter()
            .filter(|(_, e)| e.expires.is_some_and(|at| at <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            self.remove(&key);
        }
    }

    fn live(&self, key: &(String, String), now: Instant) -> Option<&Entry> {
        self.by_key
            .get(key)
            .filter(|e| e.expires.is_none_or(|at| at > now))
    }
}

/// Tasks in this process's memory, bounded ([`DEFAULT_MAX_TASKS`]), each
/// dropped when its TTL runs out.
pub struct InMemoryTaskStore {
    tasks: Mutex<Tasks>,
    max_tasks: usize,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTaskStore")
            .field("max_tasks", &self.max_tasks)
            .finish_non_exhaustive()
    }
}

impl InMemoryTaskStore {
    /// An empty store holding at most [`DEFAULT_MAX_TASKS`] live tasks.
    pub fn new() -> Self {
        Self {
            tasks: Mutex::new(Tasks::default()),
            max_tasks: DEFAULT_MAX_TASKS,
        }
    }

    /// At most `max_tasks` live tasks; creating one more fails with
    /// [`TaskStoreError::Full`] once expired ones are gone.
    pub fn with_max_tasks(mut self, max_tasks: usize) -> Self {
        self.max_tasks = max_tasks.max(1);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        let result = (|| {
            let now = Instant::now();
            let mut tasks = self.lock();
            if tasks.by_key.len() >= self.max_tasks {
                tasks.purge_expired(now);
            }
            TaskStoreError::check_room(
                tasks.by_key.len(),
                self.max_tasks,
                "InMemoryTaskStore::with_max_tasks",
            )?;
            let key = (record.owner.clone(), record.task_id.clone());
            let expires = record.ttl_ms.map(|ttl| now + Duration::from_millis(ttl));
            let sequence = tasks.next;
            tasks.next += 1;
            tasks.order.insert(sequence, key.clone());
            tasks.by_key.insert(
                key,
                Entry {
                    record,
                    expires,
                    sequence,
                },
            );
            Ok(())
        })();
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let key = (owner.to_owned(), task_id.to_owned());
        let found = self
            .lock()
            .live(&key, Instant::now())
            .map(|e| e.record.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn transition<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, Result<TaskRecord, TaskStoreError>> {
        let result = (|| {
            let key = (owner.to_owned(), task_id.to_owned());
            let now = Instant::now();
            let mut tasks = self.lock();
            if tasks.live(&key, now).is_none() {
                tasks.remove(&key);
                return Err(TaskStoreError::not_found(task_id));
            }
            let Some(entry) = tasks.by_key.get_mut(&key) else {
                return Err(TaskStoreError::not_found(task_id));
            };
            apply(&mut entry.record, update, now_ms)?;
            Ok(entry.record.clone())
        })();
        Box::pin(std::future::ready(result))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskStoreError>> {
        let now = Instant::now();
        let tasks = self.lock();
        let start = cursor_after(cursor).map_or(0, |a| a + 1);
        let mut page = Vec::new();
        let mut next = None;
        for (&sequence, key) in tasks.order.range(start..) {
            if key.0 != owner {
                continue;
            }
            let Some(entry) = tasks.live(key, now) else {
                continue;
            };
            if page.len() == limit.max(1) {
                next = page.last().map(|(s, _): &(u64, TaskRecord)| cursor_at(*s));
                break;
            }
            page.push((sequence, entry.record.clone()));
        }
        let tasks = page.into_iter().map(|(_, r)| r).collect();
        Box::pin(std::future::ready(Ok(TaskPage {
            tasks,
            next_cursor: next,
        })))
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{JsonObject, TaskStatus};

    use super::*;
    use crate::record::test_record as record;

    #[tokio::test(start_paused = true)]
    async fn a_task_expires_when_its_ttl_runs_out() {
        let store = InMemoryTaskStore::new();
        store
            .create(record("a", "t", Some(1_000)))
            .await
            .expect("created");
        store
            .create(record("a", "forever", None))
            .await
            .expect("created");
        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(store.get("a", "t").await.expect("get").is_some());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(store.get("a", "t").await.expect("get").is_none(), "expired");
        assert!(matches!(
            store
                .transition("a", "t", TaskUpdate::status(TaskStatus::Cancelled), 1)
                .await,
            Err(TaskStoreError::NotFound { .. })
        ));
        let listed = store.list("a", None, 10).await.expect("list").tasks;
        assert_eq!(
            listed
                .iter()
                .map(|r| r.task_id.as_str())
                .collect::<Vec<_>>(),
            ["forever"]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_store_is_bounded_and_expired_tasks_make_room() {
        let store = InMemoryTaskStore::new().with_max_tasks(2);
        store
            .create(record("a", "1", Some(10)))
            .await
            .expect("created");
        store.create(record("a", "2", None)).await.expect("created");
        assert!(matches!(
            store.create(record("a", "3", None)).await,
            Err(TaskStoreError::Full { limit: 2, .. })
        ));
        tokio::time::advance(Duration::from_millis(10)).await;
        store
            .create(record("a", "3", None))
            .await
            .expect("room made");
    }

    #[tokio::test]
    async fn a_terminal_task_never_changes_and_owners_are_apart() {
        let store = InMemoryTaskStore::new();
        store.create(record("a", "t", None)).await.expect("created");
        assert!(store.get("b", "t").await.expect("get").is_none());
        let done = store
            .transition("a", "t", TaskUpdate::completed(JsonObject::new()), 5)
            .await
            .expect("completed");
        assert_eq!(done.status, TaskStatus::Completed);
        assert_eq!(done.last_updated_at_ms, 5);
        assert!(matches!(
            store
                .transition("a", "t", TaskUpdate::status(TaskStatus::Cancelled), 6)
                .await,
            Err(TaskStoreError::InvalidTransition { .. })
        ));
    }

    #[tokio::test]
    async fn lists_page_oldest_first_per_owner() {
        let store = InMemoryTaskStore::new();
        for id in ["1", "2", "3"] {
            store.create(record("a", id, None)).await.expect("created");
        }
        store.create(record("b", "x", None)).await.expect("created");
        let first = store.list("a", None, 2).await.expect("page");
        assert_eq!(first.tasks.len(), 2);
        let TaskPage {
            tasks: second,
            next_cursor: end,
        } = store
            .list("a", first.next_cursor.as_deref(), 2)
            .await
            .expect("page");
        assert_eq!(
            second
                .iter()
                .map(|r| r.task_id.as_str())
                .collect::<Vec<_>>(),
            ["3"]
        );
        assert!(end.is_none());
    }

    #[tokio::test]
    async fn the_params_are_kept_until_the_task_ends() {
        let store = InMemoryTaskStore::new();
        let mut params = JsonObject::new();
        params.insert("name".into(), "ask".into());
        store
            .create(record("a", "t", None).with_params(params.clone()))
            .await
            .expect("created");
        let waiting = store
            .transition(
                "a",
                "t",
                TaskUpdate::input_required(JsonObject::new(), None),
                1,
            )
            .await
            .expect("input_required");
        assert_eq!(waiting.params.as_ref(), Some(&params));
        let working = store
            .transition("a", "t", TaskUpdate::status(TaskStatus::Working), 2)
            .await
            .expect("working");
        assert_eq!(working.params.as_ref(), Some(&params));
        let done = store
            .transition("a", "t", TaskUpdate::completed(JsonObject::new()), 3)
            .await
            .expect("completed");
        assert_eq!(done.params, None, "dropped once the task ended");
    }
}
