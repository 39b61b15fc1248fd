//! Build MCP servers: register tools, resources and prompts, then serve them
//! over stdio, streamable HTTP or in memory, in either protocol era.
//!
//! Start with [`Server::builder`] (or `use mcp_server::prelude::*`):
//!
//! - Tools: [`ServerBuilder::tool`] takes a handler whose argument type gives
//!   the input schema (derive `serde::Deserialize` and
//!   [`schemars::JsonSchema`], schemars 1.x, re-exported here as
//!   [`schemars`]); return anything [`IntoToolResult`] (text, [`Json<T>`] for
//!   structured output, `Result<_, ToolError>` with `?` on any error).
//! - Resources and templates: [`ServerBuilder::resource`],
//!   [`ServerBuilder::resource_template`] (read typed variables with
//!   [`ResourceRequest::variables_as`]); prompts ([`ServerBuilder::prompt`]) and
//!   completions; they fail with [`ToolError`] like tools.
//! - Shared state: [`ServerBuilder::with_state`] and [`Context::state`].
//! - Asking the client (elicitation, sampling, roots) the same way in either
//!   era: see [`ask`] and [`Context::elicit`].
//! - Serving: [`Server::serve_stdio`], [`Server::serve_http`] or
//!   [`Server::streamable_http_service`] to mount in your own hyper or axum
//!   app (feature `http`), [`Server::in_memory`] for tests and embedding,
//!   [`Server::serve`] over any [`Transport`](mcp_core::Transport).
//!
//! # Features
//! - `stdio` (default): [`Server::serve_stdio`] on this process's stdin/stdout.
//! - `http`: streamable HTTP ([`HttpServerConfig`], [`ServeConfig`],
//!   [`StreamableHttpService`]).
//! - `auth`: OAuth bearer tokens in front of the HTTP endpoint
//!   (`mcp_transport::http::BearerGuard`).
//!
//! # Examples
//! ```no_run
//! use mcp_server::{Context, Server};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Greet {
//!     /// Whom to greet.
//!     name: String,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), mcp_server::Error> {
//!     Server::builder("greeter", "1.0.0")
//!         .tool("greet", "Greets someone", |args: Greet, _cx: Context| async move {
//!             format!("Hello, {}!", args.name)
//!         })
//!         .build()?
//!         .serve_stdio()
//!         .await
//! }
//! ```

mod answer;
pub mod ask;
mod builder;
mod changes;
mod error;
pub mod extension;
mod in_memory;
pub mod prelude;
mod registry;
mod request_state;
mod runner;
mod server;
mod session;
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

pub use tool_io::{
    Answer, InputRequired, IntoToolResult, Json, SchemaError, ToolError, empty_input_schema,
    input_schema_for, output_schema_for, parse_arguments,
};
pub use uri_template::{UriTemplate, UriTemplateError};

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
/// [`RateLimitLayer`](mcp_transport::http::RateLimitLayer).
#[cfg(feature = "rate-limit")]
pub use mcp_core::limit;
#[cfg(all(feature = "rate-limit", feature = "http"))]
pub use mcp_transport::http::RateLimitLayer;
#[cfg(feature = "http")]
pub use mcp_transport::http::{
    HttpServerConfig, ServeConfig, ShutdownHandle, StreamableHttpService,
};
