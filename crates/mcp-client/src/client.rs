//! Connect to a server and initialize in one call.

use std::ops::Deref;

use mcp_core::Transport;
use mcp_types::{DiscoverResult, Implementation, InitializeResult, Revision, ServerCapabilities};

use crate::{ClientConfig, ClientSession, Error, Negotiated};

/// Messages queued each way between an in-process server and its client.
#[cfg(feature = "in-process")]
const IN_PROCESS_QUEUE: usize = 256;

/// What keeps the server on the other end alive, if this client owns it.
enum Owned {
    Nothing,
    #[cfg(feature = "stdio")]
    Process(mcp_transport::stdio::ChildProcess),
    #[cfg(feature = "in-process")]
    Server(mcp_server::ServerConnection),
}

/// A session with a server, negotiated in the newest era both speak
/// (`server/discover` at 2026-07-28, else `initialize`), and whatever runs the server (a
/// child process, an in-process server). Derefs to [`ClientSession`] for
/// the typed calls.
///
/// # Examples
/// ```no_run
/// use mcp_client::{Client, ClientConfig};
/// use mcp_transport::stdio::ServerCommand;
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
    /// Connects over any transport and initializes.
    ///
    /// # Errors
    /// As [`ClientSession::initialize`].
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
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        command: mcp_transport::stdio::ServerCommand,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let (transport, process) = command.spawn()?;
        let session = ClientSession::new(transport, config);
        Self::initialize(session, Owned::Process(process)).await
    }

    /// Connects to a streamable HTTP endpoint (`http://` or `https://`) and
    /// initializes. [`close`](Self::close) ends the HTTP session (DELETE).
    ///
    /// # Errors
    /// [`Error::Process`] for an unusable URL; as
    /// [`ClientSession::initialize`] otherwise.
    #[cfg(feature = "http")]
    pub async fn connect_http(url: &str, config: ClientConfig) -> Result<Self, Error> {
        Self::connect_http_with(url, mcp_transport::http::HttpClientConfig::new(), config).await
    }

    /// [`connect_http`](Self::connect_http) with HTTP settings: extra
    /// headers, message limits, reconnection.
    ///
    /// # Errors
    /// As [`connect_http`](Self::connect_http).
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
    #[cfg(feature = "http")]
    pub async fn connect_legacy_sse(url: &str, config: ClientConfig) -> Result<Self, Error> {
        let http = mcp_transport::http::HttpClientConfig::new();
        let transport = mcp_transport::http::LegacySseClient::connect(url, http).await?;
        Self::connect(transport, config).await
    }

    /// Runs `server` in this process over an in-memory transport and
    /// connects to it: for tests, and for hosts that embed their tools.
    ///
    /// # Errors
    /// As [`ClientSession::initialize`].
    #[cfg(feature = "in-process")]
    pub async fn connect_in_process(
        server: &mcp_server::Server,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let (ours, theirs) = mcp_core::MemoryTransport::pair(IN_PROCESS_QUEUE);
        let connection = server.serve(theirs);
        let session = ClientSession::new(ours, config);
        Self::initialize(session, Owned::Server(connection)).await
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

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> Revision {
        self.session.protocol_version()
    }

    /// The server's name and version (in the stateless era, when its
    /// discover result names them).
    pub fn server_info(&self) -> Option<&Implementation> {
        match &self.negotiated {
            Negotiated::Handshake(result) => Some(&result.server_info),
            Negotiated::Stateless(result) => {
                result.meta.as_ref().and_then(|m| m.server_info.as_ref())
            }
        }
    }

    /// What the server can do.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        match &self.negotiated {
            Negotiated::Handshake(result) => &result.capabilities,
            Negotiated::Stateless(result) => &result.capabilities,
        }
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        match &self.negotiated {
            Negotiated::Handshake(result) => result.instructions.as_deref(),
            Negotiated::Stateless(result) => result.instructions.as_deref(),
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
        #[cfg(feature = "in-process")]
        Owned::Server(connection) => {
            connection.shutdown().await;
            Ok(())
        }
    }
}

impl Deref for Client {
    type Target = ClientSession;

    fn deref(&self) -> &ClientSession {
        &self.session
    }
}
