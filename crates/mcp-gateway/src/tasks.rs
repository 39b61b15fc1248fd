//! Tasks passed through to the upstream that runs them.
//!
//! The downstream side of a task is the gateway server's own (mcp-server's
//! task support, [`GatewayBuilder::tasks`](crate::GatewayBuilder::tasks)):
//! its ids, its records scoped to the client that made them (`tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` of one client never
//! reach another's), its status notifications. The tool's work in that
//! task is a pass-through when the client asked for a task, the tool runs
//! as one upstream (`execution.taskSupport`) and the upstream serves
//! task-augmented `tools/call` (the 2025-11-25 `tasks` capability): the
//! work starts the task upstream, polls it at the upstream's interval and
//! fetches its result. Otherwise the work calls the upstream as any call.
//!
//! Every upstream task the gateway follows sits in one bounded table
//! ([`UpstreamTasks`], [`Limits::max_tasks`](crate::Limits::max_tasks)),
//! under the upstream session it was started on: the upstream's task ids
//! never leave the gateway (its result's related-task `_meta` is dropped;
//! errors about it are the gateway's own words), and are never taken from
//! a downstream client. When the downstream task is cancelled (or its work
//! stops otherwise before the upstream task ended), the table's entry goes
//! and the upstream task is cancelled (`tasks/cancel`) by the gateway's
//! canceller ([`cancel_orphans`]). An upstream lost while a task runs (its
//! process restarted, its session gone) fails the downstream task with
//! [`Error::TaskLost`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::{ClientSession, TaskStart, poll_interval};
use mcp_core::CancellationToken;
use mcp_server::Context;
use mcp_types::{CallToolResult, ErrorObject, JsonObject, RequestMeta, TaskStatus};
use tokio::sync::mpsc;

use crate::error::Error;
use crate::naming::Route;
use crate::router::{Router, forwarded};

/// One upstream task the gateway follows.
struct Followed {
    upstream: Arc<str>,
    /// The upstream's id, once it answered.
    task_id: Option<String>,
}

/// An upstream task whose downstream task stopped first: cancelled by
/// [`cancel_orphans`].
pub(crate) struct Orphan {
    upstream: Arc<str>,
    session: ClientSession,
    task_id: String,
}

/// The upstream tasks the gateway follows now, at most `limit`.
pub(crate) struct UpstreamTasks {
    live: Mutex<HashMap<u64, Followed>>,
    next: AtomicU64,
    limit: usize,
    orphans: mpsc::Sender<Orphan>,
}

