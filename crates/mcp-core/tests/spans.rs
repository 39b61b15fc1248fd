//! The dispatcher's spans, in a test binary of their own: a thread-local
//! subscriber sees every callsite only when no other test's thread (with no
//! subscriber) can meet those callsites first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest, MemoryTransport,
    NotificationContext, RequestContext, SendOptions,
};
use mcp_types::{ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(5);

fn raw(value: Value) -> Option<RawJson> {
    RawJson::from_serialize(&value).ok()
}

/// Answers every request with `{}`, recording `name` on its span as the
/// typed layer does.
struct Named;

impl Handler for Named {
    async fn handle_request(
        &self,
        _: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        tracing::Span::current().record("gen_ai.tool.name", "the-tool");
        Ok(RawJson::empty_object())
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

type SpanRecord = (&'static tracing::Metadata<'static>, Vec<(String, String)>);

/// A subscriber that keeps every span's name and fields, and which span is
/// entered (for one thread).
#[derive(Default, Clone)]
struct Spans {
    spans: Arc<Mutex<Vec<SpanRecord>>>,
    entered: Arc<Mutex<Vec<u64>>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl tracing::Subscriber for Spans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().expect("lock");
        spans.push((span.metadata(), fields));
        tracing::span::Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut spans = self.spans.lock().expect("lock");
        let index = usize::try_from(span.into_u64() - 1).expect("small");
        values.record(&mut Fields(&mut spans[index].1));
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, span: &tracing::span::Id) {
        self.entered.lock().expect("lock").push(span.into_u64());
    }
    fn exit(&self, _: &tracing::span::Id) {
        self.entered.lock().expect("lock").pop();
    }
    fn current_span(&self) -> tracing_core::span::Current {
        let Some(&id) = self.entered.lock().expect("lock").last() else {
            return tracing_core::span::Current::none();
        };
        let index = usize::try_from(id - 1).expect("small");
        let metadata = self.spans.lock().expect("lock")[index].0;
        tracing_core::span::Current::new(tracing::span::Id::from_u64(id), metadata)
    }
}

impl Spans {
    fn find(&self, name: &str) -> Vec<Vec<(String, String)>> {
        self.spans
            .lock()
            .expect("lock")
            .iter()
            .filter(|(m, _)| m.name() == name)
            .map(|(_, f)| f.clone())
            .collect()
    }
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn each_request_runs_in_its_span_and_each_outbound_request_has_one() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            let (a, b) = MemoryTransport::pair(16);
            let _server = Connection::start(a, Named, DispatcherConfig::default());
            let client = Connection::start(b, Named, DispatcherConfig::default());
            let secret = "params-must-not-appear";
            timeout(
                LIMIT,
                client.peer().request(
                    "spanned",
                    raw(json!({"token": secret})),
                    SendOptions::new().with_id(41),
                ),
            )
            .await
            .expect("in time")
            .expect("answered");
        });
    let outbound = spans.find("mcp.outbound");
    assert_eq!(outbound.len(), 1);
    assert_eq!(field(&outbound[0], "mcp.method.name"), Some("spanned"));
    assert_eq!(field(&outbound[0], "jsonrpc.request.id"), Some("41"));
    assert_eq!(field(&outbound[0], "otel.kind"), Some("client"));
    let inbound = spans.find("mcp.request");
    assert_eq!(inbound.len(), 1);
    assert_eq!(field(&inbound[0], "mcp.method.name"), Some("spanned"));
    assert_eq!(field(&inbound[0], "jsonrpc.request.id"), Some("41"));
    assert_eq!(field(&inbound[0], "otel.kind"), Some("server"));
    assert_eq!(
        field(&inbound[0], "gen_ai.tool.name"),
        Some("the-tool"),
        "the handler runs inside the span"
    );
    let all = format!("{:?}", spans.spans.lock().expect("lock"));
    assert!(!all.contains("params-must-not-appear"), "{all}");
}
