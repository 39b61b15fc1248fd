//! Streamable HTTP (feature `http-server`).
//!
//! [`StreamableHttpService`] is a `tower::Service` for the MCP endpoint:
//! sessions with `Mcp-Session-Id`, POST answered with JSON or SSE, the GET
//! stream, DELETE, resumption with `Last-Event-ID` from an [`EventStore`],
//! Host/Origin checks against DNS rebinding and a body size limit.
//! [`serve`] runs it on a TCP listener with hyper.

mod event_store;
mod server;
mod sse;

pub use event_store::{EventStore, InMemoryEventStore};
pub use server::{
    HttpBody, HttpServerConfig, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER, SessionReceiver,
    SessionSender, SessionTransport, StreamableHttpService, serve,
};
