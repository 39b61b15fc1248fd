//! Streamable HTTP, server side: a `tower::Service` that turns HTTP requests
//! into sessions of JSON-RPC messages for a dispatcher.

// The `Err` of the request checks is the HTTP response to send; it is built
// and moved once per rejected request, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use mcp_core::{
    Headers, Inbound, Outbound, StreamControl, Transport, TransportContext, TransportError,
    TransportReceiver, TransportSender,
};
use mcp_types::{
    ErrorCode, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcPayload, RequestId,
    Revision,
};
use tokio::sync::{mpsc, oneshot};

use super::event_store::{EventStore, InMemoryEventStore};
use super::sse::encode_event;

use super::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};
const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// Frames queued per SSE connection; a client that falls further behind is
/// disconnected and resumes from the event store.
const LIVE_QUEUE: usize = 256;

/// Settings of a [`StreamableHttpService`].
#[derive(Clone)]
pub struct HttpServerConfig {
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    max_body: usize,
    max_sessions: usize,
    json_response: bool,
    retry: Option<Duration>,
    inbound_queue: usize,
    event_store: Arc<dyn EventStore>,
}

impl fmt::Debug for HttpServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServerConfig")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body", &self.max_body)
            .field("max_sessions", &self.max_sessions)
            .field("json_response", &self.json_response)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl Default for HttpServerConfig {
    fn default() -> Self {
        Self {
            allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()]),
            allowed_origins: None,
            max_body: 4 * 1024 * 1024,
            max_sessions: 1024,
            json_response: false,
            retry: None,
            inbound_queue: 64,
            event_store: Arc::new(InMemoryEventStore::default()),
        }
    }
}

impl HttpServerConfig {
    /// Localhost-safe defaults: only `Host`s (and `Origin`s) of localhost,
    /// 127.0.0.1 and [::1] on any port, 4 MiB bodies, 1024 sessions, SSE
    /// responses, in-memory event store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The host names (without port) accepted in `Host`, and in `Origin`
    /// unless [`allowed_origins`](Self::allowed_origins) is set. This guards
    /// against DNS rebinding: set it to the names the server is reached by.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Host` and `Origin`: only behind a proxy that checks them.
    pub fn allow_any_host(mut self) -> Self {
        self.allowed_hosts = None;
        self.allowed_origins = None;
        self
    }

    /// The exact origins (`scheme://host[:port]`) accepted in `Origin`.
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        origins: I,
    ) -> Self {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// The largest accepted request body, in bytes (larger ones get 413).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The most sessions open at once (more get 503).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Answer requests with a JSON body instead of an SSE stream
    /// (notifications sent while serving them then go to the GET stream).
    pub fn json_response(mut self, enabled: bool) -> Self {
        self.json_response = enabled;
        self
    }

    /// The `retry` hint sent with each stream's priming event: how long a
    /// client waits before reconnecting after the server closes a stream.
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Where SSE events are kept for resumption.
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = store;
        self
    }
}

type SessionFactory = Arc<dyn Fn(SessionTransport) + Send + Sync>;

/// Streamable HTTP (2025-03-26 to 2025-11-25) as a `tower::Service`: mount
/// it at the MCP endpoint of a hyper or axum app, or run it with [`serve`].
///
/// Each `initialize` POST opens a session with a random `Mcp-Session-Id`
/// and hands a [`SessionTransport`] to the factory, which starts a
/// dispatcher on it (`mcp-server` does this for a `Server`).
#[derive(Clone)]
pub struct StreamableHttpService {
    inner: Arc<ServiceInner>,
}

struct ServiceInner {
    config: HttpServerConfig,
    factory: SessionFactory,
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
}

impl StreamableHttpService {
    /// A service that starts each new session with `factory`.
    pub fn new(
        config: HttpServerConfig,
        factory: impl Fn(SessionTransport) + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(ServiceInner {
                config,
                factory: Arc::new(factory),
                sessions: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The number of open sessions.
    pub fn session_count(&self) -> usize {
        self.inner.lock_sessions().len()
    }

    /// Answers one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.inner.clone().handle(request).await
    }
}

impl<B> tower_service::Service<Request<B>> for StreamableHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        Box::pin(async move { Ok(inner.handle(request).await) })
    }
}

/// Serves `service` on `listener` (HTTP/1.1) until `shutdown` resolves.
///
/// # Errors
/// Only if accepting connections fails persistently; per-connection errors
/// are logged.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: StreamableHttpService,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let hyper_service = hyper::service::service_fn(move |request| {
                let service = service.clone();
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper_service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

