//! Client and server over streamable HTTP on 127.0.0.1, and the HTTP
//! layer's refusals checked with raw requests.

use std::time::Duration;

use mcp_client::{Client, ClientConfig, RequestOptions};
use mcp_server::{Context, NoArguments, Server, ToolError};
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

fn server() -> Server {
    Server::builder("http-test", "1")
        .tool("add", "Adds", |args: Add, _cx: Context| async move {
            format!("{}", args.a + args.b)
        })
        .tool(
            "steps",
            "Reports progress",
            |_: NoArguments, cx: Context| async move {
                for i in 1..=3 {
                    cx.report_progress(f64::from(i), Some(3.0), None).await?;
                }
                Ok::<_, ToolError>("stepped")
            },
        )
        .tool(
            "sample",
            "Asks the client's model",
            |_: NoArguments, cx: Context| async move {
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
                let result = cx.create_message(&params).await?;
                Ok::<_, ToolError>(result.model)
            },
        )
        .tool(
            "reconnect",
            "Closes its stream mid-call",
            |_: NoArguments, cx: Context| async move {
                cx.report_progress(1.0, None, None).await?;
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, ToolError>("resumed")
            },
        )
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
