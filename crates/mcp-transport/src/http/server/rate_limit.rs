//! Per-client rate and concurrency limits for the MCP endpoint, as a tower
//! layer (feature `rate-limit`): a POST over its client's limit is answered
//! 429 with `Retry-After` and a JSON-RPC error carrying the request's id,
//! before it reaches the service.
//!
//! The key is the bearer guard's verified principal (put [`RateLimitLayer`]
//! inside `BearerAuthLayer`), else the `Mcp-Session-Id`, else the peer
//! address [`serve`](super::serve) records as [`PeerAddr`]. Mounted in your
//! own server, insert [`PeerAddr`] yourself (behind a proxy, from the header
//! it sets); requests with none of the three share one bucket.
//!
//! Only refusals read the body, to answer with the request's id: a POST
//! that carries only answers to the server's requests or notifications is
//! passed on even over the limit, since refusing an answer would stall the
//! server's own request (a tool waiting for an elicitation, say). Admitted
//! requests pass untouched, their body unread.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http::header::RETRY_AFTER;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use mcp_core::BoxError;
use mcp_core::limit::{LimitKey, Limited, Limiter, RateLimit};
use mcp_types::{JsonRpcMessage, JsonRpcPayload, RequestId};

use super::body::{HttpBody, jsonrpc_error_with_id, read_body};
use super::checks::header_str;
use super::principal_of;
use super::serve::PeerAddr;

/// A tower layer limiting how hard each client may hit the MCP endpoint:
/// [`RateLimit`] requests per period and at once, per principal, session
/// or peer address.
///
/// ```
/// use mcp_core::limit::RateLimit;
/// use mcp_transport::http::{HttpServerConfig, RateLimitLayer, StreamableHttpService};
/// use tower_layer::Layer;
///
/// # struct Echo;
/// # impl mcp_core::Handler for Echo {
/// #     async fn handle_request(&self, r: mcp_core::IncomingRequest, _: mcp_core::RequestContext)
/// #         -> Result<mcp_types::RawJson, mcp_types::ErrorObject> {
/// #         Ok(r.params.unwrap_or_else(mcp_types::RawJson::empty_object))
/// #     }
/// #     async fn handle_notification(&self, _: mcp_core::IncomingNotification,
/// #         _: mcp_core::NotificationContext) {}
/// # }
/// # fn service() -> StreamableHttpService {
/// #     StreamableHttpService::new(HttpServerConfig::default(), |opening| {
/// #         opening.serve(Echo, mcp_core::DispatcherConfig::default())
/// #     })
/// # }
/// let limited = RateLimitLayer::new(RateLimit::per_second(20).with_max_concurrent(8))
///     .layer(service());
/// # let _ = limited;
/// ```
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    limiter: Arc<Limiter>,
    max_body: usize,
    body_read_timeout: Duration,
}

impl RateLimitLayer {
    /// Limits each client to `limit`.
    pub fn new(limit: RateLimit) -> Self {
        Self::with_limiter(Arc::new(Limiter::new(limit)))
    }

    /// Limits with `limiter`, which may be shared with other layers or
    /// dispatchers so that they count against one allowance.
    pub fn with_limiter(limiter: Arc<Limiter>) -> Self {
        Self {
            limiter,
            max_body: 4 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(30),
        }
    }

    /// The most bytes of a refused request's body read to find its id
    /// (default 4 MiB, the service's default body limit).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a refused request's body may take to arrive (default 30 s).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The limiter, for sharing.
    pub fn limiter(&self) -> &Arc<Limiter> {
        &self.limiter
    }
}

impl<S> tower_layer::Layer<S> for RateLimitLayer {
    type Service = RateLimitService<S>;

