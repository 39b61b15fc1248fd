//! The tracing spans of MCP operations, shaped to the OpenTelemetry semantic
//! conventions for MCP (`docs/gen-ai/mcp.md` in
//! open-telemetry/semantic-conventions-genai): one home for both sides, so a
//! subscriber sees one shape whatever the transport or the peer.
//!
//! - [`request_span`] (`mcp.request`, kind server): an inbound request, served
//!   by the dispatcher (or a transport that calls a handler directly);
//! - [`outbound_span`] (`mcp.outbound`, kind client): a request this side
//!   sends, covering the wait for its answer.
//!
//! Both are `debug` spans: with no subscriber, or one filtering at `info`,
//! each costs a level check, and nothing below is parsed or formatted.
//!
//! Fields (the semantic-convention attribute names): `otel.name`
//! (`{mcp.method.name} {target}`, the target being the tool or prompt name),
//! `otel.kind`, `mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id`
//! (only the [`session_tag`]: a session id is a credential),
//! `mcp.protocol.version`, `gen_ai.operation.name` (`execute_tool` for
//! `tools/call`), `gen_ai.tool.name`, `gen_ai.prompt.name`,
//! `mcp.resource.uri`, `network.transport`, `network.protocol.name`, and on
//! failure `error.type`, `rpc.response.status_code` and `otel.status_code`.
//! Arguments and results are recorded only where the server's operator opted
//! in per field (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`:
//! `mcp_server::ServerBuilder::record_tool_arguments` and
//! `record_tool_results`); credentials never are.

use std::sync::Mutex;
use std::time::Instant;

use mcp_types::{ErrorObject, RawJson, RequestId};
use serde::Deserialize;
use tracing::field::Empty;

use crate::trace_context;
use crate::transport::{Headers, TransportContext};

/// An operation span with every semantic-convention field, the ones known
/// later `Empty`.
macro_rules! operation_span {
    ($name:literal, $kind:literal, $method:expr, $session:expr, $version:expr, $network:expr) => {
        tracing::debug_span!(
            $name,
            otel.name = $method,
            otel.kind = $kind,
            mcp.method.name = $method,
            jsonrpc.request.id = Empty,
            mcp.session.id = $session,
            mcp.protocol.version = $version,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            network.transport = $network,
            network.protocol.name = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.status_code = Empty,
        )
    };
}

/// The target of the SDK's operation spans (for subscriber filters).
pub const SPAN_TARGET: &str = "mcp_core::span";
/// The target of the event that ends a session (`mcp.session.side`,
/// `mcp.session.duration` in seconds, `network.transport`).
pub const SESSION_EVENT_TARGET: &str = "mcp_core::session";

/// The `error.type` of a `tools/call` whose result says `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";

/// The span an inbound request is served in (kind server).
///
/// The tool, prompt or resource the request targets is read from `params`
/// here (only when the span is recorded); the typed layer records the
/// protocol revision with [`record_protocol_version`]. When a trace context
/// propagator is installed ([`crate::set_propagator`]), the context the peer
/// sent in `params._meta` (or, on HTTP, the `traceparent` header) becomes
/// the span's parent.
pub fn request_span(
    method: &str,
    id: &RequestId,
    params: Option<&RawJson>,
    transport: &TransportContext,
    network: Option<&'static str>,
) -> tracing::Span {
    let span = operation_span!(
        "mcp.request",
        "server",
        method,
        transport.session_id.as_deref().map(session_tag),
        Empty,
        network
    );
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", tracing::field::display(id));
        // The name is the method alone: the server names the span after
        // its target only once it knows the target (`record_target_name`),
        // so names a client makes up never multiply span names.
        let meta = describe(&span, method, params, network, false);
        trace_context::adopt(&span, meta.as_ref(), &transport.headers);
    }
    span
}

/// The span of a request this side sends (kind client), covering the wait
/// for its answer; the dispatcher records `jsonrpc.request.id` once it is
/// chosen.
pub fn outbound_span(
    method: &str,
    params: Option<&RawJson>,
    headers: &Headers,
    network: Option<&'static str>,
) -> tracing::Span {
    outbound_span_at(method, params, headers, network, None)
}

/// [`outbound_span`] on a connection whose session settled on `revision`.
pub(crate) fn outbound_span_at(
    method: &str,
    params: Option<&RawJson>,
    headers: &Headers,
    network: Option<&'static str>,
    revision: Option<&str>,
) -> tracing::Span {
    let span = operation_span!(
        "mcp.outbound",
        "client",
        method,
        headers.get("mcp-session-id").map(session_tag),
        headers.get("mcp-protocol-version").or(revision),
        network
    );
    if !span.is_disabled() {
        // This side chose what it calls: its span is named after it.
        describe(&span, method, params, network, true);
    }
    span
}

/// Records the protocol revision a request is served or sent at.
pub fn record_protocol_version(span: &tracing::Span, revision: &str) {
    span.record("mcp.protocol.version", revision);
}

/// Records the arguments of a `tools/call` (`gen_ai.tool.call.arguments`,
/// JSON). Opt-in: arguments may carry personal data or secrets, so only call
/// this where the operator asked for it.
pub fn record_tool_arguments(span: &tracing::Span, arguments: &str) {
    span.record("gen_ai.tool.call.arguments", arguments);
}

