//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), written
//! on the public extension API ([`Extension`]): an interceptor of
//! `tools/call` and three request methods (`tasks/get`, `tasks/update`,
//! `tasks/cancel`), over the shared [`TaskEngine`].
//!
//! Creation is server-directed: when the client declares the extension, a
//! call of a tool whose `execution.taskSupport` is `optional` or `required`
//! runs at once, and **the first time its code waits** (a timer, I/O,
//! [`Context::run_as_task`]) it becomes a task: the client gets the task
//! handle and the code runs on, owned by the engine. A call that finishes
//! or asks for input without waiting is answered in the request, so a tool
//! can gather input by Multi Round-Trip Requests first and then become a
//! task. An ask made while running as a task parks the task in
//! `input_required` with the open requests; `tasks/update` answers them
//! (one at a time or all at once) and, once every open request is
//! answered, the code runs again with the answers, as a retried request
//! would. A client that did not declare the extension gets the tool's
//! result synchronously, or `-32021` for a tool that runs only as a task.
//!
//! Everything a task is lives in the [`TaskStore`](super::TaskStore), so
//! any process sharing the store serves any of its requests: the record
//! keeps the call's params (name, arguments, `_meta`) until the task ends,
//! and `tasks/update` runs the call again from them
//! ([`ToolCall::rerun`]) in its own context (the owner is checked before).
//! Only the running work (and its cancellation) stays in the process that
//! runs it.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use mcp_core::CancellationToken;
use mcp_types::tasks_ext::{self, CreateTaskResult, DetailedTask, GetTaskResult, UpdateTaskParams};
use mcp_types::{
    CallToolRequestParams, ClientCapabilities, EmptyResult, ErrorObject, InputResponse,
    InputResponses, JsonObject, MissingRequiredClientCapabilityData, ResultOrInputRequired,
    TaskIdParams, TaskStatus, TaskSupport,
};
use serde_json::Value;

use super::{TaskEngine, TaskOutcome, TaskRecord, TaskStoreError, TaskUpdate};
use crate::changes::ListChange;
use crate::extension::{CallOutcome, Extension, Params, ToolCall};
use crate::runner::tasks::task_support;
use crate::session::Context;
use mcp_tasks::to_object;

/// What the extension's handlers share.
struct Tasks {
    engine: Arc<TaskEngine>,
}

/// The tasks extension over `engine`, ready for
/// [`ServerBuilder::extension`](crate::ServerBuilder::extension).
pub(crate) fn extension(engine: Arc<TaskEngine>) -> Extension {
    let tasks = Arc::new(Tasks { engine });
    let (intercept, get, update, cancel) = (tasks.clone(), tasks.clone(), tasks.clone(), tasks);
    Extension::new(tasks_ext::EXTENSION_ID)
        .unwrap_or_else(|_| unreachable!("the tasks extension's identifier is valid"))
        // Its methods answer a non-declaring client -32021 (SEP-2663), not
        // -32601, so the extension checks the declaration itself.
        .client_must_declare(false)
        .intercept_tool_calls(move |call, cx| {
            let tasks = intercept.clone();
            async move { tasks.call(call, cx).await }
        })
        .request::<tasks_ext::GetTask, _, _>(
            move |Params(params): Params<TaskIdParams>, cx: Context| {
                let tasks = get.clone();
                async move { tasks.get(params, cx).await }
            },
        )
        .request::<tasks_ext::UpdateTask, _, _>(
            move |Params(params): Params<UpdateTaskParams>, cx: Context| {
                let tasks = update.clone();
                async move { tasks.update(params, cx).await }
            },
        )
        .request::<tasks_ext::CancelTask, _, _>(
            move |Params(params): Params<TaskIdParams>, cx: Context| {
                let tasks = cancel.clone();
                async move { tasks.cancel(params, cx).await }
            },
        )
}

/// The `-32021` a client gets for something only the extension allows.
pub(crate) fn missing_extension(what: &str) -> ErrorObject {
    let mut extensions = JsonObject::new();
    extensions.insert(
        tasks_ext::EXTENSION_ID.to_owned(),
        Value::Object(JsonObject::new()),
    );
    let mut required = ClientCapabilities::new();
    required.extensions = Some(extensions);
    MissingRequiredClientCapabilityData::new(required).into_error(format!(
        "{what} needs the `{}` extension: declare it in the client's capabilities",
        tasks_ext::EXTENSION_ID
    ))
}

