//! Streamable HTTP, client side, on hyper with rustls (no OpenSSL).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use mcp_core::backoff::{Backoff, BackoffConfig};
use mcp_core::{
    CancellationToken, Inbound, Outbound, Transport, TransportContext, TransportError,
    TransportReceiver, TransportSender,
};
use mcp_types::{CancelledNotificationParams, JsonRpcMessage, JsonRpcPayload, RequestId};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::authorizer::{AuthChallenge, Authorizer};
use super::sse::{SseDecoder, SseEvent};
use super::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};
use crate::Error;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The pooled HTTP/1.1 client (hyper-util with rustls) the transports use.
pub type HttpsClient = HyperClient<Connector, Full<Bytes>>;

/// A pooled HTTP/1.1 client with rustls and the system's trust roots.
///
/// # Errors
/// [`Error::Tls`] when the system's trust roots cannot be loaded.
pub fn hyper_client() -> Result<HttpsClient, Error> {
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|e| Error::Tls(e.to_string()))?
        .https_or_http()
        .enable_http1()
        .build();
    Ok(HyperClient::builder(hyper_util::rt::TokioExecutor::new()).build(connector))
}

/// Settings of a [`StreamableHttpClient`].
#[derive(Debug, Clone)]
pub struct HttpClientConfig {
    pub(crate) headers: HeaderMap,
    pub(crate) max_message: usize,
    max_reconnects: u32,
    default_retry: Duration,
    reconnect: BackoffConfig,
    open_get_stream: bool,
    terminate_on_close: bool,
    authorizer: Option<Arc<dyn Authorizer>>,
}

/// Challenges answered per request before its 401/403 is given up on.
const MAX_AUTH_ATTEMPTS: u32 = 3;

impl Default for HttpClientConfig {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            max_message: 32 * 1024 * 1024,
            max_reconnects: 5,
            default_retry: Duration::from_secs(1),
            reconnect: BackoffConfig::default(),
            open_get_stream: true,
            terminate_on_close: true,
            authorizer: None,
        }
    }
}

impl HttpClientConfig {
    /// Defaults: 32 MiB messages, up to 5 resumptions of a broken response
    /// stream, the GET stream opened after initialization, and every
    /// reconnection paced by [`BackoffConfig::default`]: the server's
    /// `retry` (1 s when it sends none) but never under 250 ms, doubled per
    /// failure in a row up to 30 s, at most 10 a minute.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header to every request (an API key, for instance).
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] when the name or value is not valid HTTP.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, Error> {
        let invalid = || Error::InvalidHeader {
            name: name.to_owned(),
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// The largest message accepted, in bytes.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// How many times a broken response stream is resumed before its
    /// request fails.
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// How reconnections of the GET stream and resumptions of response
    /// streams are paced, whatever `retry` the server sends (see
    /// [`new`](Self::new) for the defaults).
    pub fn reconnect(mut self, backoff: BackoffConfig) -> Self {
        self.reconnect = backoff;
        self
    }

    /// Credentials for every request, renewed when the server challenges.
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Whether to open the standalone GET stream for server-initiated
    /// messages once the session is initialized.
    pub fn open_get_stream(mut self, enabled: bool) -> Self {
        self.open_get_stream = enabled;
        self
    }

    /// Whether closing ends the server's session with a DELETE (on by
    /// default). Off leaves the session to the server's idle timeout, for
    /// a host that hands the session id on.
    pub fn terminate_on_close(mut self, enabled: bool) -> Self {
        self.terminate_on_close = enabled;
        self
    }
}

/// The client side of streamable HTTP as a [`Transport`]: each message is
/// POSTed; responses come back as JSON or SSE; the session id and protocol
/// version are tracked; broken streams resume with `Last-Event-ID`; the
/// session is DELETEd on close.
///
/// Failures are reported as what they are: a POST that cannot be sent or
/// whose answer breaks off fails its request with a
/// [`TransportError`] (`Connect`, `ConnectionLost`, `Http { status }`, ...),
/// never with a JSON-RPC error the server did not send. A JSON-RPC error
/// the server did send, even with a 4xx status, is delivered as its answer.
///
/// Each POST runs in a task the transport owns: when the caller gives up on
/// a request (the dispatcher sends `notifications/cancelled` for it), its
/// POST is aborted and its response stream dropped, so a server serving it
/// statelessly sees the disconnect; on close every task is aborted and
/// awaited.
pub struct StreamableHttpClient {
    shared: Arc<Shared>,
    rx: mpsc::Receiver<Inbound>,
}

impl fmt::Debug for StreamableHttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamableHttpClient")
            .field("uri", &self.shared.uri)
            .finish_non_exhaustive()
    }
}

