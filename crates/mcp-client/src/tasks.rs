//! Tasks from the client, in either era: call a tool as a task, follow it,
//! answer what it asks, cancel it, and wait for its result with the
//! server's polling interval.
//!
//! - Handshake era: the 2025-11-25 revision's experimental core tasks
//!   (task-augmented `tools/call`, `tasks/get`, `tasks/result`,
//!   `tasks/list`, `tasks/cancel`).
//! - 2026-07-28: the tasks extension (`io.modelcontextprotocol/tasks`,
//!   SEP-2663). The server decides which calls become tasks, for a client
//!   that declares the extension. The methods here declare it for their
//!   own request only ([`RequestOptions::with_extension`]), so
//!   [`call_tool_as_task`](ClientSession::call_tool_as_task) may get a task
//!   while the session's plain calls stay plain. To let every call become
//!   a task instead, register the task handle as a result claim,
//!   `ClientConfig::new(..).claim::<mcp_types::tasks_ext::CreateTaskResult>()`:
//!   the handle then comes back through the result-claim mechanism
//!   ([`call_tool_claimed`](ClientSession::call_tool_claimed)). A task
//!   waiting for input is answered through the config's callbacks and
//!   `tasks/update`.
//!
//! Either way a task is described by [`mcp_types::Task`] (durations in
//! milliseconds).
//!
//! Instead of (or besides) polling, [`watch_tasks`](ClientSession::watch_tasks)
//! follows the states the server pushes: `notifications/tasks/status` on
//! the session (2025-11-25), `notifications/tasks` on a
//! `subscriptions/listen` stream (2026-07-28).

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use mcp_types::method::Method;
use mcp_types::tasks_ext::{self, UpdateTaskParams};
use mcp_types::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, ErrorObject, InputRequests,
    InputResponses, ListTasksResult, Revision, SubscriptionFilter,
    SubscriptionsListenRequestParams, SubscriptionsListenResult, Task, TaskIdParams, TaskMetadata,
    TaskStatus, methods,
};
use serde::Serialize;
use tokio::sync::broadcast;

use crate::calls::paginated;
use crate::error::Error;
use crate::extension::claims::{ResultClaim, ToolOutcome};
use crate::options::RequestOptions;
use crate::session::{ClientSession, parse_result, raw_params};
use crate::task_states::TaskState;

/// The polling interval used when the server suggests none.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The shortest polling interval honoured, whatever the server suggests.
pub const MIN_TASK_POLL_INTERVAL: Duration = Duration::from_millis(10);
/// The longest polling interval honoured, whatever the server suggests.
pub const MAX_TASK_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// The 2026-07-28 task handle is a result claim of the tasks extension:
/// `tools/call` answers it with `"resultType": "task"`.
impl ResultClaim for tasks_ext::CreateTaskResult {
    const EXTENSION: &'static str = tasks_ext::EXTENSION_ID;
    const RESULT_TYPE: &'static str = tasks_ext::RESULT_TYPE_TASK;
    const SINCE: Revision = Revision::V2026_07_28;
}

/// `options` declaring the tasks extension for their request alone: at
/// 2026-07-28 a server answers the extension's methods, and makes a call a
/// task, only for a client that declares it.
fn declaring_tasks(options: RequestOptions) -> RequestOptions {
    options.declaring(tasks_ext::EXTENSION_ID, mcp_types::JsonObject::new())
}

/// How long to wait before polling `task` again: the server's suggestion,
/// kept within [`MIN_TASK_POLL_INTERVAL`] and [`MAX_TASK_POLL_INTERVAL`].
pub fn poll_interval(task: &Task) -> Duration {
    task.poll_interval
        .map_or(DEFAULT_TASK_POLL_INTERVAL, Duration::from_millis)
        .clamp(MIN_TASK_POLL_INTERVAL, MAX_TASK_POLL_INTERVAL)
}

