//! The upstream tasks the gateway follows for its clients' tasks: a
//! bounded table of them, each entry held by the work following it
//! ([`Seat`]); an entry dropped before its upstream task ended has that
//! task cancelled upstream by the gateway's canceller ([`cancel_orphans`]).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::{ClientSession, TaskStart};
use mcp_core::CancellationToken;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::Error;

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
    task: Upstream,
}

/// The start of an upstream task: the task-augmented `tools/call`, run
/// apart from the work that follows it, so a work dropped meanwhile leaves
/// the answer (the task's id) for the canceller instead of losing it.
pub(crate) type Start = JoinHandle<Result<TaskStart, mcp_client::Error>>;

/// Where a seat's upstream task is.
enum Upstream {
    /// Asked for; its id not known yet.
    Starting(Start),
    /// Running upstream under this id.
    Running(String),
    /// Ended (or never started): nothing to cancel.
    Ended,
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
    pub(crate) fn seat(
        self: &Arc<Self>,
        upstream: &Arc<str>,
        session: &ClientSession,
    ) -> Result<Seat, Error> {
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
            task: Upstream::Ended,
        })
    }
}

/// One entry of the table, held by the work following it: dropped before
/// the upstream task ended, it has the task cancelled upstream.
pub(crate) struct Seat {
    table: Arc<UpstreamTasks>,
    key: u64,
    session: ClientSession,
    task: Upstream,
}

impl Seat {
    /// Starts the upstream task by `start` (on this seat's session), run
    /// as a tokio task this seat owns until it answers: the answer is the
    /// canceller's if the seat is dropped first.
    ///
    /// # Errors
    /// The upstream's refusal; a start that panicked is a lost connection.
    pub(crate) async fn start(
        &mut self,
        start: impl Future<Output = Result<TaskStart, mcp_client::Error>> + Send + 'static,
    ) -> Result<TaskStart, mcp_client::Error> {
        // Held here while it runs: the seat's drop finds it.
        self.task = Upstream::Starting(tokio::spawn(start));
        let closed = || mcp_client::Error::Request(mcp_core::Error::Closed);
        let joined = match &mut self.task {
            Upstream::Starting(handle) => handle.await,
            _ => return Err(closed()),
        };
        self.task = Upstream::Ended;
        let started = joined.map_err(|_| closed())??;
        if let TaskStart::Task(task) = &started {
            self.task = Upstream::Running(task.task_id.clone());
            if let Some(followed) = self.table.live().get_mut(&self.key) {
                followed.task_id = Some(task.task_id.clone());
            }
        }
        Ok(started)
    }

    /// The upstream task ended: nothing left to cancel.
    pub(crate) fn ended(&mut self) {
        self.task = Upstream::Ended;
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let Some(followed) = self.table.live().remove(&self.key) else {
            return;
        };
        let task = std::mem::replace(&mut self.task, Upstream::Ended);
        if let Upstream::Ended = task {
            return;
        }
        let orphan = Orphan {
            upstream: followed.upstream,
            session: self.session.clone(),
            task,
        };
        // Never full (as long as the table): each seat sends once.
        if let Err(error) = self.table.orphans.try_send(orphan) {
            let orphan = error.into_inner();
            if let Upstream::Starting(start) = &orphan.task {
                start.abort();
            }
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
        let Orphan {
            upstream,
            session,
            task,
        } = orphan;
        let task_id = match task {
            Upstream::Running(task_id) => task_id,
            // Its answer first (bounded by the session's request timeout).
            Upstream::Starting(mut start) => {
                let started = tokio::select! {
                    () = cancel.cancelled() => {
                        start.abort();
                        return;
                    }
                    started = &mut start => started,
                };
                match started {
                    Ok(Ok(TaskStart::Task(task))) => task.task_id,
                    _ => continue,
                }
            }
            Upstream::Ended => continue,
        };
        // Bounded by the session's request timeout; an upstream gone
        // meanwhile took its task with it.
        let cancelled = tokio::select! {
            () = cancel.cancelled() => return,
            cancelled = session.cancel_task(&task_id) => cancelled,
        };
        match cancelled {
            Ok(()) => {
                tracing::debug!(%upstream, "an upstream task was cancelled")
            }
            Err(error) => tracing::debug!(
                %upstream,
                "an upstream task could not be cancelled (it may have ended): {error}"
            ),
        }
    }
}
