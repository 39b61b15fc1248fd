//! The settings of a dispatcher, each with its documented default.

#[cfg(feature = "rate-limit")]
use std::sync::Arc;
use std::time::Duration;

use mcp_types::NON_CANCELLABLE;

/// Settings of one connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DispatcherConfig {
    /// Capacity of the queue of messages waiting to be written. Default 256.
    pub outbound_queue: usize,
    /// Capacity of the queue of notifications waiting for the handler.
    /// Default 256.
    pub notification_queue: usize,
    /// Methods never cancelled when their request is dropped or times out.
    pub non_cancellable: Vec<String>,
    /// How many of the peer's requests run at once on this connection.
    /// Default 128. Requests beyond it wait their turn in a FIFO.
    pub max_concurrent_requests: usize,
    /// How many of the peer's requests may wait for a free slot. Default
    /// 1,024. When it is full, reading from the peer pauses until a request
    /// starts (back-pressure); responses to this side's own requests are
    /// then not read either, so keep it well above `max_concurrent_requests`.
    pub max_queued_requests: usize,
    /// Cancels a handler that runs longer and answers its caller with a
    /// `-32001` error saying so. Default `None` (no limit).
    pub request_timeout: Option<Duration>,
    /// How many bytes of messages may wait to be written before reading from
    /// the peer pauses (back-pressure on a peer that sends faster than it
    /// reads our answers, so large answers do not pile up in memory).
    /// Default 256 KiB; one larger message still goes through.
    pub max_unwritten_bytes: usize,
    /// How long running requests may still finish, and their answers be
    /// written, after the peer finished sending (stdio: stdin reached its
    /// end). Default 10 s; what is still running then is cancelled.
    pub eof_grace: Duration,
    /// Per-key limits on the peer's requests (feature `rate-limit`), the
    /// one rate limit of the stack: every request passes it, whatever
    /// transport or era it came by. Keyed by the principal, else the
    /// session, else the peer address (HTTP), else the connection. A refused
    /// request is answered with [`ErrorCode::RATE_LIMITED`](mcp_types::ErrorCode::RATE_LIMITED);
    /// over HTTP a request posted alone gets `429 Too Many Requests` with
    /// `Retry-After` too. Share one limiter between connections (and the
    /// sessions of an HTTP service) to limit across them. Default `None`.
    #[cfg(feature = "rate-limit")]
    pub rate_limit: Option<Arc<crate::limit::Limiter>>,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            outbound_queue: 256,
            notification_queue: 256,
            non_cancellable: NON_CANCELLABLE.iter().map(|m| (*m).to_owned()).collect(),
            max_concurrent_requests: 128,
            max_queued_requests: 1024,
            request_timeout: None,
            max_unwritten_bytes: 256 * 1024,
            eof_grace: Duration::from_secs(10),
            #[cfg(feature = "rate-limit")]
            rate_limit: None,
        }
    }
}

impl DispatcherConfig {
    /// Sets [`max_concurrent_requests`](Self::max_concurrent_requests).
    #[must_use]
    pub fn with_max_concurrent_requests(self, limit: usize) -> Self {
        Self {
            max_concurrent_requests: limit,
            ..self
        }
    }

    /// Sets [`max_queued_requests`](Self::max_queued_requests).
    #[must_use]
    pub fn with_max_queued_requests(self, limit: usize) -> Self {
        Self {
            max_queued_requests: limit,
            ..self
        }
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    #[must_use]
    pub fn with_request_timeout(self, timeout: Duration) -> Self {
        Self {
            request_timeout: Some(timeout),
            ..self
        }
    }

    /// Sets [`max_unwritten_bytes`](Self::max_unwritten_bytes).
    #[must_use]
    pub fn with_max_unwritten_bytes(self, limit: usize) -> Self {
        Self {
            max_unwritten_bytes: limit,
            ..self
        }
    }

    /// Sets [`rate_limit`](Self::rate_limit).
    #[cfg(feature = "rate-limit")]
    #[must_use]
    pub fn with_rate_limit(self, limiter: Arc<crate::limit::Limiter>) -> Self {
        Self {
            rate_limit: Some(limiter),
            ..self
        }
    }

    /// Sets [`eof_grace`](Self::eof_grace).
    #[must_use]
    pub fn with_eof_grace(self, grace: Duration) -> Self {
        Self {
            eof_grace: grace,
            ..self
        }
    }
}
