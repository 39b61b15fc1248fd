//! The streamable HTTP server on 127.0.0.1 with a small handler, driven
//! with raw HTTP/1.1 over `TcpStream`: socket options, read timeouts,
//! session lifecycle and memory, graceful shutdown, exact refusals and
//! stateless cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{
    DispatcherConfig, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_transport::http::{
    HttpServerConfig, ServeConfig, ServiceStats, StreamableHttpService, serve,
};
use mcp_types::{ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;

#[path = "support/raw_http.rs"]
mod raw_http;
use raw_http::{Answer, read_answer};

/// Every wait in these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(10);

/// What the handler saw: `started:<name>` (for `hang` and
/// `subscriptions/listen`), `finished:<name>`
/// or `cancelled:<name>`.
type Events = mpsc::UnboundedSender<String>;

/// Reports `cancelled:<name>` unless finished: a cancelled request's
/// handler future is dropped.
struct Unfinished {
    events: Option<Events>,
    name: String,
}

impl Unfinished {
    fn new(events: &Events, name: &str) -> Self {
        Self {
            events: Some(events.clone()),
            name: name.to_owned(),
        }
    }

    fn finish(mut self) {
        self.events = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(events) = &self.events {
            let _ = events.send(format!("cancelled:{}", self.name));
        }
    }
}

/// Sends a `notifications/message` with `data` for the request.
async fn log(context: &RequestContext, data: &str) {
    let note = RawJson::from_serialize(&json!({"level": "info", "data": data})).expect("json");
    context
        .peer
        .notify("notifications/message", Some(note))
        .await
        .expect("sent");
}

struct TestHandler {
    events: Events,
}

impl Handler for TestHandler {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        context: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let params: Value = request
            .params
            .as_ref()
            .and_then(|p| p.parse().ok())
            .unwrap_or(Value::Null);
        let name = match request.method.as_str() {
            "tools/call" => params["name"].as_str().unwrap_or("").to_owned(),
            method => method.to_owned(),
        };
        let result = match name.as_str() {
            "initialize" => json!({
                "protocolVersion": params["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "test", "version": "1"}
            }),
            "hang" => {
                let _ = self.events.send(format!("started:{name}"));
                let _cancelled = Unfinished::new(&self.events, &name);
                // The dispatcher drops this future when the request is
                // cancelled; `Unfinished` reports it.
                return std::future::pending().await;
            }
            "subscriptions/listen" => {
                // A listen stream: acknowledged at once, then open until the
                // client leaves or the server ends it.
                context
                    .peer
                    .notify("notifications/subscriptions/acknowledged", None)
                    .await
                    .expect("sent");
                let _ = self.events.send(format!("started:{name}"));
                let _ended = Unfinished::new(&self.events, &name);
                return std::future::pending().await;
            }
            "notify" => {
                log(&context, "first").await;
                json!({"content": [], "notified": true})
            }
            "spin" => {
                // Notifies, then never waits on anything but tokio's
                // cooperative budget: every poll spends the task's whole
                // budget, as a CPU-bound handler that yields only to it.
                log(&context, "spinning").await;
                let _cancelled = Unfinished::new(&self.events, &name);
                loop {
                    tokio::task::coop::consume_budget().await;
                }
            }
            "slow" => {
                let unfinished = Unfinished::new(&self.events, &name);
                tokio::time::sleep(Duration::from_millis(300)).await;
                unfinished.finish();
                json!({"content": [], "slow": true})
            }
            _ => json!({"content": [], "echo": params}),
        };
        let _ = self.events.send(format!("finished:{name}"));
        Ok(RawJson::from_serialize(&result).expect("json"))
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

struct Running {
    addr: std::net::SocketAddr,
    service: StreamableHttpService,
    events: mpsc::UnboundedReceiver<String>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Waits for the handler to report `event`.
    async fn saw(&mut self, event: &str) {
        timeout(WAIT, async {
            while let Some(seen) = self.events.recv().await {
                if seen == event {
                    return;
                }
            }
            panic!("the handler's events ended before {event}");
        })
        .await
        .unwrap_or_else(|_| panic!("no {event} within {WAIT:?}"));
    }

    /// Begins shutdown and waits until `serve` has returned.
    async fn shut_down(&mut self) {
        let _ = self.stop.take().expect("running").send(());
        timeout(WAIT, &mut self.served)
            .await
            .expect("serve returns after shutdown")
            .expect("joined")
            .expect("served");
    }
}

async fn start(config: HttpServerConfig, serve_config: ServeConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (events_tx, events) = mpsc::unbounded_channel();
    let service = StreamableHttpService::new(config, move |opening| {
        let handler = TestHandler {
            events: events_tx.clone(),
        };
        opening.serve(handler, DispatcherConfig::default())
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let serve_config = serve_config.service_shutdown(service.shutdown_handle());
    let served = tokio::spawn(serve(listener, service.clone(), serve_config, async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        service,
        events,
        stop: Some(stop),
        served,
    }
}

/// Sends one request to `/mcp` on a fresh connection (`Connection: close`),
/// with the `Accept` and `Content-Type` of an MCP POST besides `headers`,
/// and reads the whole answer.
async fn send(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut all = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    all.extend_from_slice(headers);
    raw_http::request(addr, method, "/mcp", &all, body).await
}

fn initialize(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}
    }})
    .to_string()
}

/// Opens a session at `version`; its id.
async fn open_session(addr: std::net::SocketAddr, version: &str) -> String {
    let answer = send(addr, "POST", &[], &initialize(version)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

fn call(id: u64, name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}}})
    .to_string()
}

