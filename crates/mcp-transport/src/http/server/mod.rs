//! Streamable HTTP, server side: a `tower::Service` that turns HTTP requests
//! into sessions of JSON-RPC messages for a dispatcher.
//!
//! One job per module: `config` the settings, `serve` the ready hyper
//! server, `body` the response bodies and canned answers, `edge` which
//! requests reach the endpoint (its path, 404 elsewhere), `cors` the grant
//! to browser pages on other origins, `checks` what a request must pass
//! (Host/Origin, media types, version, the stateless ladder), `session` the
//! handshake-era sessions, `stateless` the stateless exchange, `opening` what
//! the factory is handed. This file is the service: it routes each request
//! to a session or an exchange.

// The `Err` of the request checks is the HTTP response to send; it is built
// and moved once per rejected request, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

mod body;
mod checks;
mod config;
mod cors;
mod edge;
// Entry points for `fuzz/` only: not API (see the module).
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod health;
mod opening;
mod serve;
mod session;
mod shared;
mod stateless;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body::Body;
use mcp_core::{Dispatcher, Headers};
use mcp_types::{ErrorCode, JsonRpcMessage, JsonRpcPayload};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use body::HttpBody;
pub use config::{DEFAULT_ALLOWED_HOSTS, HttpServerConfig};
pub use cors::{CorsConfig, CorsLayer, CorsService};
pub use edge::DEFAULT_PATH;
#[cfg(feature = "auth-server")]
pub(crate) use edge::is_well_known;
pub use health::{Health, LIVENESS_PATH, READINESS_PATH, Readiness};
pub use opening::Opening;
pub use serve::{PeerAddr, ServeConfig, serve};

use body::{jsonrpc_error, jsonrpc_error_with_id, method_not_allowed, plain_status, read_body};
use checks::header_str;
use mcp_types::Era;
use session::Session;
use stateless::Exchanges;

type SessionFactory = Arc<dyn Fn(Opening) -> Dispatcher + Send + Sync>;

/// Streamable HTTP as a `tower::Service`: the handshake era (2025-03-26 to
/// 2025-11-25, sessions) and the stateless era (2026-07-28, one exchange
/// per POST) on one endpoint. Mount it at the MCP endpoint of a hyper or
/// axum app, or run it with [`serve`]. It serves MCP at
/// [`HttpServerConfig::path`] (`/mcp` by default) and answers any other
/// path `404`; browser pages on other origins need
/// [`HttpServerConfig::cors`].
///
/// Each `initialize` POST opens a session with a random `Mcp-Session-Id`
/// and hands its [`Opening`] to the factory, which answers with the
/// [`mcp_core::Dispatcher`] serving it (`mcp-server` makes one for a
/// `Server`); the service drives it, calling each POST's request in the
/// POST's own task, so an idle session runs no task. Stateless POSTs share
/// one more dispatcher, asked of the factory on the first of them (an
/// opening with no session id). Idle sessions expire after
/// [`HttpServerConfig::idle_timeout`]; at [`HttpServerConfig::max_sessions`]
/// the least recently used idle session makes room for a new one.
///
/// Mounted in your own hyper or axum server, set `TCP_NODELAY` on accepted
/// sockets (axum: `serve(listener.tap_io(|tcp| tcp.set_nodelay(true)))`,
/// hyper: `TcpStream::set_nodelay(true)` before `serve_connection`):
/// otherwise each SSE answer waits for the client's delayed ACK, about
/// 40 ms per call. Set a header read timeout there too. At shutdown, call
/// [`ShutdownHandle::drain`] (from [`shutdown_handle`](Self::shutdown_handle))
/// when you stop accepting, so that open GET streams end and graceful
/// shutdown can complete, and [`ShutdownHandle::close`] when your server
/// has stopped, to cancel and await what still runs.
#[derive(Clone)]
pub struct StreamableHttpService {
    inner: Arc<ServiceInner>,
}

/// The sessions this server holds, by id.
type SessionMap = foldhash::HashMap<Arc<str>, Arc<Session>>;

