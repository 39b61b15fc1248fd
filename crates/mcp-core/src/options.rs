//! How one outbound request is sent: its timeout, progress callback, extra
//! headers and chosen id.

use std::sync::Arc;
use std::time::Duration;

use mcp_types::RequestId;

use crate::transport::Headers;

/// A progress report received for a request this side sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; increases with every report.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// Called with each progress report of a request. Runs on the read loop:
/// keep it short (hand the value to a channel for anything slow).
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// How one outbound request is sent, by the JSON-RPC engine. (A host's
/// per-call options, with MCP's own `_meta` and log level, are
/// `mcp_client::RequestOptions`, which holds one of these: one name for
/// each job.)
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct SendOptions {
    /// Give up (and cancel the request) after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Ask for progress and deliver it here; the dispatcher puts a fresh
    /// `progressToken` into the request's `params._meta`.
    pub on_progress: Option<ProgressCallback>,
    /// Extra headers for transports that carry them (HTTP).
    pub headers: Headers,
    /// A request id of the caller's choosing instead of the next integer.
    pub id: Option<RequestId>,
}

impl SendOptions {
    /// Options with no timeout, no progress, no headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: Some(timeout),
            ..self
        }
    }

    /// Asks for progress reports, delivered to `callback`.
    #[must_use]
    pub fn with_progress(self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self {
            on_progress: Some(Arc::new(callback)),
            ..self
        }
    }

    /// Adds a header for transports that carry them.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Uses `id` as the request id.
    #[must_use]
    pub fn with_id(self, id: impl Into<RequestId>) -> Self {
        Self {
            id: Some(id.into()),
            ..self
        }
    }
}

impl std::fmt::Debug for SendOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("headers", &self.headers)
            .field("id", &self.id)
            .finish()
    }
}