/// A `tools/call` in the session; the answer.
async fn call_in(addr: std::net::SocketAddr, session: &str, id: u64, name: &str) -> Answer {
    send(
        addr,
        "POST",
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &call(id, name),
    )
    .await
}

/// Opens the session's GET stream; the connection, after its status line.
async fn open_get_stream(addr: std::net::SocketAddr, session: &str) -> TcpStream {
    let mut get = TcpStream::connect(addr).await.expect("connected");
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    get.write_all(request.as_bytes()).await.expect("sent");
    let mut head = [0u8; 12];
    timeout(WAIT, get.read_exact(&mut head))
        .await
        .expect("the stream opened")
        .expect("read");
    assert_eq!(&head, b"HTTP/1.1 200");
    get
}

/// Waits (bounded) until `done` holds of the service's state.
async fn until(running: &Running, what: &str, done: impl Fn(&ServiceStats) -> bool) {
    timeout(WAIT, async {
        while !done(&running.service.stats()) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what} within {WAIT:?}"));
}

#[tokio::test]
async fn every_accepted_socket_has_nodelay_set() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut running = start(
        HttpServerConfig::new(),
        ServeConfig::new().on_accept(move |socket| {
            sink.lock()
                .unwrap()
                .push(socket.nodelay().expect("readable"));
        }),
    )
    .await;
    let session = open_session(running.addr, "2025-11-25").await;
    let answer = call_in(running.addr, &session, 1, "echo").await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![true, true],
        "two connections, both TCP_NODELAY"
    );
    running.shut_down().await;
}