/// Serves any tower service of the MCP endpoint (such as a
/// `BearerGuard` around a [`StreamableHttpService`]) on `listener`
/// (HTTP/1.1) until `shutdown` resolves.
///
/// # Errors
/// Only if accepting connections fails persistently.
pub async fn serve_service<S>(
    listener: tokio::net::TcpListener,
    service: S,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()>
where
    S: tower_service::Service<
            Request<hyper::body::Incoming>,
            Response = Response<HttpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let hyper_service = hyper::service::service_fn(move |request| {
                let mut service = service.clone();
                async move { service.call(request).await }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper_service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

/// The body of a response: empty, a JSON document, or an SSE stream.
pub struct HttpBody {
    kind: BodyKind,
    /// For a stateless exchange: dropping the body (the client went away)
    /// ends the exchange, which cancels the request.
    _guard: Option<ExchangeGuard>,
}

enum BodyKind {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl HttpBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: BodyKind::Full(None),
            _guard: None,
        }
    }

    /// A body of these bytes (a JSON document, say).
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            kind: BodyKind::Full(Some(bytes.into())),
            _guard: None,
        }
    }
}

impl fmt::Debug for HttpBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            BodyKind::Full(b) => {
                write!(f, "HttpBody::Full({:?} bytes)", b.as_ref().map(Bytes::len))
            }
            BodyKind::Stream(_) => f.write_str("HttpBody::Stream"),
        }
    }
}

impl Body for HttpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            BodyKind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            BodyKind::Stream(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.kind, BodyKind::Full(None))
    }
}

fn jsonrpc_error(
    status: StatusCode,
    code: ErrorCode,
    message: impl Into<String>,
) -> Response<HttpBody> {
    jsonrpc_error_with_id(status, None, ErrorObject::new(code, message))
}

fn jsonrpc_error_with_id(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> Response<HttpBody> {
    let body = serde_json::to_vec(&JsonRpcErrorResponse::new(id, error))
        .unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(HttpBody::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn plain_status(status: StatusCode) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody::empty());
    *response.status_mut() = status;
    response
}

fn sse_response(rx: mpsc::Receiver<Bytes>, session_id: Option<&str>) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody {
        kind: BodyKind::Stream(rx),
        _guard: None,
    });
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    set_session_header(headers, session_id);
    response
}

fn set_session_header(headers: &mut HeaderMap, session_id: Option<&str>) {
    if let Some(value) = session_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        headers.insert(SESSION_ID_HEADER, value);
    }
}

/// The principal `BearerGuard` verified for this request: the token's
/// issuer, subject and client, unambiguously joined; `None` without a guard
/// or without a subject or client in the token.
#[cfg(feature = "auth-server")]
fn principal_of(extensions: &http::Extensions) -> Option<Arc<str>> {
    let claims = extensions.get::<super::TokenClaims>()?;
    if claims.subject.is_none() && claims.client_id.is_none() {
        return None;
    }
    let who = serde_json::json!([claims.issuer, claims.subject, claims.client_id]);
    Some(who.to_string().into())
}

#[cfg(not(feature = "auth-server"))]
fn principal_of(_: &http::Extensions) -> Option<Arc<str>> {
    None
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn accepts(headers: &HeaderMap, media: &str) -> bool {
    headers.get_all(ACCEPT).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',').any(|part| {
                let part = part.split(';').next().unwrap_or("").trim();
                part == media || part == "*/*"
            })
        })
    })
}

