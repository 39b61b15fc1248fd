#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod contract;
mod error;
mod host;
mod record;
mod store;

pub use error::TaskStoreError;
pub use host::{
    DEFAULT_MAX_TASK_TTL, DEFAULT_POLL_INTERVAL, DEFAULT_TASK_PAGE_SIZE, DEFAULT_TASK_TTL,
    LocalTaskChanges, TaskChangeListener, TaskChanges, TaskHost, TasksConfig, Work, to_object,
};
pub use record::{
    TaskOutcome, TaskRecord, TaskUpdate, apply, can_move, duration_ms, iso8601, now_ms,
};
pub use store::{
    DEFAULT_MAX_TASKS, InMemoryTaskStore, StoreFuture, TaskPage, TaskStore, cursor_after, cursor_at,
};
