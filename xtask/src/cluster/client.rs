//! A small streamable HTTP client for the scenarios, on hyper's http1
//! connection (one connection per request, so the balancer places each
//! one): JSON-RPC over POST, SSE streams read event by event with their ids.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::topology::REPLICA_HEADER;

/// The handshake-era revision the scenarios speak.
pub(crate) const HANDSHAKE_REVISION: &str = "2025-11-25";

/// Every exchange is bounded by this, so a stuck replica fails a scenario
/// instead of hanging it.
pub(crate) const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Aborts the task driving a connection when dropped, so a response or
/// stream that is let go closes its connection.
struct Connection(JoinHandle<()>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A response whose body is still to be read.
pub(crate) struct Response {
    pub(crate) status: StatusCode,
    /// The replica that answered (HAProxy's [`REPLICA_HEADER`]).
    pub(crate) replica: Option<String>,
    pub(crate) session: Option<String>,
    event_stream: bool,
    body: Incoming,
    connection: Connection,
}

/// One SSE event: its id (if any) and its data lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) data: String,
}

/// Sends one request on a new connection to `address` and returns once the
/// response head arrived.
pub(crate) async fn send(
    address: SocketAddr,
    method: Method,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Response, String> {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| format!("cannot connect to {address}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {address}: {e}"))?;
        let connection = Connection(tokio::spawn(async move {
            let _ = connection.await;
        }));
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", address.to_string())
            .header("accept", "application/json, text/event-stream");
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let request = request
            .body(Full::new(bytes))
            .map_err(|e| format!("building a request: {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("sending a request through {address}: {e}"))?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let event_stream =
            header("content-type").is_some_and(|c| c.starts_with("text/event-stream"));
        Ok(Response {
            status: response.status(),
            replica: header(REPLICA_HEADER),
            session: header("mcp-session-id"),
            event_stream,
            connection,
            body: response.into_body(),
        })
    };
    tokio::time::timeout(EXCHANGE_TIMEOUT, exchange)
        .await
        .map_err(|_| {
            format!(
                "no response head from {address} in {} s",
                EXCHANGE_TIMEOUT.as_secs()
            )
        })?
}

impl Response {
    /// The whole body (bounded in time).
    pub(crate) async fn text(self) -> Result<String, String> {
        let collected = tokio::time::timeout(EXCHANGE_TIMEOUT, self.body.collect())
            .await
            .map_err(|_| format!("the body did not end in {} s", EXCHANGE_TIMEOUT.as_secs()))?
            .map_err(|e| format!("reading a response body: {e}"))?;
        Ok(String::from_utf8_lossy(&collected.to_bytes()).into_owned())
    }

    /// The JSON-RPC answer to request `id`: the JSON body, or the message
    /// with that id on the SSE stream, with the notifications that came
    /// before it, in order.
    pub(crate) async fn answer(self, id: u64) -> Result<(Value, Vec<Value>), String> {
        let status = self.status;
        if !self.event_stream {
            let text = self.text().await?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                format!("answered {status} with a body that is not JSON ({e}): {text}")
            })?;
            return Ok((value, Vec::new()));
        }
        let mut stream = self.into_events();
        let mut notifications = Vec::new();
        loop {
            let event = stream
                .next(EXCHANGE_TIMEOUT)
                .await?
                .ok_or_else(|| format!("the SSE stream ended before the answer to request {id}"))?;
            if event.data.is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(&event.data)
                .map_err(|e| format!("an SSE event that is not JSON ({e}): {}", event.data))?;
            if value.get("id") == Some(&json!(id)) {
                return Ok((value, notifications));
            }
            notifications.push(value);
        }
    }

    /// Reads the body as an SSE stream.
    pub(crate) fn into_events(self) -> Events {
        Events {
            body: self.body,
            _connection: self.connection,
            buffer: BytesMut::new(),
            ended: false,
        }
    }
}

/// An SSE stream read event by event.
pub(crate) struct Events {
    body: Incoming,
    _connection: Connection,
    buffer: BytesMut,
    ended: bool,
}

impl Events {
    /// The next event, `None` once the stream ended (cleanly or not: a
    /// replica killed mid-stream ends it too), or an error when nothing
    /// came within `timeout`.
    pub(crate) async fn next(&mut self, timeout: Duration) -> Result<Option<Event>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(event) = take_event(&mut self.buffer) {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .map_err(|_| format!("no SSE event within {} s", timeout.as_secs()))?;
            match frame {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
                // The end of the body, or a connection cut: what was
                // received is still read out.
                Some(Err(_)) | None => self.ended = true,
            }
        }
    }
}

