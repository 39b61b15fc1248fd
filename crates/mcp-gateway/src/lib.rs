//! Serve any set of MCP servers as one.
//!
//! A [`Gateway`] connects to each upstream server of its
//! [`GatewayConfig`] (a process over stdio, or a streamable HTTP
//! endpoint, in either protocol era), keeps each one alive with a task of
//! its own (a process that dies is restarted with backoff, its last stderr
//! lines logged; an HTTP session the server forgets is started anew at
//! once, not at the next call: subscriptions made through the gateway and
//! the log level set again, the lists read again), merges their tools,
//! prompts, resources and templates into one
//! catalog ([`naming`]: a prefix per upstream by default, collisions
//! refused), and routes each request to the upstream that serves it.
//!
//! The config reads the `mcpServers` JSON desktop hosts use:
//!
//! ```
//! let config = mcp_gateway::GatewayConfig::from_json(r#"{"mcpServers": {
//!     "files": {"command": "mcp-files", "args": ["--root", "."]},
//!     "search": {"url": "http://127.0.0.1:8080/mcp"}
//! }}"#)?;
//! # let _ = config;
//! # Ok::<(), mcp_gateway::Error>(())
//! ```
//!
//! Tasks pass through where both sides speak them. The gateway's
//! [`server`](Gateway::server) runs tools as tasks in both eras
//! ([`GatewayBuilder::tasks`]); each tool is advertised with the
//! `execution.taskSupport` its upstream gives it. A client's task of a tool
//! whose upstream serves task-augmented `tools/call` (2025-11-25) or the
//! tasks extension (2026-07-28) starts the task upstream, follows it at the
//! upstream's polling interval and keeps its result; cancelling the
//! client's task cancels the upstream's.
//! For any other upstream the gateway's task calls the tool as any call.
//! The client polls, lists and cancels only its own tasks, under the
//! gateway's ids: an upstream's task ids never leave the gateway, and at
//! most [`Limits::max_tasks`] upstream tasks are followed at once. An
//! upstream lost while it runs a task fails the client's task
//! ([`Error::TaskLost`]).
//!
//! Secrets stay put: an upstream's environment values and header values
//! appear in no `Debug` output, log line or error, and are sent only to
//! that upstream.

mod asks;
mod board;
mod config;
mod downstream;
mod error;
mod events;
mod follow;
mod gateway;
mod lists;
pub mod naming;
mod router;
mod serving;
mod stderr;
mod supervisor;
mod task_table;
mod tasks;
mod upstream;

pub use board::{Phase, UpstreamStatus};
pub use config::{
    EraPreference, GatewayConfig, Limits, MAX_UPSTREAM_NAME, UpstreamConfig, UpstreamTransport,
};
pub use error::Error;
pub use events::GatewayEvent;
pub use gateway::{DEFAULT_EVENT_QUEUE, Gateway, GatewayBuilder};
pub use lists::Lists;
pub use serving::GatewayHttpService;
