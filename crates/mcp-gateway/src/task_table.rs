//! The upstream tasks the gateway follows for its clients' tasks: a
//! bounded table of them, each entry held by the work following it
//! ([`Seat`]); an entry dropped before its upstream task ended has that
//! task cancelled upstream by the gateway's canceller ([`cancel_orphans`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::ClientSession;
use mcp_core::CancellationToken;
use tokio::sync::mpsc;

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
            ended: false,
        })
    }
}

/// One entry of the table, held by the work following it: dropped before
/// the upstream task ended, it has the task cancelled upstream.
pub(crate) struct Seat {
    table: Arc<UpstreamTasks>,
    key: u64,
    session: ClientSession,
    /// Set once the upstream task ended: nothing left to cancel.
    pub(crate) ended: bool,
}

impl Seat {
    /// The upstream answered with its task's id.
    pub(crate) fn started(&self, task_id: &str) {
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
