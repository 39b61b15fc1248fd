//! Tasks: a request (today `tools/call`) answered at once with a task handle
//! while its work runs on, polled, answered and cancelled by the client.
//!
//! Both eras share this engine and one [`TaskStore`]: the 2025-11-25
//! revision's experimental core tasks (`tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel`) and the 2026-07-28 tasks extension.
//!
//! - [`store`]: the [`TaskStore`] trait, its plain-data records, the state
//!   machine, and the bounded in-memory default with TTL expiry;
//! - this file: [`TasksConfig`] and the `TaskEngine`, which owns the
//!   running work (each task's tool code runs as a tokio task the engine
//!   can cancel, and aborts when the server goes away).

mod extension;
pub mod store;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_core::CancellationToken;
use mcp_types::{Task, TaskStatus};

use crate::changes::{ListChange, ListChanges};

pub use store::{
    DEFAULT_MAX_TASKS, InMemoryTaskStore, StoreFuture, TaskOutcome, TaskPage, TaskRecord,
    TaskStore, TaskStoreError, TaskUpdate, can_move,
};

/// The default retention of a task from its creation: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The longest retention a client may ask for: one day.
pub const DEFAULT_MAX_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The default polling interval suggested to clients: half a second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The default number of tasks one `tasks/list` page carries.
pub const DEFAULT_TASK_PAGE_SIZE: usize = 50;

/// How a server runs tasks ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)).
#[derive(Clone)]
pub struct TasksConfig {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) default_ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) page_size: usize,
}

impl std::fmt::Debug for TasksConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksConfig")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl TasksConfig {
    /// Tasks in an [`InMemoryTaskStore`], kept [`DEFAULT_TASK_TTL`] unless
    /// the client asks for less (at most [`DEFAULT_MAX_TASK_TTL`]), polled
    /// every [`DEFAULT_POLL_INTERVAL`].
    pub fn new() -> Self {
        Self {
            store: Arc::new(InMemoryTaskStore::new()),
            default_ttl: DEFAULT_TASK_TTL,
            max_ttl: DEFAULT_MAX_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            page_size: DEFAULT_TASK_PAGE_SIZE,
        }
    }

    /// Keeps task state in `store` (a shared backend for several processes).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// How long a task is kept when the client asks for no TTL.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// The longest TTL granted; a longer request is shortened to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// The polling interval suggested to clients.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Tasks per `tasks/list` page.
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
}

pub(crate) use extension::{TaskWatch, extension, missing_extension};

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
pub(crate) type Work = std::pin::Pin<Box<dyn Future<Output = TaskUpdate> + Send>>;

/// Runs tasks: creates their records, owns their running work, cancels it,
/// and announces every change it makes on the server's [`ListChanges`]
/// (status notifications, and whoever waits for a task to end).
pub(crate) struct TaskEngine {
    pub(crate) config: TasksConfig,
    /// The work running in this process, by task id.
    running: Mutex<HashMap<String, Running>>,
    /// Where task changes are announced: the one feed of every listener.
    changes: ListChanges,
}

struct Running {
    cancel: CancellationToken,
    /// The supervising task and the work itself (its own task, so a panic
    /// in tool code fails the task instead of leaving it `working`).
    handles: [tokio::task::AbortHandle; 2],
}

