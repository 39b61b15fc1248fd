//! Trace context across peers (SEP-414): W3C `traceparent`/`tracestate` in
//! `params._meta` of every request and notification sent, and, on the
//! receiving side, the parent of the span the request is served in (on HTTP
//! the standard `traceparent`/`tracestate` headers count too, when `_meta`
//! carries none).
//!
//! This crate does not depend on OpenTelemetry: a [`Propagator`] installed
//! once with [`set_propagator`] reads and sets the context of a `tracing`
//! span (the `otel` feature installs one built on `tracing-opentelemetry`).
//! With none installed, propagation is one atomic load per message and
//! nothing is parsed or written.

use std::sync::OnceLock;

use mcp_types::{JsonObject, RawJson};
use serde_json::Value;

use crate::transport::Headers;

/// The `_meta` key and HTTP header of the W3C trace parent and trace state
/// (SEP-414 writes them unprefixed): the protocol's names, from
/// [`mcp_types::meta`], so the reserved `_meta` keys and the propagated ones
/// cannot drift apart.
pub use mcp_types::meta::{TRACEPARENT, TRACESTATE};

/// Longest `tracestate` carried (the W3C limit is 32 members of at most 256
/// characters; a longer one is dropped rather than cut, as the spec allows).
const MAX_TRACESTATE: usize = 8 * 1024;

/// A W3C trace context: a validated `traceparent` and its `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// Parses a `traceparent` (`00-<32 hex trace id>-<16 hex parent id>-<2
    /// hex flags>`) and an optional `tracestate`; `None` when the parent is
    /// malformed, an all-zero id, or version `ff`. A future version's longer
    /// value keeps its first four fields, as W3C Trace Context asks.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let value = traceparent.trim();
        let bytes = value.as_bytes();
        if bytes.len() < 55 || (bytes.len() > 55 && (value.starts_with("00") || bytes[55] != b'-'))
        {
            return None;
        }
        let mut parts = value[..55].split('-');
        let (version, trace_id, parent_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, n: usize| {
            s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let valid = hex(version, 2)
            && version != "ff"
            && hex(trace_id, 32)
            && trace_id.bytes().any(|b| b != b'0')
            && hex(parent_id, 16)
            && parent_id.bytes().any(|b| b != b'0')
            && hex(flags, 2);
        valid.then(|| Self {
            traceparent: value[..55].to_owned(),
            tracestate: tracestate
                .map(str::trim)
                .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
                .map(str::to_owned),
        })
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when there is one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id (32 lowercase hex digits).
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The id of the span that sent the message (16 lowercase hex digits).
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the sender sampled the trace.
    pub fn is_sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|flags| flags & 1 == 1)
    }

    /// The context carried in `params._meta`, if any.
    pub fn from_meta(meta: &JsonObject) -> Option<Self> {
        let parent = meta.get(TRACEPARENT)?.as_str()?;
        Self::parse(parent, meta.get(TRACESTATE).and_then(Value::as_str))
    }

    /// The context carried in the standard HTTP headers, if any.
    pub fn from_headers(headers: &Headers) -> Option<Self> {
        Self::parse(headers.get(TRACEPARENT)?, headers.get(TRACESTATE))
    }
}

/// Reads and sets the trace context of `tracing` spans; installed once per
/// process with [`set_propagator`].
pub trait Propagator: Send + Sync + 'static {
    /// The context to send to the peer for work done inside `span`, if the
    /// span has one.
    fn current(&self, span: &tracing::Span) -> Option<TraceContext>;
    /// Makes `remote` (what the peer sent) the parent of `span`, which has
    /// not been entered yet.
    fn adopt(&self, span: &tracing::Span, remote: &TraceContext);
}

static PROPAGATOR: OnceLock<Box<dyn Propagator>> = OnceLock::new();

/// Installs the process-wide propagator; `false` when one already is (the
/// first one stays).
pub fn set_propagator(propagator: impl Propagator) -> bool {
    PROPAGATOR.set(Box::new(propagator)).is_ok()
}

/// The propagator, when one is installed and `span` is recorded at all.
fn active(span: &tracing::Span) -> Option<&'static dyn Propagator> {
    let propagator = PROPAGATOR.get()?;
    (!span.is_disabled()).then_some(propagator.as_ref())
}

