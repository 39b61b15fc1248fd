//! Tasks the client runs for the server (2025-11-25, the core tasks in the
//! server-to-client direction): a `sampling/createMessage` or
//! `elicitation/create` that carries `task` is answered at once with the
//! task, the config's callback runs on as work this session owns, and the
//! server follows it with `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel`. The records live in a
//! [`TaskStore`](mcp_core::task_store::TaskStore) (in memory by default),
//! under the same state machine the server's tasks follow.
//!
//! Enabled with [`ClientConfig::host_tasks`](crate::ClientConfig::host_tasks),
//! which also declares `capabilities.tasks` (list, cancel, and the
//! task-augmented requests the config has callbacks for).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::CancellationToken;
use mcp_core::task_store::{
    InMemoryTaskStore, TaskOutcome, TaskRecord, TaskStore, TaskStoreError, TaskUpdate, duration_ms,
    now_ms,
};
use mcp_types::meta::RELATED_TASK;
use mcp_types::{
    CreateTaskResult, ErrorObject, GetTaskPayloadResult, GetTaskResult, JsonObject,
    ListTasksResult, RawJson, TaskStatus,
};
use serde_json::Value;
use tokio::sync::watch;

/// The default retention of a client-hosted task: one hour.
pub const DEFAULT_HOSTED_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The longest retention a server may ask for: one day.
pub const DEFAULT_MAX_HOSTED_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The polling interval suggested to the server: half a second.
pub const DEFAULT_HOSTED_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Tasks per `tasks/list` page.
pub const DEFAULT_HOSTED_PAGE_SIZE: usize = 50;

/// How a client runs the server's task-augmented requests
/// ([`ClientConfig::host_tasks`](crate::ClientConfig::host_tasks)).
#[derive(Clone)]
pub struct HostedTasks {
    store: Arc<dyn TaskStore>,
    default_ttl: Duration,
    max_ttl: Duration,
    poll_interval: Duration,
    page_size: usize,
}

impl std::fmt::Debug for HostedTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedTasks")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for HostedTasks {
    fn default() -> Self {
        Self::new()
    }
}

impl HostedTasks {
    /// Tasks in an [`InMemoryTaskStore`], kept [`DEFAULT_HOSTED_TASK_TTL`]
    /// unless the server asks for less (at most
    /// [`DEFAULT_MAX_HOSTED_TASK_TTL`]), polled every
    /// [`DEFAULT_HOSTED_POLL_INTERVAL`].
    pub fn new() -> Self {
        Self {
            store: Arc::new(InMemoryTaskStore::new()),
            default_ttl: DEFAULT_HOSTED_TASK_TTL,
            max_ttl: DEFAULT_MAX_HOSTED_TASK_TTL,
            poll_interval: DEFAULT_HOSTED_POLL_INTERVAL,
            page_size: DEFAULT_HOSTED_PAGE_SIZE,
        }
    }

    /// Keeps the task records in `store`.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// How long a task is kept when the server asks for no TTL.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// The longest TTL granted; a longer request is shortened to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// The polling interval suggested to the server.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Tasks per `tasks/list` page.
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
}

/// One session's hosted tasks: their records (in the store) and their
/// running work (here, owned: cancelled by `tasks/cancel`, aborted when the
/// session goes).
pub(crate) struct Host {
    config: HostedTasks,
    /// The session's key in the store: one store may serve many sessions.
    owner: String,
    next: AtomicU64,
    running: Mutex<HashMap<String, (CancellationToken, tokio::task::AbortHandle)>>,
    /// Bumped on every change made here, so `tasks/result` re-reads.
    changed: watch::Sender<u64>,
}

impl Drop for Host {
    fn drop(&mut self) {
        let running = self.running.get_mut().unwrap_or_else(|p| p.into_inner());
        for (_, (cancel, work)) in running.drain() {
            cancel.cancel();
            work.abort();
        }
    }
}

fn refused(error: TaskStoreError) -> ErrorObject {
    match error {
        TaskStoreError::NotFound { .. } | TaskStoreError::InvalidTransition { .. } => {
            ErrorObject::invalid_params(error.to_string())
        }
        other => ErrorObject::internal_error(other.to_string()),
    }
}

fn to_raw<T: serde::Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the answer: {e}")))
}

impl Host {
    pub(crate) fn new(config: HostedTasks, owner: String) -> Self {
        Self {
            config,
            owner,
            next: AtomicU64::new(1),
            running: Mutex::new(HashMap::new()),
            changed: watch::channel(0).0,
        }
    }

