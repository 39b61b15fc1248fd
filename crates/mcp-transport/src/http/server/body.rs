//! Response bodies (empty, JSON, or an SSE stream) and the canned answers
//! the service sends: JSON-RPC errors with their HTTP status.

use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body::{Body, Frame};
use mcp_types::{ErrorCode, ErrorObject, JsonRpcErrorResponse, RequestId};
use tokio::sync::mpsc;

use crate::http::SESSION_ID_HEADER;

/// The body of a response: empty, a JSON document, or an SSE stream.
pub struct HttpBody {
    kind: BodyKind,
    /// What must live as long as the response, dropped with the body (the
    /// response was sent, or the client went away): a stateless exchange,
    /// whose end cancels an unanswered request.
    held: Option<Box<dyn std::any::Any + Send + Sync>>,
}

enum BodyKind {
    Full(Option<Bytes>),
    Stream {
        events: mpsc::Receiver<Bytes>,
        keep_alive: Option<tokio::time::Interval>,
    },
}

/// The comment an idle SSE stream gets now and then.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The most bytes of queued events joined into one frame.
const MAX_FRAME: usize = 64 * 1024;

impl HttpBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: BodyKind::Full(None),
            held: None,
        }
    }

    /// A body of these bytes (a JSON document, say).
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            kind: BodyKind::Full(Some(bytes.into())),
            held: None,
        }
    }

    /// Keeps `value`, besides anything held already, until this body is
    /// dropped (the response was sent, or the client went away).
    pub(super) fn holding(mut self, value: impl std::any::Any + Send + Sync) -> Self {
        self.held = Some(match self.held.take() {
            None => Box::new(value),
            Some(earlier) => Box::new((earlier, value)),
        });
        self
    }
}

/// Empty (what a CORS preflight's answer carries).
impl Default for HttpBody {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for HttpBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            BodyKind::Full(b) => {
                write!(f, "HttpBody::Full({:?} bytes)", b.as_ref().map(Bytes::len))
            }
            BodyKind::Stream { .. } => f.write_str("HttpBody::Stream"),
        }
    }
}

impl Body for HttpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            BodyKind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            BodyKind::Stream { events, keep_alive } => match events.poll_recv(cx) {
                Poll::Ready(Some(first)) => {
                    if let Some(keep_alive) = keep_alive {
                        keep_alive.reset();
                    }
                    Poll::Ready(Some(Ok(Frame::data(join_queued(first, events)))))
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => {
                    let due = keep_alive
                        .as_mut()
                        .is_some_and(|keep_alive| keep_alive.poll_tick(cx).is_ready());
                    if due {
                        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))))
                    } else {
                        Poll::Pending
                    }
                }
            },
        }
    }

    /// A full body's exact length, so it goes out with `Content-Length`
    /// rather than chunked.
    fn size_hint(&self) -> http_body::SizeHint {
        match &self.kind {
            BodyKind::Full(bytes) => {
                http_body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            BodyKind::Stream { .. } => http_body::SizeHint::default(),
        }
    }

    /// True once a stream's events are all taken and no more can come: hyper
    /// then writes the last event and the end of the body in one write.
    fn is_end_stream(&self) -> bool {
        match &self.kind {
            BodyKind::Full(bytes) => bytes.is_none(),
            BodyKind::Stream { events, .. } => events.is_closed() && events.is_empty(),
        }
    }
}

/// `first` and the events already queued behind it, as one frame: events
/// that are ready together leave in one write.
fn join_queued(first: Bytes, events: &mut mpsc::Receiver<Bytes>) -> Bytes {
    let Ok(second) = events.try_recv() else {
        return first;
    };
    let mut joined = bytes::BytesMut::with_capacity(first.len() + second.len());
    joined.extend_from_slice(&first);
    joined.extend_from_slice(&second);
    while joined.len() < MAX_FRAME {
        match events.try_recv() {
            Ok(next) => joined.extend_from_slice(&next),
            Err(_) => break,
        }
    }
    joined.freeze()
}

/// A JSON-RPC error without an id, as the body of a `status` answer.
pub(super) fn jsonrpc_error(
    status: StatusCode,
    code: ErrorCode,
    message: impl Into<String>,
) -> Response<HttpBody> {
    jsonrpc_error_with_id(status, None, ErrorObject::new(code, message))
}