fn host_name(authority: &str) -> &str {
    // `[::1]:8080` -> `[::1]`; `localhost:80` -> `localhost`.
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

impl ServiceInner {
    fn lock_sessions(&self) -> MutexGuard<'_, HashMap<Arc<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Host and Origin against DNS rebinding.
    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Response<HttpBody>> {
        let forbidden = |what: &str, value: &str| {
            tracing::warn!(what, value, "refused a request: not an allowed host");
            Err(jsonrpc_error(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                format!("{what} `{value}` is not allowed by this server"),
            ))
        };
        if let Some(hosts) = &self.config.allowed_hosts {
            let host = header_str(headers, HOST.as_str()).unwrap_or("");
            if !hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host_name(host)))
            {
                return forbidden("Host", host);
            }
        }
        if let Some(origin) = header_str(headers, ORIGIN.as_str()) {
            let allowed = match (&self.config.allowed_origins, &self.config.allowed_hosts) {
                (Some(origins), _) => origins.iter().any(|o| o.eq_ignore_ascii_case(origin)),
                (None, Some(hosts)) => origin.split_once("://").is_some_and(|(_, rest)| {
                    hosts
                        .iter()
                        .any(|h| h.eq_ignore_ascii_case(host_name(rest)))
                }),
                (None, None) => true,
            };
            if !allowed {
                return forbidden("Origin", origin);
            }
        }
        Ok(())
    }

    fn session_for(&self, headers: &HeaderMap) -> Result<Arc<Session>, Response<HttpBody>> {
        let Some(id) = header_str(headers, SESSION_ID_HEADER) else {
            return Err(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Bad Request: the Mcp-Session-Id header is required; initialize a session first",
            ));
        };
        let mut sessions = self.lock_sessions();
        match sessions.get(id) {
            Some(session) if !session.is_closed() => Ok(session.clone()),
            Some(_) => {
                sessions.remove(id);
                Err(session_not_found())
            }
            None => Err(session_not_found()),
        }
    }

    async fn handle<B>(self: Arc<Self>, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Err(response) = self.check_origin(request.headers()) {
            return response;
        }
        let stateless_version = header_str(request.headers(), PROTOCOL_VERSION_HEADER)
            .and_then(Revision::from_version)
            .is_some_and(|r| r.is_stateless());
        match *request.method() {
            Method::POST => self.post(request).await,
            // The stateless era has no GET stream and no sessions to delete.
            Method::GET | Method::DELETE if stateless_version => {
                let mut response = plain_status(StatusCode::METHOD_NOT_ALLOWED);
                response
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("POST"));
                response
            }
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()),
            _ => {
                let mut response = plain_status(StatusCode::METHOD_NOT_ALLOWED);
                response
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                response
            }
        }
    }

    fn check_protocol_version(headers: &HeaderMap) -> Result<(), Response<HttpBody>> {
        match header_str(headers, PROTOCOL_VERSION_HEADER) {
            None => Ok(()),
            Some(version) if Revision::from_version(version).is_some_and(|r| r.is_handshake()) => {
                Ok(())
            }
            Some(version) => Err(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Bad Request: unsupported MCP-Protocol-Version `{version}`; this endpoint \
                     speaks {}",
                    Revision::HANDSHAKE.map(|r| r.as_str()).join(", ")
                ),
            )),
        }
    }

    async fn post<B>(self: Arc<Self>, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let principal = principal_of(&parts.extensions);
        let headers = parts.headers;
        if !(accepts(&headers, "application/json") && accepts(&headers, "text/event-stream")) {
            return jsonrpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorCode::INVALID_REQUEST,
                "Not Acceptable: the Accept header must list both application/json and \
                 text/event-stream",
            );
        }
        let json_content = header_str(&headers, CONTENT_TYPE.as_str())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !json_content {
            return jsonrpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Unsupported Media Type: the Content-Type must be application/json",
            );
        }
        let limit = self.config.max_body;
        let bytes = match http_body_util::Limited::new(body, limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    return jsonrpc_error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        ErrorCode::INVALID_REQUEST,
                        format!("Payload Too Large: the body exceeds {limit} bytes"),
                    );
                }
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::PARSE_ERROR,
                    format!("the request body could not be read: {e}"),
                );
            }
        };
        let messages = match JsonRpcPayload::from_slice(&bytes) {
            Ok(JsonRpcPayload::Single(message)) => vec![message],
            Ok(JsonRpcPayload::Batch(messages)) => messages,
            Err(e) => {
                let error = e.to_error_object();
                return jsonrpc_error_with_id(StatusCode::BAD_REQUEST, None, error);
            }
        };
        if messages.is_empty() {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "an empty batch is not a valid request",
            );
        }
        let stateless = header_str(&headers, PROTOCOL_VERSION_HEADER)
            .is_some_and(|v| !Revision::from_version(v).is_some_and(|r| r.is_handshake()));
        if stateless {
            return self.stateless_post(messages, &headers, principal).await;
        }
        let initialize = messages
            .iter()
            .any(|m| matches!(m, JsonRpcMessage::Request(r) if r.method == "initialize"));
        let session = if initialize && header_str(&headers, SESSION_ID_HEADER).is_none() {
            if messages.len() > 1 {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "initialize must be sent alone, not in a batch",
                );
            }
            match self.open_session() {
                Ok(session) => session,
                Err(response) => return response,
            }
        } else {
            match self.session_for(&headers) {
                Ok(session) => session,
                Err(response) => return response,
            }
        };
        if !initialize {
            if let Err(response) = Self::check_protocol_version(&headers) {
                return response;
            }
        }
        session.accept_post(messages, &headers, initialize).await
    }

    /// One stateless (2026-07-28) exchange: a single request validated
    /// against its headers, served by a connection that lives as long as
    /// the exchange, answered with JSON, or with SSE once the handler sends
    /// a notification first.
    async fn stateless_post(
        self: Arc<Self>,
        mut messages: Vec<JsonRpcMessage>,
        headers: &HeaderMap,
        principal: Option<Arc<str>>,
    ) -> Response<HttpBody> {
        if messages.len() != 1 {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "a batch is not allowed at this protocol version: send one request per POST",
            );
        }
        let request = match messages.remove(0) {
            JsonRpcMessage::Request(request) => request,
            // Stateless clients have no notifications the server acts on.
            JsonRpcMessage::Notification(_) => return plain_status(StatusCode::ACCEPTED),
            _ => {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "a response cannot be posted at this protocol version",
                );
            }
        };
        if let Err(error) = validate_stateless(&request, headers) {
            return jsonrpc_error_with_id(status_for(error.code), Some(request.id), error);
        }
        let (inbound_tx, inbound_rx) = mpsc::channel(1);
        let session = Arc::new(Session {
            id: "".into(),
            inbound: Mutex::new(Some(inbound_tx.clone())),
            router: Mutex::new(Router::default()),
            store: self.config.event_store.clone(),
            retry: None,
            json_response: self.config.json_response,
            stateless: true,
        });
        (self.factory)(SessionTransport {
            sender: SessionSender {
                session: session.clone(),
            },
            receiver: SessionReceiver { rx: inbound_rx },
        });
        let guard = ExchangeGuard(session.clone());
        let (reply_tx, reply_rx) = oneshot::channel();
        let stream = {
            let mut router = session.lock();
            let stream = session.new_stream(&mut router, Live::Deferred(Some(reply_tx)), false);
            if let Some(s) = router.streams.get_mut(&stream) {
                s.open_requests = 1;
            }
            router.by_request.insert(request_key(&request.id), stream);
            stream
        };
        let _ = stream;
        let mut context = session.context(&to_headers(headers), None);
        // `requestState` is bound to it (2026-07-28 input-required results).
        context.principal = principal;
        if inbound_tx
            .send(Inbound::Message(JsonRpcMessage::Request(request), context))
            .await
            .is_err()
        {
            return jsonrpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                "the server could not take the request",
            );
        }
        drop(inbound_tx);
        match reply_rx.await {
            Ok(Deferred::Json(body)) => {
                let status = stateless_status(&body);
                let mut response = Response::new(HttpBody::full(body));
                *response.status_mut() = status;
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
            Ok(Deferred::Sse(rx)) => {
                let mut response = sse_response(rx, None);
                response
                    .headers_mut()
                    .insert("x-accel-buffering", HeaderValue::from_static("no"));
                let (parts, mut body) = response.into_parts();
                body._guard = Some(guard);
                Response::from_parts(parts, body)
            }
            Err(_) => jsonrpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                "the server ended the exchange without answering",
            ),
        }
    }

    fn open_session(&self) -> Result<Arc<Session>, Response<HttpBody>> {
        let mut sessions = self.lock_sessions();
        sessions.retain(|_, s| !s.is_closed());
        if sessions.len() >= self.config.max_sessions {
            return Err(jsonrpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                "Service Unavailable: too many open sessions; try again later",
            ));
        }
        let id: Arc<str> = new_session_id().into();
        let (inbound_tx, inbound_rx) = mpsc::channel(self.config.inbound_queue.max(1));
        let session = Arc::new(Session {
            id: id.clone(),
            inbound: Mutex::new(Some(inbound_tx)),
            router: Mutex::new(Router::default()),
            store: self.config.event_store.clone(),
            retry: self.config.retry,
            json_response: self.config.json_response,
            stateless: false,
        });
        sessions.insert(id, session.clone());
        drop(sessions);
        (self.factory)(SessionTransport {
            sender: SessionSender {
                session: session.clone(),
            },
            receiver: SessionReceiver { rx: inbound_rx },
        });
        Ok(session)
    }

    fn get(&self, headers: &HeaderMap) -> Response<HttpBody> {
        if !accepts(headers, "text/event-stream") {
            return jsonrpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorCode::INVALID_REQUEST,
                "Not Acceptable: the Accept header must list text/event-stream",
            );
        }
        let session = match self.session_for(headers) {
            Ok(session) => session,
            Err(response) => return response,
        };
        if let Err(response) = Self::check_protocol_version(headers) {
            return response;
        }
        match header_str(headers, LAST_EVENT_ID_HEADER) {
            Some(last) => session.resume(last),
            None => session.open_standalone(headers),
        }
    }

    fn delete(&self, headers: &HeaderMap) -> Response<HttpBody> {
        let session = match self.session_for(headers) {
            Ok(session) => session,
            Err(response) => return response,
        };
        self.lock_sessions().remove(&session.id);
        session.close();
        plain_status(StatusCode::OK)
    }
}

