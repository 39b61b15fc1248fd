//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`), over
//! decoders internal to this crate: the client's SSE decoder and the
//! server's request checks. Not API: hidden from the docs, no stability
//! promise, off by default; only `fuzz/` turns the feature on. Each entry
//! calls the real code and returns what a target needs to check it.

use std::time::Duration;

use http::HeaderMap;
use mcp_types::{ErrorObject, JsonRpcRequest};

use super::HttpServerConfig;
use mcp_types::Era;

use super::checks;
use crate::http::sse;

/// What the header checks made of one request's headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderVerdicts {
    /// Host and Origin passed the DNS rebinding check.
    pub origin_ok: bool,
    /// A POST with these headers has acceptable media types.
    pub post_media_ok: bool,
    /// `Accept` takes `text/event-stream` (a GET stream).
    pub accepts_sse: bool,
    /// The era `MCP-Protocol-Version` names: `handshake`, `stateless` or `unknown`.
    pub era: &'static str,
    /// The version header is acceptable inside a session.
    pub protocol_version_ok: bool,
}

/// Runs every header check the service runs before a request reaches a
/// session or an exchange.
pub fn check_headers(config: &HttpServerConfig, headers: &HeaderMap) -> HeaderVerdicts {
    HeaderVerdicts {
        origin_ok: checks::check_origin(config, headers).is_ok(),
        post_media_ok: checks::check_post_media(headers).is_ok(),
        accepts_sse: checks::accepts(headers, "text/event-stream"),
        era: match checks::era(headers) {
            Some(Era::Handshake) => "handshake",
            Some(Era::Stateless) => "stateless",
            None => "unknown",
        },
        protocol_version_ok: checks::check_protocol_version(headers).is_ok(),
    }
}

/// A POST's envelope read with its headers, as the service reads it: the
/// era, and for a stateless request the validation ladder.
///
/// # Panics
/// When the service's reading (from the request parsed into its type,
/// where it parses) and the scan of its params disagree: they must
/// answer every request alike.
///
/// # Errors
/// The JSON-RPC error the service answers with.
pub fn read_envelope(
    request: &JsonRpcRequest,
    headers: &HeaderMap,
) -> Result<mcp_types::envelope::Envelope, ErrorObject> {
    let read = checks::read_envelope(request, headers).map(|(envelope, _)| envelope);
    let scanned = checks::scan_envelope(request, headers);
    assert_eq!(read, scanned, "the typed and the scanned envelope differ");
    read
}

/// The client's incremental `text/event-stream` decoder.
#[derive(Debug)]
pub struct SseDecoder(sse::SseDecoder);

/// One decoded server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field.
    pub event: Option<String>,
    /// The data lines joined with `\n`.
    pub data: String,
    /// The `id` field.
    pub id: Option<String>,
    /// The `retry` field.
    pub retry: Option<Duration>,
}

impl SseDecoder {
    /// A decoder refusing events over `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self(sse::SseDecoder::new(limit))
    }

    /// Feeds bytes; the events they complete.
    ///
    /// # Errors
    /// The limit, when the event being read outgrew it.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, usize> {
        let events = self.0.feed(bytes).map_err(|e| e.limit)?;
        Ok(events
            .into_iter()
            .map(|e| SseEvent {
                event: e.event,
                data: e.data,
                id: e.id,
                retry: e.retry,
            })
            .collect())
    }
}

/// One event as the server writes it.
pub fn encode_sse_event(id: Option<&str>, retry: Option<Duration>, data: &[u8]) -> Vec<u8> {
    sse::encode_event(id, retry, data).to_vec()
}
