//! Drive MCP servers from a host: connect over stdio, HTTP or any transport,
//! negotiate the protocol era, and call tools, read resources and get prompts
//! with typed requests and results.
//!
//! - [`Client`]: connect and negotiate in one call
//!   ([`connect_stdio`](Client::connect_stdio),
//!   [`connect_http`](Client::connect_http),
//!   [`connect`](Client::connect) over any transport, such as an
//!   in-process server's `mcp_server::Server::in_memory()`).
//! - [`ClientSession`]: the typed calls, usable on its own to drive
//!   negotiation yourself.
//! - [`ClientConfig`]: how the client presents itself, which era it
//!   negotiates ([`Negotiation`]), and the callbacks that answer the
//!   server's sampling, elicitation and roots requests (in either era) and
//!   receive its log messages and notifications.
//! - [`RequestOptions`]: per-call timeout, progress, log level and headers.
//! - [`ClientSessionGroup`]: several servers under one set of names.
//!
//! # Features
//! - `stdio` (default): spawn a server process ([`ServerCommand`]).
//! - `http` (default): streamable HTTP and the 2024-11-05 HTTP+SSE
//!   transport ([`HttpClientConfig`]), on hyper with rustls.
//! - `auth` (default): OAuth 2.1 for protected HTTP servers ([`auth`]).
//! - `output-validation` (default): check tool results against their
//!   output schema (pulls in `jsonschema`).
//!
//! # Examples
//! ```
//! use mcp_client::{Client, ClientConfig};
//! use mcp_server::{Context, Server};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("echo", "1.0.0")
//!     .tool("echo", "Echoes its input", |args: Echo, _cx: Context| async move { args.text })
//!     .build()?;
//! let client = Client::connect(server.in_memory(), ClientConfig::new("host", "1.0.0")).await?;
//! let result = client.call_tool("echo", serde_json::json!({ "text": "hi" })).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! client.close().await?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "auth")]
pub mod auth;
mod cache;
mod callbacks;
mod calls;
mod client;
mod config;
mod error;
pub mod extension;
mod group;
mod input_rounds;
mod negotiate;
mod options;
mod session;
mod stateless;
mod validation;

pub use client::Client;
pub use config::{ClientConfig, RequestInfo};
pub use error::Error;
pub use group::{ClientSessionGroup, ServerId};
pub use mcp_core::Progress;
/// The wire types of every protocol revision (the `mcp-types` crate).
pub use mcp_types as types;
pub use negotiate::{Negotiated, Negotiation};
pub use options::RequestOptions;
pub use session::ClientSession;

#[cfg(feature = "http")]
pub use mcp_transport::http::{HttpClientConfig, LegacySseClient, StreamableHttpClient};
#[cfg(feature = "stdio")]
pub use mcp_transport::stdio::{ChildProcess, ServerCommand};
