//! Client and server over streamable HTTP on 127.0.0.1, and the HTTP
//! layer's refusals checked with raw requests.

use std::time::Duration;

use mcp_client::{Client, ClientConfig, RequestOptions};
use mcp_server::{Args, Context, Server, ToolError};
use mcp_transport::http::{HttpServerConfig, ServeConfig, StreamableHttpService};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

async fn steps(cx: Context) -> Result<&'static str, ToolError> {
    for i in 1..=3 {
        cx.report_progress(f64::from(i), Some(3.0), None).await?;
    }
    Ok("stepped")
}

async fn sample(cx: Context) -> Result<String, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
    let result = cx.create_message(&params).await?;
    Ok(result.model)
}

async fn reconnect(cx: Context) -> Result<&'static str, ToolError> {
    cx.report_progress(1.0, None, None).await?;
    cx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok("resumed")
}

fn server() -> Server {
    Server::builder("http-test", "1")
        .tool("add", "Adds", |Args(args): Args<Add>| async move {
            format!("{}", args.a + args.b)
        })
        .tool("steps", "Reports progress", steps)
        .tool("sample", "Asks the client's model", sample)
        .tool("reconnect", "Closes its stream mid-call", reconnect)
        .tool("log", "Logs a warning", |cx: Context| async move {
            cx.log(mcp_types::LoggingLevel::Warning, "careful").await?;
            Ok::<_, ToolError>("logged")
        })
        .build()
        .expect("server")
}

struct Running {
    url: String,
    addr: std::net::SocketAddr,
    service: StreamableHttpService,
    stop: tokio::sync::oneshot::Sender<()>,
}

async fn start(config: HttpServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let service = server().streamable_http_service(config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = service.clone();
    tokio::spawn(async move {
        let config = ServeConfig::new().service_shutdown(serving.shutdown_handle());
        let _ = mcp_transport::http::serve(listener, serving, config, async {
            let _ = stopped.await;
        })
        .await;
    });
    Running {
        url: format!("http://{addr}/mcp"),
        addr,
        service,
        stop,
    }
}

fn sampling_config() -> ClientConfig {
    ClientConfig::new("http-client", "1")
        .protocol_version(mcp_types::Revision::V2025_11_25)
        .on_sampling(|_, _| async move {
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text("ok"),
                "http-model",
            ))
        })
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    result.content[0].as_text().expect("text")
}

#[tokio::test]
async fn a_client_and_server_talk_over_http_and_close_the_session() {
    let running = start(HttpServerConfig::new().retry(Duration::from_millis(50))).await;
    let client = Client::connect_http(&running.url, sampling_config())
        .await
        .expect("connected");
    assert_eq!(client.protocol_version(), mcp_types::Revision::V2025_11_25);
    assert_eq!(running.service.session_count(), 1);

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(text(&sum), "5");

    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let stepped = client
        .call_tool_with(
            "steps",
            json!({}),
            RequestOptions::new().with_progress(move |p| sink.lock().unwrap().push(p.progress)),
        )
        .await
        .expect("steps");
    assert_eq!(text(&stepped), "stepped");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0, 3.0],
        "progress rides the POST's SSE stream"
    );

    // A server-to-client request on the call's stream, answered by a POST.
    let sampled = client.call_tool("sample", json!({})).await.expect("sample");
    assert_eq!(text(&sampled), "http-model");

    // The server closes the stream mid-call; the client resumes it with
    // Last-Event-ID and still gets the result.
    let resumed = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool("reconnect", json!({})),
    )
    .await
    .expect("no hang")
    .expect("resumed");
    assert_eq!(text(&resumed), "resumed");

    client.close().await.expect("closed");
    assert_eq!(
        running.service.session_count(),
        0,
        "DELETE ended the session"
    );
    let _ = running.stop.send(());
}

#[tokio::test]
async fn concurrent_clients_get_their_own_sessions() {
    let running = start(HttpServerConfig::new()).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..8i64 {
        let url = running.url.clone();
        calls.spawn(async move {
            let client = Client::connect_http(
                &url,
                ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2025_11_25),
            )
            .await
            .expect("connected");
            for j in 0..10i64 {
                let result = client
                    .call_tool("add", json!({"a": i, "b": j}))
                    .await
                    .expect("add");
                assert_eq!(text(&result), (i + j).to_string());
            }
            client.close().await.expect("closed");
        });
    }
    while let Some(done) = calls.join_next().await {
        done.expect("a client finished");
    }
    assert_eq!(running.service.session_count(), 0);
    let _ = running.stop.send(());
}

