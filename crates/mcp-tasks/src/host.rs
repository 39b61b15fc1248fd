//! Running tasks, for whichever side hosts them (a server running tools as
//! tasks, a 2025-11-25 client running the server's sampling and elicitation
//! as tasks): [`TasksConfig`] (retention, polling, paging), and the
//! [`TaskHost`], which creates a task's record in the
//! [`TaskStore`], runs its work as a tokio task
//! it owns (cancelled by `tasks/cancel`, aborted when the host goes), stores
//! how the work ended, waits for a task's end, and answers the 2025-11-25
//! core methods (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`),
//! which read the same in both directions.
//!
//! How a change is announced, and heard by whoever waits for a task, is the
//! side's own ([`TaskChanges`]): [`LocalTaskChanges`] reaches this host's
//! waiters only; a server announces on its change feed, which also carries
//! status notifications and other replicas' changes.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_types::meta::RELATED_TASK;
use mcp_types::{
    CancelTaskResult, ErrorObject, GetTaskPayloadResult, GetTaskResult, JsonObject,
    ListTasksResult, TaskStatus,
};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::TaskStoreError;
use crate::record::{TaskOutcome, TaskRecord, TaskUpdate, duration_ms, now_ms};
use crate::store::{InMemoryTaskStore, StoreFuture, TaskPage, TaskStore};

/// The default retention of a task from its creation: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The longest retention a requester may ask for: one day.
pub const DEFAULT_MAX_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The default polling interval suggested to the requester: half a second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The default number of tasks one `tasks/list` page carries.
pub const DEFAULT_TASK_PAGE_SIZE: usize = 50;

/// How a side runs the tasks its peer asks for: where their records live,
/// how long they are kept, the polling interval suggested, and the
/// `tasks/list` page size.
#[derive(Clone)]
pub struct TasksConfig {
    store: Arc<dyn TaskStore>,
    default_ttl: Duration,
    max_ttl: Duration,
    poll_interval: Duration,
    page_size: usize,
}

impl std::fmt::Debug for TasksConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksConfig")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl TasksConfig {
    /// Tasks in an [`InMemoryTaskStore`], kept [`DEFAULT_TASK_TTL`] unless
    /// the requester asks for less (at most [`DEFAULT_MAX_TASK_TTL`]),
    /// polled every [`DEFAULT_POLL_INTERVAL`], listed
    /// [`DEFAULT_TASK_PAGE_SIZE`] a page.
    pub fn new() -> Self {
        Self {
            store: Arc::new(InMemoryTaskStore::new()),
            default_ttl: DEFAULT_TASK_TTL,
            max_ttl: DEFAULT_MAX_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            page_size: DEFAULT_TASK_PAGE_SIZE,
        }
    }

    /// Keeps task records in `store` (a shared backend for several
    /// processes).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// How long a task is kept when the requester asks for no TTL.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// The longest TTL granted; a longer request is shortened to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// The polling interval suggested to the requester.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Tasks per `tasks/list` page (at least one).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
}

/// What a task's work ends with: the update stored for it.
pub type Work = Pin<Box<dyn Future<Output = TaskUpdate> + Send>>;

/// How a [`TaskHost`] announces the changes it makes to tasks, and how its
/// waiters hear of changes (its own, and any made elsewhere that reach
/// this process). A change names the task only: listeners re-read it from
/// the store.
pub trait TaskChanges: Send + Sync + 'static {
    /// Task `task_id` of `owner` changed.
    fn announce(&self, owner: &str, task_id: &str);

    /// A listener for changes announced from now on.
    fn listen(&self) -> Box<dyn TaskChangeListener>;
}

/// Hears the changes of a [`TaskChanges`] ([`TaskChanges::listen`]).
pub trait TaskChangeListener: Send {
    /// Resolves once task `task_id` of `owner` may have changed since the
    /// listener was made or this last resolved; never, once nothing can be
    /// announced any more (the host then falls back to polling).
    fn changed<'a>(&'a mut self, owner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()>;
}

/// Changes heard by this host's own waiters only (what a client hosting
/// tasks needs): a counter every change bumps.
#[derive(Debug)]
pub struct LocalTaskChanges {
    bumps: watch::Sender<u64>,
}

