//! A request cancelled with `notifications/cancelled` over streamable HTTP
//! gets no answer, and the POST that carried it ends (read to EOF) rather
//! than holding the connection and the client's read open: in the
//! handshake era (the cancel a POST in the session), in the stateless era
//! (the cancel a POST of its own), and with JSON answers. Driven by raw
//! HTTP on 127.0.0.1 against a plain `Server::serve_http`; the tool's
//! future must see its cancellation token fired and be dropped.

use std::net::SocketAddr;

use mcp_server::{Context, Server};
use mcp_transport::http::HttpServerConfig;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;

mod common;
use common::{
    WAIT, in_session, mint_session_at, open_session, post, read_all, read_until, request, status,
};

/// What a tool's future saw when it was dropped: whether its request's
/// cancellation token had fired.
type Dropped = mpsc::UnboundedSender<bool>;

/// Tells the test, when the tool's future is dropped, whether the
/// request's token had fired by then.
struct OnDrop {
    cx: Context,
    dropped: Dropped,
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.dropped.send(self.cx.is_cancelled());
    }
}

/// The tools: `stream` reports progress (so its POST becomes an SSE
/// stream), then waits for nothing, ignoring cancellation; `quiet` waits
/// the same way without sending anything first. Each hands the test its
/// context (on `started`) once it runs.
fn server(dropped: Dropped, started: mpsc::UnboundedSender<Context>) -> Server {
    let streaming = dropped.clone();
    let streaming_started = started.clone();
    Server::builder("cancel-http", "1")
        .tool(
            "stream",
            "Reports progress, then never ends",
            move |cx: Context| {
                let guard = OnDrop {
                    cx: cx.clone(),
                    dropped: streaming.clone(),
                };
                let _ = streaming_started.send(cx.clone());
                async move {
                    let _guard = guard;
                    let _ = cx.report_progress(1.0, None, Some("started")).await;
                    std::future::pending::<()>().await;
                    "never"
                }
            },
        )
        .tool("quiet", "Never ends, saying nothing", move |cx: Context| {
            let _ = started.send(cx.clone());
            let guard = OnDrop {
                cx,
                dropped: dropped.clone(),
            };
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                "never"
            }
        })
        .build()
        .expect("valid server")
}

struct Served {
    addr: SocketAddr,
    dropped: mpsc::UnboundedReceiver<bool>,
    started: mpsc::UnboundedReceiver<Context>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    async fn start(config: HttpServerConfig) -> Self {
        let (dropped_tx, dropped) = mpsc::unbounded_channel();
        let (started_tx, started) = mpsc::unbounded_channel();
        let server = server(dropped_tx, started_tx);
        let (addr, stop, served) = common::serve(server, config).await;
        Self {
            addr,
            dropped,
            started,
            stop: Some(stop),
            served,
        }
    }

    /// The context of the tool that started next.
    async fn started(&mut self) -> Context {
        timeout(WAIT, self.started.recv())
            .await
            .expect("the tool starts")
            .expect("the server holds the sender")
    }

    /// The tool's future was dropped with its token fired.
    async fn tool_saw_cancellation(&mut self) {
        let cancelled = timeout(WAIT, self.dropped.recv())
            .await
            .expect("the tool's future is dropped")
            .expect("the server holds the sender");
        assert!(cancelled, "the request's cancellation token had fired");
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        timeout(WAIT, self.served)
            .await
            .expect("the server stops")
            .expect("joined")
            .expect("served");
    }
}

fn call_with_progress(id: Value, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}, "_meta": {"progressToken": "p"}}})
}

fn cancel(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "the user gave up"}})
}