impl Drop for TaskEngine {
    fn drop(&mut self) {
        // The engine owns the work: nothing outlives the server.
        let running = self.running.get_mut().unwrap_or_else(|p| p.into_inner());
        for (_, work) in running.drain() {
            work.cancel.cancel();
            for handle in &work.handles {
                handle.abort();
            }
        }
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
/// session, else (handshake era) this connection; a stateless request
/// without either is anonymous (its connection lasts one request).
pub(crate) fn owner(
    transport: &mcp_core::TransportContext,
    state: &Arc<crate::session::SessionState>,
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
    format!("connection:{:p}", Arc::as_ptr(state))
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `ms` since the epoch as an ISO 8601 UTC timestamp (days to civil date
/// after Howard Hinnant's algorithm).
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A fresh, unguessable task id (128 random bits).
fn new_task_id() -> Result<String, TaskStoreError> {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| TaskStoreError::Backend("the system's random source failed".into()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl TaskRecord {
    /// The task as the wire describes it (2025-11-25 `Task`).
    pub fn to_task(&self) -> Task {
        let mut task = Task::new(
            self.task_id.clone(),
            self.status,
            iso8601(self.created_at_ms),
            iso8601(self.last_updated_at_ms),
        );
        task.status_message = self.status_message.clone();
        task.ttl = self.ttl_ms;
        task.poll_interval = self.poll_interval_ms;
        task
    }
}

impl TaskEngine {
    pub(crate) fn new(config: TasksConfig, changes: ListChanges) -> Self {
        Self {
            config,
            running: Mutex::new(HashMap::new()),
            changes,
        }
    }

    pub(crate) fn store(&self) -> &dyn TaskStore {
        self.config.store.as_ref()
    }

    /// The task `task_id` of `owner`; one that does not exist, expired or
    /// is another owner's is [`TaskStoreError::NotFound`].
    pub(crate) async fn get(
        &self,
        owner: &str,
        task_id: &str,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.store()
            .get(owner, task_id)
            .await?
            .ok_or_else(|| TaskStoreError::NotFound {
                task_id: task_id.to_owned(),
            })
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Announces that task `task_id` of `owner` changed.
    fn changed(&self, owner: &str, task_id: &str) {
        self.changes.task_changed(owner, task_id);
    }

    /// Creates a `working` task for `owner`, kept `requested_ttl_ms` (capped
    /// by the configuration) or the default.
    pub(crate) async fn create(
        &self,
        owner: &str,
        method: &str,
        requested_ttl_ms: Option<u64>,
    ) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let max = duration_ms(self.config.max_ttl);
        let ttl = requested_ttl_ms
            .unwrap_or_else(|| duration_ms(self.config.default_ttl))
            .min(max);
        let record = TaskRecord {
            task_id: new_task_id()?,
            owner: owner.to_owned(),
            method: method.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms: Some(ttl),
            poll_interval_ms: Some(duration_ms(self.config.poll_interval)),
            outcome: None,
            input_requests: None,
            request_state: None,
            answers: None,
        };
        self.store().create(record.clone()).await?;
        Ok(record)
    }

    /// Runs `work` for the task as a tokio task this engine owns: its
    /// update is stored when it ends, unless the task was cancelled (then
    /// `cancel` fires and the work is dropped at its next await).
    pub(crate) fn spawn(
        self: &Arc<Self>,
        owner: String,
        task_id: String,
        cancel: CancellationToken,
        work: Work,
    ) {
        let engine = Arc::downgrade(self);
        let id = task_id.clone();
        let token = cancel.clone();
        // Hold the table while spawning, so the task cannot finish and
        // remove itself before it is registered.
        let mut running = self.running();
        let inner = tokio::spawn(work);
        let inner_abort = inner.abort_handle();
        let kept_abort = inner.abort_handle();
        let handle = tokio::spawn(async move {
            let update = tokio::select! {
                () = token.cancelled() => {
                    inner_abort.abort();
                    None
                }
                joined = inner => match joined {
                    Ok(update) => Some(update),
                    Err(e) if e.is_panic() => {
                        tracing::warn!("a task's tool code panicked; the task failed");
                        Some(TaskUpdate::failed(mcp_types::ErrorObject::internal_error(
                            "the tool's code panicked",
                        )))
                    }
                    Err(_) => None,
                },
            };
            let Some(engine) = engine.upgrade() else {
                return;
            };
            if let Some(update) = update {
                match engine
                    .store()
                    .transition(&owner, &id, update, now_ms())
                    .await
                {
                    Ok(_) => {}
                    // Cancelled (or expired) meanwhile: the work's end is moot.
                    Err(
                        TaskStoreError::InvalidTransition { .. } | TaskStoreError::NotFound { .. },
                    ) => {}
                    Err(e) => tracing::warn!(error = %e, "could not store a task's end"),
                }
            }
            engine.running().remove(&id);
            engine.changed(&owner, &id);
        });
        running.insert(
            task_id,
            Running {
                cancel,
                handles: [handle.abort_handle(), kept_abort],
            },
        );
    }

    /// Stores `update` for a task (a status message, a wait for input, ...)
    /// and wakes its waiters.
    pub(crate) async fn update(
        &self,
        owner: &str,
        task_id: &str,
        update: TaskUpdate,
    ) -> Result<TaskRecord, TaskStoreError> {
        let record = self
            .store()
            .transition(owner, task_id, update, now_ms())
            .await?;
        self.changed(owner, task_id);
        Ok(record)
    }

    /// Cancels a task: `cancelled` in the store, its work (if it runs in
    /// this process) told to stop.
    pub(crate) async fn cancel(
        &self,
        owner: &str,
        task_id: &str,
    ) -> Result<TaskRecord, TaskStoreError> {
        let record = self
            .update(
                owner,
                task_id,
                TaskUpdate::status(TaskStatus::Cancelled).with_message("cancelled by the client"),
            )
            .await?;
        if let Some(work) = self.running().remove(task_id) {
            work.cancel.cancel();
        }
        Ok(record)
    }

    /// Waits until the task is terminal: re-reads it whenever the change
    /// feed names it (or may have lost its change), and every poll
    /// interval for a store changed where no announcement reaches this
    /// process.
    pub(crate) async fn wait_terminal(
        &self,
        owner: &str,
        task_id: &str,
    ) -> Result<TaskRecord, TaskStoreError> {
        let mut changes = self.changes.subscribe();
        loop {
            let record = self.get(owner, task_id).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            let named = async {
                while let Some(batch) = crate::changes::next_changes(&mut changes, Vec::new).await {
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
            };
            tokio::select! {
                () = named => {}
                () = tokio::time::sleep(self.config.poll_interval) => {}
            }
        }
    }

    /// How many tasks run in this process now.
    #[cfg(test)]
    pub(crate) fn running_count(&self) -> usize {
        self.running().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_785_196_800_000), "2026-07-28T00:00:00.000Z");
    }

    #[tokio::test]
    async fn a_cancelled_task_stops_its_work_and_stays_cancelled() {
        let engine = Arc::new(TaskEngine::new(TasksConfig::new(), ListChanges::new()));
        let record = engine.create("me", "tools/call", None).await.expect("task");
        let cancel = CancellationToken::new();
        let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        struct Flag(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let flag = Flag(dropped.clone());
        engine.spawn(
            "me".into(),
            record.task_id.clone(),
            cancel.clone(),
            Box::pin(async move {
                let _flag = flag;
                let _ = started_tx.send(());
                std::future::pending::<()>().await;
                TaskUpdate::completed(Default::default())
            }),
        );
        started.await.expect("started");
        let cancelled = engine.cancel("me", &record.task_id).await.expect("cancel");
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        assert!(cancel.is_cancelled());
        let done = tokio::time::timeout(
            Duration::from_secs(5),
            engine.wait_terminal("me", &record.task_id),
        )
        .await
        .expect("in time")
        .expect("terminal");
        assert_eq!(done.status, TaskStatus::Cancelled);
        tokio::time::timeout(Duration::from_secs(5), async {
            while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the work was dropped");
        assert_eq!(engine.running_count(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn ttls_are_capped_and_defaulted() {
        let engine = TaskEngine::new(
            TasksConfig::new()
                .default_ttl(Duration::from_secs(10))
                .max_ttl(Duration::from_secs(60)),
            ListChanges::new(),
        );
        let default = engine.create("me", "tools/call", None).await.expect("task");
        assert_eq!(default.ttl_ms, Some(10_000));
        let capped = engine
            .create("me", "tools/call", Some(3_600_000))
            .await
            .expect("task");
        assert_eq!(capped.ttl_ms, Some(60_000));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(
            engine
                .store()
                .get("me", &default.task_id)
                .await
                .expect("get")
                .is_none(),
            "expired with its TTL"
        );
        assert!(
            engine
                .store()
                .get("me", &capped.task_id)
                .await
                .expect("get")
                .is_some()
        );
    }
}