impl UpstreamTasks {
    /// A table of at most `limit` tasks, and the queue of its orphans (as
    /// long: each entry sends at most one).
    pub(crate) fn new(limit: usize) -> (Self, mpsc::Receiver<Orphan>) {
        let (orphans, orphaned) = mpsc::channel(limit.max(1));
        let table = Self {
            live: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            limit,
            orphans,
        };
        (table, orphaned)
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Followed>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many upstream tasks the gateway follows now.
    pub(crate) fn len(&self) -> usize {
        self.live().len()
    }

    /// A seat for one more upstream task of `upstream`, started on
    /// `session`.
    ///
    /// # Errors
    /// [`Error::TooManyTasks`] when the table is full.
    fn seat(self: &Arc<Self>, upstream: &Arc<str>, session: &ClientSession) -> Result<Seat, Error> {
        let mut live = self.live();
        if live.len() >= self.limit {
            return Err(Error::TooManyTasks { limit: self.limit });
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        live.insert(
            key,
            Followed {
                upstream: upstream.clone(),
                task_id: None,
            },
        );
        Ok(Seat {
            table: self.clone(),
            key,
            session: session.clone(),
            ended: false,
        })
    }
}

/// One entry of the table, held by the work following it: dropped before
/// the upstream task ended, it has the task cancelled upstream.
struct Seat {
    table: Arc<UpstreamTasks>,
    key: u64,
    session: ClientSession,
    ended: bool,
}

impl Seat {
    fn started(&self, task_id: &str) {
        if let Some(followed) = self.table.live().get_mut(&self.key) {
            followed.task_id = Some(task_id.to_owned());
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let Some(followed) = self.table.live().remove(&self.key) else {
            return;
        };
        let Some(task_id) = followed.task_id.filter(|_| !self.ended) else {
            return;
        };
        let orphan = Orphan {
            upstream: followed.upstream,
            session: self.session.clone(),
            task_id,
        };
        // Never full (as long as the table): each seat sends once.
        if let Err(error) = self.table.orphans.try_send(orphan) {
            let orphan = error.into_inner();
            tracing::warn!(
                upstream = %orphan.upstream,
                "an upstream task left behind could not be cancelled: the canceller is gone"
            );
        }
    }
}

/// Cancels upstream tasks whose downstream task stopped first, until
/// `cancel` (the gateway's task: [`Gateway::shutdown`](crate::Gateway::shutdown)
/// awaits it).
pub(crate) async fn cancel_orphans(mut orphans: mpsc::Receiver<Orphan>, cancel: CancellationToken) {
    loop {
        let orphan = tokio::select! {
            () = cancel.cancelled() => return,
            orphan = orphans.recv() => match orphan {
                Some(orphan) => orphan,
                None => return,
            },
        };
        // Bounded by the session's request timeout; an upstream gone
        // meanwhile took its task with it.
        let cancelled = tokio::select! {
            () = cancel.cancelled() => return,
            cancelled = orphan.session.cancel_task(&orphan.task_id) => cancelled,
        };
        match cancelled {
            Ok(()) => {
                tracing::debug!(upstream = %orphan.upstream, "an upstream task was cancelled")
            }
            Err(error) => tracing::debug!(
                upstream = %orphan.upstream,
                "an upstream task could not be cancelled (it may have ended): {error}"
            ),
        }
    }
}

/// Whether the downstream call `cx` runs as a task of the gateway's: a
/// 2025-11-25 task-augmented call, or (the tasks extension) one that
/// becomes a task where it first waits.
pub(crate) fn runs_as_task(cx: &Context) -> bool {
    cx.session().task_id().is_some()
        || cx.client_supports_extension(mcp_types::tasks_ext::EXTENSION_ID)
}

/// Whether `session`'s upstream runs tool calls as tasks the gateway can
/// follow: the 2025-11-25 `tasks` capability with `tools/call`.
pub(crate) fn runs_tool_tasks(session: &ClientSession) -> bool {
    if session.is_stateless() {
        return false;
    }
    let capabilities = session.server_capabilities().unwrap_or_default();
    capabilities
        .tasks
        .and_then(|tasks| tasks.requests)
        .and_then(|requests| requests.tools)
        .is_some_and(|tools| tools.call.is_some())
}

/// An upstream's request tied to one of its own tasks (`_meta`
/// related-task): refused, since no downstream request waits for its
/// answer (the downstream client polls its task), and guessing which
/// client's call it belongs to could hand it to another client.
///
/// # Errors
/// The refusal, for such a request.
pub(crate) fn refuse_task_asks(meta: Option<&RequestMeta>) -> Result<(), ErrorObject> {
    match meta.and_then(|meta| meta.related_task.as_ref()) {
        Some(_) => Err(ErrorObject::internal_error(
            "the gateway does not pass on requests an upstream task makes: run the tool \
             without a task to be asked",
        )),
        None => Ok(()),
    }
}

/// Runs the tool `route` names as a task on its upstream's `session` and
/// follows it to its end: polled at the upstream's interval (at most
/// `limits.task_timeout` in all), its result fetched.
///
/// # Errors
/// [`Error::TooManyTasks`] when the gateway follows as many as it may;
/// [`Error::TaskLost`] when the upstream's session ends or it no longer
/// knows the task; [`Error::TaskCancelled`] when the upstream cancelled it;
/// [`Error::TaskTimeout`] past the timeout; [`Error::Upstream`] for the
/// upstream's refusal to start it, or the task's own error.
pub(crate) async fn pass_through(
    router: &Router,
    route: &Route,
    session: &ClientSession,
    arguments: JsonObject,
) -> Result<CallToolResult, Error> {
    let upstream = &route.upstream;
    let seat = router.tasks.seat(upstream, session)?;
    let started = session
        .call_tool_as_task(&route.name, arguments, None)
        .await
        .map_err(|source| forwarded(upstream, source))?;
    let task = match started {
        TaskStart::Task(task) => task,
        TaskStart::Complete(result) => return Ok(result),
        _ => {
            return Err(Error::TaskNotStarted {
                upstream: upstream.to_string(),
            });
        }
    };
    seat.started(&task.task_id);
    let interval = poll_interval(&task);
    let followed = tokio::time::timeout(
        router.limits.task_timeout,
        follow(upstream, session, seat, task.task_id, interval),
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
    upstream: &Arc<str>,
    session: &ClientSession,
    mut seat: Seat,
    task_id: String,
    mut interval: std::time::Duration,
) -> Result<CallToolResult, Error> {
    let lost = |source| Error::TaskLost {
        upstream: upstream.to_string(),
        source,
    };
    loop {
        tokio::time::sleep(interval).await;
        let task = session.get_task(&task_id).await.map_err(lost)?;
        match task.status {
            TaskStatus::Completed | TaskStatus::Failed => break,
            TaskStatus::Cancelled => {
                seat.ended = true;
                return Err(Error::TaskCancelled {
                    upstream: upstream.to_string(),
                });
            }
            _ => interval = poll_interval(&task),
        }
    }
    // Ended upstream: nothing left to cancel.
    seat.ended = true;
    let mut result = session
        .task_result(&task_id)
        .await
        .map_err(|source| forwarded(upstream, source))?;
    if let Some(meta) = &mut result.meta {
        meta.related_task = None;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::refuse_task_asks;
    use mcp_types::{RelatedTaskMetadata, RequestMeta};

    #[test]
    fn an_upstream_tasks_asks_are_refused_and_others_pass() {
        let mut meta = RequestMeta::default();
        assert!(refuse_task_asks(None).is_ok());
        assert!(refuse_task_asks(Some(&meta)).is_ok());
        meta.related_task = Some(RelatedTaskMetadata::new("t"));
        assert!(refuse_task_asks(Some(&meta)).is_err());
    }
}
