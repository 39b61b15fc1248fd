//! Tasks the client runs for the server (2025-11-25, the core tasks in the
//! server-to-client direction): a `sampling/createMessage` or
//! `elicitation/create` that carries `task` is answered at once with the
//! task, the config's callback runs on as work this session owns, and the
//! server follows it with `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel`. The tasks run on the engine the server's tasks run on
//! ([`TaskHost`]), their records in a
//! [`TaskStore`](mcp_tasks::TaskStore) (in memory by default);
//! this file only names the session's tasks and answers the server.
//!
//! Enabled with [`ClientConfig::host_tasks`](crate::ClientConfig::host_tasks),
//! which also declares `capabilities.tasks` (list, cancel, and the
//! task-augmented requests the config has callbacks for).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_core::CancellationToken;
use mcp_tasks::{LocalTaskChanges, TaskHost, TaskUpdate};
use mcp_types::{CreateTaskResult, ErrorObject, JsonObject, RawJson};

/// The longest retention a server may ask for: one day.
pub use mcp_tasks::DEFAULT_MAX_TASK_TTL as DEFAULT_MAX_HOSTED_TASK_TTL;
/// The polling interval suggested to the server: half a second.
pub use mcp_tasks::DEFAULT_POLL_INTERVAL as DEFAULT_HOSTED_POLL_INTERVAL;
/// Tasks per `tasks/list` page.
pub use mcp_tasks::DEFAULT_TASK_PAGE_SIZE as DEFAULT_HOSTED_PAGE_SIZE;
/// The default retention of a client-hosted task: one hour.
pub use mcp_tasks::DEFAULT_TASK_TTL as DEFAULT_HOSTED_TASK_TTL;
/// How a client runs the server's task-augmented requests
/// ([`ClientConfig::host_tasks`](crate::ClientConfig::host_tasks)): where
/// the records live, how long they are kept, the polling interval suggested
/// to the server, the `tasks/list` page size. The same configuration a
/// server runs its tasks with.
pub use mcp_tasks::TasksConfig as HostedTasks;

/// One session's hosted tasks: the shared [`TaskHost`] (records in the
/// store, the running work owned: cancelled by `tasks/cancel`, aborted
/// when the session goes), keyed by this session.
pub(crate) struct Host {
    tasks: Arc<TaskHost>,
    /// The session's key in the store: one store may serve many sessions.
    owner: String,
    next: AtomicU64,
}

fn to_raw<T: serde::Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the answer: {e}")))
}

impl Host {
    pub(crate) fn new(config: HostedTasks, owner: String) -> Self {
        Self {
            tasks: Arc::new(TaskHost::new(config, Arc::new(LocalTaskChanges::new()))),
            owner,
            next: AtomicU64::new(1),
        }
    }

    /// Creates a task for `method` and runs `work` (given the task's
    /// cancellation) as this session's own; answers the `CreateTaskResult`.
    pub(crate) async fn start<F>(
        &self,
        method: &str,
        ttl_ms: Option<u64>,
        work: impl FnOnce(CancellationToken) -> F,
    ) -> Result<RawJson, ErrorObject>
    where
        F: Future<Output = Result<JsonObject, ErrorObject>> + Send + 'static,
    {
        let task_id = format!("client-task-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let record = self
            .tasks
            .start(task_id, &self.owner, method, ttl_ms, |cancel| {
                let work = work(cancel);
                Box::pin(async move {
                    match work.await {
                        Ok(result) => TaskUpdate::completed(result),
                        Err(error) => TaskUpdate::failed(error),
                    }
                })
            })
            .await
            .map_err(mcp_tasks::TaskStoreError::into_error_object)?;
        to_raw(&CreateTaskResult::new(record.to_task()))
    }

    /// `tasks/get`.
    pub(crate) async fn get(&self, task_id: &str) -> Result<RawJson, ErrorObject> {
        to_raw(&self.tasks.get_task(&self.owner, task_id).await?)
    }

    /// `tasks/result`: waits for the end (or `cancel`), then the callback's
    /// answer with the related-task `_meta`, or its error.
    pub(crate) async fn result(
        &self,
        task_id: &str,
        cancel: &CancellationToken,
    ) -> Result<RawJson, ErrorObject> {
        to_raw(&self.tasks.task_result(&self.owner, task_id, cancel).await?)
    }

    /// `tasks/list`: one page of this session's tasks.
    pub(crate) async fn list(&self, cursor: Option<&str>) -> Result<RawJson, ErrorObject> {
        to_raw(&self.tasks.list_tasks(&self.owner, cursor).await?)
    }

    /// `tasks/cancel`: `cancelled` in the store, the callback stopped.
    pub(crate) async fn cancel(&self, task_id: &str) -> Result<RawJson, ErrorObject> {
        let cancelled = self
            .tasks
            .cancel_task(&self.owner, task_id, "cancelled by the server")
            .await?;
        to_raw(&cancelled)
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
