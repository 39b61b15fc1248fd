//! [`Server`]: what a tool author built, served over any transport.

use std::sync::Arc;

use mcp_core::{Connection, Transport};
use mcp_types::{Implementation, ServerCapabilities, Tool};

use crate::session::{ServerSession, SessionState};

use crate::catalog::Catalog;
use crate::changes::ListChanges;
use crate::registry::Registry;
use crate::runner::Runner;

/// An MCP server: what it offers, ready to serve any number of connections.
/// Cheap to clone.
#[derive(Clone)]
pub struct Server {
    pub(crate) registry: Arc<Registry>,
}

// `Server::builder` and `Server::builder_with_info` live with the builder
// (builder.rs), which sits above this file.
impl Server {
    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.registry.info
    }

    /// Announces list changes to every client, in both eras (see [`ListChanges`]).
    pub fn list_changes(&self) -> ListChanges {
        self.registry.changes.clone()
    }

    /// The tools listed now (every [`Catalog`] group's, in order).
    pub fn tools(&self) -> Vec<Tool> {
        self.registry.catalog.tools()
    }

    /// What this server serves (tools, prompts, resources, templates), to
    /// change while it serves; see [`Catalog`].
    pub fn catalog(&self) -> Catalog {
        self.registry.catalog.clone()
    }

    /// The capabilities this server declares now, from what is registered
    /// (or, [`dynamic`](crate::ServerBuilder::dynamic), whatever it is).
    pub fn capabilities(&self) -> ServerCapabilities {
        self.registry.capabilities()
    }

    /// Serves one client over `transport`. The connection runs in the
    /// background until the transport ends or [`ServerConnection::shutdown`].
    ///
    /// Must be called within a tokio runtime.
    pub fn serve<T: Transport>(&self, transport: T) -> ServerConnection {
        let state = Arc::new(SessionState::default());
        let tasks = tokio_util::task::TaskTracker::new();
        // Closed now: `wait` then ends once every task spawned so far or
        // later (while the connection runs) has ended.
        tasks.close();
        let handler = Runner {
            registry: self.registry.clone(),
            state: state.clone(),
            tasks: tasks.clone(),
            task: None,
        };
        let connection = Connection::start(transport, handler, self.registry.dispatcher.clone());
        let session = ServerSession::new(connection.peer().clone(), state)
            .with_changes(self.registry.changes.clone());
        ServerConnection {
            connection,
            session,
            tasks,
        }
    }

    /// Serves one client on this process's stdin and stdout until stdin
    /// closes or `shutdown` resolves (such as [`shutdown_signal`]; use
    /// `std::future::pending()` to serve until stdin closes). Nothing else
    /// may write to stdout: log with `tracing` to stderr.
    ///
    /// When stdin closes, the calls still running answer (within the
    /// dispatcher's `eof_grace`, see [`ServerBuilder::dispatcher_config`](crate::ServerBuilder::dispatcher_config))
    /// before this returns. When `shutdown` resolves first, the connection
    /// closes at once: calls still running are cancelled, unanswered. Either
    /// way nothing of the server holds the process afterwards (stdin is
    /// read on a thread no runtime waits for), so `main` can return.
    ///
    /// # Errors
    /// Never fails today; the `Result` leaves room for transport setup errors.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting but not serving: the connection runs
    /// on in its tasks until stdin closes. Resolve `shutdown` to stop.
    ///
    /// # Examples
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_server::Error> {
    /// let server = mcp_server::Server::builder("quiet", "1.0.0").build()?;
    /// server.serve_stdio(mcp_server::shutdown_signal()).await
    /// # }
    /// ```
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(
        &self,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), crate::Error> {
        let connection = self.serve(mcp_transport::stdio::stdio_server());
        let stopped = tokio::select! {
            () = connection.wait() => false,
            () = shutdown => true,
        };
        if stopped {
            connection.shutdown().await;
        }
        Ok(())
    }
}

