//! The upstream tasks the gateway follows for its clients' tasks: a
//! bounded table of them, each entry held by the work following it
//! ([`Seat`]); an entry dropped before its upstream task ended has that
//! task cancelled upstream by the gateway's canceller ([`cancel_orphans`]),
//! and counts against the bound until it is.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_client::{ClientSession, TaskStart};
use mcp_core::CancellationToken;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::Error;

/// An upstream task whose downstream task stopped first: cancelled by
/// [`cancel_orphans`]; its place in the table is freed when it is dropped.
pub(crate) struct Orphan {
    place: Place,
    upstream: Arc<str>,
    session: ClientSession,
    task: Upstream,
}

/// An orphan's place in the table: freed on drop.
struct Place(Arc<UpstreamTasks>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.counts().orphaned -= 1;
    }
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

/// How many upstream tasks the table holds.
#[derive(Default)]
struct Counts {
    /// Followed by a seat.
    live: usize,
    /// Left to the canceller, not yet cancelled.
    orphaned: usize,
}

/// The upstream tasks the gateway follows or is yet to cancel, at most
/// `limit` together (so its queue of orphans never fills).
pub(crate) struct UpstreamTasks {
    counts: Mutex<Counts>,
    limit: usize,
    orphans: mpsc::Sender<Orphan>,
}

impl UpstreamTasks {
    /// A table of at most `limit` tasks, and the queue of its orphans (as
    /// long: an orphan keeps its place until cancelled).
    pub(crate) fn new(limit: usize) -> (Self, mpsc::Receiver<Orphan>) {
        let (orphans, orphaned) = mpsc::channel(limit.max(1));
        let table = Self {
            counts: Mutex::default(),
            limit,
            orphans,
        };
        (table, orphaned)
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many upstream tasks the gateway follows now (those left to
    /// cancel aside).
    pub(crate) fn len(&self) -> usize {
        self.counts().live
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
        let mut counts = self.counts();
        if counts.live + counts.orphaned >= self.limit {
            return Err(Error::TooManyTasks { limit: self.limit });
        }
        counts.live += 1;
        Ok(Seat {
            table: self.clone(),
            upstream: upstream.clone(),
            session: session.clone(),
            task: Upstream::Ended,
        })
    }
}

/// One entry of the table, held by the work following it: dropped before
/// the upstream task ended, it has the task cancelled upstream.
pub(crate) struct Seat {
    table: Arc<UpstreamTasks>,
    upstream: Arc<str>,
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
        let task = std::mem::replace(&mut self.task, Upstream::Ended);
        let mut counts = self.table.counts();
        counts.live -= 1;
        if let Upstream::Ended = task {
            return;
        }
        // Its place passes to the orphan.
        counts.orphaned += 1;
        drop(counts);
        let orphan = Orphan {
            place: Place(self.table.clone()),
            upstream: self.upstream.clone(),
            session: self.session.clone(),
            task,
        };
        // Never full (the orphans hold places in the table): closed only
        // once the gateway stops.
        if let Err(error) = self.table.orphans.try_send(orphan) {
            let orphan = error.into_inner();
            if let Upstream::Starting(start) = &orphan.task {
                start.abort();
            }
            tracing::warn!(
                upstream = %orphan.upstream,
                "an upstream task left behind could not be cancelled: the gateway stopped"
            );
        }
    }
}

/// Cancels upstream tasks whose downstream task stopped first, until
/// `cancel` (the gateway's task: [`Gateway::shutdown`](crate::Gateway::shutdown)
/// awaits it). Then the starts still queued are aborted, as a seat
/// dropped from then on aborts its own: no start outlives the gateway.
pub(crate) async fn cancel_orphans(mut orphans: mpsc::Receiver<Orphan>, cancel: CancellationToken) {
    cancel_each(&mut orphans, &cancel).await;
    orphans.close();
    while let Ok(orphan) = orphans.try_recv() {
        if let Upstream::Starting(start) = orphan.task {
            start.abort();
        }
    }
}

/// Cancels each orphan upstream in turn, until `cancel`.
async fn cancel_each(orphans: &mut mpsc::Receiver<Orphan>, cancel: &CancellationToken) {
    loop {
        let orphan = tokio::select! {
            () = cancel.cancelled() => return,
            orphan = orphans.recv() => match orphan {
                Some(orphan) => orphan,
                None => return,
            },
        };
        // Its place freed once done with, at the end of the turn.
        let Orphan {
            place: _place,
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
            Ok(()) => tracing::debug!(%upstream, "an upstream task was cancelled"),
            // The upstream's own words are left out: they may name its
            // task id.
            Err(error) => match error.remote() {
                Some(refused) => tracing::debug!(
                    %upstream,
                    code = %refused.code,
                    "the upstream refused to cancel a task (it may have ended)"
                ),
                None => {
                    tracing::debug!(%upstream, "an upstream task could not be cancelled: {error}")
                }
            },
        }
    }
}
