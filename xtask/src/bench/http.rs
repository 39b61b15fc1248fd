//! HTTP rows: 1 to 256 keep-alive connections, each sending `tools/call`
//! sequentially over hyper's lean http1 client connection (no pool, no
//! TLS), and reading every response body to its end, JSON or SSE. The
//! scale rows (`scale.rs`) open sessions and GET streams with the same
//! client.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::task::{JoinHandle, JoinSet};

use super::child::{self, Server};
use super::gateway;
use super::report::Row;
use super::{Budget, CallTemplate, Case, Kind, PEER_TIMEOUT, Programs, Sample, check_echo};

const HANDSHAKE_REVISION: &str = "2025-11-25";
const STATELESS_REVISION: &str = "2026-07-28";

pub(super) async fn measure(
    programs: &Programs,
    case: Case,
    budget: Budget,
) -> Result<Row, String> {
    let (server, address) = if case.kind.is_gateway() {
        gateway::spawn(programs).await?
    } else {
        let (program, args) = programs.server(case.kind)?;
        let mut server = Server::spawn(&program, args)?;
        let address = server.read_address().await?;
        (server, address)
    };
    let mut clients = Vec::with_capacity(case.parallel);
    for _ in 0..case.parallel {
        let mut client = Client::open(address, case).await?;
        client.probe().await?;
        clients.push(client);
    }
    if !budget.warmup.is_zero() {
        let (warm, _) = load(clients, budget.warmup, budget.max_calls).await?;
        clients = warm;
    }
    let cpu_before = server.cpu_time()?;
    let own_cpu_before = child::cpu_time(std::process::id())?;
    let (clients, sample) = load(clients, budget.measure, budget.max_calls).await?;
    let cpu = server.cpu_time()?.saturating_sub(cpu_before);
    let own_cpu = child::cpu_time(std::process::id())?.saturating_sub(own_cpu_before);
    let peak_rss_kib = server.peak_rss_kib()?;
    for client in clients {
        client.close().await;
    }
    if case.kind.is_gateway() {
        // The gateway stops and reaps its upstream on SIGTERM.
        server.terminate().await?;
    } else {
        server.kill().await?;
    }
    Ok(Row::new(case, sample, cpu, own_cpu, peak_rss_kib))
}

/// Every client calls until `duration` has passed (or together they made
/// `max_calls`), then hands its connection back for the next phase.
pub(super) async fn load(
    clients: Vec<Client>,
    duration: Duration,
    max_calls: usize,
) -> Result<(Vec<Client>, Sample), String> {
    let start = Instant::now();
    let deadline = start + duration;
    let per_client = max_calls.div_ceil(clients.len().max(1));
    let mut tasks = JoinSet::new();
    for mut client in clients {
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while latencies.len() < per_client && Instant::now() < deadline {
                let sent = Instant::now();
                client.call().await?;
                latencies.push(sent.elapsed());
            }
            Ok::<_, String>((client, latencies))
        });
    }
    let mut clients = Vec::new();
    let mut sample = Sample::default();
    while let Some(joined) = tasks.join_next().await {
        let (client, latencies) = joined.map_err(|e| format!("a client task failed: {e}"))??;
        for latency in latencies {
            sample.record(latency);
        }
        clients.push(client);
    }
    Ok((clients, sample.finish(start.elapsed())))
}

/// One keep-alive connection speaking one era.
pub(super) struct Client {
    sender: SendRequest<Full<Bytes>>,
    /// Drives the connection; ends when `sender` is dropped.
    connection: JoinHandle<()>,
    host: HeaderValue,
    kind: Kind,
    /// The session this connection opened (2025-11-25 rows).
    session: Option<HeaderValue>,
    /// The headers every `tools/call` of this era carries.
    call_headers: Vec<(HeaderName, HeaderValue)>,
    template: CallTemplate,
    next_id: u64,
    body: Vec<u8>,
    /// An open GET stream's body, kept unread ([`Client::open_stream`]).
    stream: Option<Incoming>,
}

