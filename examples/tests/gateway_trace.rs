//! OpenTelemetry through the gateway (feature `otel`): one trace runs from
//! the downstream client's span, through the gateway's server span and the
//! span of its call upstream, to the upstream server's span, in each era
//! on each side, every hop carrying the trace context in `params._meta`
//! (upstream and gateway on real sockets of 127.0.0.1, all in one process
//! so that the in-memory exporter sees every span).

mod otel_support;
mod served;

use mcp_client::{Client, ClientConfig, Negotiation};
use mcp_gateway::{EraPreference, Gateway, GatewayConfig, UpstreamConfig, UpstreamTransport};
use mcp_server::{Args, Server};
use opentelemetry::trace::SpanKind;
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// One call of `up_echo` from a client of `downstream`'s era through a
/// gateway speaking `upstream`'s era to its upstream.
async fn call_through(upstream: EraPreference, downstream: Negotiation) {
    let echo = Server::builder("upstream", "1")
        .tool(
            "echo",
            "Sends the text back",
            |Args(args): Args<Text>| async move { args.text },
        )
        .build()
        .expect("the upstream");
    let (url, stop_upstream) = served::serve_http(echo).await;
    let config = GatewayConfig::new()
        .upstream(
            "up",
            UpstreamConfig::new(UpstreamTransport::Http {
                url,
                headers: Default::default(),
            })
            .with_era(upstream),
        )
        .expect("configured");
    let gateway = Gateway::builder(config).start().expect("started");
    gateway.ready().await;
    let server = gateway
        .server(Server::builder("gateway", "1"))
        .expect("the gateway's server");
    let (endpoint, stop_gateway) = served::serve_http(server).await;
    let client = Client::connect_http(
        &endpoint,
        ClientConfig::new("trace-client", "1").negotiation(downstream),
    )
    .await
    .expect("connected");
    let result = client
        .call_tool("up_echo", json!({"text": "traced"}))
        .await
        .expect("called through the gateway");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    client.close().await.expect("closed");
    let _ = stop_gateway.send(());
    gateway.shutdown().await;
    let _ = stop_upstream.send(());
}

/// The one span named `name` of `kind`.
fn span<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind, label: &str) -> &'a SpanData {
    let found: Vec<_> = spans
        .iter()
        .filter(|s| s.name == name && s.span_kind == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{label}: one {kind:?} span `{name}`: {spans:#?}"
    );
    found[0]
}

fn one_trace(upstream: EraPreference, downstream: Negotiation) {
    let label = format!("{upstream:?} upstream, {downstream:?} client");
    let recorded = otel_support::memory::record(|| call_through(upstream, downstream));
    let spans = &recorded.spans;
    let client = span(spans, "tools/call up_echo", SpanKind::Client, &label);
    let gateway = span(spans, "tools/call up_echo", SpanKind::Server, &label);
    let forwarded = span(spans, "tools/call echo", SpanKind::Client, &label);
    let upstream = span(spans, "tools/call echo", SpanKind::Server, &label);
    let trace = client.span_context.trace_id();
    for hop in [gateway, forwarded, upstream] {
        assert_eq!(
            hop.span_context.trace_id(),
            trace,
            "{label}: `{}` ({:?}) is in the client's trace",
            hop.name,
            hop.span_kind
        );
    }
    // Each hop is the child of the one before it.
    assert_eq!(
        gateway.parent_span_id,
        client.span_context.span_id(),
        "{label}"
    );
    assert!(gateway.parent_span_is_remote, "{label}");
    assert_eq!(
        forwarded.parent_span_id,
        gateway.span_context.span_id(),
        "{label}: the call upstream is made in the gateway's server span"
    );
    assert!(!forwarded.parent_span_is_remote, "{label}");
    assert_eq!(
        upstream.parent_span_id,
        forwarded.span_context.span_id(),
        "{label}"
    );
    assert!(upstream.parent_span_is_remote, "{label}");
}

#[test]
fn one_trace_from_a_handshake_client_to_a_handshake_upstream() {
    one_trace(EraPreference::Handshake, Negotiation::HandshakeOnly);
}

#[test]
fn one_trace_from_a_stateless_client_to_a_stateless_upstream() {
    one_trace(EraPreference::Stateless, Negotiation::StatelessOnly);
}

#[test]
fn one_trace_across_eras() {
    one_trace(EraPreference::Handshake, Negotiation::StatelessOnly);
}
