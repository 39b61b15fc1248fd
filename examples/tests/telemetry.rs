//! OpenTelemetry end to end (feature `otel`), with the SDK's in-memory
//! exporters: for a tool call in each era, over the stdio framing and over
//! streamable HTTP, one trace runs from our client's span to our server's
//! span (its parent, through `params._meta`), both spans carry the semantic
//! conventions' names and attributes and no attribute of the tracing
//! bridge's own, the duration histograms are recorded, no argument or token
//! value appears in any attribute, and a tool the server does not have never
//! names a server span.
//!
//! Each test runs on a current-thread runtime under a thread-local
//! subscriber, so every span of both peers reaches it.

mod otel_support;

use std::collections::BTreeMap;

use mcp_client::{Client, ClientConfig, Negotiation};
use mcp_server::{Context, Server};
use mcp_transport::http::HttpServerConfig;
use mcp_types::Revision;
use opentelemetry::Value;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;
use tokio::net::TcpListener;
const SECRET: &str = "argument-secret-4711";
const TOKEN: &str = "bearer-token-0815";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WeatherArgs {
    city: String,
}

fn server() -> Server {
    Server::builder("telemetry-test", "1")
        .tool(
            "get_weather",
            "The weather in a city",
            |args: WeatherArgs, _: Context| async move { format!("sunny in {}", args.city.len()) },
        )
        .build()
        .expect("server")
}

#[derive(Clone, Copy, Debug)]
enum Via {
    Stdio,
    Http,
}

/// Runs one tool call in `era` over `via` and answers what was exported.
fn traced_call(era: Revision, via: Via) -> (Vec<SpanData>, Vec<ResourceMetrics>) {
    let recorded = otel_support::memory::record(|| call(era, via));
    (recorded.spans, recorded.metrics)
}

async fn call(era: Revision, via: Via) {
    let server = server();
    let negotiation = if era.is_handshake() {
        Negotiation::HandshakeOnly
    } else {
        Negotiation::StatelessOnly
    };
    let config = ClientConfig::new("telemetry-client", "1")
        .protocol_version(era)
        .negotiation(negotiation);
    match via {
        Via::Stdio => {
            // The stdio transport's framing over a socket pair.
            let (ours, theirs) = tokio::net::UnixStream::pair().expect("socket pair");
            let (their_read, their_write) = theirs.into_split();
            let served = server.serve(mcp_transport::LineTransport::new(their_read, their_write));
            let (our_read, our_write) = ours.into_split();
            let transport = mcp_transport::LineTransport::new(our_read, our_write);
            let client = Client::connect(transport, config).await.expect("connected");
            tool_call(&client).await;
            client.close().await.expect("closed");
            served.shutdown().await;
        }
        Via::Http => {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
            let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let served = server.clone();
            let serving = tokio::spawn(async move {
                let _ = served
                    .serve_http(listener, HttpServerConfig::new(), async {
                        let _ = stopped.await;
                    })
                    .await;
            });
            let client = Client::connect_http(&url, config).await.expect("connected");
            tool_call(&client).await;
            client.close().await.expect("closed");
            let _ = stop.send(());
            serving.await.expect("server stopped");
        }
    }
}

async fn tool_call(client: &Client) {
    let result = client
        .call_tool("get_weather", json!({"city": SECRET, "token": TOKEN}))
        .await
        .expect("called");
    assert_ne!(result.is_error, Some(true), "{result:?}");
}

fn attributes(span: &SpanData) -> BTreeMap<String, Value> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
}

fn string(attributes: &BTreeMap<String, Value>, key: &str) -> Option<String> {
    attributes.get(key).map(|v| v.as_str().into_owned())
}

