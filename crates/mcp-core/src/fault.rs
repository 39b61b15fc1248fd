//! What went wrong on a connection that no caller is waiting to hear: a
//! message that could not be read, an answer to nothing, an error the peer
//! could not address, a transport failure outside any request, the
//! connection dropping. The dispatcher hands each to
//! [`Handler::on_fault`](crate::Handler::on_fault), so a host can show it.

use mcp_types::{DecodeError, ErrorObject, RequestId};

use crate::error::TransportError;

/// A fault of the connection, for the handler's
/// [`on_fault`](crate::Handler::on_fault). Where a fault failed one of this
/// side's own requests, its caller got the error too; `failed` names it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Fault {
    /// A message that is not a JSON-RPC message (not JSON, not UTF-8, a
    /// batch, both `result` and `error`, ...).
    Unreadable {
        /// Why, with the id and shape its first bytes showed.
        error: DecodeError,
        /// The request of ours it answered, failed with it.
        failed: Option<RequestId>,
    },
    /// A message larger than the transport's limit, dropped unread.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
        /// The id its first bytes held, if any.
        id: Option<RequestId>,
        /// The request of ours it answered, failed with it.
        failed: Option<RequestId>,
    },
    /// A response whose id matches no request this side is waiting on (it
    /// may have timed out or been cancelled, or the peer made it up).
    StrayResponse {
        /// The id it carried.
        id: RequestId,
    },
    /// An error response with no id: the peer could not tell which request
    /// it answers.
    UnaddressedError {
        /// The peer's error.
        error: ErrorObject,
        /// When exactly one request of ours was waiting, it is the one the
        /// error can only be for, and it failed with it.
        failed: Option<RequestId>,
    },
    /// The transport failed outside any request this side waits on.
    Transport(TransportError),
    /// The connection ended without this side closing it (the peer exited,
    /// closed its output, or the transport broke).
    Disconnected,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Unreadable { error, .. } => write!(f, "an unreadable message: {error}"),
            Fault::TooLarge { limit, .. } => {
                write!(f, "a message over the {limit}-byte limit was dropped")
            }
            Fault::StrayResponse { id } => {
                write!(f, "a response to request {id}, which nothing waits for")
            }
            Fault::UnaddressedError { error, .. } => write!(
                f,
                "an error with no request id: {} ({})",
                error.message, error.code
            ),
            Fault::Transport(error) => write!(f, "the transport failed: {error}"),
            Fault::Disconnected => f.write_str("the connection ended"),
        }
    }
}
