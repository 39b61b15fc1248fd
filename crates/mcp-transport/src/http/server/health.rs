//! Liveness and readiness of a service, for a balancer or an orchestrator:
//! `GET /livez` answers 200 while the process serves HTTP at all;
//! `GET /readyz` answers 200 when the service takes new work (it is not
//! draining, and its shared stores answer), else 503 so that a balancer
//! routes around it until it is ready again.
//!
//! Liveness never looks at the stores: restarting every replica because
//! Redis is away would only add cold starts to the outage. Both answers
//! carry no data (a word, no store address or error text, which are
//! logged instead), so they skip the Host and Origin checks: probes reach
//! a replica by an address the MCP endpoint need not accept.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{Method, Response, StatusCode, header};
use tokio_util::sync::CancellationToken;

use super::HttpBody;
use crate::store::SharedStores;

/// The liveness path.
pub const LIVENESS_PATH: &str = "/livez";
/// The readiness path.
pub const READINESS_PATH: &str = "/readyz";

/// Whether a service takes new work, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Readiness {
    /// It does.
    Ready,
    /// It is shutting down.
    Draining,
    /// Its shared stores do not answer (the error is logged, not carried).
    StoresUnreachable,
}

/// The health of one [`StreamableHttpService`](super::StreamableHttpService)
/// (from its [`health`](super::StreamableHttpService::health)). The service
/// answers `/livez` and `/readyz` itself when served whole (see
/// [`HttpServerConfig::health_probes`](super::HttpServerConfig::health_probes));
/// mounted at one path, answer your own probe routes with
/// [`answer`](Self::answer) or [`readiness`](Self::readiness). Cheap to clone.
#[derive(Clone)]
pub struct Health {
    inner: Arc<Inner>,
}

struct Inner {
    stores: Option<SharedStores>,
    draining: CancellationToken,
    /// How long one store check answers every probe.
    reuse: Duration,
    last: Mutex<Option<(Instant, bool)>>,
    /// One store check at a time; probes arriving meanwhile wait for it.
    checking: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("shared_stores", &self.inner.stores.is_some())
            .field("reuse", &self.inner.reuse)
            .finish_non_exhaustive()
    }
}

impl Health {
    pub(super) fn new(
        stores: Option<SharedStores>,
        draining: CancellationToken,
        reuse: Duration,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                stores,
                draining,
                reuse,
                last: Mutex::new(None),
                checking: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// Whether the service takes new work now. With shared stores, one
    /// check (a `PING` of each backend, bounded by its timeout) answers
    /// every call within [`HttpServerConfig::readiness_reuse`](super::HttpServerConfig::readiness_reuse),
    /// so probes cannot load the stores.
    pub async fn readiness(&self) -> Readiness {
        if self.inner.draining.is_cancelled() {
            return Readiness::Draining;
        }
        let Some(stores) = &self.inner.stores else {
            return Readiness::Ready;
        };
        if let Some(fresh) = self.fresh() {
            return verdict(fresh);
        }
        let _one = self.inner.checking.lock().await;
        // Another probe may have checked while this one waited.
        if let Some(fresh) = self.fresh() {
            return verdict(fresh);
        }
        let reachable = match stores.ping().await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "not ready: the shared stores do not answer");
                false
            }
        };
        *self.inner.last.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), reachable));
        verdict(reachable)
    }

    fn fresh(&self) -> Option<bool> {
        let last = *self.inner.last.lock().unwrap_or_else(|p| p.into_inner());
        last.filter(|(at, _)| at.elapsed() < self.inner.reuse)
            .map(|(_, ok)| ok)
    }

    /// The answer to a probe of `path` with `method` (`GET` or `HEAD` of
    /// [`LIVENESS_PATH`] or [`READINESS_PATH`]), `None` for any other
    /// request.
    pub async fn answer(&self, method: &Method, path: &str) -> Option<Response<HttpBody>> {
        if !Self::is_probe(method, path) {
            return None;
        }
        let (status, text) = match path {
            LIVENESS_PATH => (StatusCode::OK, "live\n"),
            READINESS_PATH => match self.readiness().await {
                Readiness::Ready => (StatusCode::OK, "ready\n"),
                Readiness::Draining => (StatusCode::SERVICE_UNAVAILABLE, "not ready: draining\n"),
                Readiness::StoresUnreachable => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not ready: the shared stores do not answer\n",
                ),
            },
            _ => return None,
        };
        let body = if method == Method::HEAD {
            HttpBody::empty()
        } else {
            HttpBody::full(text)
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-store"),
        );
        Some(response)
    }

    /// Whether a request of `method` to `path` is a probe [`answer`](Self::answer) takes.
    pub fn is_probe(method: &Method, path: &str) -> bool {
        (method == Method::GET || method == Method::HEAD)
            && (path == LIVENESS_PATH || path == READINESS_PATH)
    }
}

fn verdict(reachable: bool) -> Readiness {
    if reachable {
        Readiness::Ready
    } else {
        Readiness::StoresUnreachable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn probes_answer_and_readiness_follows_draining() {
        let draining = CancellationToken::new();
        let health = Health::new(
            Some(SharedStores::in_memory()),
            draining.clone(),
            Duration::from_millis(250),
        );
        let live = health
            .answer(&Method::GET, LIVENESS_PATH)
            .await
            .expect("a probe");
        assert_eq!(live.status(), StatusCode::OK);
        let ready = health
            .answer(&Method::HEAD, READINESS_PATH)
            .await
            .expect("a probe");
        assert_eq!(ready.status(), StatusCode::OK);
        assert!(health.answer(&Method::POST, READINESS_PATH).await.is_none());
        assert!(health.answer(&Method::GET, "/mcp").await.is_none());
        draining.cancel();
        assert_eq!(health.readiness().await, Readiness::Draining);
        let ready = health
            .answer(&Method::GET, READINESS_PATH)
            .await
            .expect("a probe");
        assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
        let live = health
            .answer(&Method::GET, LIVENESS_PATH)
            .await
            .expect("a probe");
        assert_eq!(live.status(), StatusCode::OK, "draining is still alive");
    }
}