/// The POST's text holds no answer for the request `id` (the only
/// messages with an `id` on it are answers: the server sends the client
/// no requests here).
fn assert_unanswered(text: &str, id: &Value) {
    assert!(
        !text.contains(&format!(r#""id":{id}"#)),
        "the cancelled request {id} gets no answer: {text}"
    );
}

/// How the test knows the request runs before it cancels it.
enum Running {
    /// The tool's progress came on the POST's own stream.
    Progress,
    /// The tool started (its POST may still wait on JSON or SSE).
    Started,
}

/// Waits until the request `id` of the POST `first` runs, cancels it with
/// `cancel`, and checks that its tool saw the cancellation and that the
/// POST ended (read to EOF) with no answer for it; the POST's whole text.
async fn cancel_and_end(
    served: &mut Served,
    mut first: TcpStream,
    id: &Value,
    running: Running,
    cancel: impl Future<Output = ()>,
) -> String {
    let mut text = String::new();
    match running {
        Running::Progress => read_until(&mut first, &mut text, "notifications/progress").await,
        Running::Started => drop(served.started().await),
    }
    cancel.await;
    served.tool_saw_cancellation().await;
    text.push_str(&read_all(first).await);
    assert_unanswered(&text, id);
    text
}

/// A server under `config`, a session opened on it, and the POST in that
/// session of a call of the tool `name` with id `id`, asking for progress:
/// the server, the session's id, the POST's connection.
async fn call_in_session(
    config: HttpServerConfig,
    id: &Value,
    name: &str,
) -> (Served, String, TcpStream) {
    let served = Served::start(config).await;
    let session = open_session(served.addr).await;
    let body = call_with_progress(id.clone(), name).to_string();
    let first = request(served.addr, "POST", &in_session(&session), &body).await;
    (served, session, first)
}

/// Handshake era: the request's POST is an SSE stream (progress went on
/// it); the cancel, a POST in the same session, ends that stream.
async fn handshake_stream_ends(id: Value) {
    let (mut served, session, first) =
        call_in_session(HttpServerConfig::new(), &id, "stream").await;
    let addr = served.addr;
    let text = cancel_and_end(&mut served, first, &id, Running::Progress, async {
        assert_eq!(status(&post(addr, &session, cancel(id.clone())).await), 202);
    })
    .await;
    assert!(text.contains("text/event-stream"), "{text}");
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_streaming_request_ends_its_sse_stream() {
    handshake_stream_ends(json!(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_with_a_string_id_ends_its_sse_stream() {
    handshake_stream_ends(json!("call-1")).await;
}

/// Cancelled before anything was sent for it: the POST, still undecided
/// between JSON and SSE, ends without an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cancelled_before_its_stream_opened_ends_its_post() {
    let (mut served, session, first) =
        call_in_session(HttpServerConfig::new(), &json!(2), "quiet").await;
    let addr = served.addr;
    cancel_and_end(&mut served, first, &json!(2), Running::Started, async {
        assert_eq!(status(&post(addr, &session, cancel(json!(2))).await), 202);
    })
    .await;
    served.stop().await;
}

/// A cancel naming the same id with the other JSON type (`"3"` for `3`)
/// names another request: the stream stays open until the real cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_of_another_id_type_leaves_the_request_running() {
    let (mut served, session, first) =
        call_in_session(HttpServerConfig::new(), &json!(3), "stream").await;
    let addr = served.addr;
    let running = served.started().await;
    cancel_and_end(&mut served, first, &json!(3), Running::Progress, async {
        assert_eq!(status(&post(addr, &session, cancel(json!("3"))).await), 202);
        // The session serves a cancel before its POST's 202: its effect,
        // if any, is there now.
        assert!(!running.is_cancelled(), "\"3\" is not the id 3");
        assert_eq!(status(&post(addr, &session, cancel(json!(3))).await), 202);
        assert!(running.is_cancelled());
    })
    .await;
    served.stop().await;
}

/// JSON answers: the POST waits for a JSON body; cancelled, it ends
/// without a JSON-RPC answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_answered_as_json_ends_its_post() {
    // Its progress does not go on the POST in this mode (it would go to a
    // GET stream; there is none): the POST waits for JSON.
    let config = HttpServerConfig::new().json_response(true);
    let (mut served, session, first) = call_in_session(config, &json!(4), "stream").await;
    let addr = served.addr;
    let text = cancel_and_end(&mut served, first, &json!(4), Running::Started, async {
        assert_eq!(status(&post(addr, &session, cancel(json!(4))).await), 202);
    })
    .await;
    assert_eq!(status(&text), 200, "{text}");
    // No JSON to send: an event stream with no events.
    assert!(text.contains("text/event-stream"), "{text}");
    served.stop().await;
}

/// A stateless call of the tool `name`, asking for progress: its POST,
/// sent to `addr`.
async fn post_stateless_call(addr: SocketAddr, id: u64, name: &str) -> TcpStream {
    let (mut body, headers) = common::stateless_call(id, name, json!({}));
    body["params"]["_meta"]["progressToken"] = json!("p");
    request(addr, "POST", &headers, &body.to_string()).await
}

async fn stateless_cancel(addr: SocketAddr, id: u64) {
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "notifications/cancelled"),
    ];
    let answer =
        read_all(request(addr, "POST", &headers, &cancel(json!(id)).to_string()).await).await;
    assert_eq!(status(&answer), 202, "{answer}");
}

/// Stateless era: the request's POST streams; the cancel, a POST of its
/// own, ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_stateless_request_ends_its_sse_stream() {
    let mut served = Served::start(HttpServerConfig::new()).await;
    let addr = served.addr;
    let first = post_stateless_call(addr, 5, "stream").await;
    let text = cancel_and_end(
        &mut served,
        first,
        &json!(5),
        Running::Progress,
        stateless_cancel(addr, 5),
    )
    .await;
    assert!(text.contains("text/event-stream"), "{text}");
    served.stop().await;
}

