//! Tasks (2025-11-25, experimental): task-augmented requests, task state,
//! and the `tasks/*` results. In 2026-07-28 tasks moved to an extension.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Cursor, JsonObject};
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::result::ResultType;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Being worked on.
    Working,
    /// Waiting for input from the requestor.
    InputRequired,
    /// Finished with a result (terminal).
    Completed,
    /// Finished with an error (terminal).
    Failed,
    /// Cancelled (terminal).
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can no longer change.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The state of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Identifies the task.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable detail on the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created, as ISO 8601.
    pub created_at: String,
    /// When the task last changed, as ISO 8601.
    pub last_updated_at: String,
    /// How long the task is kept after creation, in milliseconds; `null`
    /// (`None`) means forever. Always sent.
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// A task with no TTL, status message or polling hint.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl: None,
            poll_interval: None,
        }
    }
}

setters!(Task {
    with_status_message(status_message: String),
    with_ttl(ttl: u64),
    with_poll_interval(poll_interval: u64),
});

/// Asks for a request to run as a task (the request's `task` member).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskMetadata {
    /// How long to keep the task after creation, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

impl TaskMetadata {
    /// No requested TTL.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(TaskMetadata { with_ttl(ttl: u64) });

/// Ties a message to a task, under `_meta["io.modelcontextprotocol/related-task"]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task the message belongs to.
    pub task_id: String,
}

impl RelatedTaskMetadata {
    /// Refers to task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
        }
    }
}

/// Params of a request that may run as a task (schema
/// `TaskAugmentedRequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskAugmentedRequestParams {
    /// Present to ask for task execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl TaskAugmentedRequestParams {
    /// No task requested.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(TaskAugmentedRequestParams {
    with_task(task: TaskMetadata),
    with_meta(meta: RequestMeta),
});

/// The answer to a task-augmented request: the task created for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CreateTaskResult {
    /// Announces `task`.
    pub fn new(task: Task) -> Self {
        Self {
            task,
            result_type: None,
            meta: None,
        }
    }
}

setters!(CreateTaskResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `tasks/get` (and, as [`CancelTaskResult`], of
/// `tasks/cancel`): the task's fields inline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    /// Identifies the task.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable detail on the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created, as ISO 8601.
    pub created_at: String,
    /// When the task last changed, as ISO 8601.
    pub last_updated_at: String,
    /// Retention in milliseconds from creation; `null` means forever.
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl GetTaskResult {
    /// The result describing `task`.
    pub fn new(task: Task) -> Self {
        Self {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl: task.ttl,
            poll_interval: task.poll_interval,
            result_type: None,
            meta: None,
        }
    }

    /// The task these fields describe.
    pub fn task(&self) -> Task {
        Task {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: self.created_at.clone(),
            last_updated_at: self.last_updated_at.clone(),
            ttl: self.ttl,
            poll_interval: self.poll_interval,
        }
    }
}

impl From<Task> for GetTaskResult {
    fn from(task: Task) -> Self {
        GetTaskResult::new(task)
    }
}

setters!(GetTaskResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `tasks/cancel`: the task after cancellation, same shape as
/// [`GetTaskResult`].
pub type CancelTaskResult = GetTaskResult;

/// The result of `tasks/result`: the underlying request's result, whatever
/// its shape, so every member is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskPayloadResult {
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
    /// The underlying result's members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetTaskPayloadResult {
    /// A payload made of `members`.
    pub fn new(members: JsonObject) -> Self {
        Self {
            result_type: None,
            meta: None,
            extra: members,
        }
    }
}

setters!(GetTaskPayloadResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `tasks/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResult {
    /// The tasks on this page.
    pub tasks: Vec<Task>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ListTasksResult {
    /// A last page holding `tasks`.
    pub fn new(tasks: Vec<Task>) -> Self {
        Self {
            tasks,
            next_cursor: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ListTasksResult {
    with_next_cursor(next_cursor: Cursor),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// Params of `notifications/tasks/status`: the task's fields inline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatusNotificationParams {
    /// Identifies the task.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable detail on the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created, as ISO 8601.
    pub created_at: String,
    /// When the task last changed, as ISO 8601.
    pub last_updated_at: String,
    /// Retention in milliseconds from creation; `null` means forever.
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl TaskStatusNotificationParams {
    /// Announces the state of `task`.
    pub fn new(task: Task) -> Self {
        Self {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl: task.ttl,
            poll_interval: task.poll_interval,
            meta: None,
        }
    }
}

impl From<Task> for TaskStatusNotificationParams {
    fn from(task: Task) -> Self {
        TaskStatusNotificationParams::new(task)
    }
}

setters!(TaskStatusNotificationParams { with_meta(meta: NotificationMeta) });

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_always_sends_its_ttl_even_when_unlimited() {
        let task = Task::new(
            "t1",
            TaskStatus::InputRequired,
            "2025-01-01T00:00:00Z",
            "2025-01-01T00:00:01Z",
        );
        let value = serde_json::to_value(GetTaskResult::new(task)).unwrap();
        assert_eq!(
            value,
            json!({
                "taskId": "t1",
                "status": "input_required",
                "createdAt": "2025-01-01T00:00:00Z",
                "lastUpdatedAt": "2025-01-01T00:00:01Z",
                "ttl": null
            })
        );
        let back: GetTaskResult = serde_json::from_value(value).unwrap();
        assert_eq!(back.ttl, None);
        assert!(!back.status.is_terminal());
    }

    #[test]
    fn payload_result_keeps_every_member() {
        let input = json!({"content": [{"type": "text", "text": "x"}], "isError": false, "_meta": {"a": 1}});
        let payload: GetTaskPayloadResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&payload).unwrap(), input);
    }
}
