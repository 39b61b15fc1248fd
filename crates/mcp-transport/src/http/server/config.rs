//! The settings of a [`StreamableHttpService`](super::StreamableHttpService).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::cors::CorsConfig;
use super::edge::EndpointPath;
use crate::store::{EventStore, InMemoryEventStore, SharedStores};

/// Settings of a [`StreamableHttpService`](super::StreamableHttpService).
#[derive(Clone)]
pub struct HttpServerConfig {
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) allowed_origins: Option<Vec<String>>,
    pub(super) max_body: usize,
    pub(super) max_sessions: usize,
    pub(super) json_response: bool,
    pub(super) retry: Option<Duration>,
    pub(super) sse_queue: usize,
    pub(super) event_store: Arc<dyn EventStore>,
    pub(super) shared: Option<SharedStores>,
    pub(super) idle_timeout: Duration,
    pub(super) resumption_window: Duration,
    pub(super) max_session_events: usize,
    pub(super) max_session_event_bytes: usize,
    pub(super) body_read_timeout: Duration,
    pub(super) keep_alive: Option<Duration>,
    pub(super) health_probes: bool,
    pub(super) readiness_reuse: Duration,
    pub(super) path: EndpointPath,
    pub(super) cors: Option<CorsConfig>,
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
            .field("idle_timeout", &self.idle_timeout)
            .field("resumption_window", &self.resumption_window)
            .field("max_session_events", &self.max_session_events)
            .field("max_session_event_bytes", &self.max_session_event_bytes)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("keep_alive", &self.keep_alive)
            .field("sse_queue", &self.sse_queue)
            .field("shared", &self.shared.is_some())
            .field("health_probes", &self.health_probes)
            .field("readiness_reuse", &self.readiness_reuse)
            .field("path", &self.path)
            .field("cors", &self.cors)
            .finish_non_exhaustive()
    }
}

impl Default for HttpServerConfig {
    fn default() -> Self {
        Self {
            allowed_hosts: Some(
                DEFAULT_ALLOWED_HOSTS
                    .iter()
                    .map(|h| (*h).to_owned())
                    .collect(),
            ),
            allowed_origins: None,
            max_body: 4 * 1024 * 1024,
            max_sessions: 1024,
            json_response: false,
            retry: None,
            sse_queue: 256,
            event_store: Arc::new(InMemoryEventStore::default()),
            shared: None,
            idle_timeout: Duration::from_secs(30 * 60),
            resumption_window: Duration::from_secs(60),
            max_session_events: 1024,
            max_session_event_bytes: 1024 * 1024,
            body_read_timeout: Duration::from_secs(30),
            keep_alive: Some(Duration::from_secs(15)),
            health_probes: true,
            readiness_reuse: Duration::from_millis(250),
            path: EndpointPath::Default,
            cors: None,
        }
    }
}