#[tokio::test]
async fn a_long_session_keeps_its_memory_flat() {
    let running = start(HttpServerConfig::new().max_session_events(128, 256 * 1024)).await;
    let client = Client::connect_http(&running.url, sampling_config())
        .await
        .expect("connected");
    let mut most = running.service.stats();
    for i in 0..1_000i64 {
        let result = client
            .call_tool("add", json!({"a": i, "b": 1}))
            .await
            .expect("add");
        assert_eq!(text(&result), (i + 1).to_string());
        let stats = running.service.stats();
        most.streams = most.streams.max(stats.streams);
        most.stored_events = most.stored_events.max(stats.stored_events);
        most.stored_event_bytes = most.stored_event_bytes.max(stats.stored_event_bytes);
    }
    // Answered streams past the budget are released: what the session
    // holds stays bounded however many calls it makes (the budget, plus
    // the open GET stream and the call in flight).
    assert!(most.stored_events <= 128 + 8, "{most:?}");
    assert!(most.stored_event_bytes <= 256 * 1024 + 4096, "{most:?}");
    assert!(most.streams <= 64 + 4, "{most:?}");
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn serve_http_drains_an_open_get_stream_at_shutdown() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        server()
            .serve_http(listener, HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await
    });
    // The client opens its GET stream after initializing.
    let client = Client::connect_http(&url, sampling_config())
        .await
        .expect("connected");
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .expect("add");
    assert_eq!(text(&sum), "2");
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("serve_http returned with the client still connected")
        .expect("joined")
        .expect("served");
    // Nothing of the server is left serving: no connection, no session.
    let after = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool("add", json!({"a": 1, "b": 1})),
    )
    .await
    .expect("the call fails at once");
    assert!(after.is_err(), "served after shutdown: {after:?}");
}

/// Sends one raw HTTP/1.1 request and returns the status code and body.
async fn raw(addr: std::net::SocketAddr, request: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connected");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

fn post(host: &str, extra: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[tokio::test]
async fn dns_rebinding_attempts_are_refused() {
    let running = start(HttpServerConfig::new()).await;
    let (status, body) = raw(running.addr, &post("evil.example.com", "", INITIALIZE)).await;
    assert_eq!(status, 403, "{body}");
    let (status, _) = raw(
        running.addr,
        &post(
            "localhost:1234",
            "Origin: http://evil.example.com\r\n",
            INITIALIZE,
        ),
    )
    .await;
    assert_eq!(status, 403);
    let (status, body) = raw(
        running.addr,
        &post(
            "127.0.0.1:1234",
            "Origin: http://localhost:3000\r\n",
            INITIALIZE,
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.to_ascii_lowercase().contains("mcp-session-id:"),
        "{body}"
    );
    let _ = running.stop.send(());
}

#[tokio::test]
async fn oversized_and_malformed_requests_get_clear_http_errors() {
    let running = start(HttpServerConfig::new().max_body(1024)).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let (status, body) = raw(running.addr, &post("localhost", "", &big)).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("1024"), "says the limit: {body}");

    let (status, body) = raw(running.addr, &post("localhost", "", "{not json")).await;
    assert_eq!(status, 400);
    assert!(body.contains("-32700"), "{body}");

    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, body) = raw(running.addr, &post("localhost", "", list)).await;
    assert_eq!(status, 400, "no session id: {body}");
    let (status, _) = raw(
        running.addr,
        &post("localhost", "Mcp-Session-Id: nope\r\n", list),
    )
    .await;
    assert_eq!(status, 404, "unknown session");

    let wrong_accept = post("localhost", "", INITIALIZE).replace(
        "Accept: application/json, text/event-stream",
        "Accept: application/json",
    );
    assert_eq!(raw(running.addr, &wrong_accept).await.0, 406);
    let wrong_type = post("localhost", "", INITIALIZE)
        .replace("Content-Type: application/json", "Content-Type: text/plain");
    assert_eq!(raw(running.addr, &wrong_type).await.0, 415);
    let put =
        "PUT /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(running.addr, put).await.0, 405);
    let get = "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(running.addr, get).await.0, 400, "GET needs a session");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn a_closed_session_is_gone() {
    let running = start(HttpServerConfig::new()).await;
    let (status, body) = raw(running.addr, &post("localhost", "", INITIALIZE)).await;
    assert_eq!(status, 200);
    let session = body
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(running.addr, &delete).await.0, 200);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _) = raw(
        running.addr,
        &post("localhost", &format!("Mcp-Session-Id: {session}\r\n"), list),
    )
    .await;
    assert_eq!(status, 404, "the deleted session is not found");
    let _ = running.stop.send(());
}