#[tokio::test]
async fn dropping_serve_ends_its_connections() {
    let running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let mut get = open_get_stream(running.addr, &session).await;
    // The service (and its session) lives on in the test; only `serve`'s
    // future goes away, and with it the connection it accepted.
    running.served.abort();
    let mut rest = Vec::new();
    let read = timeout(WAIT, get.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the GET stream's connection outlived serve");
}

#[tokio::test]
async fn a_connection_that_sends_half_a_request_head_is_closed() {
    let mut running = start(
        HttpServerConfig::new(),
        ServeConfig::new().header_read_timeout(Duration::from_millis(200)),
    )
    .await;
    let mut stream = TcpStream::connect(running.addr).await.expect("connected");
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: local")
        .await
        .expect("sent");
    let mut rest = Vec::new();
    // The server ends the connection: the read reaches its end (or fails
    // when the server resets it) instead of waiting.
    let read = timeout(WAIT, stream.read_to_end(&mut rest))
        .await
        .expect("the server closed the connection");
    if let Ok(n) = read {
        assert!(
            rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"),
            "{n} bytes: {rest:?}"
        );
    }
    running.shut_down().await;
}

#[tokio::test]
async fn a_body_that_stops_midway_gets_408_and_no_parse_error() {
    let mut running = start(
        HttpServerConfig::new().body_read_timeout(Duration::from_millis(200)),
        ServeConfig::new(),
    )
    .await;
    let mut stream = TcpStream::connect(running.addr).await.expect("connected");
    let head = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
                Accept: application/json, text/event-stream\r\n\
                Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
        .write_all(&[b' '; 100])
        .await
        .expect("part of the body");
    let answer = read_answer(&mut stream).await;
    assert_eq!(answer.status, 408, "{answer:?}");
    let error = answer.json();
    assert_ne!(error["error"]["code"], -32700, "not a parse error: {error}");
    running.shut_down().await;
}

#[tokio::test]
async fn idle_sessions_expire_and_their_dispatchers_end() {
    let mut running = start(
        HttpServerConfig::new().idle_timeout(Duration::from_millis(100)),
        ServeConfig::new(),
    )
    .await;
    let session = open_session(running.addr, "2025-11-25").await;
    // Only the sweeper is left once the session's dispatcher has ended.
    until(&running, "expiry of the idle session", |stats| {
        stats.sessions == 0 && stats.tasks <= 1
    })
    .await;
    let answer = call_in(running.addr, &session, 1, "echo").await;
    assert_eq!(answer.status, 404, "an expired session is gone: {answer:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn at_the_cap_the_least_recently_used_idle_session_makes_room() {
    let mut running = start(HttpServerConfig::new().max_sessions(2), ServeConfig::new()).await;
    let first = open_session(running.addr, "2025-11-25").await;
    let second = open_session(running.addr, "2025-11-25").await;
    // The first is used again: the second is now the least recently used.
    assert_eq!(call_in(running.addr, &first, 1, "echo").await.status, 200);
    let third = open_session(running.addr, "2025-11-25").await;
    assert_eq!(running.service.session_count(), 2);
    assert_eq!(call_in(running.addr, &second, 2, "echo").await.status, 404);
    assert_eq!(call_in(running.addr, &first, 3, "echo").await.status, 200);
    assert_eq!(call_in(running.addr, &third, 4, "echo").await.status, 200);
    running.shut_down().await;
}

#[tokio::test]
async fn at_the_cap_with_every_session_busy_a_new_one_is_refused_saying_so() {
    let mut running = start(HttpServerConfig::new().max_sessions(1), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    // A GET stream keeps the session busy.
    let _get = open_get_stream(running.addr, &session).await;
    let answer = send(running.addr, "POST", &[], &initialize("2025-11-25")).await;
    assert_eq!(answer.status, 503, "{answer:?}");
    assert!(answer.body.contains("busy"), "{answer:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn a_long_session_keeps_a_bounded_number_of_streams_and_events() {
    let mut running = start(
        HttpServerConfig::new().max_session_events(64, 1024 * 1024),
        ServeConfig::new(),
    )
    .await;
    let session = open_session(running.addr, "2025-11-25").await;
    let mut stream = TcpStream::connect(running.addr).await.expect("connected");
    for id in 1..=300 {
        let body = call(id, "echo");
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\n\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
             Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("sent");
        // A JSON answer, or a chunked SSE body that ends with the
        // zero-length chunk.
        let mut seen = Vec::new();
        let id_field = format!("\"id\":{id}");
        timeout(WAIT, async {
            let mut buf = [0u8; 4096];
            while !(seen.ends_with(b"0\r\n\r\n")
                || (seen.ends_with(b"}") && String::from_utf8_lossy(&seen).contains(&id_field)))
            {
                let n = stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "the connection ended");
                seen.extend_from_slice(&buf[..n]);
            }
        })
        .await
        .expect("answered");
        assert!(String::from_utf8_lossy(&seen).contains(&format!("\"id\":{id}")));
    }
    let stats = running.service.stats();
    assert!(stats.stored_events <= 64, "{stats:?}");
    assert!(stats.streams <= 33, "{stats:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn answered_streams_are_released_after_their_resumption_window() {
    let mut running = start(
        HttpServerConfig::new().resumption_window(Duration::from_millis(50)),
        ServeConfig::new(),
    )
    .await;
    let session = open_session(running.addr, "2025-11-25").await;
    for id in 1..=5 {
        assert_eq!(
            call_in(running.addr, &session, id, "echo").await.status,
            200
        );
    }
    until(&running, "release of the answered streams", |stats| {
        stats.streams == 0
    })
    .await;
    assert_eq!(running.service.stats().stored_events, 0);
    running.shut_down().await;
}

#[tokio::test]
async fn shutdown_ends_an_open_get_stream_and_lets_a_slow_call_finish() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let mut get = open_get_stream(running.addr, &session).await;
    let addr = running.addr;
    let slow_session = session.clone();
    let slow = tokio::spawn(async move { call_in(addr, &slow_session, 1, "slow").await });
    // The call is running before shutdown begins.
    until(&running, "start of the slow call", |stats| {
        stats.streams >= 2
    })
    .await;
    running.shut_down().await;
    // serve returned only after the slow call was answered, and the GET
    // stream ended.
    let mut seen = Vec::new();
    while let Ok(event) = running.events.try_recv() {
        seen.push(event);
    }
    assert!(seen.iter().any(|e| e == "finished:slow"), "{seen:?}");
    let answer = timeout(WAIT, slow)
        .await
        .expect("answered")
        .expect("joined");
    assert_eq!(answer.status, 200);
    assert!(answer.body.contains("\"slow\":true"), "{answer:?}");
    let mut rest = Vec::new();
    timeout(WAIT, get.read_to_end(&mut rest))
        .await
        .expect("the GET stream ended")
        .expect("read");
}

#[tokio::test]
async fn after_the_grace_a_call_still_running_is_cancelled() {
    let mut running = start(
        HttpServerConfig::new(),
        ServeConfig::new().shutdown_grace(Duration::from_millis(100)),
    )
    .await;
    let session = open_session(running.addr, "2025-11-25").await;
    let addr = running.addr;
    let hang = tokio::spawn(async move { call_in(addr, &session, 1, "hang").await });
    until(&running, "start of the call", |stats| stats.streams >= 1).await;
    running.shut_down().await;
    running.saw("cancelled:hang").await;
    hang.abort();
}

/// A POST whose body does not decode is answered with the request's id
/// when its bytes show one, as stdio answers, so the client can fail that
/// request; an answer's id is never echoed back, nor a batch member's.
#[tokio::test]
async fn a_body_that_does_not_decode_is_answered_with_its_request_id() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"#,
            -32700,
            serde_json::json!(7),
        ),
        (
            r#"{"jsonrpc":"1.0","id":"x","method":"tools/call"}"#,
            -32600,
            serde_json::json!("x"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
            -32600,
            serde_json::Value::Null,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"}]"#,
            -32600,
            serde_json::Value::Null,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},"#,
            -32700,
            serde_json::Value::Null,
        ),
    ];
    for (body, code, id) in &cases {
        let answer = send(running.addr, "POST", &headers, body).await;
        assert_eq!(answer.status, 400, "{body}: {answer:?}");
        let error = answer.json();
        assert_eq!(error["error"]["code"], *code, "{body}: {error}");
        assert_eq!(error["id"], *id, "{body}: {error}");
    }
    // Stateless alike: the body is read before the era's routing.
    let stateless = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
    ];
    let answer = send(running.addr, "POST", &stateless, cases[0].0).await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.json()["id"], 7, "{answer:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn a_batch_is_refused_outside_a_2025_03_26_session() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let batch = format!("[{}]", call(1, "echo"));
    let session = open_session(running.addr, "2025-11-25").await;
    let answer = send(
        running.addr,
        "POST",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &batch,
    )
    .await;
    assert_eq!(answer.status, 400, "{answer:?}");
    let error = answer.json();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-03-26")
    );

    let old = open_session(running.addr, "2025-03-26").await;
    let answer = send(running.addr, "POST", &[("Mcp-Session-Id", &old)], &batch).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("\"echo\""), "{answer:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn an_unknown_version_in_a_session_is_answered_as_unsupported() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let answer = send(
        running.addr,
        "POST",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        &call(1, "echo"),
    )
    .await;
    assert_eq!(answer.status, 400, "{answer:?}");
    let message = answer.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("unsupported MCP-Protocol-Version"),
        "{message}"
    );
    assert!(!message.contains("_meta"), "{message}");
    running.shut_down().await;
}