struct Shared {
    uri: Uri,
    client: HttpsClient,
    config: HttpClientConfig,
    state: Mutex<ClientState>,
    inbound: mpsc::Sender<Inbound>,
    shutdown: CancellationToken,
    get_started: AtomicBool,
    tasks: Mutex<Tasks>,
}

#[derive(Default)]
struct ClientState {
    session_id: Option<String>,
    protocol_version: Option<String>,
    initialize_id: Option<RequestId>,
    /// The task of the session's GET stream, while it runs.
    get_stream: Option<AbortHandle>,
    /// The server forgot the session and no new one started yet: what is
    /// sent now (but `initialize`) fails as the forgotten session's, rather
    /// than go out without a session.
    expired: bool,
}

/// An HTTP exchange's response, with the session it was sent in.
struct Exchange {
    response: http::Response<hyper::body::Incoming>,
    /// The `Mcp-Session-Id` the request carried.
    session: Option<String>,
}

impl Exchange {
    /// The session the server no longer knows: the one this request carried
    /// when it was answered 404 (the transport spec's signal to start a new
    /// one).
    fn forgotten_session(&self) -> Option<&str> {
        self.session
            .as_deref()
            .filter(|_| self.response.status() == StatusCode::NOT_FOUND)
    }
}

/// The tasks this transport spawned: every POST and the GET stream.
#[derive(Default)]
struct Tasks {
    set: JoinSet<()>,
    /// The POST of each request still in flight, with the serial of its
    /// task so a finished task never removes a later one's entry.
    posts: HashMap<RequestId, (u64, AbortHandle)>,
    next_serial: u64,
}

impl StreamableHttpClient {
    /// A transport to the MCP endpoint at `url` (`http` or `https`).
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] for a URL that is not http(s);
    /// [`Error::Tls`] when the system's trust roots cannot be loaded.
    pub fn new(url: &str, config: HttpClientConfig) -> Result<Self, Error> {
        let uri: Uri = url.parse().map_err(|e| Error::InvalidUrl {
            url: url.to_owned(),
            reason: format!("{e}"),
        })?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => {
                return Err(Error::InvalidUrl {
                    url: url.to_owned(),
                    reason: "the scheme must be http or https".into(),
                });
            }
        }
        let client = hyper_client()?;
        let (tx, rx) = mpsc::channel(256);
        Ok(Self {
            shared: Arc::new(Shared {
                uri,
                client,
                config,
                state: Mutex::new(ClientState::default()),
                inbound: tx,
                shutdown: CancellationToken::new(),
                get_started: AtomicBool::new(false),
                tasks: Mutex::new(Tasks::default()),
            }),
            rx,
        })
    }
}

/// The sending half of a [`StreamableHttpClient`].
pub struct HttpClientSender {
    shared: Arc<Shared>,
}

/// The receiving half of a [`StreamableHttpClient`].
pub struct HttpClientReceiver {
    shared: Arc<Shared>,
    rx: mpsc::Receiver<Inbound>,
}

impl Transport for StreamableHttpClient {
    type Sender = HttpClientSender;
    type Receiver = HttpClientReceiver;

