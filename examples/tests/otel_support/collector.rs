//! A minimal OTLP/HTTP trace collector on 127.0.0.1 for tests: it accepts
//! `POST /v1/traces` (protobuf), keeps every span, and answers 200; metrics
//! are accepted and dropped. A child process pointed at it with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` reports its spans here.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message as _;

/// The largest export body taken.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// One span as the collector received it.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    /// 1 internal, 2 server, 3 client (OTLP's `SpanKind`).
    pub kind: i32,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub attributes: BTreeMap<String, String>,
}

/// A running collector; dropped, it stops.
pub struct Collector {
    pub endpoint: String,
    spans: Arc<Mutex<Vec<Span>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode(body: &[u8]) -> Vec<Span> {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            for span in scope.spans {
                let attributes = span
                    .attributes
                    .iter()
                    .map(|kv| {
                        let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(Value::StringValue(s)) => s.clone(),
                            Some(other) => format!("{other:?}"),
                            None => String::new(),
                        };
                        (kv.key.clone(), value)
                    })
                    .collect();
                spans.push(Span {
                    name: span.name,
                    kind: span.kind,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    attributes,
                });
            }
        }
    }
    spans
}

impl Collector {
    /// Starts one on a free port.
    pub async fn start() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let spans = Arc::new(Mutex::new(Vec::new()));
        let kept = spans.clone();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let kept = kept.clone();
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let kept = kept.clone();
                    async move {
                        let traces = request.uri().path() == "/v1/traces";
                        let body = Limited::new(request.into_body(), MAX_BODY)
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        if traces {
                            let decoded = decode(&body);
                            kept.lock().expect("lock").extend(decoded);
                        }
                        let mut response = Response::new(Full::new(Bytes::new()));
                        *response.status_mut() = StatusCode::OK;
                        response.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static("application/x-protobuf"),
                        );
                        Ok::<_, Infallible>(response)
                    }
                });
                connections.spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Collector {
            endpoint,
            spans,
            task,
        }
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().expect("lock").clone()
    }

    /// Waits (bounded) until a span matching `wanted` has arrived.
    pub async fn wait_for(&self, what: &str, wanted: impl Fn(&Span) -> bool) -> Span {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(span) = self.spans().into_iter().find(|s| wanted(s)) {
                return span;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {what} reached the collector; it has: {:#?}",
                self.spans()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
