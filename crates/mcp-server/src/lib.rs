#![doc = include_str!("../README.md")]
#![doc = document_features::document_features!()]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod answer;
pub mod apps;
pub mod ask;
mod builder;
mod changes;
mod client_tasks;
mod error;
pub mod extension;
// Entry points for `fuzz/` only: not API, hidden from the docs.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod in_memory;
pub mod prelude;
mod registry;
mod request_state;
mod runner;
mod server;
mod session;
pub mod skills;
pub mod tasks;
mod tool_io;
mod uri_template;

pub use answer::{Blob, IntoPromptResult, IntoResourceContents, NoArguments, ResourceRequest};
pub use ask::Elicitation;
pub use builder::ServerBuilder;
pub use changes::ListChanges;
pub use error::Error;
pub use in_memory::{InMemorySender, InMemoryTransport};
pub use registry::DEFAULT_PAGE_SIZE;
pub use server::{Server, ServerConnection};
pub use session::{Context, ServerSession};
pub use tasks::{InMemoryTaskStore, TaskStore, TasksConfig};

pub use tool_io::{
    Answer, InputRequired, IntoToolResult, Json, SchemaError, ToolError, empty_input_schema,
    input_schema_for, output_schema_for, parse_arguments,
};
pub use uri_template::{UriTemplate, UriTemplateError};

/// The OpenTelemetry bridge (feature `otel`): [`otel::init_otlp`] exports
/// the SDK's spans and MCP metrics over OTLP.
#[cfg(feature = "otel")]
pub use mcp_core::otel;
/// The wire types of every protocol revision (the `mcp-types` crate).
pub use mcp_types as types;
pub use mcp_types::{
    CallToolResult, ContentBlock, LoggingLevel, Prompt, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role, Tool,
};
/// The schemars version tool argument types must derive `JsonSchema` with.
pub use schemars;

/// Per-client rate and concurrency limits (feature `rate-limit`): give a
/// shared [`limit::Limiter`] to [`DispatcherConfig::with_rate_limit`](mcp_core::DispatcherConfig::with_rate_limit)
/// for every connection, or wrap the HTTP endpoint in
/// [`RateLimitLayer`].
#[cfg(feature = "rate-limit")]
pub use mcp_core::limit;
#[cfg(all(feature = "rate-limit", feature = "http"))]
pub use mcp_transport::http::RateLimitLayer;
#[cfg(feature = "http")]
pub use mcp_transport::http::{
    CorsConfig, HttpServerConfig, ServeConfig, ShutdownHandle, StreamableHttpService,
};