fn session_not_found() -> Response<HttpBody> {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "Not Found: no such session (it ended or never existed); initialize a new one",
    )
}

/// The HTTP status of a stateless error answer (SPEC-MAP §3.1).
fn status_for(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::INVALID_PARAMS
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn stateless_status(body: &[u8]) -> StatusCode {
    match JsonRpcMessage::from_slice(body) {
        Ok(JsonRpcMessage::Error(e)) => status_for(e.error.code),
        _ => StatusCode::OK,
    }
}

/// Decodes a routing header value: `=?base64?…?=` carries UTF-8 that is not
/// plain visible ASCII; anything else is literal.
fn decode_header_value(value: &str) -> Option<String> {
    use base64::Engine as _;
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_owned()),
    }
}

/// The stateless validation ladder: the `_meta` envelope, then headers
/// against the body, then the version (in this order, so that a header
/// naming one version and a body another is a mismatch, not an unsupported version).
fn validate_stateless(
    request: &mcp_types::JsonRpcRequest,
    headers: &HeaderMap,
) -> Result<(), ErrorObject> {
    #[derive(serde::Deserialize, Default)]
    struct Envelope {
        #[serde(rename = "_meta", default)]
        meta: Option<serde_json::Map<String, serde_json::Value>>,
        #[serde(default)]
        name: Option<serde_json::Value>,
        #[serde(default)]
        uri: Option<serde_json::Value>,
    }
    // A method this era does not have (`initialize`, `ping`, …) is 404 +
    // -32601 whatever else is wrong with the request.
    let exists = mcp_types::MethodInfo::lookup(
        &request.method,
        Revision::LATEST_STATELESS,
        mcp_types::Side::Client,
    )
    .is_some_and(|m| m.kind == mcp_types::MessageKind::Request);
    if !exists {
        return Err(ErrorObject::method_not_found(&request.method));
    }
    let envelope: Envelope = match &request.params {
        Some(params) => params.parse().unwrap_or_default(),
        None => Envelope::default(),
    };
    let meta = envelope.meta.unwrap_or_default();
    let version = meta
        .get(mcp_types::meta::PROTOCOL_VERSION)
        .and_then(serde_json::Value::as_str);
    let capabilities_ok = meta
        .get(mcp_types::meta::CLIENT_CAPABILITIES)
        .is_some_and(serde_json::Value::is_object);
    let Some(version) = version.filter(|_| capabilities_ok) else {
        return Err(ErrorObject::invalid_params(format!(
            "`params._meta` must carry `{}` and `{}` (an object) at this protocol version",
            mcp_types::meta::PROTOCOL_VERSION,
            mcp_types::meta::CLIENT_CAPABILITIES
        )));
    };
    let mismatch = |what: String| Err(ErrorObject::new(ErrorCode::HEADER_MISMATCH, what));
    let header_version = header_str(headers, PROTOCOL_VERSION_HEADER).unwrap_or("");
    if header_version != version {
        return mismatch(format!(
            "the MCP-Protocol-Version header `{header_version}` differs from the body's `{version}`"
        ));
    }
    if headers.get_all(METHOD_HEADER).iter().count() > 1
        || headers.get_all(NAME_HEADER).iter().count() > 1
    {
        return mismatch("a routing header appears more than once".into());
    }
    match header_str(headers, METHOD_HEADER) {
        Some(method) if method == request.method => {}
        Some(method) => {
            return mismatch(format!(
                "the Mcp-Method header `{method}` differs from the body's `{}`",
                request.method
            ));
        }
        None => return mismatch("the Mcp-Method header is required".into()),
    }
    let body_name = match request.method.as_str() {
        "tools/call" | "prompts/get" => Some(envelope.name),
        "resources/read" => Some(envelope.uri),
        _ => None,
    };
    if let Some(body_name) = body_name {
        let body_name = body_name.as_ref().and_then(serde_json::Value::as_str);
        let header_name = header_str(headers, NAME_HEADER).and_then(decode_header_value);
        if header_name.as_deref() != body_name {
            return mismatch(format!(
                "the Mcp-Name header {:?} differs from the body's {:?}",
                header_name, body_name
            ));
        }
    }
    if !Revision::from_version(version).is_some_and(|r| r.is_stateless()) {
        let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
        return Err(mcp_types::UnsupportedProtocolVersionData::new(
            supported.iter().map(|s| (*s).to_owned()).collect(),
            version,
        )
        .into_error(format!(
            "protocol version `{version}` is not supported; this server speaks {}",
            supported.join(", ")
        )));
    }
    Ok(())
}