impl Default for LocalTaskChanges {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalTaskChanges {
    /// No change announced yet.
    pub fn new() -> Self {
        Self {
            bumps: watch::channel(0).0,
        }
    }
}

impl TaskChanges for LocalTaskChanges {
    fn announce(&self, _owner: &str, _task_id: &str) {
        self.bumps.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn listen(&self) -> Box<dyn TaskChangeListener> {
        Box::new(LocalListener(self.bumps.subscribe()))
    }
}

struct LocalListener(watch::Receiver<u64>);

impl TaskChangeListener for LocalListener {
    fn changed<'a>(&'a mut self, _owner: &'a str, _task_id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// A serialized result as the JSON object a task keeps.
///
/// # Errors
/// When `value` does not serialize to a JSON object.
pub fn to_object<T: serde::Serialize>(value: &T) -> Result<JsonObject, ErrorObject> {
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ErrorObject::internal_error(
            "a result must be a JSON object",
        )),
        Err(e) => Err(ErrorObject::internal_error(format!(
            "could not serialize the result: {e}"
        ))),
    }
}

/// Runs tasks: creates their records, owns their running work, stores how
/// it ends, cancels it, and announces every change it makes.
pub struct TaskHost {
    config: TasksConfig,
    /// The work running in this process, by owner and task id.
    running: Mutex<HashMap<(String, String), Running>>,
    changes: Arc<dyn TaskChanges>,
}

impl std::fmt::Debug for TaskHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHost")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

struct Running {
    cancel: CancellationToken,
    /// The supervising task and the work itself (its own task, so a panic
    /// in the work fails the task instead of leaving it `working`).
    handles: [tokio::task::AbortHandle; 2],
}

impl Drop for TaskHost {
    fn drop(&mut self) {
        // The host owns the work: nothing outlives it.
        let running = self.running.get_mut().unwrap_or_else(|p| p.into_inner());
        for (_, work) in running.drain() {
            work.cancel.cancel();
            for handle in &work.handles {
                handle.abort();
            }
        }
    }
}

impl TaskHost {
    /// Runs tasks as `config` says, announcing changes on `changes`.
    pub fn new(config: TasksConfig, changes: Arc<dyn TaskChanges>) -> Self {
        Self {
            config,
            running: Mutex::new(HashMap::new()),
            changes,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TasksConfig {
        &self.config
    }

    /// Where the records live.
    pub fn store(&self) -> &dyn TaskStore {
        self.config.store.as_ref()
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many tasks' work runs in this process now.
    pub fn running_count(&self) -> usize {
        self.running().len()
    }

    /// The task `task_id` of `owner`.
    ///
    /// # Errors
    /// [`TaskStoreError::NotFound`] for one that does not exist, expired or
    /// is another owner's; the store's failure.
    pub async fn get(&self, owner: &str, task_id: &str) -> Result<TaskRecord, TaskStoreError> {
        self.store()
            .get(owner, task_id)
            .await?
            .ok_or_else(|| TaskStoreError::not_found(task_id))
    }

    /// Creates a `working` task `task_id` (unique within this host) of
    /// `owner` running `method`, kept `requested_ttl_ms` (capped by the
    /// configuration) or the default; with the request's `params` when
    /// the task may have to run it again ([`TaskRecord::params`]).
    ///
    /// # Errors
    /// The store's refusal (full, failed).
    pub async fn create(
        &self,
        task_id: String,
        owner: &str,
        method: &str,
        requested_ttl_ms: Option<u64>,
        params: Option<JsonObject>,
    ) -> Result<TaskRecord, TaskStoreError> {
        let ttl = requested_ttl_ms
            .unwrap_or_else(|| duration_ms(self.config.default_ttl))
            .min(duration_ms(self.config.max_ttl));
        let mut record = TaskRecord::working(
            task_id,
            owner.to_owned(),
            method.to_owned(),
            now_ms(),
            Some(ttl),
            Some(duration_ms(self.config.poll_interval)),
        );
        record.params = params;
        self.store().create(record.clone()).await?;
        Ok(record)
    }

    /// Creates a task ([`create`](Self::create)) and runs the work `work`
    /// makes from the task's cancellation ([`spawn`](Self::spawn)).
    ///
    /// # Errors
    /// The store's refusal; the work then never starts.
    pub async fn start(
        self: &Arc<Self>,
        task_id: String,
        owner: &str,
        method: &str,
        requested_ttl_ms: Option<u64>,
        work: impl FnOnce(CancellationToken) -> Work,
    ) -> Result<TaskRecord, TaskStoreError> {
        let record = self
            .create(task_id, owner, method, requested_ttl_ms, None)
            .await?;
        let cancel = CancellationToken::new();
        let work = work(cancel.clone());
        self.spawn(owner.to_owned(), record.task_id.clone(), cancel, work);
        Ok(record)
    }

    /// Runs `work` for the task as a tokio task this host owns: its update
    /// is stored when it ends, unless the task was cancelled (then `cancel`
    /// fires and the work is dropped at its next await); a panic fails the
    /// task.
    pub fn spawn(
        self: &Arc<Self>,
        owner: String,
        task_id: String,
        cancel: CancellationToken,
        work: Work,
    ) {
        let host = Arc::downgrade(self);
        let key = (owner, task_id);
        let token = cancel.clone();
        // Hold the table while spawning, so the task cannot finish and
        // remove itself before it is registered.
        let mut running = self.running();
        let inner = tokio::spawn(work);
        let inner_abort = inner.abort_handle();
        let kept_abort = inner.abort_handle();
        let (owner, id) = key.clone();
        let handle = tokio::spawn(async move {
            let update = tokio::select! {
                () = token.cancelled() => {
                    inner_abort.abort();
                    None
                }
                joined = inner => match joined {
                    Ok(update) => Some(update),
                    Err(e) if e.is_panic() => {
                        tracing::warn!("a task's work panicked; the task failed");
                        Some(TaskUpdate::failed(ErrorObject::internal_error(
                            "the task's work panicked",
                        )))
                    }
                    Err(_) => None,
                },
            };
            let Some(host) = host.upgrade() else {
                return;
            };
            if let Some(update) = update {
                match host.store().transition(&owner, &id, update, now_ms()).await {
                    Ok(_) => {}
                    // Cancelled (or expired) meanwhile: the work's end is moot.
                    Err(
                        TaskStoreError::InvalidTransition { .. } | TaskStoreError::NotFound { .. },
                    ) => {}
                    Err(e) => tracing::warn!(error = %e, "could not store a task's end"),
                }
            }
            host.running().remove(&(owner.clone(), id.clone()));
            host.changes.announce(&owner, &id);
        });
        running.insert(
            key,
            Running {
                cancel,
                handles: [handle.abort_handle(), kept_abort],
            },
        );
    }

    /// Stores `update` for a task (a status message, a wait for input, ...)
    /// and announces it.
    ///
    /// # Errors
    /// The store's refusal (not found, a move the state machine forbids, a
    /// compare-and-set conflict, a failure).
    pub async fn update(
        &self,
        owner: &str,
        task_id: &str,
        update: TaskUpdate,
    ) -> Result<TaskRecord, TaskStoreError> {
        let record = self
            .store()
            .transition(owner, task_id, update, now_ms())
            .await?;
        self.changes.announce(owner, task_id);
        Ok(record)
    }

    /// Cancels a task: `cancelled` in the store with `message`, its work
    /// (if it runs in this process) told to stop.
    ///
    /// # Errors
    /// As [`update`](Self::update); a task already ended is
    /// [`TaskStoreError::InvalidTransition`].
    pub async fn cancel(
        &self,
        owner: &str,
        task_id: &str,
        message: &str,
    ) -> Result<TaskRecord, TaskStoreError> {
        let update = TaskUpdate::status(TaskStatus::Cancelled).with_message(message);
        let record = self.update(owner, task_id, update).await?;
        let key = (owner.to_owned(), task_id.to_owned());
        if let Some(work) = self.running().remove(&key) {
            work.cancel.cancel();
        }
        Ok(record)
    }

    /// Waits until the task is terminal: re-reads it whenever a change may
    /// have touched it, and every poll interval for a store changed where
    /// no announcement reaches this process.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub async fn wait_terminal(
        &self,
        owner: &str,
        task_id: &str,
    ) -> Result<TaskRecord, TaskStoreError> {
        let mut listener = self.changes.listen();
        loop {
            let record = self.get(owner, task_id).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            tokio::select! {
                () = listener.changed(owner, task_id) => {}
                () = tokio::time::sleep(self.config.poll_interval) => {}
            }
        }
    }

    /// One page of `owner`'s tasks after `cursor`, as many as the
    /// configuration's page size.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
    ) -> Result<TaskPage, TaskStoreError> {
        self.store()
            .list(owner, cursor, self.config.page_size)
            .await
    }

    /// The answer to `tasks/get` (2025-11-25).
    ///
    /// # Errors
    /// The JSON-RPC error the requester gets.
    pub async fn get_task(&self, owner: &str, task_id: &str) -> Result<GetTaskResult, ErrorObject> {
        let record = self
            .get(owner, task_id)
            .await
            .map_err(TaskStoreError::into_error_object)?;
        Ok(GetTaskResult::new(record.to_task()))
    }

    /// The answer to `tasks/result` (2025-11-25): waits for the end (or
    /// `cancel`), then the underlying result with the related-task `_meta`,
    /// or its error.
    ///
    /// # Errors
    /// The task's own error, or the JSON-RPC error the requester gets.
    pub async fn task_result(
        &self,
        owner: &str,
        task_id: &str,
        cancel: &CancellationToken,
    ) -> Result<GetTaskPayloadResult, ErrorObject> {
        let record = tokio::select! {
            record = self.wait_terminal(owner, task_id) => {
                record.map_err(TaskStoreError::into_error_object)?
            }
            () = cancel.cancelled() => {
                return Err(ErrorObject::internal_error("the request was cancelled"));
            }
        };
        match (record.status, record.outcome) {
            (TaskStatus::Completed, Some(TaskOutcome::Result(mut result))) => {
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(
                        RELATED_TASK.to_owned(),
                        serde_json::json!({ "taskId": record.task_id }),
                    );
                }
                Ok(GetTaskPayloadResult::new(result))
            }
            (_, Some(TaskOutcome::Error(error))) => Err(error),
            (status, _) => Err(ErrorObject::invalid_params(format!(
                "task `{task_id}` ended {status:?} without a result"
            ))),
        }
    }