/// Records the result of a `tools/call` (`gen_ai.tool.call.result`, JSON).
/// Opt-in, like [`record_tool_arguments`].
pub fn record_tool_result(span: &tracing::Span, result: &str) {
    span.record("gen_ai.tool.call.result", result);
}

/// Records a JSON-RPC error answer on an operation's span: `error.type` and
/// `rpc.response.status_code` are its code (the message may quote what the
/// peer sent, so it is not recorded).
pub fn record_error(span: &tracing::Span, error: &ErrorObject) {
    if span.is_disabled() {
        return;
    }
    let code = error.code.to_string();
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    span.record("otel.status_code", "error");
}

/// Records how an operation ended: a JSON-RPC error answer, or a
/// `tools/call` result with `isError: true` (`error.type` = [`TOOL_ERROR`]).
pub(crate) fn record_outcome(
    span: &tracing::Span,
    method: &str,
    outcome: Result<&RawJson, &ErrorObject>,
) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Err(error) => record_error(span, error),
        Ok(result) if method == "tools/call" => {
            #[derive(Deserialize)]
            struct Outcome {
                #[serde(rename = "isError", default)]
                is_error: bool,
            }
            if result.parse::<Outcome>().is_ok_and(|o| o.is_error) {
                record_failure(span, TOOL_ERROR);
            }
        }
        Ok(_) => {}
    }
}

/// Records a failure that is no JSON-RPC error (`tool_error`, `timeout`, a
/// transport failure ...) as the span's `error.type`.
pub fn record_failure(span: &tracing::Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
}

/// The part of a session id that logs and spans may show: its first 8
/// characters. The whole id is a bearer credential for the session, so it
/// never appears in telemetry.
pub fn session_tag(session_id: &str) -> &str {
    session_id.get(..8).unwrap_or(session_id)
}

/// What a span needs from the params: the target and `_meta`. Everything
/// else (arguments above all) is skipped unread.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<trace_context::MetaContext>,
}

/// Names `span` after the tool or prompt its request targets
/// (`tools/call get_weather`): on a served request, call it once the
/// target is known to exist, so span names stay a bounded set whatever
/// names clients send.
pub fn record_target_name(span: &tracing::Span, method: &str, target: &str) {
    if span.is_disabled() {
        return;
    }
    let name = format!("{method} {target}");
    span.record("otel.name", name.as_str());
    // The bridge reads `otel.name` only until the span has started (it
    // starts when first entered); past that the span is renamed directly.
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        span.context().span().update_name(name);
    }
}

/// Records the target and the network attributes, and with `name_target`
/// names the span after the target; answers the params' `_meta` for trace
/// context.
fn describe(
    span: &tracing::Span,
    method: &str,
    params: Option<&RawJson>,
    network: Option<&'static str>,
    name_target: bool,
) -> Option<trace_context::MetaContext> {
    if network == Some("tcp") {
        span.record("network.protocol.name", "http");
    }
    let probe = params.and_then(|p| p.parse::<Probe>().ok())?;
    let target = match method {
        "tools/call" => {
            span.record("gen_ai.operation.name", "execute_tool");
            probe.name.inspect(|name| {
                span.record("gen_ai.tool.name", name.as_str());
            })
        }
        "prompts/get" => probe.name.inspect(|name| {
            span.record("gen_ai.prompt.name", name.as_str());
        }),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            if let Some(uri) = &probe.uri {
                span.record("mcp.resource.uri", uri.as_str());
            }
            // A URI is high-cardinality: never part of the span name.
            None
        }
        _ => None,
    };
    if let (Some(target), true) = (&target, name_target) {
        record_target_name(span, method, target);
    }
    probe.meta
}

/// Which side of a session this end of a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSide {
    /// The side that sent `initialize`.
    Client,
    /// The side that answered it.
    Server,
}

/// When a handshake-era session began, on which side, and at which
/// revision, so its requests' spans and its end can say so
/// (`mcp.{client,server}.session.duration`). A connection becomes a session
/// when `initialize` is sent (client) or received (server).
#[derive(Debug, Default)]
pub(crate) struct SessionClock {
    started: Mutex<Option<(&'static str, Instant)>>,
    version: std::sync::OnceLock<Box<str>>,
}

impl SessionClock {
    /// Starts the clock once, for `side`.
    pub(crate) fn start(&self, side: SessionSide) {
        let side = match side {
            SessionSide::Client => "client",
            SessionSide::Server => "server",
        };
        let mut clock = self.started.lock().unwrap_or_else(|p| p.into_inner());
        clock.get_or_insert_with(|| (side, Instant::now()));
    }

    /// Notes the revision the session settled on (the first one counts).
    pub(crate) fn settle(&self, revision: &str) {
        let _ = self.version.set(revision.into());
    }

    /// The session's revision, once settled.
    pub(crate) fn version(&self) -> Option<&str> {
        self.version.get().map(|v| &**v)
    }

    /// Reports the session's end, if one began.
    pub(crate) fn end(&self, network: Option<&'static str>) {
        let started = self
            .started
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((side, started)) = started {
            tracing::event!(
                target: SESSION_EVENT_TARGET,
                tracing::Level::DEBUG,
                mcp.session.side = side,
                mcp.session.duration = started.elapsed().as_secs_f64(),
                mcp.protocol.version = self.version(),
                network.transport = network,
                "mcp session ended"
            );
        }
    }
}