fn stateless_call(id: u64, name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string()
}

/// A stateless `echo` call with id `id`; the answer.
async fn stateless_echo(addr: std::net::SocketAddr, id: u64) -> Answer {
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    send(addr, "POST", &headers, &stateless_call(id, "echo")).await
}

/// Starts a stateless `hang` call as `principal`; the open connection.
async fn stateless_hang(addr: std::net::SocketAddr, id: u64, principal: &str) -> TcpStream {
    let body = stateless_call(id, "hang");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: hang\r\nAuthorization: {principal}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    stream.write_all(request.as_bytes()).await.expect("sent");
    stream
}

/// A stateless `subscriptions/listen` POST with `Connection: close`, so
/// that its connection ends with its stream.
fn stateless_listen(id: u64) -> String {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A listen stream is the stateless era's GET stream: draining ends it
/// (else graceful shutdown waited out its whole grace) and refuses new
/// ones, while calls are still served.
#[tokio::test]
async fn draining_ends_a_stateless_listen_stream_and_refuses_new_ones() {
    // A grace no test outlives: serve returns only if nothing holds it.
    let grace = ServeConfig::new().shutdown_grace(Duration::from_secs(3600));
    let mut running = start(HttpServerConfig::new(), grace).await;
    let mut listening = TcpStream::connect(running.addr).await.expect("connected");
    listening
        .write_all(stateless_listen(1).as_bytes())
        .await
        .expect("sent");
    running.saw("started:subscriptions/listen").await;
    assert_eq!(running.service.stats().exchanges, 1);

    running.service.shutdown_handle().drain();
    running.saw("cancelled:subscriptions/listen").await;
    let mut streamed = Vec::new();
    timeout(WAIT, listening.read_to_end(&mut streamed))
        .await
        .expect("the listen stream ended")
        .expect("read");
    let streamed = String::from_utf8_lossy(&streamed);
    assert!(streamed.starts_with("HTTP/1.1 200"), "{streamed}");
    assert!(
        streamed.contains("notifications/subscriptions/acknowledged"),
        "{streamed}"
    );
    assert_eq!(running.service.stats().exchanges, 0);

    let mut refused = TcpStream::connect(running.addr).await.expect("connected");
    refused
        .write_all(stateless_listen(2).as_bytes())
        .await
        .expect("sent");
    let answer = read_answer(&mut refused).await;
    assert_eq!(answer.status, 503, "{answer:?}");
    assert!(answer.body.contains("shutting down"), "{answer:?}");
    let call = stateless_echo(running.addr, 3).await;
    assert_eq!(call.status, 200, "{call:?}");
    assert_eq!(call.json()["id"], 3, "{call:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn a_stateless_cancellation_reaches_the_handler_of_the_same_principal() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let hanging = stateless_hang(running.addr, 7, "Bearer alice").await;
    running.saw("started:hang").await;
    assert_eq!(running.service.stats().exchanges, 1);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7, "reason": "no longer needed"}})
    .to_string();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "notifications/cancelled"),
        ("Authorization", "Bearer alice"),
    ];
    let answer = send(running.addr, "POST", &headers, &cancel).await;
    assert_eq!(answer.status, 202, "{answer:?}");
    running.saw("cancelled:hang").await;
    // A cancelled request gets no answer; the client closes its POST.
    drop(hanging);
    running.shut_down().await;
}

