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
}
