//! The errors of this crate.

/// Errors from starting and stopping transports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server program could not be started.
    #[error("could not start `{program}`: {source}; check the command and that it is installed")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the child process failed.
    #[error("could not wait for the server process: {0}")]
    Wait(#[source] std::io::Error),
    /// A server URL that cannot be used.
    #[error("invalid server URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header name or value that is not valid HTTP.
    #[error("invalid HTTP header `{name}`: names and values must be visible ASCII")]
    InvalidHeader {
        /// The header name as given.
        name: String,
    },
    /// An origin given to allow browser clients (CORS) that is not one.
    #[error(
        "invalid origin `{origin}`: {reason}; write it as browsers send it in the Origin \
         header, `scheme://host[:port]` (for example `http://localhost:5173`)"
    )]
    InvalidOrigin {
        /// The origin as given.
        origin: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The server could not be reached, or refused the connection's opening
    /// request (the legacy SSE stream's GET).
    #[error("could not open a connection to `{url}`: {source}")]
    Connect {
        /// The URL as given.
        url: String,
        /// What the transport reported.
        #[source]
        source: mcp_core::TransportError,
    },
    /// TLS could not be set up (the system's trust roots could not be loaded).
    #[error("TLS setup failed: {0}")]
    Tls(String),
    /// A shared store (sessions, events, the message bus) failed an
    /// operation: its backend is down, unreachable or refused it.
    #[error(
        "the {store} store could not {operation}: {source}; check that its backend is up \
         and reachable (the connection is re-established by itself)"
    )]
    Store {
        /// Which store: `session`, `event`, `bus` or `task`.
        store: &'static str,
        /// What it was doing.
        operation: &'static str,
        /// What the backend reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A shared store did not answer in time.
    #[error(
        "the {store} store did not {operation} within {after:?}; check that its backend is up \
         and reachable"
    )]
    StoreTimeout {
        /// Which store: `session`, `event`, `bus` or `task`.
        store: &'static str,
        /// What it was doing.
        operation: &'static str,
        /// How long it waited.
        after: std::time::Duration,
    },
    /// A shared store holds a record this server cannot read (written by an
    /// incompatible version, or damaged).
    #[error(
        "the {store} store holds an unreadable record: {source}; delete the key or align the servers' versions"
    )]
    StoreData {
        /// Which store.
        store: &'static str,
        /// Why it cannot be read.
        #[source]
        source: serde_json::Error,
    },
}