/// Stateless era, cancelled before anything was sent: the POST ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_request_cancelled_before_its_stream_opened_ends_its_post() {
    let mut served = Served::start(HttpServerConfig::new()).await;
    let addr = served.addr;
    let first = post_stateless_call(addr, 6, "quiet").await;
    cancel_and_end(
        &mut served,
        first,
        &json!(6),
        Running::Started,
        stateless_cancel(addr, 6),
    )
    .await;
    served.stop().await;
}

/// A 2025-03-26 session: the only one that takes a batch.
async fn open_batch_session(addr: SocketAddr) -> String {
    let session = mint_session_at(addr, "2025-03-26").await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(status(&batch_post(addr, &session, initialized).await), 202);
    session
}

/// POSTs `body` in a 2025-03-26 `session`.
async fn batch_post(addr: SocketAddr, session: &str, body: Value) -> String {
    let headers = batch_headers(session);
    read_all(request(addr, "POST", &headers, &body.to_string()).await).await
}

fn batch_headers(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-03-26"),
    ]
}

/// A batch's POST (2025-03-26) ends once each of its requests is answered
/// or cancelled: here one is answered, the other cancelled.
async fn batch_ends(config: HttpServerConfig) -> String {
    let mut served = Served::start(config).await;
    let addr = served.addr;
    let session = open_batch_session(addr).await;
    let batch = json!([
        call_with_progress(json!(10), "quiet"),
        {"jsonrpc": "2.0", "id": 11, "method": "ping"}
    ]);
    let first = request(addr, "POST", &batch_headers(&session), &batch.to_string()).await;
    let text = cancel_and_end(&mut served, first, &json!(10), Running::Started, async {
        assert_eq!(
            status(&batch_post(addr, &session, cancel(json!(10))).await),
            202
        );
    })
    .await;
    assert!(text.contains(r#""id":11"#), "the ping is answered: {text}");
    assert!(
        !text.contains(r#""id":10"#),
        "the cancelled call is not: {text}"
    );
    served.stop().await;
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_with_a_cancelled_request_ends_its_sse_stream() {
    let text = batch_ends(HttpServerConfig::new()).await;
    assert!(text.contains("text/event-stream"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_with_a_cancelled_request_ends_its_json_answer() {
    let text = batch_ends(HttpServerConfig::new().json_response(true)).await;
    assert!(text.contains("application/json"), "{text}");
}