/// What the mock server does with a `tools/call`.
#[derive(Clone, Copy)]
enum OnCall {
    /// Reads the request and closes the socket without answering.
    Drop,
    /// Answers this status, content type and body.
    Answer(u16, &'static str, &'static str),
    /// Never answers, and reports when the client closes the socket.
    Hold,
}

struct Mock {
    url: String,
    /// Notified when a call arrives to be held by [`OnCall::Hold`].
    held: std::sync::Arc<tokio::sync::Notify>,
    /// Notified when the client closed a socket held by [`OnCall::Hold`].
    released: std::sync::Arc<tokio::sync::Notify>,
}

/// Reads one HTTP/1.1 request (head and Content-Length body); `None` when
/// the client closed the connection.
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buffer).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return Some(text);
            }
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

fn response(status: u16, content_type: &str, body: &str, extra: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A handshake-era server written by hand on a raw socket: it initializes
/// like any server and misbehaves on `tools/call` as told.
async fn mock(on_call: OnCall) -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let held = std::sync::Arc::new(tokio::sync::Notify::new());
    let released = std::sync::Arc::new(tokio::sync::Notify::new());
    let notify = (held.clone(), released.clone());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (on_hold, on_release) = notify.clone();
            tokio::spawn(async move {
                let Some(request) = read_request(&mut stream).await else {
                    return;
                };
                let reply = if request.contains("\"initialize\"") {
                    let body = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mock","version":"1"}}}"#
                        .replace("\"id\":0", &format!("\"id\":{}", request_id(&request)));
                    response(200, "application/json", &body, "Mcp-Session-Id: s1\r\n")
                } else if request.contains("tools/call") {
                    match on_call {
                        // The request was read; the socket goes without a word.
                        OnCall::Drop => return,
                        OnCall::Hold => {
                            on_hold.notify_one();
                            let mut rest = [0u8; 256];
                            while matches!(stream.read(&mut rest).await, Ok(n) if n > 0) {}
                            on_release.notify_one();
                            return;
                        }
                        OnCall::Answer(status, content_type, body) => {
                            response(status, content_type, body, "")
                        }
                    }
                } else {
                    response(202, "application/json", "", "")
                };
                let _ = stream.write_all(reply.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    Mock {
        url,
        held,
        released,
    }
}

/// The `id` of the JSON-RPC request in a raw HTTP request.
fn request_id(request: &str) -> String {
    let body = request.split("\r\n\r\n").nth(1).unwrap_or("");
    let value: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    value["id"].to_string()
}

async fn connect_mock(url: &str) -> Client {
    let http = mcp_transport::http::HttpClientConfig::new().open_get_stream(false);
    let config = ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2025_11_25);
    Client::connect_http_with(url, http, config)
        .await
        .expect("initialized")
}

async fn call_mock(on_call: OnCall) -> mcp_client::Error {
    let client = connect_mock(&mock(on_call).await.url).await;
    tokio::time::timeout(Duration::from_secs(10), client.call_tool("any", json!({})))
        .await
        .expect("the call ends")
        .expect_err("the call fails")
}

#[tokio::test]
async fn a_connection_dropped_mid_call_is_a_closed_connection_not_a_server_error() {
    let error = call_mock(OnCall::Drop).await;
    assert!(error.is_connection_closed(), "{error}");
    assert!(error.is_transport(), "{error}");
    assert!(
        error.remote().is_none(),
        "the server sent no error: {error}"
    );
}

#[tokio::test]
async fn an_http_status_without_json_rpc_is_a_transport_error_with_the_status() {
    let error = call_mock(OnCall::Answer(500, "text/html", "<html>oops</html>")).await;
    assert_eq!(error.http_status(), Some(500), "{error}");
    assert!(
        error.remote().is_none(),
        "the server sent no error: {error}"
    );
    assert!(!error.is_connection_closed(), "{error}");
    assert!(error.to_string().contains("500"), "{error}");
}

#[tokio::test]
async fn a_json_rpc_error_sent_with_an_http_error_status_is_the_servers_answer() {
    let error = call_mock(OnCall::Answer(
        400,
        "application/json",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad arguments"}}"#,
    ))
    .await;
    let remote = error.remote().expect("the server's error");
    assert_eq!(remote.code, mcp_types::ErrorCode::INVALID_PARAMS);
    assert_eq!(remote.message, "bad arguments");
    assert!(!error.is_transport(), "{error}");
}

#[tokio::test]
async fn an_answer_that_is_not_json_rpc_is_a_transport_error() {
    let error = call_mock(OnCall::Answer(200, "application/json", r#"{"hello":1}"#)).await;
    assert!(
        matches!(
            error.transport(),
            Some(mcp_core::TransportError::InvalidResponse(_))
        ),
        "{error}"
    );
    assert!(error.remote().is_none(), "{error}");
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_a_connection_error() {
    // Bind, learn the port, and close it again: nobody listens there.
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        listener.local_addr().expect("addr").port()
    };
    let config = ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2025_11_25);
    let error = Client::connect_http(&format!("http://127.0.0.1:{port}/mcp"), config)
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(
            error.transport(),
            Some(mcp_core::TransportError::Connect(_))
        ),
        "{error}"
    );
    assert!(error.is_connection_closed(), "{error}");
    assert!(error.remote().is_none(), "{error}");
}

#[tokio::test]
async fn closing_the_client_aborts_the_posts_still_in_flight() {
    let mock = mock(OnCall::Hold).await;
    let client = connect_mock(&mock.url).await;
    let peer = client.peer().clone();
    let params = mcp_types::RawJson::from_serialize(&json!({"name": "any", "arguments": {}}))
        .expect("params");
    let call = tokio::spawn(async move {
        peer.request("tools/call", Some(params), mcp_core::SendOptions::new())
            .await
    });
    // Only once the POST is out does closing have something to abort.
    tokio::time::timeout(Duration::from_secs(10), mock.held.notified())
        .await
        .expect("the call was sent");
    client.close().await.expect("closed");
    tokio::time::timeout(Duration::from_secs(10), mock.released.notified())
        .await
        .expect("the POST's connection was closed with the transport");
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ended")
        .expect("joined");
    assert!(outcome.is_err(), "no answer was sent");
}

#[tokio::test]
async fn dropping_a_stateless_call_cancels_its_handler_on_the_server() {
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let cancelled = std::sync::Arc::new(tokio::sync::Notify::new());
    let (on_start, on_cancel) = (started.clone(), cancelled.clone());
    let server = Server::builder("cancel-test", "1")
        .tool("block", "Waits until cancelled", move |cx: Context| {
            let (on_start, on_cancel) = (on_start.clone(), on_cancel.clone());
            async move {
                // The handler's future is dropped on cancellation; a
                // clone of its context reports it from outside.
                let watcher = cx.clone();
                tokio::spawn(async move {
                    watcher.cancelled().await;
                    on_cancel.notify_one();
                });
                on_start.notify_one();
                std::future::pending::<()>().await;
                "never"
            }
        })
        .build()
        .expect("server");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http(listener, HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await;
    });
    let config = ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2026_07_28);
    let client = Client::connect_http(&url, config)
        .await
        .expect("discovered");
    assert!(client.protocol_version().is_stateless());

    let mut call = Box::pin(client.call_tool("block", json!({})));
    tokio::time::timeout(Duration::from_secs(10), async {
        tokio::select! {
            answer = &mut call => panic!("the call was answered: {answer:?}"),
            () = started.notified() => {}
        }
    })
    .await
    .expect("the handler started");
    // The caller gives up: the future goes, and with it the request.
    drop(call);
    tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
        .await
        .expect("the handler saw the cancellation");
    let _ = stop.send(());
}