struct ServiceInner {
    config: HttpServerConfig,
    factory: SessionFactory,
    /// By id. The ids are this server's random ones (a client can look
    /// one up, never add one), so the fast hasher is safe here.
    sessions: Mutex<SessionMap>,
    exchanges: Arc<Exchanges>,
    /// The dispatcher of every stateless exchange, made on first use.
    stateless: std::sync::OnceLock<Dispatcher>,
    /// What serves sessions beyond their requests (the factory's tasks),
    /// the session sweeper, and the rest of runs whose answer streams.
    tasks: TaskTracker,
    /// Cancelled when the service drains: no new sessions, no GET streams.
    draining: CancellationToken,
    sweeper: AtomicBool,
    /// The stores shared with other servers, if any.
    shared: Option<shared::Shared>,
    /// Answers `/livez` and `/readyz`.
    health: Health,
    /// The CORS grant at the endpoint, if configured.
    cors: Option<CorsLayer>,
}

/// What a [`StreamableHttpService`] holds, for metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceStats {
    /// Open sessions.
    pub sessions: usize,
    /// SSE streams kept by those sessions (open, or answered and still
    /// resumable).
    pub streams: usize,
    /// Events kept for resumption by those sessions.
    pub stored_events: usize,
    /// Bytes of those events.
    pub stored_event_bytes: usize,
    /// Stateless exchanges running.
    pub exchanges: usize,
    /// Dispatcher tasks (and the sweeper) the service runs.
    pub tasks: usize,
}

/// Shuts a [`StreamableHttpService`] down: [`drain`](Self::drain) when the
/// server stops accepting, [`close`](Self::close) when the grace is over.
#[derive(Clone)]
pub struct ShutdownHandle {
    inner: Arc<ServiceInner>,
}

impl std::fmt::Debug for ShutdownHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownHandle")
            .field("draining", &self.inner.draining.is_cancelled())
            .finish()
    }
}

impl ShutdownHandle {
    /// Begins shutdown: every GET stream and stateless `subscriptions/listen`
    /// stream ends, new sessions and such streams are refused (503),
    /// requests in flight go on to their answer.
    pub fn drain(&self) {
        self.inner.drain();
    }

    /// A token cancelled when the service begins to drain (to chain other
    /// work to it, or to drain by cancelling it).
    pub fn token(&self) -> CancellationToken {
        self.inner.draining.clone()
    }

    /// Ends every session and exchange (their running handlers are
    /// cancelled) and waits until their dispatchers have stopped.
    ///
    /// # Cancel safety
    /// Dropping the future after it started leaves the service drained and its
    /// sessions closed; only the wait for their tasks is given up.
    pub async fn close(&self) {
        self.inner.drain();
        let sessions: Vec<_> = self.inner.lock_sessions().drain().map(|(_, s)| s).collect();
        for session in sessions {
            tracing::debug!(session = %session.tag(), "session closed: the server shuts down");
            session.close();
        }
        self.inner.exchanges.close_all();
        if let Some(stateless) = self.inner.stateless.get() {
            stateless.close();
        }
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
    }
}

impl StreamableHttpService {
    /// A service serving each session it opens, and its stateless
    /// exchanges, with the dispatcher `factory` makes for the [`Opening`]
    /// (usually `opening.serve(handler, config)`).
    pub fn new<F>(mut config: HttpServerConfig, factory: F) -> Self
    where
        F: Fn(Opening) -> Dispatcher + Send + Sync + 'static,
    {
        if let Some(cors) = config.cors.as_mut() {
            cors::agree(cors, &mut config.allowed_origins);
        }
        let cors = config.cors.as_ref().map(CorsConfig::layer);
        let shared = config.shared.clone().map(shared::Shared::new);
        let draining = CancellationToken::new();
        let health = Health::new(
            config.shared.clone(),
            draining.clone(),
            config.readiness_reuse,
        );
        Self {
            inner: Arc::new(ServiceInner {
                shared,
                health,
                cors,
                config,
                factory: Arc::new(factory),
                sessions: Mutex::new(SessionMap::default()),
                exchanges: Arc::default(),
                stateless: std::sync::OnceLock::new(),
                tasks: TaskTracker::new(),
                draining,
                sweeper: AtomicBool::new(false),
            }),
        }
    }

