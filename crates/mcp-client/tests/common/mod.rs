//! What the extension tests share: a server over streamable HTTP on
//! 127.0.0.1.

use mcp_server::Server;
use mcp_transport::http::{HttpServerConfig, ServeConfig};
use tokio::net::TcpListener;

/// Serves `server` over HTTP on a free port of 127.0.0.1 until the returned
/// sender is dropped; its URL.
pub(crate) async fn serve_http(server: Server) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let service = server.streamable_http_service(HttpServerConfig::new());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let config = ServeConfig::new().service_shutdown(service.shutdown_handle());
        let _ = mcp_transport::http::serve(listener, service, config, async {
            let _ = stopped.await;
        })
        .await;
    });
    (format!("http://{addr}/mcp"), stop)
}

/// The reason a registration was refused (any other outcome fails).
#[allow(
    dead_code,
    reason = "the extension tests register nothing that is refused"
)]
pub(crate) fn refusal<T>(result: Result<T, mcp_server::Error>) -> String {
    match result {
        Err(mcp_server::Error::Registration { reason, .. }) => reason,
        Err(other) => panic!("a refused registration, not {other:?}"),
        Ok(_) => panic!("a refused registration, not an accepted one"),
    }
}