    fn network_transport(&self) -> Option<&'static str> {
        Some("tcp")
    }

    fn split(self) -> (HttpClientSender, HttpClientReceiver) {
        (
            HttpClientSender {
                shared: self.shared.clone(),
            },
            HttpClientReceiver {
                shared: self.shared,
                rx: self.rx,
            },
        )
    }
}

impl TransportReceiver for HttpClientReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        tokio::select! {
            message = self.rx.recv() => message,
            () = self.shared.shutdown.cancelled() => None,
        }
    }
}

impl TransportSender for HttpClientSender {
    async fn send(&mut self, outbound: Outbound) -> Result<(), TransportError> {
        if self.shared.shutdown.is_cancelled() {
            return Err(TransportError::Closed);
        }
        let initialize =
            matches!(&outbound.message, JsonRpcMessage::Request(r) if r.method == "initialize");
        if !initialize && self.shared.lock().expired {
            // Sent without a session, it would be refused as sessionless.
            let error = TransportError::SessionExpired {
                reached_server: false,
            };
            match &outbound.message {
                JsonRpcMessage::Request(r) => self.shared.fail_request(r.id.clone(), error).await,
                _ => self.shared.fault(error).await,
            }
            return Ok(());
        }
        let body = Bytes::from(outbound.message.to_vec()?);
        let request_id = match &outbound.message {
            JsonRpcMessage::Request(r) => {
                if r.method == "initialize" {
                    self.shared.lock().initialize_id = Some(r.id.clone());
                }
                Some(r.id.clone())
            }
            JsonRpcMessage::Notification(n) if n.method == "notifications/cancelled" => {
                // The caller gave up: stop reading the answer, so a server
                // serving the request statelessly sees the disconnect. The
                // notice itself still goes out for servers with sessions.
                let cancelled = n
                    .params
                    .as_ref()
                    .and_then(|p| p.parse::<CancelledNotificationParams>().ok())
                    .and_then(|p| p.request_id);
                if let Some(id) = cancelled {
                    self.shared.abort_post(&id);
                }
                None
            }
            _ => None,
        };
        let initialized = matches!(
            &outbound.message,
            JsonRpcMessage::Notification(n) if n.method == "notifications/initialized"
        );
        let shared = self.shared.clone();
        let extra = outbound.headers.clone();
        if initialized {
            // The session is ready once this lands: open the GET stream
            // before the dispatcher sends anything else, so that what the
            // server sends outside a request from now on has a stream.
            if let Err(error) = shared.post(body, &extra, None).await {
                shared.fault(error).await;
            }
            if shared.config.open_get_stream && !shared.get_started.swap(true, Ordering::SeqCst) {
                let no_headers = mcp_core::Headers::new();
                let opening = shared.request(Method::GET, Bytes::new(), &no_headers, None);
                let first = tokio::time::timeout(Duration::from_secs(5), opening)
                    .await
                    .ok()
                    .and_then(Result::ok);
                let get = shared.clone();
                let handle = shared.spawn(None, async move { get.standalone_stream(first).await });
                if let Some(old) = shared.lock().get_stream.replace(handle) {
                    old.abort();
                }
            }
            return Ok(());
        }
        // Each POST runs on its own: responses may stream for a long time.
        let post = shared.clone();
        shared.spawn(request_id.clone(), async move {
            let outcome = post.post(body, &extra, request_id.clone()).await;
            if let Err(error) = outcome {
                match request_id {
                    Some(id) => post.fail_request(id, error).await,
                    // Nobody waits on a notification or a response.
                    None => post.fault(error).await,
                }
            }
        });
        Ok(())
    }