#[tokio::test]
async fn a_client_that_goes_away_mid_exchange_cancels_the_handler() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let hanging = stateless_hang(running.addr, 8, "Bearer bob").await;
    running.saw("started:hang").await;
    drop(hanging);
    running.saw("cancelled:hang").await;
    running.shut_down().await;
}

#[tokio::test]
async fn a_session_client_that_goes_away_mid_call_frees_the_request_id() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let body = call(5, "hang");
    let mut hanging = TcpStream::connect(running.addr).await.expect("connected");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    hanging.write_all(request.as_bytes()).await.expect("sent");
    running.saw("started:hang").await;
    drop(hanging);
    running.saw("cancelled:hang").await;
    // Its id is in flight no more: the session takes a new request with it.
    let answer = call_in(running.addr, &session, 5, "echo").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.json()["id"], 5, "{answer:?}");
    assert!(answer.json()["result"]["echo"].is_object(), "{answer:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn a_session_call_answered_alone_is_one_json_body_and_keeps_no_events() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let answer = call_in(running.addr, &session, 1, "echo").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert!(answer.header("content-length").is_some(), "{answer:?}");
    let body: Value = serde_json::from_str(&answer.body).expect("one JSON body");
    assert_eq!(body["id"], 1);
    assert!(body["result"]["echo"].is_object(), "{body}");
    // Nothing to resume: no stream and no stored event is kept for it.
    let stats = running.service.stats();
    assert_eq!((stats.streams, stats.stored_events), (0, 0), "{stats:?}");
    running.shut_down().await;
}