/// What a tool called as a task gave back.
#[derive(Debug)]
#[non_exhaustive]
// Returned once per call, never stored in bulk.
#[allow(clippy::large_enum_variant)]
pub enum TaskStart {
    /// The server runs the call as this task.
    Task(Task),
    /// The server answered at once (2026-07-28: it decides per call).
    Complete(CallToolResult),
}

/// The listen request of a 2026-07-28 watch, owned by it.
type Listening<'a> =
    Pin<Box<dyn Future<Output = Result<SubscriptionsListenResult, Error>> + Send + 'a>>;

/// Task states the server pushes, for the tasks asked for
/// ([`ClientSession::watch_tasks`]). A state may repeat; a state missed
/// (the server need not send them, and a watch that falls
/// [`DEFAULT_TASK_STATUS_QUEUE`](crate::DEFAULT_TASK_STATUS_QUEUE) states behind loses the oldest) is
/// caught up by [`task_state`](ClientSession::task_state).
///
/// At 2026-07-28 the watch owns its `subscriptions/listen` request:
/// dropping it ends the subscription.
pub struct TaskWatch<'a> {
    ids: BTreeSet<String>,
    states: broadcast::Receiver<TaskState>,
    listening: Option<Listening<'a>>,
    /// Set once the listen request ended: its error, until returned.
    ended: Option<Option<Error>>,
}

impl std::fmt::Debug for TaskWatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWatch")
            .field("ids", &self.ids)
            .finish_non_exhaustive()
    }
}

impl TaskWatch<'_> {
    /// The next pushed state of a watched task; `None` once no more can
    /// come (the server ended the subscription, or the session closed).
    ///
    /// # Errors
    /// The `subscriptions/listen` request's failure (2026-07-28): a
    /// server that refuses to push task states (`-32021` when the config
    /// does not declare the tasks extension), or a lost connection.
    ///
    /// # Cancel safety
    /// Cancel safe: a state not returned stays queued.
    pub async fn next(&mut self) -> Option<Result<TaskState, Error>> {
        loop {
            if let Some(end) = &mut self.ended {
                // The subscription is over: what it sent first, then its end.
                loop {
                    match self.states.try_recv() {
                        Ok(state) if self.ids.contains(&state.task.task_id) => {
                            return Some(Ok(state));
                        }
                        Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                        Err(_) => return end.take().map(Err),
                    }
                }
            }
            let listening = async {
                match &mut self.listening {
                    Some(request) => request.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                received = self.states.recv() => match received {
                    Ok(state) if self.ids.contains(&state.task.task_id) => return Some(Ok(state)),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(missed)) => tracing::warn!(
                        missed,
                        "a task watch fell behind and lost pushed task states; raise \
                         ClientConfig::task_status_queue or poll task_state"
                    ),
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                ended = listening => {
                    self.listening = None;
                    self.ended = Some(ended.err());
                }
            }
        }
    }
}