/// A 2024-11-05 HTTP+SSE server written by hand: `GET /sse` announces
/// `/messages`, answers go out on that stream, and a POSTed call of the
/// tool `fail` is refused with a 500 and an HTML body.
async fn legacy_mock() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/sse", listener.local_addr().expect("addr"));
    let (events, rx) = tokio::sync::mpsc::channel::<String>(16);
    let stream_rx = std::sync::Arc::new(tokio::sync::Mutex::new(Some(rx)));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (events, stream_rx) = (events.clone(), stream_rx.clone());
            tokio::spawn(async move {
                let Some(request) = read_request(&mut stream).await else {
                    return;
                };
                if request.starts_with("GET /sse") {
                    let Some(mut rx) = stream_rx.lock().await.take() else {
                        return;
                    };
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                                Connection: close\r\n\r\nevent: endpoint\ndata: /messages\n\n";
                    let _ = stream.write_all(head.as_bytes()).await;
                    while let Some(event) = rx.recv().await {
                        let event = format!("event: message\ndata: {event}\n\n");
                        if stream.write_all(event.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                    return;
                }
                let body = request.split("\r\n\r\n").nth(1).unwrap_or("");
                let message: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
                let id = message["id"].clone();
                let answer = match message["method"].as_str() {
                    Some("initialize") => Some(json!({
                        "protocolVersion": "2024-11-05",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "legacy", "version": "1"}
                    })),
                    Some("tools/call") if message["params"]["name"] == "fail" => {
                        let reply = response(500, "text/html", "<html>boom</html>", "");
                        let _ = stream.write_all(reply.as_bytes()).await;
                        return;
                    }
                    Some("tools/call") => Some(json!({
                        "content": [{"type": "text", "text": "fine"}]
                    })),
                    Some("tools/list") => Some(json!({"tools": []})),
                    _ => None,
                };
                if let Some(result) = answer {
                    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let _ = events.send(reply.to_string()).await;
                }
                let reply = response(202, "text/plain", "", "");
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn a_refused_legacy_post_fails_its_request_and_keeps_the_session() {
    let url = legacy_mock().await;
    let config = ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2024_11_05);
    let client = Client::connect_legacy_sse(&url, config)
        .await
        .expect("initialized");
    let error = tokio::time::timeout(Duration::from_secs(10), client.call_tool("fail", json!({})))
        .await
        .expect("the call ends")
        .expect_err("refused");
    assert_eq!(error.http_status(), Some(500), "{error}");
    assert!(error.remote().is_none(), "{error}");
    let fine = tokio::time::timeout(Duration::from_secs(10), client.call_tool("ok", json!({})))
        .await
        .expect("the call ends")
        .expect("the session goes on");
    assert_eq!(text(&fine), "fine");
}

/// Which request each log message came in the course of, as the client's
/// notification callback is told.
type Related = std::sync::Arc<std::sync::Mutex<Vec<Option<mcp_types::RequestId>>>>;

#[tokio::test]
async fn a_log_message_sent_in_the_course_of_a_call_names_it_in_both_eras() {
    use mcp_client::Negotiation;
    use mcp_types::{LoggingLevel, RequestId, ServerNotification};
    let running = start(HttpServerConfig::new()).await;
    for era in [Negotiation::HandshakeOnly, Negotiation::StatelessOnly] {
        let related = Related::default();
        let heard = related.clone();
        let config = ClientConfig::new("http-client", "1")
            .negotiation(era)
            .on_notification_with(move |notification, info| {
                if let ServerNotification::LoggingMessage(_) = notification {
                    heard.lock().expect("lock").push(info.related_request);
                }
                std::future::ready(())
            });
        let client = Client::connect_http(&running.url, config)
            .await
            .expect("connect");
        let stateless = matches!(era, Negotiation::StatelessOnly);
        assert_eq!(client.is_stateless(), stateless, "{era:?} is what was met");
        let mut options = RequestOptions::new().with_id("the-log-call");
        if stateless {
            options = options.with_log_level(LoggingLevel::Debug);
        } else {
            client
                .set_logging_level(LoggingLevel::Debug)
                .await
                .expect("setLevel");
        }
        let result = client
            .call_tool_with("log", json!({}), options)
            .await
            .expect("log");
        assert_eq!(text(&result), "logged");
        // The message came on the call's own stream, before its answer.
        assert_eq!(
            *related.lock().expect("lock"),
            [Some(RequestId::from("the-log-call"))],
            "{era:?}"
        );
        client.close().await.expect("closed");
    }
    let _ = running.stop.send(());
}