/// The context to send for work inside `span`, when propagation is on.
pub(crate) fn outgoing(span: &tracing::Span) -> Option<TraceContext> {
    active(span)?.current(span)
}

/// `params` with `context` in its `_meta` (an existing `traceparent` there,
/// put by the caller, is kept). Params that are not an object are sent as
/// they are.
pub(crate) fn inject(params: Option<RawJson>, context: &TraceContext) -> Option<RawJson> {
    let mut object: JsonObject = match &params {
        Some(raw) => match raw.parse() {
            Ok(object) => object,
            Err(_) => return params,
        },
        None => JsonObject::new(),
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    let Value::Object(meta) = meta else {
        return params;
    };
    if meta.contains_key(TRACEPARENT) {
        return params;
    }
    meta.insert(TRACEPARENT.into(), context.traceparent.clone().into());
    if let Some(state) = &context.tracestate {
        meta.insert(TRACESTATE.into(), state.clone().into());
    }
    RawJson::from_serialize(&object).ok().or(params)
}

/// The trace context keys of a request's `params._meta`, read without the
/// rest of `_meta` (any JSON is accepted; a non-string counts as absent).
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct MetaContext {
    #[serde(default)]
    traceparent: Option<Value>,
    #[serde(default)]
    tracestate: Option<Value>,
}

impl MetaContext {
    fn context(&self) -> Option<TraceContext> {
        TraceContext::parse(
            self.traceparent.as_ref()?.as_str()?,
            self.tracestate.as_ref().and_then(Value::as_str),
        )
    }
}

/// Makes the context the peer sent (`_meta`, else the HTTP headers) the
/// parent of `span`, when propagation is on. `meta` is what the request's
/// `_meta` carried, already read with its target.
pub(crate) fn adopt(span: &tracing::Span, meta: Option<&MetaContext>, headers: &Headers) {
    let Some(propagator) = active(span) else {
        return;
    };
    let remote = meta
        .and_then(MetaContext::context)
        .or_else(|| TraceContext::from_headers(headers));
    if let Some(remote) = remote {
        propagator.adopt(span, &remote);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_w3c_traceparent_parses_into_its_ids() {
        let context = TraceContext::parse(PARENT, Some("rojo=00f067aa0ba902b7"))
            .expect("the spec's example parses");
        assert_eq!(context.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(context.parent_id(), "00f067aa0ba902b7");
        assert!(context.is_sampled());
        assert_eq!(context.tracestate(), Some("rojo=00f067aa0ba902b7"));
    }

    #[test]
    fn malformed_or_zero_parents_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?}");
        }
        let future = format!("01-{}-what-comes-next", &PARENT[3..55]);
        assert!(TraceContext::parse(&future, None).is_some());
    }

    #[test]
    fn injection_merges_into_existing_meta_and_keeps_a_callers_parent() {
        let context = TraceContext::parse(PARENT, Some("a=b")).expect("valid");
        let params = RawJson::from_serialize(&serde_json::json!({
            "name": "x", "_meta": {"progressToken": 1}
        }))
        .ok();
        let sent: Value = inject(params, &context)
            .expect("params")
            .parse()
            .expect("json");
        assert_eq!(sent["_meta"]["progressToken"], 1);
        assert_eq!(sent["_meta"]["traceparent"], PARENT);
        assert_eq!(sent["_meta"]["tracestate"], "a=b");

        let own =
            RawJson::from_serialize(&serde_json::json!({"_meta": {"traceparent": "mine"}})).ok();
        let sent: Value = inject(own, &context)
            .expect("params")
            .parse()
            .expect("json");
        assert_eq!(sent["_meta"]["traceparent"], "mine");
        let none: Value = inject(None, &context)
            .expect("params")
            .parse()
            .expect("json");
        assert_eq!(none["_meta"]["traceparent"], PARENT);
    }

    #[test]
    fn headers_carry_the_context_when_meta_does_not() {
        let headers = Headers::new().with("TraceParent", PARENT);
        let context = TraceContext::from_headers(&headers).expect("header parses");
        assert_eq!(context.traceparent(), PARENT);
        assert_eq!(context.tracestate(), None);
    }
}
