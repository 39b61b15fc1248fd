//! Tasks: a request (today `tools/call`) answered at once with a task handle
//! while its work runs on, polled, answered and cancelled by the client.
//!
//! Both eras share one engine and one [`TaskStore`]: the 2025-11-25
//! revision's experimental core tasks (`tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel`) and the 2026-07-28 tasks extension.
//!
//! - [`store`]: the [`TaskStore`] trait, its plain-data records, the state
//!   machine, and the bounded in-memory default with TTL expiry (the
//!   `mcp-tasks` crate);
//! - the engine is [`mcp_tasks::TaskHost`], which the client's
//!   hosted tasks share: it owns the running work (each task's tool code
//!   runs as a tokio task it can cancel, and aborts when the server goes
//!   away); here the server's side of it: its changes announced on the
//!   server's [`ListChanges`], the task ids, owners and the wait for input
//!   of a handshake-era task (`TaskSeat`).

/// The contract every [`TaskStore`] backend must pass:
/// [`mcp_tasks::contract`].
pub use mcp_tasks::contract;
mod extension;
mod feed;
/// Where task state lives (shared with the client, which hosts 2025-11-25
/// sampling and elicitation tasks): the `mcp-tasks` crate.
pub use mcp_tasks as store;

use std::future::Future;
use std::sync::{Arc, Mutex};

use mcp_tasks::{TaskChangeListener, TaskChanges};
use mcp_types::TaskStatus;
use tokio::sync::broadcast;

use crate::changes::{ListChange, ListChanges};

pub use mcp_tasks::{
    DEFAULT_MAX_TASK_TTL, DEFAULT_MAX_TASKS, DEFAULT_POLL_INTERVAL, DEFAULT_TASK_PAGE_SIZE,
    DEFAULT_TASK_TTL, InMemoryTaskStore, StoreFuture, TaskOutcome, TaskPage, TaskRecord, TaskStore,
    TaskStoreError, TaskUpdate, TasksConfig, can_move,
};
#[cfg(feature = "redis")]
pub use mcp_transport::store::redis::RedisTaskStore;

pub(crate) use extension::{TaskWatch, extension, missing_extension};
pub(crate) use feed::TaskFeed;

/// The 2025-11-25 `tasks` capability of a server that runs tasks:
/// `tasks/list`, `tasks/cancel` and task-augmented `tools/call`.
pub(crate) fn core_capability() -> mcp_types::ServerTasksCapability {
    let mut requests = mcp_types::ServerTaskRequests::new();
    let mut tools = mcp_types::ToolsTaskRequests::new();
    tools.call = Some(mcp_types::JsonObject::new());
    requests.tools = Some(tools);
    let mut capability = mcp_types::ServerTasksCapability::new();
    capability.list = Some(mcp_types::JsonObject::new());
    capability.cancel = Some(mcp_types::JsonObject::new());
    capability.requests = Some(requests);
    capability
}

/// What a task's work ends with.
pub(crate) use mcp_tasks::Work;

/// Runs tasks for the server, in both eras: the engine the client's hosted
/// tasks share, announcing on the server's [`ListChanges`]
/// ([`engine`] makes one).
pub(crate) type TaskEngine = mcp_tasks::TaskHost;

/// The server's engine for `config`: every change it makes announced on
/// `changes` (status notifications, other replicas, and whoever waits for
/// a task to end).
pub(crate) fn engine(config: TasksConfig, changes: ListChanges) -> TaskEngine {
    TaskEngine::new(config, Arc::new(Announcer(changes)))
}

/// The server's change feed as the engine's [`TaskChanges`].
struct Announcer(ListChanges);

impl TaskChanges for Announcer {
    fn announce(&self, owner: &str, task_id: &str) {
        self.0.task_changed(owner, task_id);
    }

    fn listen(&self) -> Box<dyn TaskChangeListener> {
        Box::new(Listener(self.0.subscribe()))
    }
}

/// Hears the feed's changes of one task (or, after a lag, of any).
struct Listener(broadcast::Receiver<ListChange>);

impl TaskChangeListener for Listener {
    fn changed<'a>(&'a mut self, owner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            while let Some(batch) = crate::changes::next_changes(&mut self.0, Vec::new).await {
                let ours = batch.iter().any(|change| match change {
                    ListChange::Task {
                        owner: o,
                        task_id: t,
                    } => o == owner && t == task_id,
                    ListChange::AnyTask => true,
                    _ => false,
                });
                if ours {
                    return;
                }
            }
            // The feed is gone with the server: polling alone remains.
            std::future::pending::<()>().await;
        })
    }
}

/// The 2025-11-25 task a handshake-era tool call runs as: while its code
/// waits for the client's answer to an ask (elicitation, sampling, roots),
/// the task is `input_required`, and `working` again once every open ask is
/// answered (2025-11-25, "Input Required Status"). The asks themselves go
/// to the client as requests carrying the task in `_meta`.
pub(crate) struct TaskSeat {
    engine: Arc<TaskEngine>,
    owner: String,
    task_id: String,
    /// How many asks wait for the client's answer now.
    waiting: Mutex<usize>,
}

impl TaskSeat {
    pub(crate) fn new(engine: Arc<TaskEngine>, owner: String, task_id: String) -> Self {
        Self {
            engine,
            owner,
            task_id,
            waiting: Mutex::new(0),
        }
    }

    /// The task's id.
    pub(crate) fn task_id(&self) -> &str {
        &self.task_id
    }

    /// Runs `ask` (one request to the client) with the task
    /// `input_required` meanwhile.
    pub(crate) async fn asking<T>(&self, ask: impl Future<Output = T>) -> T {
        if self.count(1) == 1 {
            self.mark(TaskStatus::Working, TaskStatus::InputRequired)
                .await;
        }
        let answer = ask.await;
        if self.count(-1) == 0 {
            self.mark(TaskStatus::InputRequired, TaskStatus::Working)
                .await;
        }
        answer
    }

    /// Adds `delta` to the open asks; answers the new count.
    fn count(&self, delta: isize) -> usize {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        *waiting = waiting.saturating_add_signed(delta);
        *waiting
    }

    async fn mark(&self, from: TaskStatus, to: TaskStatus) {
        let update = TaskUpdate::status(to).expecting(from);
        match self.engine.update(&self.owner, &self.task_id, update).await {
            // Cancelled or expired meanwhile: the status is no longer ours to set.
            Ok(_)
            | Err(
                TaskStoreError::Conflict { .. }
                | TaskStoreError::InvalidTransition { .. }
                | TaskStoreError::NotFound { .. },
            ) => {}
            Err(error) => tracing::warn!(%error, "could not record a task's wait for input"),
        }
    }
}

/// Whose tasks a request may see: the verified principal, else the HTTP
/// session, else (handshake era) this connection, named by the address of
/// its state (`connection`: the session's state, whatever its type); a
/// stateless request without either is anonymous (its connection lasts one
/// request).
pub(crate) fn owner<S>(
    transport: &mcp_core::TransportContext,
    connection: &Arc<S>,
    stateless: bool,
) -> String {
    if let Some(principal) = &transport.principal {
        return format!("principal:{principal}");
    }
    if let Some(session) = &transport.session_id {
        return format!("session:{session}");
    }
    if stateless {
        return "anonymous".to_owned();
    }
    format!("connection:{:p}", Arc::as_ptr(connection))
}

/// A fresh, unguessable task id (128 random bits).
pub(crate) fn new_task_id() -> Result<String, TaskStoreError> {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| TaskStoreError::Backend("the system's random source failed".into()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