impl Client {
    /// A connection that has opened its session (2025-11-25) or knows
    /// its stateless headers (2026-07-28), ready to call.
    pub(super) async fn open(address: SocketAddr, case: Case) -> Result<Self, String> {
        let mut client = Self::connect(address, case).await?;
        let version = HeaderName::from_static("mcp-protocol-version");
        if case.kind.is_session_era() {
            let session = client.new_session().await?;
            client.call_headers = vec![
                (HeaderName::from_static("mcp-session-id"), session.clone()),
                (version, HeaderValue::from_static(HANDSHAKE_REVISION)),
            ];
            client.session = Some(session);
        } else if case.kind.is_stateless_era() {
            client.call_headers = vec![
                (version, HeaderValue::from_static(STATELESS_REVISION)),
                (
                    HeaderName::from_static("mcp-method"),
                    HeaderValue::from_static("tools/call"),
                ),
                (
                    HeaderName::from_static("mcp-name"),
                    HeaderValue::from_static("echo"),
                ),
            ];
        }
        Ok(client)
    }

    /// A bare keep-alive connection: no session, no request sent yet.
    pub(super) async fn connect(address: SocketAddr, case: Case) -> Result<Self, String> {
        let stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| format!("cannot connect to {address}: {e}"))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("cannot set TCP_NODELAY: {e}"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {address}: {e}"))?;
        let connection = tokio::spawn(async move {
            let _ = connection.await;
        });
        let host = HeaderValue::from_str(&address.to_string())
            .map_err(|e| format!("{address} is not a Host header: {e}"))?;
        let meta = case.kind.is_stateless_era().then(|| {
            serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_REVISION,
                "io.modelcontextprotocol/clientInfo": {"name": "xtask-bench", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            })
        });
        Ok(Self {
            sender,
            connection,
            host,
            kind: case.kind,
            session: None,
            call_headers: Vec::new(),
            template: CallTemplate::new(case.payload, meta),
            next_id: 1,
            body: Vec::new(),
            stream: None,
        })
    }

    /// The session this connection opened, if it did.
    pub(super) fn session(&self) -> Option<&HeaderValue> {
        self.session.as_ref()
    }

    /// `initialize` and `notifications/initialized` over this connection:
    /// a new session, whose id it returns. The server must agree to
    /// 2025-11-25, so every server's rows speak the same revision.
    pub(super) async fn new_session(&mut self) -> Result<HeaderValue, String> {
        let initialize = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{HANDSHAKE_REVISION}","capabilities":{{}},"clientInfo":{{"name":"xtask-bench","version":"0"}}}}}}"#
        );
        let response = self.post(Bytes::from(initialize), &[]).await?;
        if response.status != StatusCode::OK {
            return Err(format!("initialize answered {}", response.status));
        }
        let answer = last_data(&response.body).unwrap_or_else(|| response.body.to_vec());
        let agreed = serde_json::from_slice::<serde_json::Value>(&answer)
            .ok()
            .and_then(|v| v["result"]["protocolVersion"].as_str().map(str::to_owned));
        if agreed.as_deref() != Some(HANDSHAKE_REVISION) {
            return Err(format!(
                "initialize did not agree to {HANDSHAKE_REVISION}: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        let session = response
            .session
            .ok_or("initialize answered without Mcp-Session-Id")?;
        let headers = [
            (HeaderName::from_static("mcp-session-id"), session.clone()),
            (
                HeaderName::from_static("mcp-protocol-version"),
                HeaderValue::from_static(HANDSHAKE_REVISION),
            ),
        ];
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let response = self
            .post(Bytes::from_static(initialized.as_bytes()), &headers)
            .await?;
        if response.status != StatusCode::ACCEPTED {
            return Err(format!(
                "notifications/initialized answered {}",
                response.status
            ));
        }
        Ok(session)
    }

    /// One `tools/call`; fails unless it is answered 200 with a result.
    async fn call(&mut self) -> Result<Bytes, String> {
        self.body.clear();
        self.template.write(self.next_id, &mut self.body);
        self.next_id += 1;
        let headers = std::mem::take(&mut self.call_headers);
        let posted = self
            .post(Bytes::copy_from_slice(&self.body), &headers)
            .await;
        self.call_headers = headers;
        let response = posted?;
        if response.status != StatusCode::OK {
            return Err(format!(
                "tools/call answered {}: {}",
                response.status,
                String::from_utf8_lossy(&response.body)
            ));
        }
        if !response.body.windows(9).any(|w| w == br#""result":"#) {
            return Err(format!(
                "tools/call answered without a result: {}",
                String::from_utf8_lossy(&response.body)
            ));
        }
        Ok(response.body)
    }

    /// One call whose answer is checked in full.
    pub(super) async fn probe(&mut self) -> Result<(), String> {
        let body = self.call().await?;
        let answer = if self.kind.is_raw() {
            body.to_vec()
        } else {
            last_data(&body).unwrap_or_else(|| body.to_vec())
        };
        check_echo(&answer, &self.template.message)
    }

    /// Opens a GET stream (of this connection's session, if it has one)
    /// and keeps it open, unread, until the connection closes: returns once
    /// the server has answered `200 text/event-stream`.
    pub(super) async fn open_stream(
        &mut self,
        session: Option<&HeaderValue>,
    ) -> Result<(), String> {
        let mut request = Request::get("/mcp")
            .header(hyper::header::HOST, self.host.clone())
            .header(hyper::header::ACCEPT, "text/event-stream");
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", HANDSHAKE_REVISION);
        }
        let request = request
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("building a request: {e}"))?;
        let response = tokio::time::timeout(PEER_TIMEOUT, self.sender.send_request(request))
            .await
            .map_err(|_| "no response to a GET in 30 s".to_owned())?
            .map_err(|e| format!("sending a GET: {e}"))?;
        let event_stream = response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if response.status() != StatusCode::OK || !event_stream {
            return Err(format!(
                "a GET stream answered {} {:?}",
                response.status(),
                response.headers().get(hyper::header::CONTENT_TYPE)
            ));
        }
        self.stream = Some(response.into_body());
        Ok(())
    }

    async fn post(
        &mut self,
        body: Bytes,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<Response, String> {
        let mut request = Request::post("/mcp")
            .header(hyper::header::HOST, self.host.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| format!("building a request: {e}"))?;
        let exchange = async {
            let response = self
                .sender
                .send_request(request)
                .await
                .map_err(|e| format!("sending a request: {e}"))?;
            let status = response.status();
            let session = response.headers().get("mcp-session-id").cloned();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("reading a response body: {e}"))?
                .to_bytes();
            Ok::<_, String>(Response {
                status,
                session,
                body,
            })
        };
        tokio::time::timeout(PEER_TIMEOUT, exchange)
            .await
            .map_err(|_| "no response from the server in 30 s".to_owned())?
    }

    /// Closes the connection and waits for its driver to finish.
    pub(super) async fn close(self) {
        drop(self.stream);
        drop(self.sender);
        if tokio::time::timeout(Duration::from_secs(5), self.connection)
            .await
            .is_err()
        {
            eprintln!("a benchmark connection did not close in 5 s");
        }
    }
}

struct Response {
    status: StatusCode,
    session: Option<HeaderValue>,
    body: Bytes,
}

/// The data of the last SSE event that has any, or `None` for a body that
/// is not an event stream.
fn last_data(body: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut last = None;
    let mut current: Option<String> = None;
    for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
        if line.is_empty() {
            if let Some(data) = current.take().filter(|d| !d.is_empty()) {
                last = Some(data);
            }
        } else if let Some(data) = line.strip_prefix("data:") {
            let data = data.strip_prefix(' ').unwrap_or(data);
            match &mut current {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(data);
                }
                None => current = Some(data.to_owned()),
            }
        }
    }
    if let Some(data) = current.filter(|d| !d.is_empty()) {
        last = Some(data);
    }
    last.map(String::into_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_event_with_data_is_the_answer() {
        let body = b"id: 1\ndata: \n\nid: 2\nevent: message\ndata: {\"a\":1}\n\n";
        assert_eq!(last_data(body), Some(br#"{"a":1}"#.to_vec()));
        assert_eq!(last_data(b"data: x\r\n"), Some(b"x".to_vec()));
        assert_eq!(last_data(b"{\"plain\":true}"), None);
    }
}