/// A JSON-RPC error answering request `id`, as the body of a `status` answer.
pub(super) fn jsonrpc_error_with_id(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> Response<HttpBody> {
    let body = serde_json::to_vec(&JsonRpcErrorResponse::new(id, error))
        .unwrap_or_else(|_| b"{}".to_vec());
    json_response(status, Bytes::from(body))
}

/// The answer to a request the dispatcher's rate limit refused: `429 Too
/// Many Requests` with `Retry-After`, and the JSON-RPC error for its id.
#[cfg(feature = "rate-limit")]
pub(super) fn too_many_requests(
    id: RequestId,
    limited: &mcp_core::limit::Limited,
) -> Response<HttpBody> {
    let mut response = jsonrpc_error_with_id(
        StatusCode::TOO_MANY_REQUESTS,
        Some(id),
        limited.to_error_object(),
    );
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        HeaderValue::from(limited.retry_after_secs()),
    );
    response
}

/// A JSON document.
pub(super) fn json_response(status: StatusCode, body: Bytes) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A status without a body.
pub(super) fn plain_status(status: StatusCode) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody::empty());
    *response.status_mut() = status;
    response
}

/// `405` with the methods this endpoint does take.
pub(super) fn method_not_allowed(allow: &'static str) -> Response<HttpBody> {
    let mut response = plain_status(StatusCode::METHOD_NOT_ALLOWED);
    response
        .headers_mut()
        .insert(http::header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// An SSE stream of the events `rx` yields, with a keep-alive comment
/// after each `keep_alive` without an event.
pub(super) fn sse_response(
    rx: mpsc::Receiver<Bytes>,
    session_id: Option<&str>,
    keep_alive: Option<Duration>,
) -> Response<HttpBody> {
    let keep_alive = keep_alive.filter(|d| !d.is_zero()).map(|period| {
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    let mut response = Response::new(HttpBody {
        kind: BodyKind::Stream {
            events: rx,
            keep_alive,
        },
        held: None,
    });
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    set_session_header(headers, session_id);
    response
}

/// The answer of a POST whose requests were all cancelled: they get no
/// JSON-RPC answer, and a POST carrying requests must still be answered
/// with JSON or SSE, so it is an SSE stream that ends at once.
pub(super) fn no_answer(session_id: Option<&str>) -> Response<HttpBody> {
    sse_response(mpsc::channel(1).1, session_id, None)
}

pub(super) fn set_session_header(headers: &mut HeaderMap, session_id: Option<&str>) {
    if let Some(value) = session_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        headers.insert(SESSION_ID_HEADER, value);
    }
}

/// The answer to a request naming a session this server does not have.
pub(super) fn session_not_found() -> Response<HttpBody> {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "Not Found: no such session (it ended or never existed); initialize a new one",
    )
}

/// Reads a request body up to `limit` bytes within `timeout`; `Err` is the
/// answer to send (413, 408, or 400 when the body broke off: none of them
/// a parse error, which is for bodies that arrived and are not JSON).
pub(super) async fn read_body<B>(
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, Response<HttpBody>>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt as _;
    let mut collect = std::pin::pin!(http_body_util::Limited::new(body, limit).collect());
    // A small body has usually arrived with its headers: read it first
    // without a timer, so only a POST whose body is still on its way arms
    // one (a timer costs a clock read and an entry in tokio's timer wheel).
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(timeout, collect).await,
    };
    let Ok(read) = read else {
        tracing::warn!(
            ?timeout,
            "refused a request whose body did not arrive in time; raise \
             HttpServerConfig::body_read_timeout if clients are that slow"
        );
        return Err(jsonrpc_error(
            StatusCode::REQUEST_TIMEOUT,
            ErrorCode::INVALID_REQUEST,
            format!("Request Timeout: the request body did not arrive within {timeout:?}"),
        ));
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                tracing::warn!(
                    limit,
                    "refused a request body over the limit; raise HttpServerConfig::max_body \
                     if clients need larger messages"
                );
                return Err(jsonrpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    ErrorCode::INVALID_REQUEST,
                    format!("Payload Too Large: the body exceeds {limit} bytes"),
                ));
            }
            tracing::debug!(error = %e, "a request body broke off");
            Err(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                format!("Bad Request: the request body could not be read: {e}"),
            ))
        }
    }
}
