//! The dispatcher's rate limit over HTTP, on TCP on 127.0.0.1: one limiter
//! given to the dispatchers the service opens. Inside the bearer guard a
//! principal over its limit gets 429 with `Retry-After` and the JSON-RPC
//! error for its request's id (an `initialize` too, whose session is then
//! not kept), another principal is unaffected, and an answer to a server
//! request passes even over the limit; a stateless POST without a
//! principal is limited by its peer address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use mcp_core::limit::{Limiter, RateLimit};
use mcp_core::{
    DispatcherConfig, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_transport::http::{
    BearerAuthLayer, HttpServerConfig, ProtectedResource, ServeConfig, StreamableHttpService,
    TokenClaims, TokenRejection, TokenVerifier, Verification, serve,
};
use mcp_types::{ErrorObject, RawJson};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower_layer::Layer as _;

const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Takes the token as the subject: "alice" is alice.
struct BySubject;

impl TokenVerifier for BySubject {
    fn verify<'a>(&'a self, token: &'a str, _resource: &'a str) -> Verification<'a> {
        Box::pin(async move {
            if token.is_empty() {
                return Err(TokenRejection::Invalid("empty".into()));
            }
            Ok(TokenClaims::new().with_subject(token))
        })
    }
}

struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        _: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Ok(RawJson::empty_object())
    }
    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

/// What came back: the status, the headers and the body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The JSON document of the body (which may come chunked: it is
    /// between its braces).
    fn json(&self) -> Value {
        let body = &self.body;
        let json = &body[body.find('{').unwrap_or(0)..=body.rfind('}').unwrap_or(0)];
        serde_json::from_str(json).expect("a JSON body")
    }
}

/// One HTTP/1.1 POST on a fresh connection from `from` (a loopback
/// address), with `headers` besides the usual ones.
async fn post(address: SocketAddr, from: IpAddr, headers: &[(&str, &str)], body: &str) -> Answer {
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\n{extra}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    let mut stream = socket.connect(address).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn initialize(id: u32) -> String {
    initialize_at(id, "2025-11-25")
}

fn initialize_at(id: u32, version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

fn ping(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

/// A service whose dispatchers, every session's and the stateless one,
/// share one limiter of two requests a minute per client.
fn limited_service() -> StreamableHttpService {
    let limiter = Arc::new(Limiter::new(RateLimit::per_minute(2)));
    StreamableHttpService::new(HttpServerConfig::default(), move |opening| {
        opening.serve(
            Echo,
            DispatcherConfig::default().with_rate_limit(limiter.clone()),
        )
    })
}

/// A listener on 127.0.0.1 and its address.
async fn listen() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    (listener, address)
}

/// Serves [`limited_service`] on 127.0.0.1: its address, and what
/// [`stop_server`] takes.
async fn serve_limited() -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let (listener, address) = listen().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(
        listener,
        limited_service(),
        ServeConfig::new(),
        async {
            let _ = stopped.await;
        },
    ));
    (address, stop, server)
}

/// Stops `serve` and checks that it stopped cleanly.
async fn stop_server(
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let _ = stop.send(());
    server
        .await
        .expect("the server task")
        .expect("the server stops cleanly");
}

/// Checks a refusal: 429, `Retry-After`, and the JSON-RPC error for `id`.
fn assert_limited(answer: &Answer, id: u32) {
    assert_eq!(answer.status, 429, "{}{}", answer.head, answer.body);
    let retry: u64 = answer
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After header");
    assert!((1..=60).contains(&retry), "retry after {retry} s");
    let error = answer.json();
    assert_eq!(error["id"], id, "the error answers the refused request");
    assert_eq!(error["error"]["code"], -32010);
    assert_eq!(error["error"]["data"]["retryAfterSeconds"], retry);
}

#[tokio::test]
async fn a_principal_over_its_limit_gets_429_and_others_do_not() {
    let service = limited_service();
    let guarded = BearerAuthLayer::new(
        ProtectedResource::new(RESOURCE, "http://127.0.0.1/as"),
        Arc::new(BySubject),
    )
    .layer(service.clone());
    let (listener, address) = listen().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, guarded, ServeConfig::new(), async {
        let _ = stopped.await;
    }));

    let alice = [("Authorization", "Bearer alice")];
    let opened = post(address, LOCAL, &alice, &initialize(1)).await;
    assert_eq!(opened.status, 200, "alice's initialize is within the limit");
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let in_session = [
        ("Authorization", "Bearer alice"),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let answer = post(address, LOCAL, &in_session, &ping(2)).await;
    assert_eq!(
        answer.status, 200,
        "alice's second request is within the limit"
    );
    let refused = post(address, LOCAL, &in_session, &ping(3)).await;
    assert_limited(&refused, 3);
    // An `initialize` over the limit is refused the same way, and the
    // session it would have opened is not kept.
    let refused = post(address, LOCAL, &alice, &initialize(4)).await;
    assert_limited(&refused, 4);
    assert!(
        refused.header("mcp-session-id").is_none(),
        "{}",
        refused.head
    );
    assert_eq!(service.stats().sessions, 1, "only alice's first session");

    // An answer to a server request is not refused, even over the limit
    // (the dispatcher matches it to no request of its own and drops it).
    let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
    let accepted = post(address, LOCAL, &in_session, answer).await;
    assert_eq!(accepted.status, 202, "answers pass the limit");

    let bob = [("Authorization", "Bearer bob")];
    let opened = post(address, LOCAL, &bob, &initialize(1)).await;
    assert_eq!(opened.status, 200, "bob has his own allowance");

    stop_server(stop, server).await;
}

#[tokio::test]
async fn a_stateless_post_without_a_principal_is_limited_by_its_peer_address() {
    let (address, stop, server) = serve_limited().await;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    let call = |id: u32| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }})
        .to_string()
    };
    for id in 1..=2 {
        let answer = post(address, LOCAL, &headers, &call(id)).await;
        assert_eq!(answer.status, 200, "request {id} is within the limit");
    }
    let refused = post(address, LOCAL, &headers, &call(3)).await;
    assert_limited(&refused, 3);
    // Another address on the loopback network is another client.
    let other = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
    let answer = post(address, other, &headers, &call(4)).await;
    assert_eq!(answer.status, 200, "127.0.0.2 has its own allowance");

    stop_server(stop, server).await;
}

/// A batch (2025-03-26) whose second request is over the limit: that one
/// is answered with the rate limit's error on the batch's stream, beside
/// the first one's result, and the stream ends (it waited on both).
#[tokio::test]
async fn a_refused_request_in_a_batch_is_answered_on_its_stream() {
    let (address, stop, server) = serve_limited().await;
    let opened = post(address, LOCAL, &[], &initialize_at(1, "2025-03-26")).await;
    assert_eq!(opened.status, 200, "{}{}", opened.head, opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-03-26"),
    ];
    let batch = format!("[{},{}]", ping(2), ping(3));
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        post(address, LOCAL, &in_session, &batch),
    )
    .await
    .expect("the batch's stream ends once both requests are answered");
    assert_eq!(answer.status, 200, "{}{}", answer.head, answer.body);
    let events: Vec<Value> = answer
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect();
    let by_id = |id: u32| {
        events
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}: {}", answer.body))
    };
    assert!(by_id(2).get("result").is_some(), "{}", answer.body);
    assert_eq!(by_id(3)["error"]["code"], -32010, "{}", answer.body);
    stop_server(stop, server).await;
}
