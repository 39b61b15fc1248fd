//! The tracing span every inbound request runs in, shared by every path that
//! serves a request (the dispatcher, and transports that call a handler
//! directly), so a subscriber sees one shape whatever the transport.

use mcp_types::RequestId;
use tracing::field::Empty;

use crate::transport::TransportContext;

/// The span an inbound request is served in.
///
/// Fields: `method`, `id`, `session` (the [`session_tag`] of the transport
/// session, when there is one) are set here; `revision` (the protocol revision the request was served
/// at) and `name` (the tool, prompt or resource it targets) start empty and
/// are recorded by the typed layer with
/// `tracing::Span::current().record("name", ...)`. Never record arguments,
/// results or credentials in it.
///
/// The span is at `debug` level: with no subscriber, or one filtering at
/// `info`, it costs a level check.
pub fn request_span(method: &str, id: &RequestId, transport: &TransportContext) -> tracing::Span {
    tracing::debug_span!(
        "mcp.request",
        method,
        id = %id,
        session = transport.session_id.as_deref().map(session_tag),
        revision = Empty,
        name = Empty,
    )
}

/// The part of a session id that logs and spans may show: its first 8
/// characters. The whole id is a bearer credential for the session, so it
/// never appears in telemetry.
pub fn session_tag(session_id: &str) -> &str {
    session_id.get(..8).unwrap_or(session_id)
}
