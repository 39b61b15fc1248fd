//! A streamable HTTP service with an echo handler, served whole by `serve`
//! on a free port of 127.0.0.1 (alone or wrapped in layers), for the tests
//! of the service's edge. Included by path, beside `raw_http.rs`.

use std::time::Duration;

use mcp_core::{
    DispatcherConfig, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_transport::http::{HttpServerConfig, ServeConfig, StreamableHttpService, serve};
use mcp_types::{ErrorObject, RawJson};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::raw_http::{self, Answer};

/// Answers `initialize` (at 2025-11-25, the version these tests ask for)
/// and sends any other request's params back.
struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        if request.method != "initialize" {
            return Ok(request.params.unwrap_or_else(RawJson::empty_object));
        }
        let result = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "edge", "version": "1"}
        });
        Ok(RawJson::from_serialize(&result).expect("json"))
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

/// The service with the echo handler.
pub(crate) fn service(config: HttpServerConfig) -> StreamableHttpService {
    StreamableHttpService::new(config, |opening| {
        opening.serve(Echo, DispatcherConfig::default())
    })
}

/// The headers of an MCP POST.
pub(crate) const MCP_POST: &[(&str, &str)] = &[
    ("Accept", "application/json, text/event-stream"),
    ("Content-Type", "application/json"),
];

/// An `initialize` request at 2025-11-25.
pub(crate) fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}
    }})
    .to_string()
}

/// What may stand in front of the service: CORS rules wrapping a bearer
/// guard of a resource with a verifier.
#[cfg(feature = "auth-server")]
type Front = (
    mcp_transport::http::CorsConfig,
    mcp_transport::http::ProtectedResource,
    std::sync::Arc<dyn mcp_transport::http::TokenVerifier>,
);
/// Nothing may stand in front of the service without `auth-server`.
#[cfg(not(feature = "auth-server"))]
type Front = std::convert::Infallible;

/// A service served whole by `serve` on a free port.
pub(crate) struct Served {
    addr: std::net::SocketAddr,
    /// The MCP service (inside whatever layers are served).
    pub(crate) service: StreamableHttpService,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    /// The service of `config`, served alone.
    pub(crate) async fn start(config: HttpServerConfig) -> Self {
        Self::serving(config, None).await
    }

    /// The service of `config` behind a `BearerGuard` of `resource` with
    /// `verifier`, the whole wrapped in `cors`' layer.
    #[cfg(feature = "auth-server")]
    #[allow(dead_code, reason = "only the CORS tests put a guard in front")]
    pub(crate) async fn guarded(
        config: HttpServerConfig,
        cors: mcp_transport::http::CorsConfig,
        resource: mcp_transport::http::ProtectedResource,
        verifier: std::sync::Arc<dyn mcp_transport::http::TokenVerifier>,
    ) -> Self {
        Self::serving(config, Some((cors, resource, verifier))).await
    }

    async fn serving(config: HttpServerConfig, front: Option<Front>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        let addr = listener.local_addr().expect("addr");
        let service = service(config);
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = async {
            let _ = stopped.await;
        };
        let serve_config = ServeConfig::new().service_shutdown(service.shutdown_handle());
        let endpoint = service.clone();
        let served = match front {
            None => tokio::spawn(serve(listener, endpoint, serve_config, stopped)),
            #[cfg(feature = "auth-server")]
            Some((cors, resource, verifier)) => {
                use tower_layer::Layer as _;
                let guard = mcp_transport::http::BearerGuard::new(endpoint, resource, verifier);
                let front = cors.layer().layer(guard);
                tokio::spawn(serve(listener, front, serve_config, stopped))
            }
        };
        Self {
            addr,
            service,
            stop: Some(stop),
            served,
        }
    }

    /// `method path` with `headers` and `body`, on a fresh connection.
    pub(crate) async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Answer {
        raw_http::request(self.addr, method, path, headers, body).await
    }

    /// POSTs an `initialize` to `path` as a client would, with `headers`
    /// besides those of an MCP POST.
    pub(crate) async fn initialize(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut all = MCP_POST.to_vec();
        all.extend_from_slice(headers);
        self.send("POST", path, &all, &initialize()).await
    }

    /// Shuts the server down and waits until `serve` has returned.
    pub(crate) async fn stop(mut self) {
        let _ = self.stop.take().expect("running").send(());
        tokio::time::timeout(Duration::from_secs(10), &mut self.served)
            .await
            .expect("serve returns after shutdown")
            .expect("joined")
            .expect("served");
    }
}
