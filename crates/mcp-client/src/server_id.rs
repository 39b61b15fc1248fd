//! The name a session group gives each of its servers: plain data, below
//! the errors that name it.

/// Identifies one server in a [`ClientSessionGroup`](crate::ClientSessionGroup).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(pub(crate) u64);

impl std::fmt::Display for ServerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server #{}", self.0)
    }
}