    /// The number of open sessions.
    pub fn session_count(&self) -> usize {
        self.inner.lock_sessions().len()
    }

    /// What the service holds now.
    pub fn stats(&self) -> ServiceStats {
        let sessions: Vec<_> = self.inner.lock_sessions().values().cloned().collect();
        let mut stats = ServiceStats {
            sessions: sessions.len(),
            exchanges: self.inner.exchanges.len(),
            tasks: self.inner.tasks.len(),
            ..ServiceStats::default()
        };
        for session in sessions {
            session.add_stats(&mut stats);
        }
        stats
    }

    /// The service's liveness and readiness, to answer probes on routes of
    /// your own when the service is mounted at one path (served whole, it
    /// answers `/livez` and `/readyz` itself, see
    /// [`HttpServerConfig::health_probes`]).
    pub fn health(&self) -> Health {
        self.inner.health.clone()
    }

    /// The handle that shuts this service down.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            inner: self.inner.clone(),
        }
    }

    /// Answers one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        match self.inner.clone().respond(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// The future of one HTTP request's answer ([`StreamableHttpService`]'s
/// [`tower_service::Service::Future`]).
pub type Responding = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

impl<B> tower_service::Service<Request<B>> for StreamableHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Responding;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.inner.clone().respond(request)
    }
}

impl ServiceInner {
    fn lock_sessions(&self) -> MutexGuard<'_, SessionMap> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The dispatcher of every stateless exchange, made on first use.
    fn stateless_dispatcher(&self) -> Dispatcher {
        self.stateless
            .get_or_init(|| {
                (self.factory)(Opening {
                    session_id: None,
                    outlet: Arc::new(opening::NoStream),
                    shared: None,
                    tasks: self.tasks.clone(),
                })
            })
            .clone()
    }

    fn drain(&self) {
        if self.draining.is_cancelled() {
            return;
        }
        self.draining.cancel();
        let sessions: Vec<_> = self.lock_sessions().values().cloned().collect();
        tracing::debug!(sessions = sessions.len(), "draining: ending GET streams");
        for session in sessions {
            session.end_standalone();
        }
        self.exchanges.end_listens();
    }

    /// Closes the sessions idle past the idle timeout and releases answered
    /// streams past their resumption window.
    fn sweep(&self, now: Instant) {
        let mut expired = Vec::new();
        let sessions: Vec<_> = {
            let mut sessions = self.lock_sessions();
            sessions.retain(|_, s| {
                let idle = s.idle_since().is_some_and(|at| {
                    now.saturating_duration_since(at) >= self.config.idle_timeout
                });
                if idle || s.is_closed() {
                    expired.push(s.clone());
                }
                !idle && !s.is_closed()
            });
            sessions.values().cloned().collect()
        };
        for session in expired {
            if !session.is_closed() {
                tracing::debug!(session = %session.tag(), "session expired: idle past the timeout");
                session.close();
            }
        }
        for session in sessions {
            session.release_answered(now);
        }
    }