/// Takes one complete event (up to a blank line) off the front of
/// `buffer`; comments and events with neither data nor id are skipped.
fn take_event(buffer: &mut BytesMut) -> Option<Event> {
    loop {
        let text = std::str::from_utf8(buffer).ok()?;
        let (end, separator) = ["\r\n\r\n", "\n\n", "\r\r"]
            .iter()
            .filter_map(|sep| text.find(sep).map(|at| (at, sep.len())))
            .min()?;
        let block = text[..end].to_owned();
        buffer.advance(end + separator);
        let mut id = None;
        let mut data: Option<String> = None;
        for line in block.lines() {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => id = Some(value.to_owned()),
                "data" => match &mut data {
                    Some(joined) => {
                        joined.push('\n');
                        joined.push_str(value);
                    }
                    None => data = Some(value.to_owned()),
                },
                _ => {}
            }
        }
        if id.is_some() || data.is_some() {
            return Some(Event {
                id,
                data: data.unwrap_or_default(),
            });
        }
    }
}

/// A handshake-era session opened through the balancer.
pub(crate) struct Session {
    pub(crate) address: SocketAddr,
    pub(crate) id: String,
    next_id: u64,
}

impl Session {
    /// `initialize` and `notifications/initialized`.
    pub(crate) async fn open(address: SocketAddr, client: &str) -> Result<Self, String> {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE_REVISION,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}
            }
        });
        let response = send(address, Method::POST, &[], Some(&initialize)).await?;
        let status = response.status;
        let id = response.session.clone();
        let (answer, _) = response.answer(0).await?;
        let id = match (status, id) {
            (StatusCode::OK, Some(id)) if answer.get("result").is_some() => id,
            _ => return Err(format!("initialize answered {status}: {answer}")),
        };
        let session = Self {
            address,
            id,
            next_id: 1,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = session.post(&initialized).await?;
        if response.status != StatusCode::ACCEPTED {
            let status = response.status;
            return Err(format!(
                "notifications/initialized answered {status}: {}",
                response.text().await.unwrap_or_default()
            ));
        }
        Ok(session)
    }

    fn headers(&self) -> [(&str, &str); 2] {
        [
            ("mcp-session-id", self.id.as_str()),
            ("mcp-protocol-version", HANDSHAKE_REVISION),
        ]
    }

    /// POSTs `message` in the session.
    pub(crate) async fn post(&self, message: &Value) -> Result<Response, String> {
        send(self.address, Method::POST, &self.headers(), Some(message)).await
    }

    /// The request `method` with `params` and a fresh id, and that id.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> (u64, Value) {
        let id = self.next_id;
        self.next_id += 1;
        (
            id,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
    }

    /// Sends a request and returns its `result`; an HTTP or JSON-RPC error
    /// is an `Err` that says which.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let (id, request) = self.request(method, params);
        let response = self.post(&request).await?;
        let status = response.status;
        let replica = response.replica.clone().unwrap_or_default();
        let (answer, _) = response.answer(id).await?;
        match answer.get("result") {
            Some(result) if status == StatusCode::OK => Ok(result.clone()),
            _ => Err(format!(
                "{method} answered {status} from {replica}: {answer}"
            )),
        }
    }

    /// Opens the session's GET stream, resuming after `last_event_id`.
    pub(crate) async fn listen(&self, last_event_id: Option<&str>) -> Result<Response, String> {
        let mut headers = self.headers().to_vec();
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id));
        }
        send(self.address, Method::GET, &headers, None).await
    }

    /// Ends the session (DELETE).
    pub(crate) async fn close(self) -> Result<(), String> {
        let response = send(self.address, Method::DELETE, &self.headers(), None).await?;
        if response.status.is_success() {
            Ok(())
        } else {
            Err(format!("DELETE answered {}", response.status))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_taken_whole_with_their_ids() {
        let mut buffer = BytesMut::from(
            &b": keep-alive\n\nid: s_1\ndata: \n\nid: s_2\nevent: message\ndata: {\"a\":\ndata: 1}\n\nid: s_3\nda"[..],
        );
        assert_eq!(
            take_event(&mut buffer),
            Some(Event {
                id: Some("s_1".into()),
                data: String::new()
            })
        );
        let second = take_event(&mut buffer).expect("a second event");
        assert_eq!(second.id.as_deref(), Some("s_2"));
        assert_eq!(second.data, "{\"a\":\n1}");
        assert_eq!(take_event(&mut buffer), None, "the third is not complete");
        buffer.extend_from_slice(b"ta: x\r\n\r\n");
        assert_eq!(take_event(&mut buffer).map(|e| e.data), Some("x".into()));
    }
}