fn owner(cx: &Context) -> String {
    let session = cx.session();
    super::owner(
        cx.transport(),
        session.session_state(),
        session.is_stateless(),
    )
}

/// The task as the extension's wire describes it.
pub(crate) fn wire_task(record: &TaskRecord) -> tasks_ext::Task {
    record.to_task().into()
}

/// The task with what its status carries (never any `requestState`).
pub(crate) fn detailed(record: &TaskRecord) -> DetailedTask {
    let mut detailed = DetailedTask::new(wire_task(record));
    match (&record.status, &record.outcome) {
        (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => {
            detailed.result = Some(result.clone());
        }
        (TaskStatus::Failed, Some(TaskOutcome::Error(error))) => {
            detailed.error = Some(error.clone());
        }
        (TaskStatus::InputRequired, _) => {
            detailed.input_requests = record
                .input_requests
                .clone()
                .and_then(|r| serde_json::from_value(Value::Object(r)).ok());
        }
        _ => {}
    }
    detailed
}

/// What a run of the call leaves in the store.
fn settle(outcome: Result<CallOutcome, ErrorObject>) -> TaskUpdate {
    match outcome {
        Ok(CallOutcome::Tool(ResultOrInputRequired::Complete(result))) => {
            match to_object(&result) {
                Ok(result) => TaskUpdate::completed(result),
                Err(error) => TaskUpdate::failed(error),
            }
        }
        Ok(CallOutcome::Tool(ResultOrInputRequired::InputRequired(input))) => {
            match to_object(&input.input_requests.unwrap_or_default()) {
                Ok(requests) => TaskUpdate::input_required(requests, input.request_state),
                Err(error) => TaskUpdate::failed(error),
            }
        }
        Ok(CallOutcome::Extension(result)) => TaskUpdate::completed(result),
        Err(error) => TaskUpdate::failed(error),
    }
}

/// Polls `future` once in the caller's task: `Ready` if it finished
/// without waiting.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *future).poll(cx))).await
}

/// What a task keeps of `call` to run it again with the answers: its
/// params as a first attempt would send them (no answers, no state, no
/// task request; `tasks/update` adds the task's own).
fn kept_params(mut params: CallToolRequestParams) -> Result<JsonObject, ErrorObject> {
    params.input_responses = None;
    params.request_state = None;
    params.task = None;
    to_object(&params)
}

impl Tasks {
    /// Runs `work` for task `task_id` in the engine; how it ends (or the
    /// input it asks for) is stored.
    fn run(
        &self,
        owner: &str,
        task_id: &str,
        cancel: CancellationToken,
        work: impl Future<Output = Result<CallOutcome, ErrorObject>> + Send + 'static,
    ) {
        self.engine.spawn(
            owner.to_owned(),
            task_id.to_owned(),
            cancel,
            Box::pin(async move { settle(work.await) }),
        );
    }

    /// `tools/call`: the task path for a declaring client and a task tool.
    async fn call(
        self: Arc<Self>,
        call: ToolCall,
        cx: Context,
    ) -> Result<CallOutcome, ErrorObject> {
        let support = call.tool().map_or(TaskSupport::Forbidden, task_support);
        if support == TaskSupport::Forbidden {
            return call.proceed().await;
        }
        if !cx.client_supports_extension(tasks_ext::EXTENSION_ID) {
            if support == TaskSupport::Required {
                return Err(missing_extension(&format!("tool `{}`", call.name())));
            }
            return call.proceed().await;
        }
        let cancel = CancellationToken::new();
        let params = call.params().clone();
        let mut work = Box::pin(call.with_cancel(cancel.clone()).proceed());
        // Answered in the request if it finishes, or asks, without waiting.
        if let Poll::Ready(outcome) = poll_once(&mut work).await {
            return outcome;
        }
        let params = kept_params(params)?;
        let owner = owner(&cx);
        let record = self
            .engine
            .create(
                super::new_task_id().map_err(TaskStoreError::into_error_object)?,
                &owner,
                "tools/call",
                None,
                Some(params),
            )
            .await
            .map_err(TaskStoreError::into_error_object)?;
        self.run(&owner, &record.task_id, cancel, work);
        to_object(&CreateTaskResult::new(wire_task(&record))).map(CallOutcome::Extension)
    }

