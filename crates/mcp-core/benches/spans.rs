//! The cost of the SDK's spans with no subscriber, against one dispatcher
//! round trip over memory: what every request pays for being observable
//! when nobody observes.
//!
//! Run: `cargo bench -p mcp-core --bench spans` (a few seconds).

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_core::{
    Connection, DispatcherConfig, Handler, Headers, IncomingNotification, IncomingRequest,
    MemoryTransport, NotificationContext, RequestContext, SendOptions, TransportContext,
    outbound_span, request_span,
};
use mcp_types::{ErrorObject, RawJson, RequestId};

const TIME: Duration = Duration::from_millis(1500);

struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        r: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Ok(r.params.unwrap_or_else(RawJson::empty_object))
    }
    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

/// Nanoseconds per iteration of `step`, run for [`TIME`].
fn per_call(mut step: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < TIME {
        for _ in 0..1000 {
            step();
        }
        calls += 1000;
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

fn main() {
    let params = RawJson::from_string(
        r#"{"name":"get_weather","arguments":{"city":"Oslo"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#.to_owned(),
    )
    .expect("json");
    let id = RequestId::from(7);
    let context = TransportContext::default();
    let headers = Headers::new();
    // Both spans of one request (the client's and the server's), as the
    // dispatcher makes them.
    let spans = per_call(|| {
        let client = outbound_span("tools/call", Some(&params), &headers, Some("pipe"));
        let server = request_span("tools/call", &id, Some(&params), &context, Some("pipe"));
        black_box((client, server));
    });

    // The same with the old shape (five fields, no params read), for scale.
    let plain = per_call(|| {
        let client = tracing::debug_span!(
            "mcp.outbound",
            method = "tools/call",
            id = tracing::field::Empty
        );
        let server = tracing::debug_span!("mcp.request", method = "tools/call", id = %id, session = tracing::field::Empty, revision = tracing::field::Empty, name = tracing::field::Empty);
        black_box((client, server));
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let round_trip = runtime.block_on(async {
        let (a, b) = MemoryTransport::pair(64);
        let _server = Connection::start(a, Echo, DispatcherConfig::default());
        let client = Connection::start(b, Echo, DispatcherConfig::default());
        let peer = client.peer().clone();
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed() < TIME {
            for _ in 0..1000 {
                let answer = peer
                    .request("tools/call", Some(params.clone()), SendOptions::new())
                    .await
                    .expect("answered");
                black_box(answer);
            }
            calls += 1000;
        }
        start.elapsed().as_nanos() as f64 / calls as f64
    });
    println!("spans of one request, no subscriber: {spans:.1} ns");
    println!("two plain debug spans, no subscriber: {plain:.1} ns");
    println!("one round trip over memory:          {round_trip:.0} ns");
    println!(
        "spans / round trip:                  {:.4} ({:.2}%)",
        spans / round_trip,
        100.0 * spans / round_trip
    );
}