/// The `Host` names a new [`HttpServerConfig`] accepts: the loopback
/// interface's, on any port.
pub const DEFAULT_ALLOWED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl HttpServerConfig {
    /// Localhost-safe defaults: the endpoint at `/mcp` when served whole by
    /// [`serve`](super::serve), every other path `404` (mounted in a router,
    /// wherever the route puts it; see [`path`](Self::path)), only `Host`s
    /// (and `Origin`s) of localhost, 127.0.0.1 and `[::1]` on any port, no
    /// CORS, 4 MiB bodies read within 30 s, 1024
    /// sessions idle for at most 30 min, SSE responses with a keep-alive
    /// comment every 15 s, in-memory event store with each session's
    /// answered streams kept 60 s for resumption and at most 1024 events
    /// and 1 MiB per session; `GET /livez` and `GET /readyz` answered
    /// (see [`health_probes`](Self::health_probes)).
    pub fn new() -> Self {
        Self::default()
    }

    /// The host names (without port) accepted in `Host`, and in `Origin`
    /// unless [`allowed_origins`](Self::allowed_origins) or
    /// [`cors`](Self::cors) is set (then `Origin`s are those lists, exactly). This guards
    /// against DNS rebinding: set it to the names the server is reached by.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts `host` (without port) too, beside those accepted already
    /// ([`DEFAULT_ALLOWED_HOSTS`] unless set otherwise): for a server also
    /// reached by another name (a balancer's, a LAN address). Nothing
    /// changes after [`allow_any_host`](Self::allow_any_host).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        if let Some(hosts) = &mut self.allowed_hosts {
            hosts.push(host.into());
        }
        self
    }

    /// Accepts any `Host` and `Origin`: only behind a proxy that checks them
    /// (with [`cors`](Self::cors) set, `Origin`s are still those of its list).
    pub fn allow_any_host(mut self) -> Self {
        self.allowed_hosts = None;
        self.allowed_origins = None;
        self
    }

    /// The exact origins (`scheme://host[:port]`) accepted in `Origin`.
    /// With [`cors`](Self::cors) set, the CORS origins are accepted too, and
    /// these are granted CORS as well: one list decides both.
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

    /// The most sessions open at once (default 1024). At the cap, a new
    /// session evicts the least recently used idle one (no request or
    /// stream open); only when every session is busy is it refused (503).
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

    /// Shares sessions, events and server messages with every other server
    /// given the same stores (e.g. [`RedisConfig::connect`](crate::store::redis::RedisConfig::connect)
    /// with feature `redis`), so that any of them serves any session behind a
    /// load balancer with no stickiness:
    /// - a request whose `Mcp-Session-Id` another server minted is served
    ///   here, the session restored from the [`SessionStore`](crate::store::SessionStore)
    ///   (each request renews it there for [`idle_timeout`](Self::idle_timeout));
    /// - `Last-Event-ID` resumes a stream of another server from the shared
    ///   [`EventStore`], following it until it ends;
    /// - DELETE ends the session on every server;
    /// - the answer to a server-to-client request reaches the server whose
    ///   handler waits for it, over the [`MessageBus`](crate::store::MessageBus)
    ///   (such requests carry ids of the form `{server}~{id}`).
    ///
    /// Without it (the default) sessions live in this service alone, at no
    /// cost per request. This replaces the [`event_store`](Self::event_store).
    pub fn shared(mut self, stores: SharedStores) -> Self {
        self.event_store = stores.events.clone();
        self.shared = Some(stores);
        self
    }

    /// The shared stores, if [`shared`](Self::shared) was set (a server
    /// layer publishes its list changes on the bus).
    pub fn shared_stores(&self) -> Option<&SharedStores> {
        self.shared.as_ref()
    }

    /// How long a session may stay idle (no request, no open stream)
    /// before it is closed and its memory released (default 30 min).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How long the events of an answered POST stream stay resumable with
    /// `Last-Event-ID` before they are released (default 60 s).
    pub fn resumption_window(mut self, window: Duration) -> Self {
        self.resumption_window = window;
        self
    }

    /// The most events (default 1024) and event bytes (default 1 MiB) kept
    /// for resumption per session: past either, the oldest answered
    /// streams are released before their resumption window ends.
    pub fn max_session_events(mut self, events: usize, bytes: usize) -> Self {
        self.max_session_events = events;
        self.max_session_event_bytes = bytes;
        self
    }

    /// How long a client may take to send a request body once its head has
    /// arrived (default 30 s); slower ones get 408.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How often an idle SSE stream gets a comment so that proxies keep it
    /// and a vanished client is noticed (default 15 s); `None` sends none.
    pub fn keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.keep_alive = interval;
        self
    }

    /// Events queued per SSE connection (default 256). A client that falls
    /// further behind is disconnected and resumes from the event store.
    pub fn sse_queue(mut self, events: usize) -> Self {
        self.sse_queue = events.max(1);
        self
    }

    /// Whether `GET` (or `HEAD`) of `/livez` and `/readyz` is answered as
    /// a health probe instead of reaching the MCP endpoint (default on):
    /// `/livez` 200 while the process serves, `/readyz` 200 when it takes
    /// new work, 503 while it drains or its [`shared`](Self::shared)
    /// stores do not answer (see [`Health`](super::Health)). Probes skip
    /// the Host and Origin checks; they carry no data.
    pub fn health_probes(mut self, enabled: bool) -> Self {
        self.health_probes = enabled;
        self
    }

    /// How long one check of the shared stores answers every readiness
    /// probe (default 250 ms), so that probes cannot load the stores.
    pub fn readiness_reuse(mut self, reuse: Duration) -> Self {
        self.readiness_reuse = reuse;
        self
    }

    /// The path of the MCP endpoint, compared exactly with the path of each
    /// request as the service receives it; every other path is answered
    /// `404` (the health probes aside, see
    /// [`health_probes`](Self::health_probes)), so that OAuth discovery
    /// probes read "no such document" and an `initialize` sent elsewhere
    /// opens no session. A `/` is put in front if missing.
    ///
    /// Unset, the endpoint is [`DEFAULT_PATH`](super::DEFAULT_PATH) (`/mcp`)
    /// when [`serve`](super::serve) (or `Server::serve_http`) runs the
    /// service as the whole server, and wherever a router of your own
    /// mounts it: axum's `route_service("/api/mcp", service)` has chosen the
    /// path already, so any path the service receives is the endpoint's.
    /// Set, it holds however the service is served (behind axum's
    /// `nest_service("/prefix", …)`, which strips the prefix, the path the
    /// service receives is the rest).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = EndpointPath::Exactly(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
        self
    }

    /// Serves MCP at every path the service receives (the health probes
    /// aside), even served whole by [`serve`](super::serve): what the
    /// service did before it had a path. Paths under `/.well-known/` are
    /// still `404`: public documents live there, never the endpoint.
    pub fn any_path(mut self) -> Self {
        self.path = EndpointPath::Any;
        self
    }

    /// CORS for browser pages on other origins (off by default): the
    /// service answers their preflights itself (`204`, no handler reached)
    /// and grants the listed origins the MCP request headers of both eras
    /// and the response headers a client reads (see [`CorsConfig`]).
    ///
    /// The Origin check against DNS rebinding stays in force and agrees
    /// with this list: with CORS on, an `Origin` is accepted exactly when
    /// it is a CORS origin or one of [`allowed_origins`](Self::allowed_origins)
    /// (which are granted CORS too), and no longer because its host is an
    /// allowed host, so no page is let through that CORS would not grant,
    /// and none granted CORS is refused. The `Host` check is unchanged: the
    /// server must still be reached by a name of
    /// [`allowed_hosts`](Self::allowed_hosts).
    ///
    /// In front of a `BearerGuard`, whose refusals a page must read (the
    /// `WWW-Authenticate` of a `401`), wrap the whole stack in
    /// [`CorsConfig::layer`] of the same rules as well: the service's own
    /// CORS then steps aside.
    pub fn cors(mut self, cors: CorsConfig) -> Self {
        self.cors = Some(cors);
        self
    }
}