    /// Starts the task that sweeps sessions while the service runs (once,
    /// from inside the runtime).
    fn start_sweeper(self: &Arc<Self>) {
        if self.sweeper.swap(true, Ordering::AcqRel) {
            return;
        }
        let period = self
            .config
            .idle_timeout
            .min(self.config.resumption_window)
            .checked_div(2)
            .unwrap_or_default()
            .clamp(Duration::from_millis(10), Duration::from_secs(30));
        let service: Weak<Self> = Arc::downgrade(self);
        let draining = self.draining.clone();
        self.tasks.spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    () = draining.cancelled() => return,
                }
                let Some(service) = service.upgrade() else {
                    return;
                };
                service.sweep(Instant::now());
            }
        });
    }

    /// Answers one HTTP request. Not an `async fn`: the future of each
    /// method is boxed on its own, so a POST's future is not sized by the
    /// others', and the origin check runs before anything is boxed.
    fn respond<B>(self: Arc<Self>, request: Request<B>) -> Responding
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if self.config.health_probes && Health::is_probe(request.method(), request.uri().path()) {
            let method = request.method().clone();
            let path = request.uri().path().to_owned();
            return Box::pin(async move {
                let answer = self.health.answer(&method, &path).await;
                Ok(answer.unwrap_or_else(|| plain_status(StatusCode::NOT_FOUND)))
            });
        }
        if !edge::is_endpoint(&self.config.path, &request) {
            return at_once(edge::not_found(&self.config.path, request.uri().path()));
        }
        match &self.cors {
            // A `CorsService` marks what it passes on: behind one (this
            // service's own, below, or an outer one of the same rules) the
            // request goes on to the endpoint.
            Some(cors) if request.extensions().get::<cors::Applied>().is_none() => {
                use tower_layer::Layer as _;
                use tower_service::Service as _;
                // Always ready: the service answers each call on its own.
                let service = StreamableHttpService {
                    inner: self.clone(),
                };
                cors.layer(service).call(request)
            }
            _ => self.endpoint(request),
        }
    }

    /// Answers a request at the endpoint (after the edge and CORS).
    fn endpoint<B>(self: Arc<Self>, request: Request<B>) -> Responding
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Err(response) = checks::check_origin(&self.config, request.headers()) {
            return at_once(response);
        }
        match *request.method() {
            Method::POST => Box::pin(async move { Ok(self.post(request).await) }),
            // The stateless era has no GET stream and no sessions to delete.
            Method::GET | Method::DELETE
                if checks::era(request.headers()) == Some(Era::Stateless) =>
            {
                at_once(method_not_allowed("POST"))
            }
            Method::GET => {
                let headers = request.into_parts().0.headers;
                Box::pin(async move { Ok(self.get(&headers).await) })
            }
            Method::DELETE => {
                let headers = request.into_parts().0.headers;
                Box::pin(async move { Ok(self.delete(&headers).await) })
            }
            _ => at_once(method_not_allowed("GET, POST, DELETE")),
        }
    }

    async fn post<B>(self: Arc<Self>, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let headers = Arc::new(RequestHeaders(parts.headers));
        if let Err(response) = checks::check_post_media(&headers) {
            return response;
        }
        let era = checks::era(&headers);
        let in_session = header_str(&headers, &checks::SESSION_ID).is_some();
        if era.is_none() && in_session {
            // A session speaks a handshake version; an unknown one is not
            // a stateless request.
            if let Err(response) = checks::check_protocol_version(&headers) {
                return response;
            }
        }
        let bytes = match read_body(body, self.config.max_body, self.config.body_read_timeout).await
        {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        let (messages, batch) = match JsonRpcPayload::from_slice(&bytes) {
            Ok(JsonRpcPayload::Single(message)) => (vec![message], false),
            Ok(JsonRpcPayload::Batch(messages)) => (messages, true),
            // Answered with the request's id when the bytes show it, as
            // stdio answers (a batch's refusal has none).
            Err(e) => {
                let error = e.to_error_object();
                return jsonrpc_error_with_id(
                    StatusCode::BAD_REQUEST,
                    e.answer_id().cloned(),
                    error,
                );
            }
        };
        if messages.is_empty() {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "an empty batch is not a valid request",
            );
        }
        let sender = Sender::of(&parts.extensions);
        if era != Some(Era::Handshake) {
            return stateless::exchange(&self, messages, &headers, sender, self.config.keep_alive)
                .await;
        }
        let initialize = messages
            .iter()
            .any(|m| matches!(m, JsonRpcMessage::Request(r) if r.method == "initialize"));
        if let Some(shared) = &self.shared {
            if let Err(error) = shared::listen(&self, shared).await {
                return session::store_unavailable(&error);
            }
        }
        let session = if initialize && !in_session {
            if batch {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "initialize must be sent alone, not in a batch",
                );
            }
            match self.open_session(None) {
                Ok(session) => session,
                Err(response) => return response,
            }
        } else {
            match self.session_for(&headers).await {
                Ok(session) => session,
                Err(response) => return response,
            }
        };
        let messages = match &self.shared {
            Some(shared) => match shared::route_answers(shared, &session.id, messages).await {
                Ok(messages) if messages.is_empty() => return plain_status(StatusCode::ACCEPTED),
                Ok(messages) => messages,
                Err(error) => return session::store_unavailable(&error),
            },
            None => messages,
        };
        let response = session
            .clone()
            .accept_post(messages, batch, &headers, &sender, initialize, &self.tasks)
            .await;
        if initialize && response.status() == StatusCode::TOO_MANY_REQUESTS {
            // The rate limit refused the `initialize` before it ran: the
            // session it opened is not kept.
            self.lock_sessions().remove(&session.id);
            session.close();
        }
        response
    }

    async fn session_for(
        self: &Arc<Self>,
        headers: &HeaderMap,
    ) -> Result<Arc<Session>, Response<HttpBody>> {
        let Some(id) = header_str(headers, &checks::SESSION_ID) else {
            return Err(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Bad Request: the Mcp-Session-Id header is required; initialize a session first",
            ));
        };
        let local = {
            let mut sessions = self.lock_sessions();
            match sessions.get(id) {
                Some(session) if !session.is_closed() => {
                    session.touch();
                    Some(session.clone())
                }
                Some(_) => {
                    sessions.remove(id);
                    None
                }
                None => None,
            }
        };
        let Some(shared) = &self.shared else {
            return local.ok_or_else(body::session_not_found);
        };
        let ttl = self.config.idle_timeout;
        match local {
            // Renewed for every server; gone when it was deleted elsewhere.
            Some(session) => match shared.stores.sessions.touch(id, ttl).await {
                Ok(true) => Ok(session),
                Ok(false) => {
                    self.lock_sessions().remove(id);
                    session.close();
                    Err(body::session_not_found())
                }
                Err(error) => Err(session::store_unavailable(&error)),
            },
            // Minted by another server: restored here.
            None => match shared.stores.sessions.load(id, ttl).await {
                Ok(Some(record)) => self.open_session(Some((id.into(), record))),
                Ok(None) => Err(body::session_not_found()),
                Err(error) => Err(session::store_unavailable(&error)),
            },
        }
    }

    /// Opens a session: a new one for `initialize`, or one another server
    /// minted, restored from its record.
    fn open_session(
        self: &Arc<Self>,
        restore: Option<(Arc<str>, mcp_types::SessionRecord)>,
    ) -> Result<Arc<Session>, Response<HttpBody>> {
        if self.draining.is_cancelled() {
            return Err(shutting_down());
        }
        self.start_sweeper();
        self.sweep(Instant::now());
        let mut sessions = self.lock_sessions();
        if let Some(existing) = restore.as_ref().and_then(|(id, _)| sessions.get(id)) {
            // Restored meanwhile by a concurrent request.
            return Ok(existing.clone());
        }
        if sessions.len() >= self.config.max_sessions {
            let idle = sessions
                .values()
                .filter_map(|s| s.idle_since().map(|at| (at, s.clone())))
                .min_by_key(|(at, _)| *at);
            let Some((_, evicted)) = idle else {
                tracing::warn!(
                    max_sessions = self.config.max_sessions,
                    "refused a new session: every session is busy; raise \
                     HttpServerConfig::max_sessions to serve more clients at once"
                );
                return Err(jsonrpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::INTERNAL_ERROR,
                    "Service Unavailable: every session of this server is busy with a request \
                     or stream; try again later",
                ));
            };
            tracing::warn!(
                max_sessions = self.config.max_sessions,
                "session cap reached: evicting the least recently used idle session; raise \
                 HttpServerConfig::max_sessions (or lower idle_timeout) if clients lose sessions"
            );
            tracing::debug!(session = %evicted.tag(), "session evicted");
            sessions.remove(&evicted.id);
            evicted.close();
        }
        let (id, restored) = match restore {
            Some((id, record)) => (id, Some(Arc::new(record))),
            None => (session::new_session_id().into(), None),
        };
        let version = restored
            .as_ref()
            .and_then(|r| mcp_types::Revision::from_version(&r.protocol_version));
        let instance = self.shared.as_ref().map(|s| s.instance.clone());
        drop(sessions);
        let session = Arc::new(Session::new(id.clone(), &self.config, instance, version));
        let shared = self
            .shared
            .as_ref()
            .map(|shared| crate::store::SharedSession {
                id: id.clone(),
                store: shared.stores.sessions.clone(),
                ttl: self.config.idle_timeout,
                restored,
            });
        tracing::debug!(
            session = %session.tag(),
            restored = shared.as_ref().is_some_and(|s| s.restored().is_some()),
            "session opened"
        );
        let dispatcher = (self.factory)(Opening {
            session_id: Some(id.clone()),
            outlet: Arc::new(opening::SessionOutlet(Arc::downgrade(&session))),
            shared,
            tasks: self.tasks.clone(),
        });
        // Served before it can be found: no request meets it half made.
        session.serve_with(dispatcher);
        let mut sessions = self.lock_sessions();
        if let Some(existing) = sessions.get(&id) {
            // Restored meanwhile by a concurrent request: that one serves.
            let existing = existing.clone();
            drop(sessions);
            session.close();
            return Ok(existing);
        }
        sessions.insert(id, session.clone());
        Ok(session)
    }

    async fn get(self: &Arc<Self>, headers: &HeaderMap) -> Response<HttpBody> {
        if !checks::accepts(headers, "text/event-stream") {
            return jsonrpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorCode::INVALID_REQUEST,
                "Not Acceptable: the Accept header must list text/event-stream",
            );
        }
        if let Some(shared) = &self.shared {
            if let Err(error) = shared::listen(self, shared).await {
                return session::store_unavailable(&error);
            }
        }
        let session = match self.session_for(headers).await {
            Ok(session) => session,
            Err(response) => return response,
        };
        if let Err(response) = checks::check_protocol_version(headers) {
            return response;
        }
        match header_str(headers, &checks::LAST_EVENT_ID) {
            Some(last) => match (session.resume(last).await, &self.shared) {
                (session::Resumed::Here(response), _) => response,
                (session::Resumed::Elsewhere(replay), Some(shared)) => {
                    shared::follow(self, shared, last, replay)
                }
                (session::Resumed::TakeOver(replay), Some(shared)) => {
                    let seen = shared::last_seen(shared, last).await;
                    session.take_over(headers, seen, replay)
                }
                (session::Resumed::Elsewhere(_) | session::Resumed::TakeOver(_), None) => {
                    body::session_not_found()
                }
            },
            None if self.draining.is_cancelled() => shutting_down(),
            None => session.open_standalone(headers),
        }
    }

    async fn delete(self: &Arc<Self>, headers: &HeaderMap) -> Response<HttpBody> {
        if let (Some(shared), Some(id)) = (&self.shared, header_str(headers, &checks::SESSION_ID)) {
            // Ended for every server, whether or not this one holds it.
            let existed = match shared::delete(shared, id).await {
                Ok(existed) => existed,
                Err(error) => return session::store_unavailable(&error),
            };
            let local = self.lock_sessions().remove(id);
            if let Some(session) = &local {
                session.close();
                tracing::debug!(session = %session.tag(), "session closed by the client");
            }
            return if existed || local.is_some() {
                plain_status(StatusCode::OK)
            } else {
                body::session_not_found()
            };
        }
        let session = match self.session_for(headers).await {
            Ok(session) => session,
            Err(response) => return response,
        };
        self.lock_sessions().remove(&session.id);
        session.close();
        tracing::debug!(session = %session.tag(), "session closed by the client");
        plain_status(StatusCode::OK)
    }
}

