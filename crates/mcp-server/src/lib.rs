//! Build MCP servers: register tools, resources and prompts, then serve them
//! over stdio, streamable HTTP or in memory.
//!
//! - [`input_schema_for`], [`parse_arguments`], [`IntoToolResult`], [`Json`]:
//!   a tool's arguments and results from plain Rust types.
//! - [`UriTemplate`]: RFC 6570 templates for resource templates, expanded and
//!   matched back to their variables.
//! - [`Server`] / [`ServerBuilder`]: what a server offers; [`Server::serve`]
//!   runs it over any [`Transport`](mcp_core::Transport), and
//!   `Server::serve_stdio` over this process's stdin and stdout.
//! - [`Context`] / [`ServerSession`]: inside a handler, talk back to the
//!   client: log, report progress, sample, elicit, list roots.
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
mod in_memory;
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