const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// Ends a stateless exchange when dropped (the client went away, or the
/// answer was sent).
struct ExchangeGuard(Arc<Session>);

impl Drop for ExchangeGuard {
    fn drop(&mut self) {
        self.0.close();
    }
}

fn new_session_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 24];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS random source failing is not recoverable here; a
        // predictable id would be worse than refusing to make one.
        panic!("the operating system's random number generator is unavailable");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Where outbound messages of one session go.
#[derive(Default)]
struct Router {
    streams: HashMap<u64, Stream>,
    by_key: HashMap<String, u64>,
    by_request: HashMap<String, u64>,
    standalone: Option<u64>,
    next: u64,
    closed: bool,
}

enum Deferred {
    Json(Bytes),
    Sse(mpsc::Receiver<Bytes>),
}

enum Live {
    None,
    /// A stateless exchange before its first message: JSON if that is the
    /// response, SSE if a notification comes first.
    Deferred(Option<oneshot::Sender<Deferred>>),
    Sse(mpsc::Sender<Bytes>),
    Json {
        reply: Option<oneshot::Sender<Vec<Bytes>>>,
        collected: Vec<Bytes>,
    },
}

struct Stream {
    key: String,
    open_requests: usize,
    live: Live,
    standalone: bool,
}

fn request_key(id: &RequestId) -> String {
    id.to_string()
}

