//! How one call is sent: the dispatcher's options plus what MCP adds per call.

use std::time::Duration;

use mcp_core::Progress;
use mcp_types::{LoggingLevel, RequestId};

/// How one call is sent: timeout, progress, extra headers, request id, and
/// the log level the server should use for this call only.
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use mcp_client::RequestOptions;
/// use mcp_types::LoggingLevel;
///
/// let options = RequestOptions::new()
///     .with_timeout(Duration::from_secs(30))
///     .with_log_level(LoggingLevel::Warning)
///     .with_progress(|p| eprintln!("{}/{:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default, Debug)]
pub struct RequestOptions {
    pub(crate) dispatch: mcp_core::RequestOptions,
    pub(crate) log_level: Option<LoggingLevel>,
}

impl RequestOptions {
    /// Options with no timeout (the session's default applies), no
    /// progress, no headers and no log level.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up after `timeout` and cancels the request on the wire.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.dispatch.timeout = Some(timeout);
        self
    }

    /// Asks for progress reports, delivered to `callback` on the
    /// connection's read loop (keep it short).
    #[must_use]
    pub fn with_progress(mut self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.dispatch = self.dispatch.with_progress(callback);
        self
    }

    /// Adds a header for transports that carry them (HTTP).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.dispatch = self.dispatch.with_header(name, value);
        self
    }

    /// Uses `id` as the request id instead of the next integer.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<RequestId>) -> Self {
        self.dispatch = self.dispatch.with_id(id);
        self
    }

    /// Asks for the server's log messages at `level` and above while it
    /// serves this call (`io.modelcontextprotocol/logLevel` in the request's
    /// `_meta`, 2026-07-28). Without it a stateless-era server sends this call
    /// no log messages. In the handshake era the level is session-wide:
    /// use [`ClientSession::set_logging_level`](crate::ClientSession::set_logging_level).
    #[must_use]
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// The timeout this call waits, if set.
    pub fn timeout(&self) -> Option<Duration> {
        self.dispatch.timeout
    }

    /// The per-call log level, if set.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }
}