/// A response known without awaiting anything.
fn at_once(response: Response<HttpBody>) -> Responding {
    Box::pin(std::future::ready(Ok(response)))
}

pub(super) fn shutting_down() -> Response<HttpBody> {
    jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "Service Unavailable: the server is shutting down",
    )
}

/// A POST's header map, shared (not copied) into the `TransportContext` of
/// each message it carries: the dispatcher sees its visible-ASCII values.
/// Most requests never read a header, and copying every one per POST cost
/// more than all the header checks together.
#[derive(Debug)]
pub(super) struct RequestHeaders(HeaderMap);

impl RequestHeaders {
    /// The headers as a message's context carries them.
    pub(super) fn to_headers(self: &Arc<Self>) -> Headers {
        Headers::shared(self.clone())
    }
}

impl std::ops::Deref for RequestHeaders {
    type Target = HeaderMap;
    fn deref(&self) -> &HeaderMap {
        &self.0
    }
}

impl mcp_core::HeaderSource for RequestHeaders {
    fn pairs(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(
            self.0
                .iter()
                .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))),
        )
    }

    fn first(&self, name: &str) -> Option<&str> {
        // The map's index, not a walk: an invalid name finds nothing.
        self.0.get_all(name).iter().find_map(|v| v.to_str().ok())
    }
}

