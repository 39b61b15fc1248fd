//! The MCP JSON-RPC dispatcher, method-agnostic: request correlation,
//! cancellation, progress, timeouts and concurrency, over any [`Transport`].
//!
//! Most users reach this through `mcp-client` or `mcp-server`. A connection is
//! started with [`Connection::start`] over a transport and a [`Handler`] for
//! inbound traffic; its [`Peer`] sends requests and notifications.
//!
//! ```
//! use mcp_core::{Connection, DispatcherConfig, Handler, IncomingNotification,
//!     IncomingRequest, MemoryTransport, NotificationContext, RequestContext, RequestOptions};
//! use mcp_types::{ErrorObject, RawJson};
//!
//! struct Echo;
//! impl Handler for Echo {
//!     async fn handle_request(&self, request: IncomingRequest, _: RequestContext)
//!         -> Result<RawJson, ErrorObject> {
//!         Ok(request.params.unwrap_or_else(RawJson::empty_object))
//!     }
//!     async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (a, b) = MemoryTransport::pair(16);
//! let server = Connection::start(a, Echo, DispatcherConfig::default());
//! let client = Connection::start(b, Echo, DispatcherConfig::default());
//! let params = RawJson::from_string(r#"{"x":1}"#.into()).unwrap();
//! let answer = client.peer().request("echo", Some(params), RequestOptions::new()).await.unwrap();
//! assert_eq!(answer.get(), r#"{"x":1}"#);
//! client.shutdown().await;
//! server.wait().await;
//! # });
//! ```

mod dispatcher;
mod error;
mod id_scan;
mod inbound;
#[cfg(feature = "rate-limit")]
pub mod limit;
mod memory;
mod pending;
mod span;
mod transport;

pub use dispatcher::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, Peer, Progress, ProgressCallback, RequestContext, RequestOptions,
    internal_error,
};
pub use error::{BoxError, Error, TransportError};
pub use id_scan::{ID_SCAN_PREFIX, scan_id};
pub use inbound::{Direct, DirectAnswer, DirectRun, RequestSink};
pub use memory::{MemoryReceiver, MemorySender, MemoryTransport};
pub use span::{request_span, session_tag};
pub use tokio_util::sync::CancellationToken;
pub use transport::{
    Headers, Inbound, Outbound, StreamControl, Transport, TransportContext, TransportReceiver,
    TransportSender,
};