    fn layer(&self, inner: S) -> RateLimitService<S> {
        RateLimitService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`RateLimitLayer`] makes: `S` behind the limit. `S` gets
/// each request with a [`PeekedBody`].
#[derive(Debug, Clone)]
pub struct RateLimitService<S> {
    inner: S,
    layer: RateLimitLayer,
}

impl<S, B> tower_service::Service<Request<B>> for RateLimitService<S>
where
    S: tower_service::Service<
            Request<PeekedBody<B>>,
            Response = Response<HttpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone is the one driven to readiness (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let layer = self.layer.clone();
        Box::pin(async move {
            if request.method() != Method::POST {
                return inner.call(request.map(PeekedBody::Streaming)).await;
            }
            let key = key_of(&request);
            match layer.limiter.admit(key) {
                Ok(admitted) => {
                    let response = inner.call(request.map(PeekedBody::Streaming)).await?;
                    Ok(if admitted.holds_slot() {
                        response.map(|body| body.holding(admitted))
                    } else {
                        response
                    })
                }
                Err(limited) => {
                    let (parts, body) = request.into_parts();
                    let bytes = match read_body(body, layer.max_body, layer.body_read_timeout).await
                    {
                        Ok(bytes) => bytes,
                        Err(response) => return Ok(response),
                    };
                    match requests_in(&bytes) {
                        Carried::NoRequest => {
                            let body = PeekedBody::Buffered(Some(bytes));
                            inner.call(Request::from_parts(parts, body)).await
                        }
                        Carried::Requests(id) => Ok(refusal(id, &limited)),
                    }
                }
            }
        })
    }
}

/// The principal, else the session, else the peer address.
fn key_of<B>(request: &Request<B>) -> LimitKey {
    let principal = principal_of(request.extensions());
    let session = header_str(request.headers(), &super::checks::SESSION_ID).map(Arc::<str>::from);
    let peer = request
        .extensions()
        .get::<PeerAddr>()
        .map_or(LimitKey::Overflow, |peer| LimitKey::Peer(peer.0.ip()));
    LimitKey::for_request(principal.as_ref(), session.as_ref(), peer)
}

/// What a POST over the limit carries.
enum Carried {
    /// Only responses and notifications: they pass even over the limit.
    NoRequest,
    /// A request (anything unreadable counts as one), with the id its
    /// refusal answers, when there is one id to answer.
    Requests(Option<RequestId>),
}

/// Reads a POST's body once for what [`Carried`] needs.
fn requests_in(bytes: &[u8]) -> Carried {
    let is_request = |m: &JsonRpcMessage| matches!(m, JsonRpcMessage::Request(_));
    match JsonRpcPayload::from_slice(bytes) {
        Ok(JsonRpcPayload::Single(JsonRpcMessage::Request(request))) => {
            Carried::Requests(Some(request.id))
        }
        Ok(JsonRpcPayload::Single(_)) => Carried::NoRequest,
        Ok(JsonRpcPayload::Batch(messages)) if messages.iter().any(is_request) => {
            Carried::Requests(None)
        }
        Ok(JsonRpcPayload::Batch(_)) => Carried::NoRequest,
        Err(error) => Carried::Requests(error.id),
    }
}

/// 429 with `Retry-After` and the JSON-RPC error for the request's id.
fn refusal(id: Option<RequestId>, limited: &Limited) -> Response<HttpBody> {
    let mut response =
        jsonrpc_error_with_id(StatusCode::TOO_MANY_REQUESTS, id, limited.to_error_object());
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(limited.retry_after_secs()));
    response
}

/// A request body as [`RateLimitService`] hands it on: the client's body
/// unread, or the bytes the limit read from it.
#[derive(Debug)]
pub enum PeekedBody<B> {
    /// The body as it arrives.
    Streaming(B),
    /// The whole body, already read.
    Buffered(Option<Bytes>),
}

impl<B> Body for PeekedBody<B>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            PeekedBody::Streaming(body) => match Pin::new(body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(
                    frame.map_data(|mut data| data.copy_to_bytes(data.remaining()))
                ))),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
            PeekedBody::Buffered(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            PeekedBody::Streaming(body) => body.is_end_stream(),
            PeekedBody::Buffered(bytes) => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            PeekedBody::Streaming(body) => body.size_hint(),
            PeekedBody::Buffered(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}
