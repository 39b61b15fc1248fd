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
}
