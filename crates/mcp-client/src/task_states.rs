//! The task states a server pushes, as the session's connection hands
//! them to its task watches: plain state below the session.

use mcp_types::tasks_ext;
use mcp_types::{CallToolResult, ErrorObject, InputRequests, Task, TaskStatusNotificationParams};
use tokio::sync::broadcast;

/// A task with what its status carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// The task.
    pub task: Task,
    /// While `input_required` (2026-07-28): what to answer through
    /// [`update_task`](crate::ClientSession::update_task).
    pub input_requests: Option<InputRequests>,
    /// Once `completed` (2026-07-28): the tool's result. In the handshake
    /// era it comes from [`task_result`](crate::ClientSession::task_result).
    pub result: Option<CallToolResult>,
    /// Once `failed` (2026-07-28): the JSON-RPC error it failed with.
    pub error: Option<ErrorObject>,
}

impl TaskState {
    /// A task whose status carries nothing (yet).
    pub(crate) fn bare(task: Task) -> Self {
        Self {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// The state a 2026-07-28 `tasks/get` or `notifications/tasks` carries.
    pub(crate) fn detailed(got: tasks_ext::DetailedTask) -> Result<Self, serde_json::Error> {
        let result = match got.result {
            Some(result) => Some(serde_json::from_value(serde_json::Value::Object(result))?),
            None => None,
        };
        Ok(Self {
            task: got.task.into(),
            input_requests: got.input_requests,
            result,
            error: got.error,
        })
    }

    /// The state a 2025-11-25 `notifications/tasks/status` carries.
    fn notified(params: TaskStatusNotificationParams) -> Self {
        let mut task = Task::new(
            params.task_id,
            params.status,
            params.created_at,
            params.last_updated_at,
        );
        task.status_message = params.status_message;
        task.ttl = params.ttl;
        task.poll_interval = params.poll_interval;
        Self::bare(task)
    }
}

/// The default number of pushed task states a session holds for its
/// [`TaskWatch`](crate::TaskWatch)es before the slowest loses the oldest
/// ([`ClientConfig::task_status_queue`](crate::ClientConfig::task_status_queue)).
pub const DEFAULT_TASK_STATUS_QUEUE: usize = 64;

/// Where the session's connection hands the task states the server pushes,
/// in either era, to every [`TaskWatch`](crate::TaskWatch).
pub(crate) struct TaskStates {
    tx: broadcast::Sender<TaskState>,
}

impl TaskStates {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            tx: broadcast::channel(capacity.max(1)).0,
        }
    }

    /// A new receiver of every state pushed from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<TaskState> {
        self.tx.subscribe()
    }

    /// A 2025-11-25 `notifications/tasks/status`.
    pub(crate) fn status(&self, params: TaskStatusNotificationParams) {
        // Nobody watching is not an error.
        let _ = self.tx.send(TaskState::notified(params));
    }

    /// A 2026-07-28 `notifications/tasks` (raw: the core protocol does not
    /// define it).
    pub(crate) fn extension(&self, params: Option<&mcp_types::RawJson>) {
        let parsed = params
            .ok_or_else(|| serde::de::Error::custom("no params"))
            .and_then(|raw| raw.parse::<tasks_ext::TaskStatusNotificationParams>())
            .and_then(|params| TaskState::detailed(params.task));
        match parsed {
            Ok(state) => {
                let _ = self.tx.send(state);
            }
            Err(error) => {
                tracing::debug!(%error, "ignored a malformed notifications/tasks");
            }
        }
    }
}