    async fn record(&self, cx: &Context, task_id: &str) -> Result<TaskRecord, ErrorObject> {
        self.engine
            .get(&owner(cx), task_id)
            .await
            .map_err(TaskStoreError::into_error_object)
    }

    async fn get(&self, params: TaskIdParams, cx: Context) -> Result<GetTaskResult, ErrorObject> {
        if !cx.client_supports_extension(tasks_ext::EXTENSION_ID) {
            return Err(missing_extension("`tasks/get`"));
        }
        let record = self.record(&cx, &params.task_id).await?;
        Ok(GetTaskResult::new(detailed(&record)))
    }

    /// `tasks/update`: records the answers to open requests; once none is
    /// open, runs the call again with every answer.
    async fn update(
        self: Arc<Self>,
        params: UpdateTaskParams,
        cx: Context,
    ) -> Result<EmptyResult, ErrorObject> {
        if !cx.client_supports_extension(tasks_ext::EXTENSION_ID) {
            return Err(missing_extension("`tasks/update`"));
        }
        let owner = owner(&cx);
        let record = self.record(&cx, &params.task_id).await?;
        if record.status != TaskStatus::InputRequired {
            // Answers to nothing open are ignored (SEP-2663).
            return Ok(EmptyResult::new());
        }
        let mut open = record.input_requests.clone().unwrap_or_default();
        let mut answers = record.answers.clone().unwrap_or_default();
        for (key, response) in params.input_responses {
            // Only answers to open requests count; each must be a response.
            if !open.contains_key(&key) {
                continue;
            }
            if let Err(e) = serde_json::from_value::<InputResponse>(response.clone()) {
                return Err(ErrorObject::invalid_params(format!(
                    "the answer to `{key}` is not an input response: {e}"
                )));
            }
            open.remove(&key);
            answers.insert(key, response);
        }
        if !open.is_empty() {
            let mut update = TaskUpdate::default().expecting(TaskStatus::InputRequired);
            update.input_requests = Some(open);
            update.answers = Some(answers);
            return match self.engine.update(&owner, &params.task_id, update).await {
                Ok(_) | Err(TaskStoreError::Conflict { .. }) => Ok(EmptyResult::new()),
                Err(e) => Err(e.into_error_object()),
            };
        }
        let resume = TaskUpdate::status(TaskStatus::Working).expecting(TaskStatus::InputRequired);
        let resumed = match self.engine.update(&owner, &params.task_id, resume).await {
            Ok(resumed) => resumed,
            // Another update resumed it first.
            Err(TaskStoreError::Conflict { .. }) => return Ok(EmptyResult::new()),
            Err(e) => return Err(e.into_error_object()),
        };
        let call = match again(&cx, resumed.params, answers, record.request_state) {
            Ok(call) => call,
            Err(error) => {
                self.engine
                    .update(&owner, &params.task_id, TaskUpdate::failed(error))
                    .await
                    .map_err(TaskStoreError::into_error_object)?;
                return Ok(EmptyResult::new());
            }
        };
        let cancel = CancellationToken::new();
        let work = call.with_cancel(cancel.clone()).proceed();
        self.run(&owner, &params.task_id, cancel, work);
        Ok(EmptyResult::new())
    }

    /// `tasks/cancel`: an acknowledgement, also for a task already ended.
    async fn cancel(&self, params: TaskIdParams, cx: Context) -> Result<EmptyResult, ErrorObject> {
        if !cx.client_supports_extension(tasks_ext::EXTENSION_ID) {
            return Err(missing_extension("`tasks/cancel`"));
        }
        let cancelled = self
            .engine
            .cancel(&owner(&cx), &params.task_id, "cancelled by the client")
            .await;
        match cancelled {
            Ok(_) | Err(TaskStoreError::InvalidTransition { .. }) => Ok(EmptyResult::new()),
            Err(e) => Err(e.into_error_object()),
        }
    }
}

