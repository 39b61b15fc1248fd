#![doc = include_str!("../README.md")]
#![doc = document_features::document_features!()]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
mod cache;
mod callbacks;
mod calls;
mod client;
mod config;
mod error;
mod events;
pub mod extension;
mod group;
mod hosted;
mod input_rounds;
mod negotiate;
mod options;
mod server_id;
mod session;
mod settings;
mod skill_mismatch;
pub mod skills;
mod start;
mod stateless;
mod task_states;
mod tasks;
mod validation;

pub use client::Client;
pub use config::ClientConfig;
pub use error::{Error, ListLimit};
pub use events::{Fault, Restart, RestartReason, SessionEvent};
#[cfg(any(feature = "stdio", feature = "http"))]
pub use group::ServerParams;
pub use group::{ClientSessionGroup, ListingFailure};
pub use hosted::{
    DEFAULT_HOSTED_PAGE_SIZE, DEFAULT_HOSTED_POLL_INTERVAL, DEFAULT_HOSTED_TASK_TTL,
    DEFAULT_MAX_HOSTED_TASK_TTL, HostedTasks,
};
pub use mcp_core::Progress;
/// Pacing of reconnections and session restarts.
pub use mcp_core::backoff::BackoffConfig;
/// The OpenTelemetry bridge (feature `otel`): [`otel::init_otlp`] exports
/// the SDK's spans and MCP metrics over OTLP.
#[cfg(feature = "otel")]
pub use mcp_core::otel;
/// The wire types of every protocol revision (the `mcp-types` crate).
pub use mcp_types as types;
pub use negotiate::Negotiated;
pub use options::RequestOptions;
pub use server_id::ServerId;
pub use session::{ClientSession, RequestInfo};
pub use settings::{ListLimits, Negotiation, NotificationInfo};
pub use task_states::{DEFAULT_TASK_STATUS_QUEUE, TaskState};
pub use tasks::{
    DEFAULT_TASK_POLL_INTERVAL, MAX_TASK_POLL_INTERVAL, MIN_TASK_POLL_INTERVAL, TaskStart,
    TaskWatch, poll_interval,
};

#[cfg(feature = "http")]
pub use mcp_transport::http::{HttpClientConfig, LegacySseClient, StreamableHttpClient};
#[cfg(feature = "stdio")]
pub use mcp_transport::stdio::{ChildProcess, ServerCommand};
