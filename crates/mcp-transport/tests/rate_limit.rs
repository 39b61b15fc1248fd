//! `RateLimitLayer` over TCP on 127.0.0.1, inside the bearer guard: a
//! principal over its limit gets 429 with `Retry-After` and the JSON-RPC
//! error for its request's id; another principal is unaffected; an answer
//! to a server request passes even over the limit.

use std::sync::Arc;

use mcp_core::limit::RateLimit;
use mcp_core::{
    DispatcherConfig, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_transport::http::{
    BearerAuthLayer, HttpServerConfig, ProtectedResource, RateLimitLayer, ServeConfig,
    StreamableHttpService, TokenClaims, TokenRejection, TokenVerifier, Verification, serve,
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

/// One HTTP/1.1 exchange on a fresh connection: the status, the headers
/// (lowercase) and the body.
async fn post(address: std::net::SocketAddr, token: &str, body: &str) -> (u16, String, String) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn initialize(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

#[tokio::test]
async fn a_principal_over_its_limit_gets_429_and_others_do_not() {
    let service = StreamableHttpService::new(HttpServerConfig::default(), |opening| {
        opening.serve(Echo, DispatcherConfig::default())
    });
    let limited = RateLimitLayer::new(RateLimit::per_minute(2)).layer(service);
    let guarded = BearerAuthLayer::new(
        ProtectedResource::new(RESOURCE, "http://127.0.0.1/as"),
        Arc::new(BySubject),
    )
    .layer(limited);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, guarded, ServeConfig::new(), async {
        let _ = stopped.await;
    }));

    for id in 1..=2 {
        let (status, _, _) = post(address, "alice", &initialize(id)).await;
        assert_eq!(status, 200, "alice's request {id} is within the limit");
    }
    let (status, head, body) = post(address, "alice", &initialize(3)).await;
    assert_eq!(
        status, 429,
        "alice's third request in a minute: {head}{body}"
    );
    let retry: u64 = head
        .lines()
        .find_map(|l| l.strip_prefix("retry-after: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("a Retry-After header");
    assert!((1..=60).contains(&retry), "retry after {retry} s");
    // The body may come chunked: the JSON document is between its braces.
    let json = &body[body.find('{').unwrap_or(0)..=body.rfind('}').unwrap_or(0)];
    let error: Value = serde_json::from_str(json).expect("a JSON-RPC error body");
    assert_eq!(error["id"], 3, "the error answers the refused request");
    assert_eq!(error["error"]["code"], -32010);
    assert_eq!(error["error"]["data"]["retryAfterSeconds"], retry);

    // An answer to a server request is not refused, even over the limit
    // (here the service itself refuses it: no session).
    let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
    let (status, _, _) = post(address, "alice", answer).await;
    assert_ne!(status, 429, "answers pass the limit");

    let (status, _, _) = post(address, "bob", &initialize(1)).await;
    assert_eq!(status, 200, "bob has his own allowance");

    let _ = stop.send(());
    server
        .await
        .expect("the server task")
        .expect("the server stops cleanly");
}
