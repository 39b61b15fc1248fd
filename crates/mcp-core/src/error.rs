//! The errors of this crate.

use std::time::Duration;

use mcp_types::{DecodeError, ErrorObject, RequestId};

/// Errors from sending requests and notifications through a [`crate::Peer`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error (shown through
    /// [`ErrorObject`]'s `Display`, which escapes the peer's message).
    #[error("peer returned {0}")]
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
    /// The connection to the peer could not be opened (refused, name
    /// resolution, TLS).
    #[error("could not connect to the server: {0}; check the URL and that the server is running")]
    Connect(#[source] BoxError),
    /// The connection broke before the peer's answer was complete.
    #[error("the connection broke before the answer was complete: {0}; retry the request")]
    ConnectionLost(#[source] BoxError),
    /// The peer ended its answer stream cleanly without answering, and it
    /// could not be resumed.
    #[error(
        "the server ended the response stream without answering (resumed {resumptions} times); \
         retry the request"
    )]
    Unanswered {
        /// How many times the stream was resumed before giving up.
        resumptions: u32,
    },
    /// The peer answered with an HTTP error status and no JSON-RPC message.
    #[error("the server answered HTTP {status} without a JSON-RPC message")]
    Http {
        /// The HTTP status code.
        status: u16,
    },
    /// The peer's answer could not be read as a JSON-RPC message (not
    /// JSON, not UTF-8, a batch where one message was expected, both
    /// `result` and `error`); the [`DecodeError`] says which.
    #[error("the peer's answer could not be read: {0}")]
    InvalidResponse(#[source] DecodeError),
    /// The server no longer knows the session the request was sent in
    /// (HTTP 404 for a request carrying `Mcp-Session-Id`: it restarted, or
    /// the session expired).
    #[error(
        "the server no longer knows this session (HTTP 404): it restarted or the session \
         expired; start a new session (initialize again)"
    )]
    SessionExpired {
        /// The request had reached the server before the session was found
        /// gone (its response stream broke and could not be resumed), so
        /// its handler may have run; `false` when the server refused it
        /// before any handler saw it, so sending it again is safe.
        reached_server: bool,
    },
    /// The server named a session (`Mcp-Session-Id`) that is not visible
    /// ASCII, or is empty or too long: it cannot be sent back.
    #[error(
        "the server's Mcp-Session-Id is not visible ASCII of at most 256 bytes; fix the server"
    )]
    InvalidSessionId,
    /// A stream kept ending and was reopened as often as the reconnection
    /// budget allows; it waits for the window to move on.
    #[error(
        "the stream was reopened {attempts} times within {window:?}, the limit; it waits for \
         the window to move on (the server keeps ending it)"
    )]
    ReconnectBudgetSpent {
        /// The attempts the window allows.
        attempts: u32,
        /// The window.
        window: Duration,
    },
    /// The peer's answer is larger than this side accepts.
    #[error("the peer's answer exceeds the {limit}-byte limit; raise the limit to accept it")]
    ResponseTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A request to the peer has no way to reach it: it is tied to no
    /// open request of the peer's, and the peer opened no stream of its own
    /// to listen on (streamable HTTP: no GET stream). It could never be
    /// answered, so it is refused at once.
    #[error(
        "no stream to the client can carry this request: it is tied to no open request and the \
         client has no GET stream open; send it from inside a handler, or once the client listens"
    )]
    NoBackChannel,
    /// Credentials for the request could not be obtained (an OAuth flow
    /// failed or was refused); the source says why.
    #[error("authorization failed: {0}")]
    Auth(#[source] BoxError),
}

/// A boxed error from a layer this crate does not know (an HTTP stack, an
/// OAuth client); downcast it to the concrete type to inspect it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

#[cfg(test)]
mod tests {
    #[test]
    fn a_peers_error_message_is_shown_escaped() {
        let error = super::Error::Remote(mcp_types::ErrorObject::internal_error(
            "no\u{1b}]0;t\u{7}\r\nERROR forged",
        ));
        assert_eq!(
            error.to_string(),
            r"peer returned error -32603: no\x1b]0;t\x07\x0d\x0aERROR forged"
        );
    }
}