/// The call a task waiting for input runs again, in the context of the
/// `tasks/update` that answered its last open request: the params the
/// record kept, with every answer and the state the last run sealed (as a
/// retried request would carry them). An error fails the task.
fn again(
    cx: &Context,
    kept: Option<JsonObject>,
    answers: JsonObject,
    request_state: Option<String>,
) -> Result<ToolCall, ErrorObject> {
    let kept = kept.ok_or_else(|| {
        ErrorObject::internal_error(
            "the task cannot be resumed: its record keeps no call to run again (it was \
             written by an older server); call the tool again",
        )
    })?;
    let mut params: CallToolRequestParams =
        serde_json::from_value(Value::Object(kept)).map_err(|e| {
            ErrorObject::internal_error(format!("the task's kept call does not read back: {e}"))
        })?;
    let responses: InputResponses = serde_json::from_value(Value::Object(answers))
        .map_err(|e| ErrorObject::invalid_params(format!("an answer does not fit: {e}")))?;
    params.input_responses = Some(responses);
    params.request_state = request_state;
    ToolCall::rerun(cx, params).ok_or_else(|| {
        ErrorObject::internal_error("tasks/update was not served as an extension method")
    })
}

/// The tasks one `subscriptions/listen` stream watches (`taskIds`): each
/// change the feed names is re-read from the store and sent as
/// `notifications/tasks`, until the task ends or expires.
pub(crate) struct TaskWatch {
    engine: Arc<TaskEngine>,
    owner: String,
    ids: std::collections::BTreeSet<String>,
}

impl TaskWatch {
    /// Watches those of `requested` that are tasks of `owner` (the others
    /// are left out of the acknowledgement); answers their current state
    /// too, so a change made before the stream opened is not missed.
    pub(crate) async fn agree(
        engine: Arc<TaskEngine>,
        owner: String,
        requested: &[String],
    ) -> (Self, Vec<DetailedTask>) {
        let mut watch = Self {
            engine,
            owner,
            ids: std::collections::BTreeSet::new(),
        };
        let mut states = Vec::new();
        for task_id in requested {
            if let Some(state) = watch.read(task_id).await {
                watch.ids.insert(task_id.clone());
                states.push(state);
            }
        }
        (watch, states)
    }

    /// The task ids agreed to.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.ids.iter().cloned().collect()
    }

    /// The new states `change` calls for (a lagged feed re-reads every
    /// watched task); a task that ended is sent once and watched no more.
    pub(crate) async fn states(&mut self, change: &ListChange) -> Vec<DetailedTask> {
        let ids: Vec<String> = match change {
            ListChange::Task { owner, task_id }
                if *owner == self.owner && self.ids.contains(task_id) =>
            {
                vec![task_id.clone()]
            }
            ListChange::AnyTask => self.ids(),
            _ => return Vec::new(),
        };
        let mut states = Vec::new();
        for task_id in ids {
            match self.read(&task_id).await {
                Some(state) => {
                    if state.task.status.is_terminal() {
                        self.ids.remove(&task_id);
                    }
                    states.push(state);
                }
                None => {
                    self.ids.remove(&task_id);
                }
            }
        }
        states
    }

    /// The task as `tasks/get` would answer it, if it is there.
    async fn read(&self, task_id: &str) -> Option<DetailedTask> {
        match self.engine.store().get(&self.owner, task_id).await {
            Ok(record) => record.map(|r| detailed(&r)),
            Err(error) => {
                // Status notifications are a courtesy (the client may poll).
                tracing::debug!(%error, "could not read a watched task");
                None
            }
        }
    }
}

impl Context {
    /// Marks the point from which this call may run as a task: when the
    /// client declared the tasks extension and the tool supports tasks,
    /// the call becomes a task here (the client gets the task handle and
    /// this code runs on); otherwise it goes on at once. Everything before
    /// (Multi Round-Trip asks included) happens within the request.
    ///
    /// It simply waits once: a call becomes a task the first time its code
    /// waits, and this makes that point explicit.
    pub async fn run_as_task(&self) {
        tokio::task::yield_now().await;
    }
}