    async fn close(&mut self) {
        let shared = self.shared.clone();
        shared.shutdown.cancel();
        let session = shared.lock().session_id.clone();
        if session.is_some() && shared.config.terminate_on_close {
            let no_headers = mcp_core::Headers::new();
            let delete = shared.request(Method::DELETE, Bytes::new(), &no_headers, None);
            match tokio::time::timeout(Duration::from_secs(2), delete).await {
                Ok(Ok(exchange)) => {
                    tracing::debug!(status = %exchange.response.status(), "session deleted");
                }
                Ok(Err(e)) => tracing::debug!(error = %e, "DELETE of the session failed"),
                Err(_) => tracing::debug!("DELETE of the session timed out"),
            }
        }
        // Nothing is sent after the shutdown above, so no task starts after
        // this; the ones running have nobody left to answer.
        let mut set = {
            let mut tasks = shared.tasks();
            tasks.posts.clear();
            std::mem::take(&mut tasks.set)
        };
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
}

/// The error of an HTTP exchange that got no response: the connection
/// could not be opened, or it broke before the response head.
pub(super) fn exchange_error(error: hyper_util::client::legacy::Error) -> TransportError {
    if error.is_connect() {
        TransportError::Connect(Box::new(error))
    } else {
        TransportError::ConnectionLost(Box::new(error))
    }
}

/// The JSON-RPC error a refused POST (`status` not 2xx) carried for the
/// request `id`: the server's own answer, which the caller gets as such.
/// `None` when the body is no JSON-RPC error for that request: the caller
/// then gets [`TransportError::Http`].
pub(super) fn refusal(body: &[u8], id: &RequestId) -> Option<JsonRpcMessage> {
    let Ok(JsonRpcMessage::Error(mut error)) = JsonRpcMessage::from_slice(body) else {
        return None;
    };
    match &error.id {
        // A null id: the server could not read ours, but this is its
        // answer to this POST.
        None => error.id = Some(id.clone()),
        Some(theirs) if theirs.to_string() == id.to_string() => {}
        Some(_) => return None,
    }
    Some(JsonRpcMessage::Error(error))
}

/// Whether `message` is the answer to request `id`.
fn answers(message: &JsonRpcMessage, id: &str) -> bool {
    match message {
        JsonRpcMessage::Response(r) => r.id.to_string() == id,
        JsonRpcMessage::Error(e) => e.id.as_ref().is_some_and(|e| e.to_string() == id),
        _ => false,
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ClientState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tasks(&self) -> MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `task` as one of this transport's tasks; with a request id, it
    /// is that request's POST and can be aborted by [`Self::abort_post`].
    fn spawn(
        self: &Arc<Self>,
        request: Option<RequestId>,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> AbortHandle {
        let mut tasks = self.tasks();
        // Reap what finished, so the set holds only live tasks.
        while tasks.set.try_join_next().is_some() {}
        let serial = tasks.next_serial;
        tasks.next_serial += 1;
        let Some(id) = request else {
            return tasks.set.spawn(task);
        };
        let shared = self.clone();
        let key = id.clone();
        let handle = tasks.set.spawn(async move {
            task.await;
            let mut tasks = shared.tasks();
            if tasks.posts.get(&key).is_some_and(|(s, _)| *s == serial) {
                tasks.posts.remove(&key);
            }
        });
        tasks.posts.insert(id, (serial, handle.clone()));
        handle
    }

    /// The server answered 404 to a request in `session`: it no longer
    /// knows it. The session is forgotten (unless a new one replaced it
    /// meanwhile) with its GET stream, so the next `initialize` starts a new
    /// one and the `notifications/initialized` after it opens a new stream.
    /// The error for the request (`reached_server`: whether it had been
    /// delivered before).
    fn session_gone(&self, session: &str, reached_server: bool) -> TransportError {
        let error = TransportError::SessionExpired { reached_server };
        let stream = {
            let mut state = self.lock();
            if state.session_id.as_deref() != Some(session) {
                return error;
            }
            tracing::info!(
                "the server no longer knows the session (HTTP 404); a new one is needed"
            );
            state.session_id = None;
            state.protocol_version = None;
            state.expired = true;
            state.get_stream.take()
        };
        self.get_started.store(false, Ordering::SeqCst);
        if let Some(stream) = stream {
            stream.abort();
        }
        error
    }

    /// Reports a failure no request waits on.
    async fn fault(&self, error: TransportError) {
        let _ = self.inbound.send(Inbound::Fault(error)).await;
    }

    /// Aborts the POST of request `id`, dropping its response stream.
    fn abort_post(&self, id: &RequestId) {
        if let Some((_, handle)) = self.tasks().posts.remove(id) {
            tracing::debug!(%id, "aborting the POST of a cancelled request");
            handle.abort();
        }
    }

    /// Sends one request; with an [`Authorizer`], a 401 or 403 gets its
    /// challenge answered and the request retried with the new credentials.
    async fn request(
        &self,
        method: Method,
        body: Bytes,
        extra: &mcp_core::Headers,
        last_event_id: Option<&str>,
    ) -> Result<Exchange, TransportError> {
        let mut attempts = 0;
        loop {
            let exchange = self
                .request_once(method.clone(), body.clone(), extra, last_event_id)
                .await?;
            let response = &exchange.response;
            let status = response.status();
            let Some(authorizer) = &self.config.authorizer else {
                return Ok(exchange);
            };
            if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
                return Ok(exchange);
            }
            attempts += 1;
            if attempts > MAX_AUTH_ATTEMPTS {
                return Ok(exchange);
            }
            let challenge = AuthChallenge {
                status: status.as_u16(),
                www_authenticate: response
                    .headers()
                    .get_all(http::header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect::<Vec<_>>()
                    .join(", "),
                url: self.uri.to_string(),
                dpop_nonce: response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            };
            match authorizer.challenge(challenge).await {
                Ok(true) => continue,
                Ok(false) => return Ok(exchange),
                Err(reason) => return Err(TransportError::Auth(reason)),
            }
        }
    }

    async fn request_once(
        &self,
        method: Method,
        body: Bytes,
        extra: &mcp_core::Headers,
        last_event_id: Option<&str>,
    ) -> Result<Exchange, TransportError> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method.clone();
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        for (name, value) in &self.config.headers {
            headers.append(name, value.clone());
        }
        for (name, value) in extra.iter() {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        if method == Method::POST {
            headers.insert(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        } else if method == Method::GET {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        let session = {
            let state = self.lock();
            let session = state
                .session_id
                .as_deref()
                .and_then(|s| HeaderValue::from_str(s).ok());
            if let Some(value) = &session {
                headers.insert(SESSION_ID_HEADER, value.clone());
            }
            if let Some(value) = state
                .protocol_version
                .as_deref()
                .and_then(|s| HeaderValue::from_str(s).ok())
            {
                headers.insert(PROTOCOL_VERSION_HEADER, value);
            }
            session.and(state.session_id.clone())
        };
        if let Some(value) = last_event_id.and_then(|s| HeaderValue::from_str(s).ok()) {
            headers.insert(mcp_types::routing::LAST_EVENT_ID_HEADER, value);
        }
        if let Some(authorizer) = &self.config.authorizer {
            for (name, value) in authorizer
                .headers(method.as_str().to_owned(), self.uri.to_string())
                .await
            {
                if let (Ok(name), Ok(mut value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(&value),
                ) {
                    // Credentials stay out of debug output.
                    value.set_sensitive(true);
                    request.headers_mut().insert(name, value);
                }
            }
        }
        let response = self.client.request(request).await.map_err(exchange_error)?;
        Ok(Exchange { response, session })
    }

    /// POSTs one message and delivers what comes back. For a request, `Ok`
    /// means its answer (a result or the server's JSON-RPC error) was
    /// delivered, or the transport is shutting down.
    async fn post(
        self: &Arc<Self>,
        body: Bytes,
        extra: &mcp_core::Headers,
        request_id: Option<RequestId>,
    ) -> Result<(), TransportError> {
        let exchange = self.request(Method::POST, body, extra, None).await?;
        if let Some(session) = exchange.forgotten_session() {
            // Refused before any handler ran: safe to send again in a new
            // session.
            return Err(self.session_gone(session, false));
        }
        let response = exchange.response;
        let status = response.status();
        if let Some(session) = response.headers().get(SESSION_ID_HEADER) {
            // Only visible ASCII may be sent back as a header of ours.
            let Some(session) = session
                .to_str()
                .ok()
                .filter(|s| mcp_types::routing::is_session_id(s))
            else {
                return Err(TransportError::InvalidSessionId);
            };
            let mut state = self.lock();
            if state.session_id.is_none() {
                state.session_id = Some(session.to_owned());
                state.expired = false;
            }
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !status.is_success() {
            let refused = TransportError::Http {
                status: status.as_u16(),
            };
            // The body only matters if it is the server's JSON-RPC error;
            // one that cannot be read leaves the status as the answer.
            let bytes = self.collect(response.into_body()).await.unwrap_or_default();
            let answer = request_id.as_ref().and_then(|id| refusal(&bytes, id));
            return match answer {
                Some(answer) => {
                    self.deliver(answer).await;
                    Ok(())
                }
                None => Err(refused),
            };
        }
        if is_sse {
            let related = request_id.clone();
            let expected = request_id.into_iter().collect();
            return self.read_sse(response.into_body(), expected, related).await;
        }
        let bytes = self.collect(response.into_body()).await?;
        let messages = if bytes.iter().all(u8::is_ascii_whitespace) {
            Vec::new()
        } else {
            match JsonRpcPayload::from_slice(&bytes) {
                Ok(JsonRpcPayload::Single(message)) => vec![message],
                Ok(JsonRpcPayload::Batch(messages)) => messages,
                Err(e) => return Err(TransportError::InvalidResponse(e)),
            }
        };
        let answered = request_id.as_ref().is_none_or(|id| {
            let id = id.to_string();
            messages.iter().any(|m| answers(m, &id))
        });
        for message in messages {
            self.deliver(message).await;
        }
        if answered {
            Ok(())
        } else {
            Err(TransportError::Unanswered { resumptions: 0 })
        }
    }

    async fn collect(&self, body: hyper::body::Incoming) -> Result<Bytes, TransportError> {
        let limit = self.config.max_message;
        http_body_util::Limited::new(body, limit)
            .collect()
            .await
            .map(|c| c.to_bytes())
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    TransportError::ResponseTooLarge { limit }
                } else {
                    TransportError::ConnectionLost(e)
                }
            })
    }

    /// Reads an SSE response; if it breaks before every expected response
    /// arrived, resumes it with GET + `Last-Event-ID` after the `retry` delay.
    /// Reads the SSE stream of the POST of `related` (if it carried a
    /// request): what the server sends on it is related to that request.
    async fn read_sse(
        self: &Arc<Self>,
        mut body: hyper::body::Incoming,
        mut expected: Vec<RequestId>,
        related: Option<RequestId>,
    ) -> Result<(), TransportError> {
        let mut last_event_id: Option<String> = None;
        let mut retry = self.config.default_retry;
        let mut reconnects = 0;
        // This stream's resumptions, paced whatever `retry` the server sends.
        let mut backoff = Backoff::new(self.config.reconnect);
        loop {
            let mut decoder = SseDecoder::new(self.config.max_message);
            let mut broke = None;
            loop {
                let frame = tokio::select! {
                    frame = body.frame() => frame,
                    () = self.shutdown.cancelled() => return Ok(()),
                };
                let chunk = match frame {
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) => data,
                        Err(_) => continue,
                    },
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "the SSE stream broke");
                        broke = Some(e);
                        break;
                    }
                    None => break,
                };
                let events = decoder
                    .feed(&chunk)
                    .map_err(|e| TransportError::ResponseTooLarge { limit: e.limit })?;
                for event in events {
                    let stream = (&mut last_event_id, &mut retry, &mut expected);
                    self.take_event(event, stream, related.as_ref()).await;
                }
                // Events arrive: the stream is healthy again.
                backoff.succeeded();
                if expected.is_empty() {
                    return Ok(());
                }
            }
            if expected.is_empty() {
                return Ok(());
            }
            // Why the answer is missing, should the stream not be resumed.
            let gone = match broke {
                Some(e) => TransportError::ConnectionLost(Box::new(e)),
                None => TransportError::Unanswered {
                    resumptions: reconnects,
                },
            };
            let Some(last) = last_event_id.clone() else {
                return Err(gone);
            };
            if reconnects >= self.config.max_reconnects {
                return Err(gone);
            }
            reconnects += 1;
            let Ok(wait) = backoff.next(Instant::now(), Some(retry)) else {
                return Err(gone);
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.shutdown.cancelled() => return Ok(()),
            }
            let exchange = self
                .request(Method::GET, Bytes::new(), &Default::default(), Some(&last))
                .await?;
            if let Some(session) = exchange.forgotten_session() {
                // The request was delivered and its handler may have run:
                // it is not sent again on its own.
                return Err(self.session_gone(session, true));
            }
            let response = exchange.response;
            if !response.status().is_success() {
                return Err(TransportError::Http {
                    status: response.status().as_u16(),
                });
            }
            body = response.into_body();
        }
    }

