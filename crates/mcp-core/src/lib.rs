#![doc = include_str!("../README.md")]
#![doc = document_features::document_features!()]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backoff;
mod config;
mod connection;
mod dispatch;
mod dispatcher;
mod engine;
mod error;
mod fault;
mod handler;
#[cfg(feature = "rate-limit")]
pub mod limit;
mod memory;
mod options;
mod peer;
mod pending;
mod span;
mod trace_context;
mod transport;

#[cfg(feature = "otel")]
pub mod otel;

pub use config::DispatcherConfig;
pub use connection::Connection;
pub use dispatcher::Dispatcher;
pub use engine::{Answered, Call};
pub use error::{BoxError, Error, TransportError};
pub use fault::Fault;
pub use handler::{
    BoxFuture, Handler, IncomingNotification, IncomingRequest, NotificationContext, RequestContext,
    internal_error,
};
pub use memory::{MemoryReceiver, MemorySender, MemoryTransport};
pub use options::{Progress, ProgressCallback, SendOptions};
pub use peer::{Outlet, Peer};
pub use span::{
    SESSION_EVENT_TARGET, SPAN_TARGET, SessionSide, TOOL_ERROR, outbound_span, record_error,
    record_failure, record_protocol_version, record_target_name, record_tool_arguments,
    record_tool_result, request_span, session_tag,
};
pub use tokio_util::sync::CancellationToken;
pub use trace_context::{Propagator, TRACEPARENT, TRACESTATE, TraceContext, set_propagator};
pub use transport::{
    HeaderSource, Headers, Inbound, Outbound, StreamControl, Transport, TransportContext,
    TransportReceiver, TransportSender,
};
