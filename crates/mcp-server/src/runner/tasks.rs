//! The 2025-11-25 revision's experimental core tasks, served from the
//! shared [`TaskEngine`](crate::tasks::TaskEngine): task-augmented
//! `tools/call`, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.

use mcp_core::RequestContext;
use mcp_tasks::to_object;
use mcp_types::{
    CallToolRequestParams, CreateTaskResult, ErrorCode, ErrorObject, RawJson,
    ResultOrInputRequired, TaskSupport, Tool,
};

use super::{Requester, Runner, to_raw};
use std::sync::Arc;

use crate::tasks::{TaskRecord, TaskSeat, TaskStoreError, TaskUpdate, new_task_id};

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
        let catalog = self.registry.catalog.snapshot();
        let index = *catalog.tool_index.get(tool)?;
        Some(task_support(&catalog.tools[index].tool))
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
        let task_id = new_task_id().map_err(TaskStoreError::into_error_object)?;
        // Its asks park the task in `input_required`.
        let mut runner = self.clone();
        runner.task = Some(Arc::new(TaskSeat::new(
            engine.clone(),
            owner.to_owned(),
            task_id.clone(),
        )));
        engine
            .start(task_id, owner, "tools/call", ttl_ms, |cancel| {
                // The task outlives the request: its own token, not the
                // request's, and what it sends is not tied to the request's
                // (answered) stream: over HTTP it goes on the session's GET
                // stream.
                let mut task_cx = cx.clone();
                task_cx.cancel = cancel;
                task_cx.peer = cx.peer.unrelated();
                run(runner, task_cx)
            })
            .await
            .map_err(TaskStoreError::into_error_object)
    }

    /// A task-augmented `tools/call` (2025-11-25): the task at once, the
    /// tool's code on in the background.
    pub(super) async fn core_task_call(
        &self,
        mut params: Box<CallToolRequestParams>,
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
                    match runner
                        .call_tool(params, &cx, &Requester::Session, true)
                        .await
                    {
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
        to_raw(&engine.get_task(&self.task_owner(cx), task_id).await?)
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
        to_raw(&engine.task_result(&owner, task_id, &cx.cancel).await?)
    }

    pub(super) async fn core_list_tasks(
        &self,
        cursor: Option<&str>,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/list")?;
        to_raw(&engine.list_tasks(&self.task_owner(cx), cursor).await?)
    }

    pub(super) async fn core_cancel_task(
        &self,
        task_id: &str,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let engine = self.engine("tasks/cancel")?;
        let owner = self.task_owner(cx);
        to_raw(
            &engine
                .cancel_task(&owner, task_id, "cancelled by the client")
                .await?,
        )
    }
}