    async fn take_event(
        &self,
        event: SseEvent,
        (last_event_id, retry, expected): (&mut Option<String>, &mut Duration, &mut Vec<RequestId>),
        related: Option<&RequestId>,
    ) -> bool {
        if let Some(id) = event.id {
            *last_event_id = Some(id);
        }
        if let Some(r) = event.retry {
            *retry = r;
        }
        if event.data.trim().is_empty() {
            return false;
        }
        if event.event.as_deref().is_some_and(|e| e != "message") {
            return false;
        }
        match JsonRpcMessage::from_slice(event.data.as_bytes()) {
            Ok(message) => {
                expected.retain(|id| !answers(&message, &id.to_string()));
                self.deliver_related(message, related.cloned()).await;
                true
            }
            Err(e) => {
                // An answer that cannot be read still answers its request
                // (the dispatcher fails it): stop waiting for it here.
                if let Some(id) = &e.id {
                    expected.retain(|expected| expected.to_string() != id.to_string());
                }
                let _ = self.inbound.send(Inbound::Malformed(e)).await;
                true
            }
        }
    }

    async fn deliver(&self, message: JsonRpcMessage) {
        self.deliver_related(message, None).await;
    }

    /// Hands `message` on, related to our request `related` when it came
    /// on that request's stream.
    async fn deliver_related(&self, message: JsonRpcMessage, related: Option<RequestId>) {
        if let JsonRpcMessage::Response(response) = &message {
            let mut state = self.lock();
            if state.initialize_id.as_ref() == Some(&response.id) {
                state.initialize_id = None;
                #[derive(serde::Deserialize)]
                struct Version {
                    #[serde(rename = "protocolVersion")]
                    protocol_version: String,
                }
                if let Ok(v) = response.result.parse::<Version>() {
                    state.protocol_version = Some(v.protocol_version);
                }
            }
        }
        let mut context = TransportContext::default();
        context.related_request = related;
        let _ = self.inbound.send(Inbound::Message(message, context)).await;
    }