fn check_trace(era: Revision, via: Via, spans: &[SpanData]) {
    let label = format!("{era} over {via:?}");
    let named = |kind: SpanKind| {
        spans
            .iter()
            .filter(|s| s.name == "tools/call get_weather" && s.span_kind == kind)
            .collect::<Vec<_>>()
    };
    let (clients, servers) = (named(SpanKind::Client), named(SpanKind::Server));
    assert_eq!(clients.len(), 1, "{label}: one client span: {spans:#?}");
    assert_eq!(servers.len(), 1, "{label}: one server span: {spans:#?}");
    let (client, server) = (clients[0], servers[0]);
    assert_eq!(
        client.span_context.trace_id(),
        server.span_context.trace_id(),
        "{label}: one trace id end to end"
    );
    assert_eq!(
        server.parent_span_id,
        client.span_context.span_id(),
        "{label}: the client span is the server span's parent"
    );
    assert!(
        server.parent_span_is_remote,
        "{label}: the parent came from the peer"
    );
    let network = match via {
        Via::Stdio => "pipe",
        Via::Http => "tcp",
    };
    for span in [client, server] {
        let attributes = attributes(span);
        let get = |key| string(&attributes, key);
        assert_eq!(
            get("mcp.method.name").as_deref(),
            Some("tools/call"),
            "{label}"
        );
        assert_eq!(
            get("gen_ai.tool.name").as_deref(),
            Some("get_weather"),
            "{label}"
        );
        assert_eq!(
            get("gen_ai.operation.name").as_deref(),
            Some("execute_tool"),
            "{label}"
        );
        assert!(
            get("jsonrpc.request.id").is_some(),
            "{label}: {attributes:?}"
        );
        assert_eq!(
            get("network.transport").as_deref(),
            Some(network),
            "{label}"
        );
        assert_eq!(get("error.type"), None, "{label}");
        assert_eq!(
            get("mcp.protocol.version").as_deref(),
            Some(era.as_str()),
            "{label}"
        );
        assert_eq!(span.status, Status::Unset, "{label}");
    }
    let served = attributes(server);
    assert_eq!(
        string(&served, "mcp.protocol.version").as_deref(),
        Some(era.as_str()),
        "{label}"
    );
    if era.is_handshake() {
        if let Via::Http = via {
            let tag = string(&served, "mcp.session.id").expect("a session tag");
            assert_eq!(
                tag.len(),
                8,
                "{label}: only the session id's tag is recorded"
            );
        }
    }
    // Only the semantic conventions' attributes: nothing the tracing bridge
    // adds of its own (target, busy and idle time, code location, thread).
    for span in spans {
        for key in attributes(span).keys() {
            assert!(
                !matches!(key.as_str(), "target" | "busy_ns" | "idle_ns" | "level")
                    && !key.starts_with("code.")
                    && !key.starts_with("thread."),
                "{label}: a bridge attribute {key:?} on {:?}",
                span.name
            );
        }
    }
    // Nothing the caller sent as an argument or token is in any attribute
    // of any span, nor in a span event.
    let everything = format!("{spans:?}");
    assert!(
        !everything.contains(SECRET),
        "{label}: an argument leaked: {everything}"
    );
    assert!(
        !everything.contains(TOKEN),
        "{label}: a token leaked: {everything}"
    );
}

/// The data points of the histogram `name`, as (count, attributes).
fn histogram(metrics: &[ResourceMetrics], name: &str) -> Vec<(u64, BTreeMap<String, String>)> {
    let mut points = Vec::new();
    for resource in metrics {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                assert_eq!(metric.unit(), "s", "{name} is in seconds");
                if let AggregatedMetrics::F64(MetricData::Histogram(data)) = metric.data() {
                    for point in data.data_points() {
                        let attributes = point
                            .attributes()
                            .map(|kv| (kv.key.as_str().to_owned(), kv.value.as_str().into_owned()))
                            .collect();
                        points.push((point.count(), attributes));
                    }
                }
            }
        }
    }
    points
}

fn check_metrics(era: Revision, via: Via, metrics: &[ResourceMetrics]) {
    let label = format!("{era} over {via:?}");
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
    ] {
        let points = histogram(metrics, name);
        let call = points
            .iter()
            .find(|(_, a)| a.get("mcp.method.name").map(String::as_str) == Some("tools/call"))
            .unwrap_or_else(|| panic!("{label}: {name} has the tool call: {points:?}"));
        assert_eq!(call.0, 1, "{label}: {name}");
        assert_eq!(
            call.1.get("gen_ai.tool.name").map(String::as_str),
            Some("get_weather")
        );
        let all = format!("{points:?}");
        assert!(
            !all.contains(SECRET) && !all.contains(TOKEN),
            "{label}: {all}"
        );
    }
    if era.is_handshake() {
        for name in ["mcp.server.session.duration", "mcp.client.session.duration"] {
            let points = histogram(metrics, name);
            assert_eq!(
                points.iter().map(|(count, _)| count).sum::<u64>(),
                1,
                "{label}: one session in {name}: {points:?}"
            );
            assert_eq!(
                points[0].1.get("mcp.protocol.version").map(String::as_str),
                Some(era.as_str()),
                "{label}: {name}"
            );
        }
    }
}