    /// The answer to `tasks/list` (2025-11-25): one page of `owner`'s tasks.
    ///
    /// # Errors
    /// The JSON-RPC error the requester gets.
    pub async fn list_tasks(
        &self,
        owner: &str,
        cursor: Option<&str>,
    ) -> Result<ListTasksResult, ErrorObject> {
        let page = self
            .list(owner, cursor)
            .await
            .map_err(TaskStoreError::into_error_object)?;
        let mut result = ListTasksResult::new(page.tasks.iter().map(TaskRecord::to_task).collect());
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    /// The answer to `tasks/cancel` (2025-11-25): the task cancelled with
    /// `message` ([`cancel`](Self::cancel)).
    ///
    /// # Errors
    /// The JSON-RPC error the requester gets (`invalid params` for a task
    /// that does not exist or already ended).
    pub async fn cancel_task(
        &self,
        owner: &str,
        task_id: &str,
        message: &str,
    ) -> Result<CancelTaskResult, ErrorObject> {
        let record = self
            .cancel(owner, task_id, message)
            .await
            .map_err(|e| match e {
                TaskStoreError::InvalidTransition { from, .. } => ErrorObject::invalid_params(
                    format!("cannot cancel task `{task_id}`: it is already {from:?}"),
                ),
                other => other.into_error_object(),
            })?;
        Ok(GetTaskResult::new(record.to_task()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(config: TasksConfig) -> Arc<TaskHost> {
        Arc::new(TaskHost::new(config, Arc::new(LocalTaskChanges::new())))
    }

    #[tokio::test]
    async fn a_cancelled_task_stops_its_work_and_stays_cancelled() {
        let engine = host(TasksConfig::new());
        let record = engine
            .create("t".into(), "me", "tools/call", None, None)
            .await
            .expect("task");
        let cancel = CancellationToken::new();
        let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        struct Flag(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let flag = Flag(dropped.clone());
        engine.spawn(
            "me".into(),
            record.task_id.clone(),
            cancel.clone(),
            Box::pin(async move {
                let _flag = flag;
                let _ = started_tx.send(());
                std::future::pending::<()>().await;
                TaskUpdate::completed(Default::default())
            }),
        );
        started.await.expect("started");
        let cancelled = engine
            .cancel("me", &record.task_id, "cancelled by the test")
            .await
            .expect("cancel");
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        assert!(cancel.is_cancelled());
        let done = tokio::time::timeout(
            Duration::from_secs(5),
            engine.wait_terminal("me", &record.task_id),
        )
        .await
        .expect("in time")
        .expect("terminal");
        assert_eq!(done.status, TaskStatus::Cancelled);
        tokio::time::timeout(Duration::from_secs(5), async {
            while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the work was dropped");
        assert_eq!(engine.running_count(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn ttls_are_capped_and_defaulted() {
        let engine = host(
            TasksConfig::new()
                .default_ttl(Duration::from_secs(10))
                .max_ttl(Duration::from_secs(60)),
        );
        let default = engine
            .create("a".into(), "me", "tools/call", None, None)
            .await
            .expect("task");
        assert_eq!(default.ttl_ms, Some(10_000));
        let capped = engine
            .create("b".into(), "me", "tools/call", Some(3_600_000), None)
            .await
            .expect("task");
        assert_eq!(capped.ttl_ms, Some(60_000));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(
            engine
                .store()
                .get("me", &default.task_id)
                .await
                .expect("get")
                .is_none(),
            "expired with its TTL"
        );
        assert!(
            engine
                .store()
                .get("me", &capped.task_id)
                .await
                .expect("get")
                .is_some()
        );
    }

    #[tokio::test]
    async fn a_panicking_work_fails_its_task_and_wakes_its_waiters() {
        let engine = host(TasksConfig::new().poll_interval(Duration::from_secs(3600)));
        let (go_tx, go) = tokio::sync::oneshot::channel::<()>();
        let record = engine
            .start("p".into(), "me", "tools/call", None, |_| {
                Box::pin(async move {
                    let _ = go.await;
                    panic!("the work fails");
                })
            })
            .await
            .expect("started");
        let never = CancellationToken::new();
        let waiting = engine.task_result("me", &record.task_id, &never);
        let _ = go_tx.send(());
        // Woken by the announcement, not the (hour-long) poll interval.
        let error = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("in time")
            .expect_err("failed");
        assert_eq!(error.message, "the task's work panicked");
    }
}
