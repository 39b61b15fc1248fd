//! Connect to a server and initialize in one call.

use std::ops::Deref;

use mcp_core::Transport;
use mcp_types::{DiscoverResult, InitializeResult};

use crate::config::ClientConfig;
use crate::error::Error;
use crate::negotiate::Negotiated;
use crate::session::ClientSession;

/// What keeps the server on the other end alive, if this client owns it.
enum Owned {
    Nothing,
    #[cfg(feature = "stdio")]
    Process(Box<mcp_transport::stdio::ChildProcess>),
}

/// A session with a server, negotiated by the config's
/// [`Negotiation`](crate::Negotiation) policy (by default the newest era both
/// speak: `server/discover` at 2026-07-28, else `initialize`), and whatever
/// runs the server (a child process). Derefs to [`ClientSession`] for the
/// typed calls and what the server said of itself
/// ([`server_info`](ClientSession::server_info),
/// [`instructions`](ClientSession::instructions),
/// [`protocol_version`](ClientSession::protocol_version)).
///
/// # Examples
/// ```no_run
/// use mcp_client::{Client, ClientConfig, ServerCommand};
///
/// # async fn run() -> Result<(), mcp_client::Error> {
/// let client = Client::connect_stdio(
///     ServerCommand::new("python3").args(["-m", "my_server"]),
///     ClientConfig::new("my-host", "1.0.0"),
/// )
/// .await?;
/// for tool in client.list_all_tools().await? {
///     println!("{}", tool.name);
/// }
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct Client {
    session: ClientSession,
    negotiated: Negotiated,
    owned: Owned,
}

impl Client {
    /// Connects over any transport (an in-process server's
    /// `mcp_server::Server::in_memory()`, say) and negotiates.
    ///
    /// # Errors
    /// As [`ClientSession::negotiate`].
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session; a
    /// child process it spawned is killed (`kill_on_drop`).
    pub async fn connect<T: Transport>(transport: T, config: ClientConfig) -> Result<Self, Error> {
        Self::initialize(ClientSession::new(transport, config), Owned::Nothing).await
    }

    /// Spawns a server process, connects over its stdin/stdout and
    /// initializes. The process is shut down by [`close`](Self::close), and
    /// killed if the client is dropped.
    ///
    /// # Errors
    /// [`Error::Process`] when the process cannot start; as
    /// [`ClientSession::initialize`] otherwise (the process is then stopped).
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session; a
    /// child process it spawned is killed (`kill_on_drop`).
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        command: mcp_transport::stdio::ServerCommand,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let (transport, process) = command.spawn()?;
        let session = ClientSession::new(transport, config);
        Self::initialize(session, Owned::Process(Box::new(process))).await
    }

    /// Connects to a streamable HTTP endpoint (`http://` or `https://`) and
    /// initializes. [`close`](Self::close) ends the HTTP session (DELETE).
    ///
    /// # Errors
    /// [`Error::Process`] for an unusable URL; as
    /// [`ClientSession::initialize`] otherwise.
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session; a
    /// child process it spawned is killed (`kill_on_drop`).
    #[cfg(feature = "http")]
    pub async fn connect_http(url: &str, config: ClientConfig) -> Result<Self, Error> {
        Self::connect_http_with(url, mcp_transport::http::HttpClientConfig::new(), config).await
    }

    /// [`connect_http`](Self::connect_http) with HTTP settings: extra
    /// headers, message limits, reconnection.
    ///
    /// # Errors
    /// As [`connect_http`](Self::connect_http).
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session; a
    /// child process it spawned is killed (`kill_on_drop`).
    #[cfg(feature = "http")]
    pub async fn connect_http_with(
        url: &str,
        http: mcp_transport::http::HttpClientConfig,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let transport = mcp_transport::http::StreamableHttpClient::new(url, http)?;
        Self::connect(transport, config).await
    }

    /// Connects to a server of the 2024-11-05 HTTP+SSE transport (`url` is
    /// its SSE endpoint, often `/sse`) and initializes.
    ///
    /// # Errors
    /// [`Error::Process`] when the SSE stream cannot be opened or announces
    /// no usable endpoint; as [`ClientSession::initialize`] otherwise.
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session; a
    /// child process it spawned is killed (`kill_on_drop`).
    #[cfg(feature = "http")]
    pub async fn connect_legacy_sse(url: &str, config: ClientConfig) -> Result<Self, Error> {
        let http = mcp_transport::http::HttpClientConfig::new();
        Self::connect_legacy_sse_with(url, http, config).await
    }

    /// [`connect_legacy_sse`](Self::connect_legacy_sse) with HTTP settings:
    /// extra headers, message limits.
    ///
    /// # Errors
    /// As [`connect_legacy_sse`](Self::connect_legacy_sse).
    ///
    /// # Cancel safety
    /// Dropping the future gives up negotiating and drops the session.
    #[cfg(feature = "http")]
    pub async fn connect_legacy_sse_with(
        url: &str,
        http: mcp_transport::http::HttpClientConfig,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let transport = mcp_transport::http::LegacySseClient::connect(url, http).await?;
        Self::connect(transport, config).await
    }

    async fn initialize(session: ClientSession, owned: Owned) -> Result<Self, Error> {
        match session.negotiate().await {
            Ok(negotiated) => Ok(Self {
                session,
                negotiated,
                owned,
            }),
            Err(error) => {
                session.close().await;
                let _ = shutdown(owned).await;
                Err(error)
            }
        }
    }

    /// What the connection settled on: `initialize` or `server/discover`.
    pub fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// The server's answer to `initialize` (handshake era only).
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        match &self.negotiated {
            Negotiated::Handshake(result) => Some(result),
            Negotiated::Stateless(_) => None,
        }
    }

    /// The server's answer to `server/discover` (stateless era only).
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        match &self.negotiated {
            Negotiated::Stateless(result) => Some(result),
            Negotiated::Handshake(_) => None,
        }
    }

    /// The session, for the typed calls (also reachable through `Deref`).
    pub fn session(&self) -> &ClientSession {
        &self.session
    }

    /// Closes the session, then stops what runs the server: a child process
    /// gets its stdin closed, a bounded wait, then SIGTERM and SIGKILL.
    ///
    /// # Errors
    /// [`Error::Process`] when the child process could not be reaped.
    ///
    /// # Cancel safety
    /// Dropping the future after the session closed leaves a child process to
    /// tokio's kill-on-drop instead of the orderly SIGTERM and wait.
    pub async fn close(self) -> Result<(), Error> {
        self.session.close().await;
        shutdown(self.owned).await
    }
}

async fn shutdown(owned: Owned) -> Result<(), Error> {
    match owned {
        Owned::Nothing => Ok(()),
        #[cfg(feature = "stdio")]
        Owned::Process(process) => process.shutdown().await.map(|_| ()).map_err(Error::from),
    }
}

impl Deref for Client {
    type Target = ClientSession;

    fn deref(&self) -> &ClientSession {
        &self.session
    }
}