#[tokio::test]
async fn a_session_call_that_notifies_first_is_streamed_in_order() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let answer = call_in(running.addr, &session, 1, "notify").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let body = &answer.body;
    let priming = body.find("data: \n").expect("a priming event");
    let note = body
        .find("notifications/message")
        .expect("the notification");
    let result = body.find("\"notified\":true").expect("the answer");
    assert!(priming < note && note < result, "{body}");
    running.shut_down().await;
}

/// Sends `body` as a POST with `headers` on a connection of its own and
/// reads until `needle` has come back; the connection and what it read.
async fn post_until(
    addr: std::net::SocketAddr,
    headers: &str,
    body: &str,
    needle: &str,
) -> (TcpStream, String) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut read = Vec::new();
    timeout(WAIT, async {
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&read).contains(needle) {
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "the connection ended before {needle}: {read:?}");
            read.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "no {needle} within {WAIT:?}: {}",
            String::from_utf8_lossy(&read)
        )
    });
    (stream, String::from_utf8_lossy(&read).into_owned())
}

/// A handler that notifies and then spends the task's cooperative budget
/// on every poll still gets its POST switched to SSE, the notification
/// delivered while it runs: the switch is not starved behind the handler
/// (both eras' POSTs race the answer against the stream's opening).
#[tokio::test]
async fn a_handler_spending_its_budget_still_streams_what_it_sent_first() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let session = open_session(running.addr, "2025-11-25").await;
    let in_session = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let (connection, read) =
        post_until(running.addr, &in_session, &call(1, "spin"), "spinning").await;
    assert!(read.contains("text/event-stream"), "{read}");
    // A session's request outlives its POST's connection (the client may
    // resume its stream): it ends when the client cancels it.
    drop(connection);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}})
    .to_string();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(
        send(running.addr, "POST", &headers, &cancel).await.status,
        202
    );
    running.saw("cancelled:spin").await;

    // A stateless request ends with its POST's connection.
    let stateless =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: spin\r\n";
    let (connection, read) = post_until(
        running.addr,
        stateless,
        &stateless_call(2, "spin"),
        "spinning",
    )
    .await;
    assert!(read.contains("text/event-stream"), "{read}");
    drop(connection);
    running.saw("cancelled:spin").await;
    running.shut_down().await;
}

#[tokio::test]
async fn stateless_exchanges_share_one_dispatcher() {
    let mut running = start(HttpServerConfig::new(), ServeConfig::new()).await;
    let first = stateless_hang(running.addr, 1, "Bearer alice").await;
    running.saw("started:hang").await;
    let second = stateless_hang(running.addr, 2, "Bearer alice").await;
    running.saw("started:hang").await;
    let stats = running.service.stats();
    assert_eq!(stats.exchanges, 2, "{stats:?}");
    // One dispatcher serves both, called in each POST's own task: it runs
    // no task of its own, and none is started per POST.
    assert_eq!(stats.tasks, 0, "{stats:?}");
    drop((first, second));
    running.saw("cancelled:hang").await;
    running.saw("cancelled:hang").await;
    let answer = stateless_echo(running.addr, 3).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.json()["id"], 3);
    running.shut_down().await;
}