    fn running(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (CancellationToken, tokio::task::AbortHandle)>>
    {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn record(&self, task_id: &str) -> Result<TaskRecord, ErrorObject> {
        self.config
            .store
            .get(&self.owner, task_id)
            .await
            .map_err(refused)?
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "no task `{task_id}`: it does not exist or has expired"
                ))
            })
    }

    /// Creates a task for `method` and runs `work` (given the task's
    /// cancellation) as this session's own; answers the `CreateTaskResult`.
    pub(crate) async fn start<F>(
        self: &Arc<Self>,
        method: &str,
        ttl_ms: Option<u64>,
        work: impl FnOnce(CancellationToken) -> F,
    ) -> Result<RawJson, ErrorObject>
    where
        F: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        let ttl = ttl_ms
            .unwrap_or_else(|| duration_ms(self.config.default_ttl))
            .min(duration_ms(self.config.max_ttl));
        let task_id = format!("client-task-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let record = TaskRecord::working(
            task_id.clone(),
            self.owner.clone(),
            method.to_owned(),
            now_ms(),
            Some(ttl),
            Some(duration_ms(self.config.poll_interval)),
        );
        self.config
            .store
            .create(record.clone())
            .await
            .map_err(refused)?;
        let cancel = CancellationToken::new();
        let work = work(cancel.clone());
        let host = Arc::downgrade(self);
        let id = task_id.clone();
        // Hold the table while spawning, so the work cannot end and remove
        // itself before it is registered.
        let mut running = self.running();
        let handle = tokio::spawn(async move {
            let update = match work.await {
                Ok(Value::Object(result)) => TaskUpdate::completed(result),
                Ok(_) => TaskUpdate::failed(ErrorObject::internal_error(
                    "the callback's answer is not a JSON object",
                )),
                Err(error) => TaskUpdate::failed(error),
            };
            let Some(host) = host.upgrade() else { return };
            match host
                .config
                .store
                .transition(&host.owner, &id, update, now_ms())
                .await
            {
                // Cancelled or expired meanwhile: the answer is moot.
                Ok(_)
                | Err(TaskStoreError::InvalidTransition { .. } | TaskStoreError::NotFound { .. }) =>
                    {}
                Err(error) => tracing::warn!(%error, "could not store a hosted task's end"),
            }
            host.running().remove(&id);
            host.changed.send_modify(|n| *n = n.wrapping_add(1));
        });
        running.insert(task_id, (cancel, handle.abort_handle()));
        drop(running);
        to_raw(&CreateTaskResult::new(record.to_task()))
    }

    /// `tasks/get`.
    pub(crate) async fn get(&self, task_id: &str) -> Result<RawJson, ErrorObject> {
        to_raw(&GetTaskResult::new(self.record(task_id).await?.to_task()))
    }

    /// `tasks/result`: waits for the end (or `cancel`), then the callback's
    /// answer with the related-task `_meta`, or its error.
    pub(crate) async fn result(
        &self,
        task_id: &str,
        cancel: &CancellationToken,
    ) -> Result<RawJson, ErrorObject> {
        let mut changed = self.changed.subscribe();
        let record = loop {
            changed.borrow_and_update();
            let record = self.record(task_id).await?;
            if record.status.is_terminal() {
                break record;
            }
            tokio::select! {
                _ = changed.changed() => {}
                // A shared store may change where no bump reaches us.
                () = tokio::time::sleep(self.config.poll_interval) => {}
                () = cancel.cancelled() => {
                    return Err(ErrorObject::internal_error("the request was cancelled"));
                }
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
                to_raw(&GetTaskPayloadResult::new(result))
            }
            (_, Some(TaskOutcome::Error(error))) => Err(error),
            (status, _) => Err(ErrorObject::invalid_params(format!(
                "task `{task_id}` ended {status:?} without a result"
            ))),
        }
    }

    /// `tasks/list`: one page of this session's tasks.
    pub(crate) async fn list(&self, cursor: Option<&str>) -> Result<RawJson, ErrorObject> {
        let page = self
            .config
            .store
            .list(&self.owner, cursor, self.config.page_size)
            .await
            .map_err(refused)?;
        let mut result = ListTasksResult::new(page.tasks.iter().map(TaskRecord::to_task).collect());
        result.next_cursor = page.next_cursor;
        to_raw(&result)
    }

    /// `tasks/cancel`: `cancelled` in the store, the callback stopped.
    pub(crate) async fn cancel(&self, task_id: &str) -> Result<RawJson, ErrorObject> {
        let update =
            TaskUpdate::status(TaskStatus::Cancelled).with_message("cancelled by the server");
        let record = self
            .config
            .store
            .transition(&self.owner, task_id, update, now_ms())
            .await
            .map_err(|e| match e {
                TaskStoreError::InvalidTransition { from, .. } => ErrorObject::invalid_params(
                    format!("cannot cancel task `{task_id}`: it is already {from:?}"),
                ),
                other => refused(other),
            })?;
        if let Some((cancel, work)) = self.running().remove(task_id) {
            cancel.cancel();
            work.abort();
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        to_raw(&GetTaskResult::new(record.to_task()))
    }

    /// The `capabilities.tasks` a client hosting tasks declares: list,
    /// cancel, and the task-augmented requests it has callbacks for.
    pub(crate) fn capability(
        sampling: bool,
        elicitation: bool,
    ) -> mcp_types::ClientTasksCapability {
        let mut requests = mcp_types::ClientTaskRequests::new();
        if sampling {
            let mut s = mcp_types::SamplingTaskRequests::new();
            s.create_message = Some(JsonObject::new());
            requests.sampling = Some(s);
        }
        if elicitation {
            let mut e = mcp_types::ElicitationTaskRequests::new();
            e.create = Some(JsonObject::new());
            requests.elicitation = Some(e);
        }
        let mut capability = mcp_types::ClientTasksCapability::new();
        capability.list = Some(JsonObject::new());
        capability.cancel = Some(JsonObject::new());
        capability.requests = Some(requests);
        capability
    }
}
