//! What happens to a session that no call of the host returns: the session
//! restarted under it, or a fault no caller waits for (an unreadable
//! message, a response to nothing, an error without an id, the transport
//! failing between requests, the connection dropping). A host hears them
//! through [`ClientConfig::on_event`](crate::ClientConfig::on_event).

use std::sync::Arc;

use mcp_types::Revision;

pub use mcp_core::Fault;

/// Called with each [`SessionEvent`], on the connection's read loop or in
/// the task of the call that noticed: keep it short.
pub(crate) type EventFn = Arc<dyn Fn(SessionEvent) + Send + Sync>;

/// Something that happened to a session, for the host.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionEvent {
    /// The client started a new session with the server without the host
    /// asking: what the host cached of the old one (tool lists, resource
    /// contents) may be out of date.
    Restarted(Restart),
    /// Something went wrong that no call waits for.
    Fault(Fault),
}

/// A session started anew by the client (see [`SessionEvent::Restarted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restart {
    /// Why the old session could not go on.
    pub reason: RestartReason,
    /// The revision spoken before.
    pub previous: Revision,
    /// The revision the new session speaks.
    pub revision: Revision,
    /// The resource subscriptions made again in the new session.
    pub resubscribed: usize,
}

/// Why a session was started anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestartReason {
    /// The server no longer knew the session (HTTP 404: it restarted, or
    /// the session expired).
    SessionExpired,
    /// A stateless-era server stopped accepting the revision negotiated with
    /// it (`-32022`): it was redeployed, and was asked anew.
    ServerChanged,
}

impl std::fmt::Display for RestartReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RestartReason::SessionExpired => "the server no longer knew the session",
            RestartReason::ServerChanged => "the server no longer accepted the negotiated revision",
        })
    }
}