/// Who sent an HTTP request, as `serve` and the layers in front recorded
/// it, for the `TransportContext` of each request it carries (the
/// dispatcher's rate limit keys on it).
#[derive(Debug, Clone, Default)]
struct Sender {
    /// The principal a bearer guard verified.
    principal: Option<Arc<str>>,
    /// The peer address `serve` (or the embedding server) recorded.
    peer: Option<std::net::SocketAddr>,
}

impl Sender {
    fn of(extensions: &http::Extensions) -> Self {
        Self {
            principal: principal_of(extensions),
            peer: extensions.get::<PeerAddr>().map(|peer| peer.0),
        }
    }

    /// Puts who sent it into a request's context.
    fn fill(&self, context: &mut mcp_core::TransportContext) {
        context.principal.clone_from(&self.principal);
        context.peer_addr = self.peer;
    }
}

/// The principal `BearerGuard` verified for this request: the token's
/// issuer, subject and client, unambiguously joined; `None` without a guard
/// or without a subject or client in the token.
#[cfg(feature = "auth-server")]
fn principal_of(extensions: &http::Extensions) -> Option<Arc<str>> {
    let claims = extensions.get::<crate::http::TokenClaims>()?;
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use http::{HeaderMap, HeaderValue};

    use super::RequestHeaders;

    #[test]
    fn shared_request_headers_read_as_the_copied_list_did() {
        let mut map = HeaderMap::new();
        map.append(
            "x-test",
            HeaderValue::from_bytes(b"caf\xe9").expect("a value"),
        );
        map.append("x-test", HeaderValue::from_static("ok"));
        map.append("accept", HeaderValue::from_static("a"));
        let headers = Arc::new(RequestHeaders(map)).to_headers();
        // The first value that is text, by an index lookup, any case.
        assert_eq!(headers.get("X-TEST"), Some("ok"));
        assert_eq!(headers.get_all("x-Test").collect::<Vec<_>>(), ["ok"]);
        assert_eq!(headers.get("not a header name"), None);
        assert_eq!(headers.get("missing"), None);
        // Every text value in the map's order; the one that is not text left out.
        assert_eq!(
            headers.iter().collect::<Vec<_>>(),
            [("x-test", "ok"), ("accept", "a")]
        );
        let copied: mcp_core::Headers = [("x-test", "ok"), ("accept", "a")].into_iter().collect();
        assert_eq!(headers, copied);
    }
}
