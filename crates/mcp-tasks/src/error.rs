//! Why a task store refused an operation: [`TaskStoreError`], the one
//! error of this crate.

use mcp_types::{ErrorObject, TaskStatus};

/// Why a store refused an operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No such task for this owner (never created, expired or evicted).
    #[error("no task `{task_id}`: it does not exist or has expired")]
    NotFound {
        /// The id asked for.
        task_id: String,
    },
    /// The state machine forbids the move (a terminal task never changes).
    #[error("task `{task_id}` is {from:?} and cannot become {to:?}")]
    InvalidTransition {
        /// The task.
        task_id: String,
        /// Its status.
        from: TaskStatus,
        /// The status asked for.
        to: TaskStatus,
    },
    /// The task is no longer in the status the update expected.
    #[error("task `{task_id}` is {found:?}, not {expected:?}; it changed meanwhile")]
    Conflict {
        /// The task.
        task_id: String,
        /// The status the update expected.
        expected: TaskStatus,
        /// The status it has.
        found: TaskStatus,
    },
    /// The store holds as many live tasks as it may.
    #[error("the task store is full ({limit} live tasks); raise `{setting}` or shorten task TTLs")]
    Full {
        /// The bound.
        limit: usize,
        /// The setting that raises it.
        setting: &'static str,
    },
    /// The backend failed (a shared store's connection, ...).
    #[error("the task store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl TaskStoreError {
    /// No task `task_id` for this owner.
    pub fn not_found(task_id: &str) -> Self {
        Self::NotFound {
            task_id: task_id.to_owned(),
        }
    }

    /// Room for one more task when `live` tasks are kept and `limit` is the
    /// bound: else [`Full`](Self::Full), logged at `warn` with the
    /// `setting` that raises the bound.
    ///
    /// # Errors
    /// [`Full`](Self::Full) when `live` reached `limit`.
    pub fn check_room(live: usize, limit: usize, setting: &'static str) -> Result<(), Self> {
        if live < limit {
            return Ok(());
        }
        tracing::warn!(
            limit,
            "task store full; raise {setting} or shorten task TTLs"
        );
        Err(Self::Full { limit, setting })
    }

    /// The refusal as the JSON-RPC error the requester gets: a task that
    /// does not exist or cannot move so is the request's fault (`invalid
    /// params`), anything else the store's (`internal error`).
    pub fn into_error_object(self) -> ErrorObject {
        match self {
            Self::NotFound { .. } | Self::InvalidTransition { .. } => {
                ErrorObject::invalid_params(self.to_string())
            }
            other => ErrorObject::internal_error(other.to_string()),
        }
    }
}
