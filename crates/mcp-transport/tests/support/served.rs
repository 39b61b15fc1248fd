//! A streamable HTTP service with an echo handler, served whole by `serve`
//! on a free port of 127.0.0.1 (alone or wrapped in layers), for the tests
//! of the service's edge. Included by path, beside `raw_http.rs`.

use std::convert::Infallible;
use std::time::Duration;

use http::{Request, Response};
use mcp_core::{
    DispatcherConfig, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_transport::http::{HttpBody, HttpServerConfig, ServeConfig, StreamableHttpService, serve};
use mcp_types::{ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::raw_http::{self, Answer};

/// Answers `initialize` and echoes anything else.
struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let params: Value = request
            .params
            .as_ref()
            .and_then(|p| p.parse().ok())
            .unwrap_or(Value::Null);
        let result = match request.method.as_str() {
            "initialize" => json!({
                "protocolVersion": params["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "edge", "version": "1"}
            }),
            _ => json!({"content": [], "echo": params}),
        };
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
        Self::wrapped(config, |service| service).await
    }

    /// The service of `config` inside what `wrap` makes of it.
    pub(crate) async fn wrapped<S>(
        config: HttpServerConfig,
        wrap: impl FnOnce(StreamableHttpService) -> S,
    ) -> Self
    where
        S: tower_service::Service<
                Request<hyper::body::Incoming>,
                Response = Response<HttpBody>,
                Error = Infallible,
            > + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        let addr = listener.local_addr().expect("addr");
        let service = service(config);
        let (stop, stopped) = oneshot::channel::<()>();
        let serve_config = ServeConfig::new().service_shutdown(service.shutdown_handle());
        let served = tokio::spawn(serve(
            listener,
            wrap(service.clone()),
            serve_config,
            async {
                let _ = stopped.await;
            },
        ));
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
