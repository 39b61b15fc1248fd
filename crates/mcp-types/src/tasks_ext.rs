//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
//! 2026-07-28 wire: a `tools/call` answered with a task handle
//! (`resultType: "task"`), `tasks/get` with the outcome inlined,
//! `tasks/update` carrying answers to a task's input requests,
//! `tasks/cancel`, and `notifications/tasks`.
//!
//! The 2025-11-25 core tasks (`ttl`, `pollInterval`, a nested `task`,
//! `tasks/result`, `tasks/list`) are in the crate root ([`crate::Task`]);
//! this extension renames the durations (`ttlMs`, `pollIntervalMs`),
//! flattens the task into the result and drops those two methods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::JsonObject;
use crate::jsonrpc::ErrorObject;
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::method::declare_method;
use crate::methods::TaskIdParams;
use crate::mrtr::{InputRequests, InputResponses};
use crate::result::{EmptyResult, ResultType};
use crate::task::TaskStatus;

/// The extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";
/// The `resultType` of a [`CreateTaskResult`].
pub const RESULT_TYPE_TASK: &str = "task";
/// The request methods the extension defines (each takes `params.taskId`,
/// which its `Mcp-Name` header repeats).
pub const METHODS: &[&str] = &["tasks/get", "tasks/update", "tasks/cancel"];

/// A task's operational state (SEP-2663 `Task`).
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
    /// Retention from creation in integer milliseconds; `null` (`None`)
    /// means unlimited. Always sent.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval in integer milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// A task with no TTL, message or polling hint.
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
            ttl_ms: None,
            poll_interval_ms: None,
        }
    }
}

/// The same task on the 2025-11-25 wire (`ttl`, `pollInterval`, in
/// milliseconds too).
impl From<Task> for crate::task::Task {
    fn from(task: Task) -> Self {
        let mut core = crate::task::Task::new(
            task.task_id,
            task.status,
            task.created_at,
            task.last_updated_at,
        );
        core.status_message = task.status_message;
        core.ttl = task.ttl_ms;
        core.poll_interval = task.poll_interval_ms;
        core
    }
}

/// The same task on this extension's wire (`ttlMs`, `pollIntervalMs`).
impl From<crate::task::Task> for Task {
    fn from(task: crate::task::Task) -> Self {
        Self {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl_ms: task.ttl,
            poll_interval_ms: task.poll_interval,
        }
    }
}

/// A task with what its status carries: the open input requests
/// (`input_required`), the result (`completed`) or the JSON-RPC error
/// (`failed`). What `tasks/get` answers and `notifications/tasks` carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// While `input_required`: what the client must answer through
    /// `tasks/update`, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Once `completed`: the underlying request's result (a
    /// `CallToolResult` for `tools/call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// Once `failed`: the JSON-RPC error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl DetailedTask {
    /// `task` with nothing inlined.
    pub fn new(task: Task) -> Self {
        Self {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }
}

/// The answer to a `tools/call` the server runs as a task (`resultType:
/// "task"`): the task, flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// Always `"task"`.
    pub result_type: ResultType,
    /// The new task.
    #[serde(flatten)]
    pub task: Task,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CreateTaskResult {
    /// Announces `task`.
    pub fn new(task: Task) -> Self {
        Self {
            result_type: ResultType::Other(RESULT_TYPE_TASK.to_owned()),
            task,
            meta: None,
        }
    }
}

/// The result of `tasks/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    /// `"complete"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task with its status's payload.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl GetTaskResult {
    /// Describes `task`.
    pub fn new(task: DetailedTask) -> Self {
        Self {
            result_type: None,
            task,
            meta: None,
        }
    }
}

/// Params of `tasks/update`: answers to a task's input requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers, by the keys of the task's `inputRequests`. Kept as sent:
    /// a server ignores answers to keys that are not open, whatever their
    /// shape, and reads the others as [`InputResponses`].
    pub input_responses: JsonObject,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl UpdateTaskParams {
    /// Answers `responses` for task `task_id`.
    pub fn new(task_id: impl Into<String>, responses: &InputResponses) -> Self {
        let input_responses = match serde_json::to_value(responses) {
            Ok(serde_json::Value::Object(object)) => object,
            _ => JsonObject::new(),
        };
        Self {
            task_id: task_id.into(),
            input_responses,
            meta: None,
        }
    }
}

/// Params of `notifications/tasks`: the task as `tasks/get` would answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatusNotificationParams {
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl TaskStatusNotificationParams {
    /// Announces `task`.
    pub fn new(task: DetailedTask) -> Self {
        Self { task, meta: None }
    }
}

declare_method! {
    /// `tasks/get` (tasks extension): the task with its outcome inlined.
    GetTask = "tasks/get", request, params: TaskIdParams, result: GetTaskResult
}
declare_method! {
    /// `tasks/update` (tasks extension): answers to a task's input requests.
    UpdateTask = "tasks/update", request, params: UpdateTaskParams, result: EmptyResult
}
declare_method! {
    /// `tasks/cancel` (tasks extension): an acknowledgement, nothing else.
    CancelTask = "tasks/cancel", request, params: TaskIdParams, result: EmptyResult
}
declare_method! {
    /// `notifications/tasks` (tasks extension): a task's new state.
    TaskStatusNotification = "notifications/tasks", notification, params: TaskStatusNotificationParams
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_created_task_is_flat_with_millisecond_names() {
        let mut task = Task::new(
            "t1",
            TaskStatus::Working,
            "2026-07-28T00:00:00Z",
            "2026-07-28T00:00:00Z",
        );
        task.ttl_ms = Some(60_000);
        task.poll_interval_ms = Some(500);
        let value = serde_json::to_value(CreateTaskResult::new(task)).expect("serializes");
        assert_eq!(
            value,
            json!({
                "resultType": "task",
                "taskId": "t1",
                "status": "working",
                "createdAt": "2026-07-28T00:00:00Z",
                "lastUpdatedAt": "2026-07-28T00:00:00Z",
                "ttlMs": 60000,
                "pollIntervalMs": 500
            })
        );
        let back: CreateTaskResult = serde_json::from_value(value).expect("parses");
        assert_eq!(back.task.ttl_ms, Some(60_000));
    }

    #[test]
    fn a_detailed_task_inlines_its_outcome() {
        let value = json!({
            "resultType": "complete",
            "taskId": "t1",
            "status": "completed",
            "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:01Z",
            "ttlMs": null,
            "result": {"content": [{"type": "text", "text": "hi"}], "isError": false}
        });
        let got: GetTaskResult = serde_json::from_value(value.clone()).expect("parses");
        assert_eq!(got.task.task.status, TaskStatus::Completed);
        assert!(got.task.result.is_some() && got.task.error.is_none());
        assert_eq!(serde_json::to_value(&got).expect("serializes"), value);
    }
}