    async fn fail_request(&self, id: RequestId, error: TransportError) {
        let _ = self
            .inbound
            .send(Inbound::RequestFailed { id, error })
            .await;
    }

    /// The GET stream for server-initiated messages, reopened when it
    /// ends. Reopening is paced by the backoff whatever `retry` the server
    /// sends: a stream that delivered nothing counts as a failure, one that
    /// delivered a message starts the count over, and past the window's
    /// budget the stream waits (reporting a fault once) for the window to
    /// move on. It ends when the server offers no GET stream (405 or any
    /// other refusal) or no longer knows the session (404).
    async fn standalone_stream(self: Arc<Self>, mut first: Option<Exchange>) {
        let mut last_event_id: Option<String> = None;
        let mut retry = self.config.default_retry;
        let mut backoff = Backoff::new(self.config.reconnect);
        while !self.shutdown.is_cancelled() {
            let opened = match first.take() {
                Some(exchange) => Ok(exchange),
                None => {
                    self.request(
                        Method::GET,
                        Bytes::new(),
                        &Default::default(),
                        last_event_id.as_deref(),
                    )
                    .await
                }
            };
            let mut delivered = false;
            match opened {
                Err(e) => tracing::debug!(error = %e, "the GET stream could not be opened"),
                Ok(exchange) if exchange.forgotten_session().is_some() => {
                    let session = exchange.forgotten_session().unwrap_or_default();
                    let error = self.session_gone(session, false);
                    self.fault(error).await;
                    return;
                }
                Ok(exchange) if !exchange.response.status().is_success() => {
                    // 405: the server offers no GET stream; that is allowed.
                    tracing::debug!(status = %exchange.response.status(), "no GET stream");
                    return;
                }
                Ok(exchange) => {
                    delivered = self
                        .read_standalone(
                            exchange.response.into_body(),
                            &mut last_event_id,
                            &mut retry,
                        )
                        .await;
                }
            }
            if self.shutdown.is_cancelled() {
                return;
            }
            if delivered {
                backoff.succeeded();
            }
            let wait = match backoff.next(Instant::now(), Some(retry)) {
                Ok(wait) => wait,
                Err(spent) => {
                    tracing::warn!(
                        attempts = spent.attempts,
                        window = ?spent.window,
                        "the GET stream keeps ending; it waits for the reconnection budget"
                    );
                    self.fault(TransportError::ReconnectBudgetSpent {
                        attempts: spent.attempts,
                        window: spent.window,
                    })
                    .await;
                    spent
                        .until
                        .saturating_duration_since(Instant::now())
                        .max(backoff.config().floor)
                }
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.shutdown.cancelled() => return,
            }
        }
    }

