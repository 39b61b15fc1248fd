//! The errors of this crate.

use std::time::Duration;

use mcp_types::{ErrorObject, RequestId};

/// Errors from sending requests and notifications through a [`crate::Peer`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    #[error("peer returned error {}: {}", .0.code, .0.message)]
    Remote(ErrorObject),
    /// No answer in time; a cancel notice was sent to the peer (unless the
    /// method may not be cancelled, such as `initialize`).
    #[error("`{method}` got no answer within {timeout:?}; raise the timeout or check the peer")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout that passed.
        timeout: Duration,
    },
    /// The connection ended before an answer arrived.
    #[error("the connection closed before `{method}` was answered; reconnect to retry")]
    ConnectionClosed {
        /// The method of the request.
        method: String,
    },
    /// The transport could not carry the request or read its answer (for
    /// example an HTTP connection that dropped); the peer did not answer.
    #[error("`{method}` failed at the transport: {source}")]
    Transport {
        /// The method of the request.
        method: String,
        /// What the transport reported.
        #[source]
        source: TransportError,
    },
    /// The connection is closed; nothing can be sent.
    #[error("the connection is closed; reconnect before sending")]
    Closed,
    /// The caller chose a request id that is still waiting for its answer.
    #[error("request id {0} is already in use by a pending request; choose another")]
    DuplicateId(RequestId),
    /// The params or result could not be serialized or read.
    #[error("could not encode or decode `{method}`: {source}")]
    Json {
        /// The method concerned.
        method: String,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    /// The JSON-RPC error object this error stands for, for answering a peer.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Error::Remote(e) => e.clone(),
            Error::Timeout { .. } => {
                ErrorObject::new(mcp_types::ErrorCode::REQUEST_TIMEOUT, self.to_string())
            }
            Error::ConnectionClosed { .. } | Error::Closed | Error::Transport { .. } => {
                ErrorObject::new(mcp_types::ErrorCode::CONNECTION_CLOSED, self.to_string())
            }
            _ => ErrorObject::internal_error(self.to_string()),
        }
    }
}

/// Errors a transport reports when sending.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The other end is gone.
    #[error("the transport is closed")]
    Closed,
    /// Writing failed.
    #[error("transport I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The message could not be serialized.
    #[error("could not serialize the message: {0}")]
    Encode(#[from] serde_json::Error),
    /// The message is larger than the transport allows.
    #[error("a {size}-byte message exceeds the {limit}-byte limit")]
    TooLarge {
        /// The message size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
}
