//! Streamable HTTP, server side: a `tower::Service` that turns HTTP requests
//! into sessions of JSON-RPC messages for a dispatcher.
//!
//! One job per module: [`config`] the settings, [`serve`](serve()) the ready
//! hyper server, `body` the response bodies and canned answers, `checks`
//! what a request must pass (Host/Origin, media types, version, the
//! stateless ladder), `session` the handshake-era sessions, `stateless` the
//! stateless exchange, `transport` the `Transport` a dispatcher gets. This
//! file is the service: it routes each request to a session or an exchange.

// The `Err` of the request checks is the HTTP response to send; it is built
// and moved once per rejected request, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

mod body;
mod checks;
mod config;
mod serve;
mod session;
mod stateless;
mod transport;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body::Body;
use mcp_core::Headers;
use mcp_types::{ErrorCode, JsonRpcMessage, JsonRpcPayload};
use tokio::sync::mpsc;

pub use body::HttpBody;
pub use config::HttpServerConfig;
pub use serve::serve;
pub use transport::{SessionReceiver, SessionSender, SessionTransport};

use body::{jsonrpc_error, jsonrpc_error_with_id, method_not_allowed, plain_status, read_body};
use checks::{Era, header_str};
use session::Session;

use super::SESSION_ID_HEADER;
const LAST_EVENT_ID_HEADER: &str = "last-event-id";

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

impl ServiceInner {
    fn lock_sessions(&self) -> MutexGuard<'_, HashMap<Arc<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a dispatcher on a session or an exchange.
    fn start(&self, transport: SessionTransport) {
        (self.factory)(transport);
    }

    async fn handle<B>(self: Arc<Self>, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Err(response) = checks::check_origin(&self.config, request.headers()) {
            return response;
        }
        match *request.method() {
            Method::POST => self.post(request).await,
            // The stateless era has no GET stream and no sessions to delete.
            Method::GET | Method::DELETE if checks::era(request.headers()) == Era::Stateless => {
                method_not_allowed("POST")
            }
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()),
            _ => method_not_allowed("GET, POST, DELETE"),
        }
    }

    async fn post<B>(self: Arc<Self>, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let headers = parts.headers;
        if let Err(response) = checks::check_post_media(&headers) {
            return response;
        }
        let bytes = match read_body(body, self.config.max_body).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
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
        if checks::era(&headers) != Era::Handshake {
            return stateless::exchange(&self, messages, &headers).await;
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
        session.accept_post(messages, &headers, initialize).await
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
                Err(body::session_not_found())
            }
            None => Err(body::session_not_found()),
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
        let id: Arc<str> = session::new_session_id().into();
        let (inbound_tx, inbound_rx) = mpsc::channel(self.config.inbound_queue.max(1));
        let session = Arc::new(Session::new(id.clone(), inbound_tx, &self.config));
        sessions.insert(id, session.clone());
        drop(sessions);
        self.start(SessionTransport::session(session.clone(), inbound_rx));
        Ok(session)
    }

    fn get(&self, headers: &HeaderMap) -> Response<HttpBody> {
        if !checks::accepts(headers, "text/event-stream") {
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
        if let Err(response) = checks::check_protocol_version(headers) {
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

/// The request's headers as the dispatcher sees them (visible ASCII values).
fn to_headers(map: &HeaderMap) -> Headers {
    let mut headers = Headers::new();
    for (name, value) in map {
        if let Ok(value) = value.to_str() {
            headers.append(name.as_str(), value);
        }
    }
    headers
}