    /// Reads one GET stream to its end; whether it delivered a message.
    async fn read_standalone(
        &self,
        mut body: hyper::body::Incoming,
        last_event_id: &mut Option<String>,
        retry: &mut Duration,
    ) -> bool {
        let mut decoder = SseDecoder::new(self.config.max_message);
        let mut none = Vec::new();
        let mut delivered = false;
        loop {
            let frame = tokio::select! {
                frame = body.frame() => frame,
                () = self.shutdown.cancelled() => return delivered,
            };
            let Some(Ok(frame)) = frame else {
                return delivered;
            };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            match decoder.feed(&chunk) {
                Ok(events) => {
                    for event in events {
                        let stream = (&mut *last_event_id, &mut *retry, &mut none);
                        delivered |= self.take_event(event, stream, None).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(
                        limit = e.limit,
                        "an SSE event on the GET stream was too large; raise \
                         HttpClientConfig::max_message to accept it"
                    );
                    self.fault(TransportError::ResponseTooLarge { limit: e.limit })
                        .await;
                    return delivered;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_the_servers_answer_only_when_it_is_a_json_rpc_error_for_the_request() {
        let id = RequestId::from(7);
        let null_id = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}"#;
        match refusal(null_id, &id) {
            Some(JsonRpcMessage::Error(e)) => assert_eq!(e.id, Some(id.clone())),
            other => panic!("the server's error, answering request 7: {other:?}"),
        }
        let same = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"bad"}}"#;
        assert!(refusal(same, &id).is_some());
        let other = br#"{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"bad"}}"#;
        assert!(refusal(other, &id).is_none());
        assert!(refusal(b"<html>Bad Gateway</html>", &id).is_none());
        let result = br#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        assert!(refusal(result, &id).is_none(), "a result is no refusal");
    }
}
