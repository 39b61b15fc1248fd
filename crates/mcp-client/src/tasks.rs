//! Tasks from the client: call a tool as a task, follow it (`tasks/get`),
//! cancel it, and wait for its result with the server's polling interval.
//!
//! In the handshake era these are the 2025-11-25 revision's experimental
//! core tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`).

use std::time::Duration;

use mcp_types::method::Method;
use mcp_types::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, ListTasksResult,
    PaginatedRequestParams, Task, TaskIdParams, TaskMetadata, TaskStatus, methods,
};
use serde::Serialize;

use crate::session::{parse_result, raw_params};
use crate::{ClientSession, Error, RequestOptions};

/// The polling interval used when the server suggests none.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The shortest polling interval honoured, whatever the server suggests.
pub const MIN_TASK_POLL_INTERVAL: Duration = Duration::from_millis(10);
/// The longest polling interval honoured, whatever the server suggests.
pub const MAX_TASK_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// How long to wait before polling `task` again: the server's suggestion,
/// kept within [`MIN_TASK_POLL_INTERVAL`] and [`MAX_TASK_POLL_INTERVAL`].
pub fn poll_interval(task: &Task) -> Duration {
    task.poll_interval
        .map_or(DEFAULT_TASK_POLL_INTERVAL, Duration::from_millis)
        .clamp(MIN_TASK_POLL_INTERVAL, MAX_TASK_POLL_INTERVAL)
}

impl ClientSession {
    /// Calls a tool as a task (a task-augmented `tools/call`): the server
    /// answers at once with the task, while the tool runs on. `ttl` asks
    /// how long the server keeps it.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (a tool that does not
    /// run as a task is a remote `-32601`); [`Error::InvalidResult`] when
    /// it answers with something else than a task.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl Serialize,
        ttl: Option<Duration>,
    ) -> Result<Task, Error> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = crate::calls::tool_arguments(arguments)?;
        let mut task = TaskMetadata::new();
        task.ttl = ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        params.task = Some(task);
        let raw = self
            .request_raw(
                methods::CallTool::NAME,
                raw_params::<methods::CallTool>(&params)?,
                RequestOptions::new(),
            )
            .await?;
        let created: CreateTaskResult = parse_result(methods::CallTool::NAME, &raw)?;
        Ok(created.task)
    }

    /// The task's current state (`tasks/get`).
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown or expired task is a remote `-32602`.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        let result = self
            .request::<methods::GetTask>(&TaskIdParams::new(task_id), RequestOptions::new())
            .await?;
        Ok(result.task())
    }

    /// The result of a finished tool task (`tasks/result`; the server
    /// answers once the task is terminal).
    ///
    /// # Errors
    /// [`Error::Request`]: the task's own JSON-RPC error when it failed;
    /// [`Error::InvalidResult`] when the payload is not a tool result.
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, Error> {
        let payload = self
            .request::<methods::GetTaskPayload>(&TaskIdParams::new(task_id), RequestOptions::new())
            .await?;
        let value = serde_json::to_value(payload).map_err(|source| Error::InvalidResult {
            method: methods::GetTaskPayload::NAME,
            source,
        })?;
        serde_json::from_value(value).map_err(|source| Error::InvalidResult {
            method: methods::GetTaskPayload::NAME,
            source,
        })
    }

    /// One page of this client's tasks (`tasks/list`).
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, Error> {
        let params = cursor.map(|cursor| {
            let mut params = PaginatedRequestParams::default();
            params.cursor = Some(cursor);
            params
        });
        self.request::<methods::ListTasks>(&params, RequestOptions::new())
            .await
    }

    /// Cancels a task (`tasks/cancel`); answers its state afterwards.
    ///
    /// # Errors
    /// [`Error::Request`]: a task already finished is a remote `-32602`.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, Error> {
        let result = self
            .request::<methods::CancelTask>(&TaskIdParams::new(task_id), RequestOptions::new())
            .await?;
        Ok(result.task())
    }

    /// Polls the task with the server's interval until it ends, then
    /// answers the tool's result.
    ///
    /// # Errors
    /// [`Error::TaskCancelled`] when it was cancelled; the task's own
    /// JSON-RPC error ([`Error::Request`]) when it failed.
    ///
    /// # Cancel safety
    /// Dropping the future stops polling; the task runs on.
    pub async fn wait_for_task(&self, task: &Task) -> Result<CallToolResult, Error> {
        let mut current = task.clone();
        while !current.status.is_terminal() {
            tokio::time::sleep(poll_interval(&current)).await;
            current = self.get_task(&current.task_id).await?;
        }
        if current.status == TaskStatus::Cancelled {
            return Err(Error::TaskCancelled {
                task_id: current.task_id,
            });
        }
        self.task_result(&current.task_id).await
    }

    /// Calls a tool as a task and waits for its result
    /// ([`call_tool_as_task`](Self::call_tool_as_task), then
    /// [`wait_for_task`](Self::wait_for_task)).
    ///
    /// # Errors
    /// As those two.
    pub async fn call_tool_in_task(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        let task = self.call_tool_as_task(name, arguments, None).await?;
        self.wait_for_task(&task).await
    }
}