struct Session {
    id: Arc<str>,
    inbound: Mutex<Option<mpsc::Sender<Inbound>>>,
    router: Mutex<Router>,
    store: Arc<dyn EventStore>,
    retry: Option<Duration>,
    json_response: bool,
    /// A single stateless exchange: no event ids, no resumption, no server requests.
    stateless: bool,
}

impl Session {
    fn lock(&self) -> MutexGuard<'_, Router> {
        self.router.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    fn close(&self) {
        let mut router = self.lock();
        router.closed = true;
        for stream in router.streams.values_mut() {
            stream.live = Live::None;
            self.store.forget(&stream.key);
        }
        router.streams.clear();
        drop(router);
        self.inbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    fn new_stream(self: &Arc<Self>, router: &mut Router, live: Live, standalone: bool) -> u64 {
        let n = router.next;
        router.next += 1;
        let key = format!("{}.{n}", self.id);
        router.by_key.insert(key.clone(), n);
        router.streams.insert(
            n,
            Stream {
                key,
                open_requests: 0,
                live,
                standalone,
            },
        );
        n
    }

    /// Sends a priming event (an id and empty data) so the client can resume
    /// the stream even before the first message.
    fn prime(&self, router: &mut Router, stream: u64) {
        let Some(s) = router.streams.get_mut(&stream) else {
            return;
        };
        let id = self.store.append(&s.key, Bytes::new());
        if let Live::Sse(tx) = &s.live {
            let _ = tx.try_send(encode_event(Some(&id), self.retry, b""));
        }
    }

    async fn accept_post(
        self: Arc<Self>,
        messages: Vec<JsonRpcMessage>,
        headers: &HeaderMap,
        initialize: bool,
    ) -> Response<HttpBody> {
        let requests: Vec<RequestId> = messages
            .iter()
            .filter_map(|m| match m {
                JsonRpcMessage::Request(r) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        let context_headers = to_headers(headers);
        let Some(inbound) = self
            .inbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return session_not_found();
        };
        if requests.is_empty() {
            // Notifications and responses only: accepted, nothing to stream.
            for message in messages {
                let context = self.context(&context_headers, None);
                if inbound
                    .send(Inbound::Message(message, context))
                    .await
                    .is_err()
                {
                    return session_not_found();
                }
            }
            return plain_status(StatusCode::ACCEPTED);
        }

        let use_json = initialize || self.json_response;
        let (stream, body) = {
            let mut router = self.lock();
            if let Some(duplicate) = requests
                .iter()
                .find(|id| router.by_request.contains_key(&request_key(id)))
            {
                return jsonrpc_error_with_id(
                    StatusCode::BAD_REQUEST,
                    Some(duplicate.clone()),
                    ErrorObject::invalid_request(format!(
                        "request id {duplicate} is already in flight in this session"
                    )),
                );
            }
            let (live, body) = if use_json {
                let (tx, rx) = oneshot::channel();
                (
                    Live::Json {
                        reply: Some(tx),
                        collected: Vec::new(),
                    },
                    PostBody::Json(rx),
                )
            } else {
                let (tx, rx) = mpsc::channel(LIVE_QUEUE);
                (Live::Sse(tx), PostBody::Sse(rx))
            };
            let stream = self.new_stream(&mut router, live, false);
            if let Some(s) = router.streams.get_mut(&stream) {
                s.open_requests = requests.len();
            }
            for id in &requests {
                router.by_request.insert(request_key(id), stream);
            }
            let primes = header_str(headers, PROTOCOL_VERSION_HEADER)
                .is_some_and(|v| Revision::is_at_least(v, Revision::V2025_11_25));
            if !use_json && primes {
                self.prime(&mut router, stream);
            }
            (stream, body)
        };
        let control: Arc<dyn StreamControl> = Arc::new(StreamCloser {
            session: Arc::downgrade(&self),
            stream,
        });
        for message in messages {
            let control = matches!(message, JsonRpcMessage::Request(_)).then(|| control.clone());
            let context = self.context(&context_headers, control);
            if inbound
                .send(Inbound::Message(message, context))
                .await
                .is_err()
            {
                return session_not_found();
            }
        }
        let session_id = initialize.then_some(&*self.id);
        match body {
            PostBody::Sse(rx) => sse_response(rx, session_id),
            PostBody::Json(rx) => match rx.await {
                Ok(mut bodies) => {
                    let body = if bodies.len() == 1 {
                        bodies.remove(0)
                    } else {
                        let mut joined = Vec::from(&b"["[..]);
                        for (i, b) in bodies.iter().enumerate() {
                            if i > 0 {
                                joined.push(b',');
                            }
                            joined.extend_from_slice(b);
                        }
                        joined.push(b']');
                        Bytes::from(joined)
                    };
                    let mut response = Response::new(HttpBody::full(body));
                    response
                        .headers_mut()
                        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    set_session_header(response.headers_mut(), session_id);
                    response
                }
                Err(_) => jsonrpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::INTERNAL_ERROR,
                    "the session ended before answering",
                ),
            },
        }
    }

    fn context(
        &self,
        headers: &Headers,
        stream: Option<Arc<dyn StreamControl>>,
    ) -> TransportContext {
        let mut context = TransportContext::with_headers(headers.clone());
        context.session_id = Some(self.id.clone());
        context.stream = stream;
        context
    }

    fn open_standalone(self: &Arc<Self>, headers: &HeaderMap) -> Response<HttpBody> {
        let mut router = self.lock();
        if let Some(existing) = router.standalone {
            let live = router
                .streams
                .get(&existing)
                .is_some_and(|s| matches!(&s.live, Live::Sse(tx) if !tx.is_closed()));
            if live {
                return jsonrpc_error(
                    StatusCode::CONFLICT,
                    ErrorCode::INVALID_REQUEST,
                    "Conflict: this session already has a GET stream open",
                );
            }
        }
        let (tx, rx) = mpsc::channel(LIVE_QUEUE);
        let stream = self.new_stream(&mut router, Live::Sse(tx), true);
        router.standalone = Some(stream);
        if header_str(headers, PROTOCOL_VERSION_HEADER)
            .is_some_and(|v| Revision::is_at_least(v, Revision::V2025_11_25))
        {
            self.prime(&mut router, stream);
        }
        drop(router);
        sse_response(rx, None)
    }

    fn resume(self: &Arc<Self>, last_event_id: &str) -> Response<HttpBody> {
        let mut router = self.lock();
        let Some((key, events)) = self.store.replay_after(last_event_id) else {
            return jsonrpc_error(
                StatusCode::NOT_FOUND,
                ErrorCode::INVALID_REQUEST,
                format!("Not Found: event `{last_event_id}` cannot be resumed"),
            );
        };
        let Some(&stream_id) = router.by_key.get(&key) else {
            return jsonrpc_error(
                StatusCode::NOT_FOUND,
                ErrorCode::INVALID_REQUEST,
                "Not Found: that stream belongs to no open session",
            );
        };
        let (tx, rx) = mpsc::channel(LIVE_QUEUE.max(events.len() + 1));
        for (id, data) in events.iter().filter(|(_, d)| !d.is_empty()) {
            let _ = tx.try_send(encode_event(Some(id), None, data));
        }
        if let Some(stream) = router.streams.get_mut(&stream_id) {
            let finished = !stream.standalone && stream.open_requests == 0;
            // A finished stream replays and ends; an open one goes on live.
            stream.live = if finished { Live::None } else { Live::Sse(tx) };
        }
        drop(router);
        sse_response(rx, None)
    }

    /// Routes one outbound message.
    fn route(&self, outbound: Outbound) -> Result<(), TransportError> {
        let json = serde_json::to_vec(&outbound.message)?;
        let json = Bytes::from(json);
        let mut router = self.lock();
        if router.closed {
            return Err(TransportError::Closed);
        }
        let response_id = match &outbound.message {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = response_id {
            let Some(stream) = router.by_request.remove(&request_key(id)) else {
                tracing::debug!(%id, "no open request for this response; dropped");
                return Ok(());
            };
            let finished = self.deliver(&mut router, stream, json, true);
            drop(router);
            if finished && self.stateless {
                self.close();
            }
            return Ok(());
        }
        if self.stateless && matches!(outbound.message, JsonRpcMessage::Request(_)) {
            // The stateless era has no server-to-client requests (they are
            // input requests inside a result instead).
            tracing::warn!(
                method = outbound.message.method().unwrap_or(""),
                "a server request in a stateless exchange was dropped"
            );
            return Ok(());
        }
        let target = outbound
            .related_request
            .as_ref()
            .and_then(|id| router.by_request.get(&request_key(id)).copied())
            .filter(|s| {
                router
                    .streams
                    .get(s)
                    .is_some_and(|s| !matches!(s.live, Live::Json { .. }))
            })
            .or(router.standalone);
        let finished = match target {
            Some(stream) => self.deliver(&mut router, stream, json, false),
            None => {
                tracing::debug!(
                    method = outbound.message.method().unwrap_or(""),
                    "no stream to carry this message (no GET stream open); dropped"
                );
                false
            }
        };
        drop(router);
        if finished && self.stateless {
            self.close();
        }
        Ok(())
    }

    /// Puts one message on a stream; true when a stateless exchange is over
    /// (answered, or its client went away).
    fn deliver(&self, router: &mut Router, stream_id: u64, json: Bytes, is_response: bool) -> bool {
        let Some(stream) = router.streams.get_mut(&stream_id) else {
            return false;
        };
        match &mut stream.live {
            Live::Json { reply, collected } => {
                collected.push(json);
                if is_response {
                    stream.open_requests = stream.open_requests.saturating_sub(1);
                }
                if stream.open_requests == 0 {
                    if let Some(reply) = reply.take() {
                        let _ = reply.send(std::mem::take(collected));
                    }
                    stream.live = Live::None;
                }
                return false;
            }
            Live::Deferred(slot) => {
                let Some(slot) = slot.take() else {
                    return true;
                };
                if is_response {
                    let _ = slot.send(Deferred::Json(json));
                    stream.live = Live::None;
                    return true;
                }
                let (tx, rx) = mpsc::channel(LIVE_QUEUE);
                let _ = tx.try_send(encode_event(None, None, &json));
                if slot.send(Deferred::Sse(rx)).is_err() {
                    stream.live = Live::None;
                    return true;
                }
                stream.live = Live::Sse(tx);
                return false;
            }
            Live::Sse(_) | Live::None => {}
        }
        // Stateless streams cannot be resumed: no ids, nothing stored.
        let id = (!self.stateless).then(|| self.store.append(&stream.key, json.clone()));
        let mut gone = false;
        if let Live::Sse(tx) = &stream.live {
            if tx
                .try_send(encode_event(id.as_deref(), None, &json))
                .is_err()
            {
                // Gone or too slow: it can resume from the store.
                stream.live = Live::None;
                gone = true;
            }
        }
        if is_response {
            stream.open_requests = stream.open_requests.saturating_sub(1);
            if stream.open_requests == 0 && !stream.standalone {
                // Every request of this POST is answered: end its stream.
                stream.live = Live::None;
                return true;
            }
        }
        gone
    }
}

enum PostBody {
    Sse(mpsc::Receiver<Bytes>),
    Json(oneshot::Receiver<Vec<Bytes>>),
}

fn to_headers(map: &HeaderMap) -> Headers {
    let mut headers = Headers::new();
    for (name, value) in map {
        if let Ok(value) = value.to_str() {
            headers.append(name.as_str(), value);
        }
    }
    headers
}

#[derive(Debug)]
struct StreamCloser {
    session: Weak<Session>,
    stream: u64,
}

impl StreamControl for StreamCloser {
    fn close_stream(&self) {
        let Some(session) = self.session.upgrade() else {
            return;
        };
        let mut router = session.lock();
        if let Some(stream) = router.streams.get_mut(&self.stream) {
            if matches!(stream.live, Live::Sse(_)) {
                stream.live = Live::None;
            }
        }
    }
}

/// One HTTP session as a [`Transport`] for a dispatcher.
pub struct SessionTransport {
    sender: SessionSender,
    receiver: SessionReceiver,
}

impl fmt::Debug for SessionTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionTransport")
            .field("session_id", &self.sender.session.id)
            .finish()
    }
}