fn run(era: Revision, via: Via) {
    let (spans, metrics) = traced_call(era, via);
    check_trace(era, via, &spans);
    check_metrics(era, via, &metrics);
}

#[test]
fn a_handshake_era_tool_call_over_stdio_is_one_trace() {
    run(Revision::V2025_11_25, Via::Stdio);
}

#[test]
fn a_stateless_era_tool_call_over_stdio_is_one_trace() {
    run(Revision::V2026_07_28, Via::Stdio);
}

#[test]
fn a_handshake_era_tool_call_over_http_is_one_trace() {
    run(Revision::V2025_11_25, Via::Http);
}

#[test]
fn a_stateless_era_tool_call_over_http_is_one_trace() {
    run(Revision::V2026_07_28, Via::Http);
}

/// A stateless request with the trace context only in the standard HTTP
/// `traceparent`/`tracestate` headers (no `_meta` keys) is served as a
/// child of it.
#[test]
fn the_standard_traceparent_header_parents_the_server_span() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const PARENT: &str = "00f067aa0ba902b7";
    let recorded = otel_support::memory::record(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            let _ = server()
                .serve_http(listener, HttpServerConfig::new(), async {
                    let _ = stopped.await;
                })
                .await;
        });
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "get_weather",
            "arguments": {"city": "Oslo"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: get_weather\r\n\
             traceparent: 00-{TRACE}-{PARENT}-01\r\ntracestate: vendor=value\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connected");
        stream.write_all(request.as_bytes()).await.expect("sent");
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .await
            .expect("answer read");
        let response = String::from_utf8_lossy(&response);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        let _ = stop.send(());
        serving.await.expect("server stopped");
    });
    let served: Vec<_> = recorded
        .spans
        .iter()
        .filter(|s| s.name == "tools/call get_weather" && s.span_kind == SpanKind::Server)
        .collect();
    assert_eq!(served.len(), 1, "{:#?}", recorded.spans);
    assert_eq!(format!("{:032x}", served[0].span_context.trace_id()), TRACE);
    assert_eq!(format!("{:016x}", served[0].parent_span_id), PARENT);
    assert_eq!(
        served[0].span_context.trace_state().header(),
        "vendor=value"
    );
}

