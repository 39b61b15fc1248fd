//! Raw HTTP/1.1 over a `TcpStream` on 127.0.0.1: a request written byte for
//! byte and its whole answer read back, so that tests see exactly what the
//! server sends (status, every header, the body with its framing).
//! Shared by the HTTP server's tests (included by path).

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// How long an answer may take to end.
const WAIT: Duration = Duration::from_secs(10);

/// One response read off the wire: status, head, and the body as text
/// (chunked framing left in, which the assertions look through).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

#[allow(dead_code, reason = "each test file uses its part")]
impl Answer {
    /// The first value of header `name` (any case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The first JSON object in the body (a JSON answer or an SSE event).
    pub(crate) fn json(&self) -> Value {
        let start = self.body.find('{').expect("a JSON object in the body");
        let mut stream = serde_json::Deserializer::from_str(&self.body[start..]).into_iter();
        stream.next().expect("one").expect("json")
    }
}

/// Sends `method path` with `headers` (besides `Host: localhost`,
/// `Connection: close` and the body's `Content-Length`) on a fresh
/// connection and reads the whole answer.
pub(crate) async fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("sent");
    read_answer(&mut stream).await
}

/// Reads until the server closes the connection.
pub(crate) async fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut raw = Vec::new();
    timeout(WAIT, stream.read_to_end(&mut raw))
        .await
        .expect("the answer ends in time")
        .expect("read");
    parse_answer(&raw)
}

/// A whole answer's status, head and body.
fn parse_answer(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line in {text:?}"));
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}
