#![doc = include_str!("../README.md")]
#![doc = document_features::document_features!()]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod answer;
pub mod apps;
pub mod ask;
mod asking;
mod builder;
mod catalog;
mod changes;
mod client_tasks;
mod entries;
mod error;
pub mod extension;
mod extract;
pub mod handler;
mod handler_error;
// Entry points for `fuzz/` only: not API, hidden from the docs.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod in_memory;
pub mod prelude;
mod registration;
mod registry;
mod request_state;
mod runner;
mod server;
mod session;
pub mod skills;
mod states;
pub mod tasks;
mod tool_call;
mod tool_io;
mod uri_template;

pub use answer::{
    Blob, IntoCompletionResult, IntoPromptResult, IntoResourceResult, ResourceRequest,
};
pub use ask::Elicitation;
pub use builder::ServerBuilder;
pub use catalog::Catalog;
pub use changes::ListChanges;
pub use error::Error;
pub use extract::{Args, Meta, State, Uri, Variables};
pub use handler_error::{CompletionError, PromptError, ResourceError};
pub use in_memory::{InMemorySender, InMemoryTransport};
/// Cancelled when the client cancels the request being served (an
/// extractor, see [`handler`]).
pub use mcp_core::CancellationToken;
pub use registration::{Registrations, ToolDefinition};
pub use registry::{DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_PAGE_SIZE};
#[cfg(any(feature = "stdio", feature = "http"))]
pub use server::shutdown_signal;
pub use server::{Server, ServerConnection};
pub use session::{Context, ServerSession};
pub use tasks::{InMemoryTaskStore, TaskStore, TasksConfig};

pub use tool_io::{
    Answer, InputRequired, IntoToolResult, Json, SchemaError, ToolError, empty_input_schema,
    input_schema_for, output_schema_for, parse_arguments,
};
pub use uri_template::{UriTemplate, UriTemplateError};

/// Makes an `async fn` a tool (feature `macros`): its name is the tool's,
/// its doc comment the description; `#[tool]` on `async fn add` generates
/// `fn add_tool() -> ToolDefinition`, which
/// [`ServerBuilder::register`] takes. `#[tool(name = "...", description =
/// "...")]` overrides either.
///
/// # Examples
/// ```
/// use mcp_server::{Args, Server, tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
///
/// /// Adds two integers.
/// #[tool]
/// async fn add(Args(add): Args<Add>) -> String {
///     (add.a + add.b).to_string()
/// }
///
/// let server = Server::builder("calculator", "1.0.0").register(add_tool()).build().unwrap();
/// assert_eq!(server.tools()[0].name, "add");
/// assert_eq!(server.tools()[0].description.as_deref(), Some("Adds two integers."));
/// ```
#[cfg(feature = "macros")]
pub use mcp_server_macros::tool;

/// The OpenTelemetry bridge (feature `otel`): [`otel::init_otlp`] exports
/// the SDK's spans and MCP metrics over OTLP.
#[cfg(feature = "otel")]
pub use mcp_core::otel;
/// The wire types of every protocol revision (the `mcp-types` crate),
/// documented here too, so these docs need no others.
#[doc(inline)]
pub use mcp_types as types;
pub use mcp_types::{
    CallToolResult, ContentBlock, LoggingLevel, Prompt, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role, Tool,
};
/// The schemars version tool argument types must derive `JsonSchema` with.
pub use schemars;

/// Per-client rate and concurrency limits (feature `rate-limit`): give a
/// shared [`limit::Limiter`] to [`DispatcherConfig::with_rate_limit`](mcp_core::DispatcherConfig::with_rate_limit)
/// (through [`ServerBuilder::dispatcher_config`]); the dispatcher applies it
/// to every request, over any transport (HTTP answers a refused request
/// `429` with `Retry-After`).
#[cfg(feature = "rate-limit")]
pub use mcp_core::limit;
#[cfg(feature = "http")]
pub use mcp_transport::http::{
    CorsConfig, HttpServerConfig, ServeConfig, ShutdownHandle, StreamableHttpService,
};