/// A tool error and a JSON-RPC error mark both sides' spans and the
/// duration histograms with `error.type` (and the JSON-RPC code).
#[test]
fn failures_carry_their_error_type_on_both_sides() {
    // The JSON-RPC code the client received for the unknown tool.
    let refused_with = std::cell::OnceCell::new();
    let recorded = otel_support::memory::record(|| async {
        let server = Server::builder("failing", "1")
            .tool(
                "fail",
                "Always fails",
                |_: mcp_server::NoArguments, _: Context| async move {
                    Err::<String, _>(mcp_server::ToolError::new("it failed"))
                },
            )
            .build()
            .expect("server");
        let (ours, theirs) = tokio::net::UnixStream::pair().expect("socket pair");
        let (their_read, their_write) = theirs.into_split();
        let served = server.serve(mcp_transport::LineTransport::new(their_read, their_write));
        let (our_read, our_write) = ours.into_split();
        let config = ClientConfig::new("telemetry-client", "1")
            .protocol_version(Revision::V2025_11_25)
            .negotiation(Negotiation::HandshakeOnly);
        let client = Client::connect(
            mcp_transport::LineTransport::new(our_read, our_write),
            config,
        )
        .await
        .expect("connected");
        let failed = client.call_tool("fail", json!({})).await.expect("answered");
        assert_eq!(failed.is_error, Some(true));
        let unknown = client.call_tool("no_such_tool", json!({})).await;
        let remote = unknown
            .as_ref()
            .err()
            .and_then(mcp_client::Error::remote)
            .unwrap_or_else(|| panic!("a JSON-RPC error: {unknown:?}"));
        refused_with.set(remote.code.0).expect("set once");
        client.close().await.expect("closed");
        served.shutdown().await;
    });
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = recorded
            .spans
            .iter()
            .find(|s| s.name == "tools/call fail" && s.span_kind == kind)
            .unwrap_or_else(|| panic!("a {kind:?} span: {:#?}", recorded.spans));
        let failed = attributes(span);
        assert_eq!(string(&failed, "error.type").as_deref(), Some("tool_error"));
        assert!(matches!(span.status, Status::Error { .. }), "{kind:?}");
        // The client named what it called; the server never names a span
        // after a tool it does not have (span names stay a bounded set).
        let name = match kind {
            SpanKind::Client => "tools/call no_such_tool",
            _ => "tools/call",
        };
        let span = recorded
            .spans
            .iter()
            .find(|s| s.name == name && s.span_kind == kind)
            .unwrap_or_else(|| panic!("a {kind:?} span {name:?}: {:#?}", recorded.spans));
        let refused = attributes(span);
        let code = string(&refused, "rpc.response.status_code").expect("a code");
        let received = refused_with.get().expect("the client saw the error");
        assert_eq!(code, received.to_string(), "{kind:?}: the code on the wire");
        assert_eq!(string(&refused, "error.type"), Some(code));
    }
    let points = histogram(&recorded.metrics, "mcp.server.operation.duration");
    assert!(
        points
            .iter()
            .any(|(_, a)| a.get("error.type").map(String::as_str) == Some("tool_error")),
        "{points:?}"
    );
}

/// In the handshake era a server-to-client request made by a tool (here
/// `elicitation/create`) is a CLIENT span in the server under the tool
/// call's SERVER span, and the host serves it in a SERVER span whose remote
/// parent is that CLIENT span: one trace, both directions.
#[test]
fn a_server_to_client_request_continues_the_tool_calls_trace() {
    use mcp_types::{ElicitResult, ElicitValue};
    use std::collections::BTreeMap;
    let recorded = otel_support::memory::record(|| async {
        let (ours, theirs) = tokio::net::UnixStream::pair().expect("socket pair");
        let (their_read, their_write) = theirs.into_split();
        let served = mcp_examples::demo_server()
            .serve(mcp_transport::LineTransport::new(their_read, their_write));
        let (our_read, our_write) = ours.into_split();
        let config = ClientConfig::new("telemetry-client", "1")
            .protocol_version(Revision::V2025_11_25)
            .negotiation(Negotiation::HandshakeOnly)
            .on_elicitation(|_, _| async move {
                Ok(ElicitResult::accept(BTreeMap::from([(
                    "name".to_owned(),
                    ElicitValue::String("Ada".into()),
                )])))
            });
        let client = Client::connect(
            mcp_transport::LineTransport::new(our_read, our_write),
            config,
        )
        .await
        .expect("connected");
        let answer = client
            .call_tool("ask_name", json!({}))
            .await
            .expect("answered");
        assert_ne!(answer.is_error, Some(true), "{answer:?}");
        client.close().await.expect("closed");
        served.shutdown().await;
    });
    let find = |name: &str, kind: SpanKind| {
        recorded
            .spans
            .iter()
            .find(|s| s.name == name && s.span_kind == kind)
            .unwrap_or_else(|| panic!("a {kind:?} span {name}: {:#?}", recorded.spans))
    };
    let tool_call = find("tools/call ask_name", SpanKind::Server);
    let asked = find("elicitation/create", SpanKind::Client);
    let answered = find("elicitation/create", SpanKind::Server);
    let trace = tool_call.span_context.trace_id();
    assert_eq!(asked.span_context.trace_id(), trace);
    assert_eq!(answered.span_context.trace_id(), trace);
    assert_eq!(asked.parent_span_id, tool_call.span_context.span_id());
    assert_eq!(answered.parent_span_id, asked.span_context.span_id());
    assert!(answered.parent_span_is_remote);
}
