//! A ready HTTP/1.1 server for the MCP endpoint on hyper: it owns its
//! connections (each one a tracked task), sets `TCP_NODELAY` on every
//! socket, bounds the time a client may take to send a request head, and
//! shuts down gracefully.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{HttpBody, ShutdownHandle};

type AcceptHook = Arc<dyn Fn(&TcpStream) + Send + Sync>;

/// Settings of [`serve`]: what it does with each connection, and how it
/// shuts down.
#[derive(Clone)]
pub struct ServeConfig {
    header_read_timeout: Duration,
    shutdown_grace: Duration,
    service_shutdown: Option<ShutdownHandle>,
    on_accept: Option<AcceptHook>,
}

impl fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeConfig")
            .field("header_read_timeout", &self.header_read_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("service_shutdown", &self.service_shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            service_shutdown: None,
            on_accept: None,
        }
    }
}

impl ServeConfig {
    /// Defaults: 10 s to send a request head, 10 s of grace at shutdown.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a client may take to send a request's head (request line
    /// and headers) before its connection is closed (default 10 s). Guards
    /// against connections held open by half-sent requests.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long in-flight requests may run after shutdown begins before
    /// they are cancelled and their connections dropped (default 10 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The service to drain at shutdown (its GET streams end and it takes
    /// no new sessions) and to close when the grace is over (its sessions'
    /// handlers are cancelled and awaited). Without it, open SSE streams
    /// keep their connections until the grace is over.
    pub fn service_shutdown(mut self, handle: ShutdownHandle) -> Self {
        self.service_shutdown = Some(handle);
        self
    }

    /// Called with each accepted socket once `serve` has configured it
    /// (`TCP_NODELAY` set), to set further options or to observe it.
    pub fn on_accept(mut self, hook: impl Fn(&TcpStream) + Send + Sync + 'static) -> Self {
        self.on_accept = Some(Arc::new(hook));
        self
    }
}

/// The address of the client that sent a request, as a request extension:
/// [`serve`] inserts it, and the service copies it into each request's
/// `TransportContext::peer_addr`, where the dispatcher's rate limit (feature
/// `rate-limit`) keys on it when a request has neither a principal nor a
/// session; mounted in your own server, insert it yourself (behind a proxy,
/// from the address the proxy reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// Serves `service` (a [`StreamableHttpService`](super::StreamableHttpService),
/// or any tower service of the MCP endpoint such as a `BearerGuard` around
/// one) on `listener` (HTTP/1.1) until `shutdown` resolves, then shuts down
/// gracefully: it stops accepting, drains the service named by
/// [`ServeConfig::service_shutdown`], lets in-flight requests finish for
/// [`ServeConfig::shutdown_grace`], then cancels what is left and returns
/// once every connection has ended.
///
/// A [`StreamableHttpService`](super::StreamableHttpService) served here is
/// the whole server: without [`HttpServerConfig::path`](super::HttpServerConfig::path)
/// it serves MCP at [`DEFAULT_PATH`](super::DEFAULT_PATH) and answers every
/// other path `404`.
///
/// Every accepted socket gets `TCP_NODELAY`: an MCP exchange is small
/// request/response writes, which Nagle's algorithm would hold back for
/// the client's delayed ACK (about 40 ms per call).
///
/// # Errors
/// Only if accepting connections fails persistently; per-connection errors
/// are logged.
///
/// # Cancel safety
/// Dropping the future stops accepting and ends the connections it
/// accepted at once, without the grace; the service itself is not closed
/// (use its [`ShutdownHandle`](super::ShutdownHandle)). Resolve `shutdown`
/// instead to stop gracefully.
pub async fn serve<S>(
    listener: tokio::net::TcpListener,
    service: S,
    config: ServeConfig,
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
    let connections = TaskTracker::new();
    // Cancelled when shutdown begins (connections finish their request and
    // close), then when the grace is over (connections are dropped).
    let stopping = CancellationToken::new();
    let forced = CancellationToken::new();
    // If this future is dropped before it returns, its connections end too
    // (at once, without the grace): they are its tasks, never orphans.
    let _end_connections_on_drop = (stopping.clone().drop_guard(), forced.clone().drop_guard());
    let mut shutdown = std::pin::pin!(shutdown);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
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
            () = &mut shutdown => break,
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%peer, error = %e, "could not set TCP_NODELAY");
        }
        if let Some(hook) = &config.on_accept {
            hook(&stream);
        }
        let service = service.clone();
        let http = http.clone();
        let stopping = stopping.clone();
        let forced = forced.clone();
        connections.spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let hyper_service = hyper::service::service_fn(move |mut request: Request<_>| {
                request.extensions_mut().insert(PeerAddr(peer));
                // The service is the whole server: its endpoint is at
                // `/mcp` unless configured (see `edge`).
                request.extensions_mut().insert(super::edge::Whole);
                // The service's own (boxed) future: no block around it to
                // hold the request a second time.
                service.clone().call(request)
            });
            let connection = http.serve_connection(io, hyper_service);
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stopping.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    tokio::select! {
                        result = connection.as_mut() => result,
                        () = forced.cancelled() => Ok(()),
                    }
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tracing::debug!(
        connections = connections.len(),
        "shutting down: draining connections"
    );
    if let Some(handle) = &config.service_shutdown {
        handle.drain();
    }
    stopping.cancel();
    connections.close();
    if tokio::time::timeout(config.shutdown_grace, connections.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            connections = connections.len(),
            grace = ?config.shutdown_grace,
            "connections still busy after the shutdown grace; cancelling them (raise \
             ServeConfig::shutdown_grace to let slow requests finish)"
        );
    }
    if let Some(handle) = &config.service_shutdown {
        handle.close().await;
    }
    forced.cancel();
    connections.wait().await;
    Ok(())
}
