//! The gateway's server over streamable HTTP: the server's own service
//! (Origin and Host checks, sessions, both eras on one endpoint, its
//! `/livez` and `/readyz` probes), with the readiness probe answering
//! `503` until the upstreams it waits for have connected.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Method, Request, Response, StatusCode, header};
use mcp_transport::http::{HttpBody, READINESS_PATH, StreamableHttpService};

use crate::board::ReadyCheck;

/// The gateway's HTTP service: [`StreamableHttpService`] behind a
/// readiness probe that also waits for the upstreams
/// ([`Gateway::http_service`](crate::Gateway::http_service)). Serve it
/// with [`mcp_transport::http::serve`], or mount it in a router.
#[derive(Clone)]
pub struct GatewayHttpService {
    inner: StreamableHttpService,
    ready: ReadyCheck,
}

impl std::fmt::Debug for GatewayHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayHttpService").finish_non_exhaustive()
    }
}

impl GatewayHttpService {
    pub(crate) fn new(inner: StreamableHttpService, ready: ReadyCheck) -> Self {
        Self { inner, ready }
    }

    /// The server's service inside (its shutdown handle, its health).
    pub fn inner(&self) -> &StreamableHttpService {
        &self.inner
    }
}

/// What the service answers with.
type Answering = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

impl<B> tower_service::Service<Request<B>> for GatewayHttpService
where
    StreamableHttpService:
        tower_service::Service<Request<B>, Response = Response<HttpBody>, Error = Infallible>,
    <StreamableHttpService as tower_service::Service<Request<B>>>::Future: Send + 'static,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Answering;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Answering {
        let probe = request.uri().path() == READINESS_PATH
            && matches!(*request.method(), Method::GET | Method::HEAD);
        if probe {
            let waiting = self.ready.waiting();
            if !waiting.is_empty() {
                // Upstream names only: no address, no secret.
                let names: Vec<&str> = waiting.iter().map(|name| &**name).collect();
                let body = serde_json::json!({"status": "starting", "waiting_for": names});
                let response = Response::builder()
                    .status(StatusCode::SERVICE_UNAVAILABLE)
                    .header(header::CONTENT_TYPE, "application/json")
                    .header(header::CACHE_CONTROL, "no-store")
                    .body(HttpBody::full(body.to_string()));
                return Box::pin(std::future::ready(Ok(response.unwrap_or_else(|_| {
                    let mut response = Response::new(HttpBody::empty());
                    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                    response
                }))));
            }
        }
        Box::pin(self.inner.call(request))
    }
}