/// Resolves when this process is asked to stop: ctrl-c (`SIGINT`) or, on
/// Unix, `SIGTERM` (what a container runtime sends). Hand it to
/// [`Server::serve_stdio`] or `Server::serve_http` as their shutdown.
///
/// Listening starts at the first poll. If the process cannot listen for
/// signals (rare), this logs a warning and never resolves, and the server
/// stops only when its transport ends.
#[cfg(any(feature = "stdio", feature = "http"))]
pub async fn shutdown_signal() {
    let interrupted = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for ctrl-c; the server stops only when its transport ends");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    () = interrupted => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; ctrl-c still stops the server");
                interrupted.await;
            }
        }
    }
    #[cfg(not(unix))]
    interrupted.await;
}

#[cfg(feature = "http")]
impl Server {
    /// This server as a streamable HTTP endpoint: a `tower::Service` to
    /// mount in a hyper or axum app. Each HTTP session gets its own
    /// connection to this server.
    pub fn streamable_http_service(
        &self,
        config: mcp_transport::http::HttpServerConfig,
    ) -> mcp_transport::http::StreamableHttpService {
        if let Some(shared) = config.shared_stores() {
            self.registry.changes.share(shared.bus.clone());
        }
        // Replicas may serve this endpoint: a state sealed with this
        // process's own key would fail on the others.
        self.registry.sealer.warn_of_random_key();
        let server = self.clone();
        mcp_transport::http::StreamableHttpService::new(config, move |opening| server.open(opening))
    }

    /// Serves one HTTP session (or the stateless exchanges) the service
    /// opened: a runner with its own session state, restored from the
    /// shared store when another server minted the session.
    fn open(&self, opening: mcp_transport::http::Opening) -> mcp_core::Dispatcher {
        let state = Arc::new(SessionState::default());
        let restored = match opening.shared_session() {
            Some(shared) if state.share(shared.clone()) => opening.session_id().map(Arc::from),
            _ => None,
        };
        // The session's own tasks (list-change forwarding, callbacks) are
        // the service's: it cancels and awaits them at shutdown.
        let runner = Runner {
            registry: self.registry.clone(),
            state: state.clone(),
            tasks: opening.tasks().clone(),
            task: None,
        };
        let dispatcher = opening.serve(runner.clone(), self.registry.dispatcher.clone());
        if let Some(session_id) = restored {
            // Initialized elsewhere: its changes are forwarded from the start.
            let mut context = mcp_core::TransportContext::default();
            context.session_id = Some(session_id);
            let owner = crate::tasks::owner(&context, &state, false);
            runner.forward_changes(&dispatcher.peer(), owner);
        }
        dispatcher
    }

    /// Serves this server over streamable HTTP on `listener` until
    /// `shutdown` resolves (use `std::future::pending()` to run forever),
    /// then shuts down gracefully (see [`mcp_transport::http::serve`]).
    ///
    /// # Errors
    /// When accepting connections fails persistently.
    ///
    /// # Cancel safety
    /// Dropping the future stops accepting and ends the connections it
    /// accepted at once, without the grace. Resolve `shutdown` instead to
    /// stop gracefully.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        config: mcp_transport::http::HttpServerConfig,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let service = self.streamable_http_service(config);
        let serve_config =
            mcp_transport::http::ServeConfig::new().service_shutdown(service.shutdown_handle());
        mcp_transport::http::serve(listener, service, serve_config, shutdown).await
    }
}

/// One client being served.
pub struct ServerConnection {
    connection: Connection,
    session: ServerSession,
    /// What the runner spawned for this connection (list-change
    /// forwarding, callbacks); each ends when the connection closes.
    tasks: tokio_util::task::TaskTracker,
}

impl ServerConnection {
    /// The session, to send the client notifications and requests outside
    /// any request handler.
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// Resolves when the client disconnects and the connection's tasks
    /// have ended.
    ///
    /// # Cancel safety
    /// Dropping the future only stops waiting; the connection runs on.
    pub async fn wait(&self) {
        self.connection.wait().await;
        self.tasks.wait().await;
    }

    /// Closes the connection and waits for its tasks to end.
    ///
    /// # Cancel safety
    /// Dropping the future after it started leaves the connection closed and its
    /// tasks ending on their own.
    pub async fn shutdown(self) {
        self.connection.shutdown().await;
        self.tasks.wait().await;
    }
}