impl SessionTransport {
    /// The session's `Mcp-Session-Id`.
    pub fn session_id(&self) -> &str {
        &self.sender.session.id
    }
}

/// The sending half of a [`SessionTransport`].
pub struct SessionSender {
    session: Arc<Session>,
}

/// The receiving half of a [`SessionTransport`].
pub struct SessionReceiver {
    rx: mpsc::Receiver<Inbound>,
}

impl TransportSender for SessionSender {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        self.session.route(message)
    }

    async fn close(&mut self) {
        self.session.close();
    }
}

impl TransportReceiver for SessionReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        self.rx.recv().await
    }
}

impl Transport for SessionTransport {
    type Sender = SessionSender;
    type Receiver = SessionReceiver;

    fn split(self) -> (SessionSender, SessionReceiver) {
        (self.sender, self.receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_drop_the_port() {
        assert_eq!(host_name("localhost:3000"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "[::1]");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn accept_lists_are_read_with_parameters_and_wildcards() {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json;q=0.9, text/event-stream"),
        );
        assert!(accepts(&headers, "application/json"));
        assert!(accepts(&headers, "text/event-stream"));
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
        assert!(accepts(&headers, "text/event-stream"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/html"));
        assert!(!accepts(&headers, "application/json"));
    }

    #[test]
    fn session_ids_are_random_visible_ascii() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert!(a.len() >= 32);
        assert!(a.bytes().all(|c| (0x21..=0x7e).contains(&c)));
    }
}
