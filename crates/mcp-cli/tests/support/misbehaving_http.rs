//! Streamable HTTP servers that misbehave in one way each, in-process on a
//! loopback port, written by hand on hyper, with counters of what they
//! were sent: `tests/hostile.rs` checks the client's behaviour by them.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// How a server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Its GET stream says `retry: 0` and ends at once, every time.
    GetStorm,
    /// It forgets every session right after `initialize`: every request in
    /// a session is answered 404.
    ForgetsSessions,
    /// It answers every POST with a redirect to the same path on another
    /// origin (the port given).
    RedirectsTo(u16),
    /// It answers `tools/call` with an SSE event of 128 KiB.
    OversizedEvent,
    /// It names a session with a tab and a space in it.
    BadSessionId,
}

/// What the server was sent.
#[derive(Debug, Default)]
pub struct Counts {
    pub requests: AtomicUsize,
    pub gets: AtomicUsize,
    pub initializes: AtomicUsize,
    pub not_found: AtomicUsize,
}

/// A running misbehaving server.
pub struct MisbehavingHttp {
    pub url: String,
    pub counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl MisbehavingHttp {
    pub async fn start(way: Way) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let counts = Arc::new(Counts::default());
        let counting = counts.clone();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let counts = counting.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let counts = counts.clone();
                        async move { Ok::<_, Infallible>(serve(way, &counts, request).await) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Self { url, counts, task }
    }
}

impl Drop for MisbehavingHttp {
    fn drop(&mut self) {
        // Its connections are tasks of the accept task's JoinSet: they go
        // with it.
        self.task.abort();
    }
}

fn json_response(status: StatusCode, body: &Value, session: Option<&str>) -> Response<Full<Bytes>> {
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    if let Some(session) = session {
        response = response.header("mcp-session-id", session);
    }
    response
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response")
}

fn empty(status: StatusCode) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .body(Full::new(Bytes::new()))
        .expect("a response")
}

async fn serve(way: Way, counts: &Counts, request: Request<Incoming>) -> Response<Full<Bytes>> {
    counts.requests.fetch_add(1, Ordering::SeqCst);
    let has_session = request.headers().contains_key("mcp-session-id");
    if let Way::RedirectsTo(port) = way {
        return Response::builder()
            .status(StatusCode::TEMPORARY_REDIRECT)
            .header("location", format!("http://127.0.0.1:{port}/mcp"))
            .body(Full::new(Bytes::new()))
            .expect("a response");
    }
    if request.method() == http::Method::GET {
        counts.gets.fetch_add(1, Ordering::SeqCst);
        return match way {
            Way::GetStorm => Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "text/event-stream")
                .body(Full::new(Bytes::from_static(b"retry: 0\n\n")))
                .expect("a response"),
            _ => empty(StatusCode::METHOD_NOT_ALLOWED),
        };
    }
    if request.method() == http::Method::DELETE {
        return empty(StatusCode::OK);
    }
    let Ok(body) = request.into_body().collect().await else {
        return empty(StatusCode::BAD_REQUEST);
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
        return empty(StatusCode::BAD_REQUEST);
    };
    let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
        // Notifications and answers.
        if way == Way::ForgetsSessions && has_session {
            return empty(StatusCode::NOT_FOUND);
        }
        return empty(StatusCode::ACCEPTED);
    };
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    if method == "initialize" {
        let n = counts.initializes.fetch_add(1, Ordering::SeqCst);
        let session = if way == Way::BadSessionId {
            format!("session\t{n} x")
        } else {
            format!("session-{n}")
        };
        let answer = result(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehaving-http", "version": "1"},
        }));
        return json_response(StatusCode::OK, &answer, Some(&session));
    }
    if way == Way::ForgetsSessions {
        let (status, message) = if has_session {
            counts.not_found.fetch_add(1, Ordering::SeqCst);
            (StatusCode::NOT_FOUND, "Session not found")
        } else {
            (StatusCode::BAD_REQUEST, "Mcp-Session-Id header is required")
        };
        let error = json!({"jsonrpc": "2.0", "id": id,
                           "error": {"code": -32001, "message": message}});
        return json_response(status, &error, None);
    }
    if way == Way::OversizedEvent && method == "tools/call" {
        let text = "x".repeat(128 * 1024);
        let answer = result(json!({"content": [{"type": "text", "text": text}]}));
        return Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "text/event-stream")
            .body(Full::new(Bytes::from(format!(
                "event: message\ndata: {answer}\n\n"
            ))))
            .expect("a response");
    }
    let answer = match method {
        "tools/list" => result(json!({"tools": [
            {"name": "call", "inputSchema": {"type": "object"}}
        ]})),
        "tools/call" => result(json!({"content": [{"type": "text", "text": "fine"}]})),
        _ => result(json!({})),
    };
    json_response(StatusCode::OK, &answer, None)
}
