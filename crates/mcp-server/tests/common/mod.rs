//! Raw HTTP/1.1 on a real socket, to drive a streamable HTTP server the way
//! a client does, one request per connection, byte by byte where a test
//! needs to see the streams themselves.
#![allow(dead_code)] // each test file uses its own part

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// How long any one read may wait.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// An HTTP request on a fresh connection; the connection after it was
/// sent (read it with [`read_until`] or [`read_all`]).
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream.write_all(head.as_bytes()).await.expect("sent");
    stream
}

/// Reads until `text` contains `needle`.
pub(crate) async fn read_until(stream: &mut TcpStream, text: &mut String, needle: &str) {
    let read = async {
        let mut buffer = [0u8; 4096];
        while !text.contains(needle) {
            let n = stream.read(&mut buffer).await.expect("read");
            assert!(n > 0, "the stream ended before {needle:?}: {text}");
            text.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    };
    if timeout(WAIT, read).await.is_err() {
        panic!("no {needle:?} within {WAIT:?}");
    }
}

pub(crate) async fn read_all(mut stream: TcpStream) -> String {
    let mut raw = Vec::new();
    timeout(WAIT, stream.read_to_end(&mut raw))
        .await
        .expect("ends")
        .expect("read");
    String::from_utf8_lossy(&raw).into_owned()
}

pub(crate) fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer}"))
}

pub(crate) fn in_session(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

/// Serves `server` over streamable HTTP on 127.0.0.1 until the sender is
/// used (or dropped): its address, the stop, and the serving task.
pub(crate) async fn serve(
    server: mcp_server::Server,
    config: mcp_transport::http::HttpServerConfig,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        server
            .serve_http(listener, config, async {
                let _ = stopped.await;
            })
            .await
    });
    (addr, stop, served)
}

/// POSTs one message in the session and reads the whole answer.
pub(crate) async fn post(addr: SocketAddr, session: &str, body: Value) -> String {
    read_all(request(addr, "POST", &in_session(session), &body.to_string()).await).await
}

pub(crate) fn call(id: u64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}}})
}

/// A 2026-07-28 `tools/call` of the tool `name` with `arguments`, its
/// envelope in `_meta`, and the headers that carry it.
pub(crate) fn stateless_call(
    id: u64,
    name: &str,
    arguments: Value,
) -> (Value, [(&'static str, &str); 3]) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "shared-client", "version": "1"}
        }
    }});
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    (body, headers)
}

/// Initializes a session on `addr` (declaring roots) and sends `initialized`.
pub(crate) async fn open_session(addr: SocketAddr) -> String {
    let session = mint_session(addr).await;
    send_initialized(addr, &session).await;
    session
}

/// Initializes a session on `addr` (declaring roots); its id.
pub(crate) async fn mint_session(addr: SocketAddr) -> String {
    mint_session_at(addr, "2025-11-25").await
}

/// Initializes a session at protocol `version` on `addr` (declaring
/// roots); its id.
pub(crate) async fn mint_session_at(addr: SocketAddr, version: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "shared-client", "version": "1"}
    }});
    let answer = read_all(request(addr, "POST", &[], &init.to_string()).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    answer
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_owned()
}

/// Sends `notifications/initialized` in `session` to `addr`.
pub(crate) async fn send_initialized(addr: SocketAddr, session: &str) {
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(status(&post(addr, session, initialized).await), 202);
}

pub(crate) async fn open_get(
    addr: SocketAddr,
    session: &str,
    last_event_id: Option<&str>,
) -> TcpStream {
    let mut headers = in_session(session).to_vec();
    if let Some(id) = last_event_id {
        headers.push(("Last-Event-ID", id));
    }
    request(addr, "GET", &headers, "").await
}
