//! Tasks passed through to the upstream that runs them.
//!
//! The downstream side of a task is the gateway server's own (mcp-server's
//! task support, [`GatewayBuilder::tasks`](crate::GatewayBuilder::tasks)):
//! its ids, its records scoped to the client that made them (`tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` of one client never
//! reach another's), its status notifications. The tool's work in that
//! task is a pass-through when the client asked for a task, the tool runs
//! as one upstream (`execution.taskSupport`) and the upstream serves
//! tasks: task-augmented `tools/call` (the 2025-11-25 `tasks` capability),
//! or, for a 2026-07-28 upstream, the tasks extension
//! (`io.modelcontextprotocol/tasks` in its `server/discover`
//! capabilities). The work starts the task upstream (at 2026-07-28 the
//! gateway declares the extension on that one call only, so its plain
//! calls stay plain), polls it at the upstream's interval and fetches its
//! result (at 2026-07-28 the result comes with the final `tasks/get`).
//! Otherwise the work calls the upstream as any call.
//!
//! Every upstream task the gateway follows sits in one bounded table
//! ([`crate::task_table`], [`Limits::max_tasks`](crate::Limits::max_tasks)),
//! under the upstream session it was started on: the upstream's task ids
//! never leave the gateway (its result's related-task `_meta` is dropped;
//! errors about it are the gateway's own words), and are never taken from
//! a downstream client. When the downstream task is cancelled (or its work
//! stops otherwise before the upstream task ended), the table's entry goes
//! and the upstream task is cancelled (`tasks/cancel`) by the gateway's
//! canceller. An upstream lost while a task runs (its
//! process restarted, its session gone) fails the downstream task with
//! [`Error::TaskLost`].

use std::sync::Arc;

use mcp_client::{ClientSession, TaskStart, poll_interval};
use mcp_server::Context;
use mcp_types::{CallToolResult, ErrorObject, JsonObject, TaskStatus};

use crate::error::Error;
use crate::naming::Route;
use crate::router::Router;
use crate::task_table::Seat;

/// Whether the downstream call `cx` runs as a task of the gateway's: a
/// 2025-11-25 task-augmented call, or (the tasks extension) one that
/// becomes a task where it first waits.
pub(crate) fn runs_as_task(cx: &Context) -> bool {
    cx.session().task_id().is_some()
        || cx.client_supports_extension(mcp_types::tasks_ext::EXTENSION_ID)
}

/// Whether `session`'s upstream runs tool calls as tasks the gateway can
/// follow: the 2025-11-25 `tasks` capability with `tools/call`, or, at
/// 2026-07-28, the tasks extension.
pub(crate) fn runs_tool_tasks(session: &ClientSession) -> bool {
    if session.is_stateless() {
        return session.server_supports_extension(mcp_types::tasks_ext::EXTENSION_ID);
    }
    let capabilities = session.server_capabilities().unwrap_or_default();
    capabilities
        .tasks
        .and_then(|tasks| tasks.requests)
        .and_then(|requests| requests.tools)
        .is_some_and(|tools| tools.call.is_some())
}

/// Runs the tool `route` names as a task on its upstream's `session` and
/// follows it to its end: polled at the upstream's interval (at most
/// `limits.task_timeout` in all), its result fetched.
///
/// # Errors
/// [`Error::TooManyTasks`] when the gateway follows as many as it may;
/// [`Error::TaskLost`] when the upstream's session ends or it no longer
/// knows the task; [`Error::TaskCancelled`] when the upstream cancelled it;
/// [`Error::TaskTimeout`] past the timeout; [`Error::TaskAsked`] when a
/// 2026-07-28 task waits for input; [`Error::Upstream`] for the
/// upstream's refusal to start it, or the task's own error.
pub(crate) async fn pass_through(
    router: &Router,
    route: &Route,
    session: &ClientSession,
    arguments: JsonObject,
) -> Result<CallToolResult, Error> {
    let upstream = &route.upstream;
    let mut seat = router.tasks.seat(upstream, session)?;
    let start = {
        let (session, name) = (session.clone(), route.name.clone());
        async move { session.call_tool_as_task(&name, arguments, None).await }
    };
    let started = seat
        .start(start)
        .await
        .map_err(|source| router.forwarded(upstream, source))?;
    let task = match started {
        TaskStart::Task(task) => task,
        TaskStart::Complete(result) => return Ok(result),
        _ => {
            return Err(Error::TaskNotStarted {
                upstream: upstream.to_string(),
            });
        }
    };
    let interval = poll_interval(&task);
    let followed = tokio::time::timeout(
        router.limits.task_timeout,
        follow(router, upstream, session, seat, task.task_id, interval),
    );
    match followed.await {
        Ok(result) => result,
        Err(_) => Err(Error::TaskTimeout {
            upstream: upstream.to_string(),
            timeout: router.limits.task_timeout,
        }),
    }
}

/// Polls upstream task `task_id` until it ends; its result then, without
/// the upstream's id in its `_meta`.
async fn follow(
    router: &Router,
    upstream: &Arc<str>,
    session: &ClientSession,
    mut seat: Seat,
    task_id: String,
    mut interval: std::time::Duration,
) -> Result<CallToolResult, Error> {
    let lost = |source: mcp_client::Error| {
        router.notice_lost_session(upstream, &source);
        Error::TaskLost {
            upstream: upstream.to_string(),
            source,
        }
    };
    let state = loop {
        tokio::time::sleep(interval).await;
        let state = session.task_state(&task_id).await.map_err(lost)?;
        match state.task.status {
            TaskStatus::Completed | TaskStatus::Failed => break state,
            TaskStatus::Cancelled => {
                seat.ended();
                return Err(Error::TaskCancelled {
                    upstream: upstream.to_string(),
                });
            }
            // The seat, dropped, cancels it upstream.
            TaskStatus::InputRequired if session.is_stateless() => {
                return Err(Error::TaskAsked {
                    upstream: upstream.to_string(),
                });
            }
            _ => interval = poll_interval(&state.task),
        }
    };
    // Ended upstream: nothing left to cancel.
    seat.ended();
    let mut result = if session.is_stateless() {
        // The final state carries the result or the task's own error.
        match (state.result, state.error) {
            (Some(result), _) if state.task.status == TaskStatus::Completed => result,
            (_, error) => {
                let error = error.unwrap_or_else(|| {
                    ErrorObject::internal_error("the upstream task ended without a result")
                });
                // The task's own error, as a 2025-11-25 `tasks/result`
                // gives it: not `TaskFailed`, whose message names the
                // upstream's task id.
                let source = mcp_client::Error::Request(mcp_core::Error::Remote(error));
                return Err(router.forwarded(upstream, source));
            }
        }
    } else {
        session
            .task_result(&task_id)
            .await
            .map_err(|source| router.forwarded(upstream, source))?
    };
    if let Some(meta) = &mut result.meta {
        meta.related_task = None;
    }
    Ok(result)
}
