//! Drive MCP servers from a host: connect over stdio, in memory or any
//! transport, initialize, and call tools, read resources and get prompts
//! with typed requests and results.
//!
//! - [`Client`]: connect and initialize in one call
//!   ([`connect_stdio`](Client::connect_stdio),
//!   [`connect_in_process`](Client::connect_in_process),
//!   [`connect`](Client::connect) over any transport).
//! - [`ClientSession`]: the typed calls, usable on its own to drive the handshake.
//! - [`ClientConfig`]: how the client presents itself, and the callbacks that
//!   answer the server's sampling, elicitation and roots requests and
//!   receive its log messages and notifications.
//! - [`ClientSessionGroup`]: several servers under one set of names.
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
//! let client = Client::connect_in_process(&server, ClientConfig::new("host", "1.0.0")).await?;
//! let result = client.call_tool("echo", serde_json::json!({ "text": "hi" })).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! client.close().await?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "auth")]
pub mod auth;
mod client;
mod config;
mod error;
mod group;
mod session;
mod stateless;

pub use client::Client;
pub use config::{ClientConfig, RequestInfo};
pub use error::Error;
pub use group::{ClientSessionGroup, ServerId};
pub use mcp_core::{Progress, RequestOptions};
pub use session::{ClientSession, Negotiated};