impl ClientSession {
    /// Follows the states the server pushes for `task_ids`. Handshake era
    /// (2025-11-25): the `notifications/tasks/status` the server sends on
    /// the session from now on. 2026-07-28: a `subscriptions/listen`
    /// request with `taskIds` (the tasks extension, declared for this
    /// request), sent with `options` (the session's default timeout ends the watch unless
    /// `options` sets a longer one); the server sends each task's current
    /// state first, then every change, until the task ends.
    ///
    /// # Errors
    /// None here: at 2026-07-28 the server's refusal comes from
    /// [`TaskWatch::next`].
    pub fn watch_tasks(&self, task_ids: &[String], options: RequestOptions) -> TaskWatch<'_> {
        let states = self.shared.task_states.subscribe();
        let listening = self.is_stateless().then(|| {
            let filter = SubscriptionFilter::new().with_task_ids(task_ids.to_vec());
            let params = SubscriptionsListenRequestParams::new(filter);
            Box::pin(async move {
                self.request::<methods::SubscriptionsListen>(&params, declaring_tasks(options))
                    .await
            }) as Listening<'_>
        });
        TaskWatch {
            ids: task_ids.iter().cloned().collect(),
            states,
            listening,
            ended: None,
        }
    }

    /// Calls a tool as a task. Handshake era: a task-augmented call (`ttl`
    /// asks how long the server keeps it), always a task. 2026-07-28: the
    /// server decides; this call (and only this one) declares the tasks
    /// extension, input the server asks for first is answered through the
    /// callbacks, and `ttl` is the server's to choose.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (a tool that never runs as
    /// a task is a remote `-32601` in the handshake era; a tool that only
    /// runs as one, for a client without the extension, `-32021`).
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl Serialize,
        ttl: Option<Duration>,
    ) -> Result<TaskStart, Error> {
        if self.is_stateless() {
            return match self
                .call_tool_claimed(name, arguments, declaring_tasks(RequestOptions::new()))
                .await?
            {
                ToolOutcome::Complete(result) => Ok(TaskStart::Complete(result)),
                ToolOutcome::Claimed(claimed) => {
                    match claimed.downcast::<tasks_ext::CreateTaskResult>() {
                        Ok(created) => Ok(TaskStart::Task(Task::from(created.task))),
                        Err(other) => Err(Error::UnexpectedClaimedResult { result: other }),
                    }
                }
            };
        }
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
        Ok(TaskStart::Task(created.task))
    }

    /// The task's state (`tasks/get`), with its open input requests,
    /// result or error at 2026-07-28.
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown or expired task is a remote `-32602`.
    pub async fn task_state(&self, task_id: &str) -> Result<TaskState, Error> {
        if !self.is_stateless() {
            let result = self
                .request::<methods::GetTask>(&TaskIdParams::new(task_id), RequestOptions::new())
                .await?;
            return Ok(TaskState::bare(result.task()));
        }
        let got = self
            .request::<tasks_ext::GetTask>(
                &TaskIdParams::new(task_id),
                declaring_tasks(RequestOptions::new()),
            )
            .await?
            .task;
        TaskState::detailed(got).map_err(|source| Error::InvalidResult {
            method: tasks_ext::GetTask::NAME,
            source,
        })
    }

    /// The task's current state (`tasks/get`).
    ///
    /// # Errors
    /// As [`task_state`](Self::task_state).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        Ok(self.task_state(task_id).await?.task)
    }

    /// Answers a task's open input requests (`tasks/update`, 2026-07-28);
    /// the server acknowledges and resumes the task once all are answered.
    ///
    /// # Errors
    /// [`Error::NotInThisEra`] in the handshake era (the server asks with
    /// requests of its own there); [`Error::Request`] when it refuses.
    pub async fn update_task(
        &self,
        task_id: &str,
        responses: &InputResponses,
    ) -> Result<(), Error> {
        self.require_era(
            true,
            tasks_ext::UpdateTask::NAME,
            "the config's callbacks (the server asks with requests of its own)",
        )?;
        self.request::<tasks_ext::UpdateTask>(
            &UpdateTaskParams::new(task_id, responses),
            declaring_tasks(RequestOptions::new()),
        )
        .await
        .map(|_| ())
    }

    /// The result of a finished tool task (`tasks/result`, handshake era;
    /// the server answers once the task is terminal).
    ///
    /// # Errors
    /// [`Error::NotInThisEra`] at 2026-07-28 (the result is in
    /// [`task_state`](Self::task_state)); [`Error::Request`]: the task's
    /// own JSON-RPC error when it failed.
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, Error> {
        self.require_era(
            false,
            methods::GetTaskPayload::NAME,
            "task_state or wait_for_task",
        )?;
        // The payload is the tool's own result: read it as one, once.
        let raw = self
            .request_raw(
                methods::GetTaskPayload::NAME,
                raw_params::<methods::GetTaskPayload>(&TaskIdParams::new(task_id))?,
                RequestOptions::new(),
            )
            .await?;
        parse_result(methods::GetTaskPayload::NAME, &raw)
    }

    /// One page of this client's tasks (`tasks/list`, handshake era).
    ///
    /// # Errors
    /// [`Error::NotInThisEra`] at 2026-07-28, which has no task list;
    /// [`Error::Request`] when the server refuses.
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, Error> {
        self.require_era(
            false,
            methods::ListTasks::NAME,
            "the task ids kept by the host",
        )?;
        self.request::<methods::ListTasks>(&paginated(cursor), RequestOptions::new())
            .await
    }

    /// Asks the server to cancel a task (`tasks/cancel`). At 2026-07-28 the
    /// answer is an acknowledgement, also for a task already ended.
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown task is a remote `-32602` (and, in the
    /// handshake era, so is a task already ended).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        let params = TaskIdParams::new(task_id);
        if self.is_stateless() {
            self.request::<tasks_ext::CancelTask>(&params, declaring_tasks(RequestOptions::new()))
                .await?;
        } else {
            self.request::<methods::CancelTask>(&params, RequestOptions::new())
                .await?;
        }
        Ok(())
    }

    /// Polls the task with the server's interval until it ends, answering
    /// what it asks on the way (2026-07-28: through the config's callbacks
    /// and `tasks/update`, each request once), then answers the tool's
    /// result.
    ///
    /// # Errors
    /// [`Error::TaskCancelled`] when it was cancelled;
    /// [`Error::TaskFailed`] (2026-07-28) or the task's own remote error
    /// (handshake era) when it failed; [`Error::NoCallback`] when it asks
    /// for input the config cannot answer.
    ///
    /// # Cancel safety
    /// Dropping the future stops polling; the task runs on.
    pub async fn wait_for_task(&self, task: &Task) -> Result<CallToolResult, Error> {
        let stateless = self.is_stateless();
        let mut state = TaskState::bare(task.clone());
        let mut answered = BTreeSet::new();
        loop {
            match state.task.status {
                TaskStatus::Completed if stateless => {
                    return state.result.ok_or(Error::TaskFailed {
                        task_id: state.task.task_id,
                        error: ErrorObject::internal_error("the completed task has no result"),
                    });
                }
                TaskStatus::Completed | TaskStatus::Failed if !stateless => {
                    return self.task_result(&state.task.task_id).await;
                }
                TaskStatus::Failed => {
                    return Err(Error::TaskFailed {
                        task_id: state.task.task_id,
                        error: state.error.unwrap_or_else(|| {
                            ErrorObject::internal_error("the task failed without an error")
                        }),
                    });
                }
                TaskStatus::Cancelled => {
                    return Err(Error::TaskCancelled {
                        task_id: state.task.task_id,
                    });
                }
                TaskStatus::InputRequired if stateless => {
                    // Each request is answered once, however often it is seen.
                    let open: InputRequests = state
                        .input_requests
                        .take()
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if !open.is_empty() {
                        answered.extend(open.keys().cloned());
                        let responses = self.answer_input_requests(open).await?;
                        self.update_task(&state.task.task_id, &responses).await?;
                    }
                }
                _ => {}
            }
            tokio::time::sleep(poll_interval(&state.task)).await;
            state = self.task_state(&state.task.task_id).await?;
        }
    }

    /// Calls a tool as a task and waits for its result
    /// ([`call_tool_as_task`](Self::call_tool_as_task), then
    /// [`wait_for_task`](Self::wait_for_task)); a result the server gave at
    /// once is returned as it is.
    ///
    /// # Errors
    /// As those two.
    pub async fn call_tool_in_task(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        match self.call_tool_as_task(name, arguments, None).await? {
            TaskStart::Task(task) => self.wait_for_task(&task).await,
            TaskStart::Complete(result) => Ok(result),
        }
    }
}
