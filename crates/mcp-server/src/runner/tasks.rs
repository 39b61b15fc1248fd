//! The 2025-11-25 revision's experimental core tasks, served from the
//! shared [`TaskEngine`](crate::tasks::TaskEngine): task-augmented
//! `tools/call`, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.

use mcp_core::{CancellationToken, RequestContext};
use mcp_types::{
    CallToolRequestParams, CancelTaskResult, CreateTaskResult, ErrorCode, ErrorObject,
    GetTaskPayloadResult, GetTaskResult, JsonObject, ListTasksResult, RawJson,
    ResultOrInputRequired, TaskStatus, TaskSupport, Tool, meta::RELATED_TASK,
};
use serde_json::Value;

use super::{Era, Runner, to_raw};
use std::sync::Arc;

use crate::tasks::{TaskOutcome, TaskRecord, TaskSeat, TaskStoreError, TaskUpdate};

/// A store's refusal as the JSON-RPC error the client gets.
pub(crate) fn store_error(error: TaskStoreError) -> ErrorObject {
    match error {
        TaskStoreError::NotFound { .. } | TaskStoreError::InvalidTransition { .. } => {
            ErrorObject::invalid_params(error.to_string())
        }
        other => ErrorObject::internal_error(other.to_string()),
    }
}

/// A serialized result as a JSON object (what a task keeps).
pub(crate) fn to_object<T: serde::Serialize>(value: &T) -> Result<JsonObject, ErrorObject> {
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

/// Whether `tool` runs as a task (`execution.taskSupport`, forbidden when
/// absent), in both eras.
pub(crate) fn task_support(tool: &Tool) -> TaskSupport {
    tool.execution
        .as_ref()
        .and_then(|e| e.task_support)
        .unwrap_or(TaskSupport::Forbidden)
}

impl Runner {
    /// Whose tasks a request may see: the verified principal, else the
    /// HTTP session, else this connection.
    pub(crate) fn task_owner(&self, cx: &RequestContext) -> String {
        crate::tasks::owner(&cx.transport, &self.state, false)
    }

    /// Whether a handshake-era request is one of the 2025-11-25 core tasks
    /// methods for a client that did not declare the tasks extension (which
    /// redefines `tasks/get` and `tasks/cancel`).
    pub(super) fn is_core_tasks_request(&self, method: &str) -> bool {
        self.registry.tasks.is_some()
            && matches!(
                method,
                "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"
            )
            && !self
                .state
                .client_declares_extension(mcp_types::tasks_ext::EXTENSION_ID)
    }

    /// Whether a handshake-era `tools/call` goes through the task path: it
    /// asks for a task, or its tool requires one.
    pub(super) fn is_core_task_call(&self, params: &CallToolRequestParams) -> bool {
        self.registry.tasks.is_some()
            && (params.task.is_some()
                || self.task_support(&params.name) == Some(TaskSupport::Required))
    }

    fn task_support(&self, tool: &str) -> Option<TaskSupport> {
        let index = *self.registry.tool_index.get(tool)?;
        Some(task_support(&self.registry.tools[index].tool))
    }

    /// Runs `work` for a new task of `owner` as an owned, cancellable tokio
    /// task; answers the created record.
    pub(crate) async fn start_task(
        &self,
        owner: &str,
        ttl_ms: Option<u64>,
        cx: &RequestContext,
        run: impl FnOnce(Runner, RequestContext) -> crate::tasks::Work,
    ) -> Result<TaskRecord, ErrorObject> {
        let Some(engine) = &self.registry.tasks else {
            return Err(ErrorObject::method_not_found("tools/call as a task"));
        };
        let record = engine
            .create(owner, "tools/call", ttl_ms)
            .await
            .map_err(store_error)?;
        // The task outlives the request: its own token, not the request's,
        // and what it sends is not tied to the request's (answered)
        // stream: over HTTP it goes on the session's GET stream.
        let cancel = CancellationToken::new();
        let mut task_cx = cx.clone();
        task_cx.cancel = cancel.clone();
        task_cx.peer = cx.peer.unrelated();
        // Its asks park the task in `input_required`.
        let mut runner = self.clone();
        runner.task = Some(Arc::new(TaskSeat::new(
            engine.clone(),
            owner.to_owned(),
            record.task_id.clone(),
        )));
        engine.spawn(
            owner.to_owned(),
            record.task_id.clone(),
            cancel,
            run(runner, task_cx),
        );
        Ok(record)
    }

    /// A task-augmented `tools/call` (2025-11-25): the task at once, the
    /// tool's code on in the background.
    pub(super) async fn core_task_call(
        &self,
        mut params: CallToolRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let support = self.task_support(&params.name).ok_or_else(|| {
            ErrorObject::invalid_params(format!("unknown tool `{}`", params.name))
        })?;
        let task = params.task.take();
        match (&task, support) {
            (Some(_), TaskSupport::Forbidden) => {
                return Err(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "tool `{}` does not run as a task: call it without `task`",
                        params.name
                    ),
                ));
            }
            (None, TaskSupport::Required) => {
                return Err(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "tool `{}` runs only as a task: call it with `task`",
                        params.name
                    ),
                ));
            }
            _ => {}
        }
        let owner = self.task_owner(cx);
        let ttl = task.and_then(|t| t.ttl);
        let record = self
            .start_task(&owner, ttl, cx, move |runner, cx| {
                Box::pin(async move {
                    match runner.call_tool(params, &cx, &Era::Handshake).await {
                        Ok(ResultOrInputRequired::Complete(result)) => match to_object(&result) {
                            Ok(object) => TaskUpdate::completed(object),
                            Err(e) => TaskUpdate::failed(e),
                        },
                        Ok(_) => TaskUpdate::failed(ErrorObject::internal_error(
                            "the tool asked for input no request can carry",
                        )),
                        Err(error) => TaskUpdate::failed(error),
                    }
                })
            })
            .await?;
        to_raw(&CreateTaskResult::new(record.to_task()))
    }

    fn engine(&self, method: &str) -> Result<&crate::tasks::TaskEngine, ErrorObject> {
        self.registry
            .tasks
            .as_deref()
            .ok_or_else(|| ErrorObject::method_not_found(method))
    }

    pub(super) async fn core_get_task(
        &self,
        task_id: &str,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/get")?;
        let owner = self.task_owner(cx);
        let record = engine.get(&owner, task_id).await.map_err(store_error)?;
        to_raw(&GetTaskResult::new(record.to_task()))
    }

    /// `tasks/result`: waits for the end, then the underlying result (with
    /// the related-task `_meta`) or its error.
    pub(super) async fn core_task_result(
        &self,
        task_id: &str,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/result")?;
        let owner = self.task_owner(cx);
        let record = tokio::select! {
            record = engine.wait_terminal(&owner, task_id) => record.map_err(store_error)?,
            () = cx.cancel.cancelled() => {
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
                to_raw(&GetTaskPayloadResult::new(result))
            }
            (_, Some(TaskOutcome::Error(error))) => Err(error),
            (status, _) => Err(ErrorObject::invalid_params(format!(
                "task `{task_id}` ended {status:?} without a result"
            ))),
        }
    }

    pub(super) async fn core_list_tasks(
        &self,
        cursor: Option<&str>,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/list")?;
        let owner = self.task_owner(cx);
        let page = engine
            .store()
            .list(&owner, cursor, engine.config.page_size)
            .await
            .map_err(store_error)?;
        let mut result = ListTasksResult::new(page.tasks.iter().map(TaskRecord::to_task).collect());
        result.next_cursor = page.next_cursor;
        to_raw(&result)
    }

    pub(super) async fn core_cancel_task(
        &self,
        task_id: &str,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/cancel")?;
        let owner = self.task_owner(cx);
        let record = engine.cancel(&owner, task_id).await.map_err(|e| match e {
            TaskStoreError::InvalidTransition { from, .. } => ErrorObject::invalid_params(format!(
                "cannot cancel task `{task_id}`: it is already {from:?}"
            )),
            other => store_error(other),
        })?;
        let result: CancelTaskResult = GetTaskResult::new(record.to_task());
        to_raw(&result)
    }
}
