//! Transports for MCP. Most users reach these through `mcp-server` or
//! `mcp-client`. One feature per transport: `stdio` (default); streamable
//! HTTP follows.
//!
//! - [`LineTransport`]: newline-delimited JSON over any byte stream.
//! - [`stdio::ServerCommand`]: spawn a server and talk over its pipes, with an
//!   orderly shutdown that leaves no process behind.
//! - [`stdio::stdio_server`]: serve on this process's stdin and stdout.

mod error;
#[cfg(feature = "stdio")]
mod framing;
#[cfg(feature = "stdio")]
pub mod stdio;

#[cfg(any(feature = "http-server", feature = "http-client"))]
pub mod http;

pub use error::Error;
#[cfg(feature = "stdio")]
pub use framing::{DEFAULT_MAX_LINE, LineReceiver, LineSender, LineTransport};
