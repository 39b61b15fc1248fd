//! What the tests over real sockets share: a server over streamable HTTP
//! on 127.0.0.1.

use mcp_server::Server;
use mcp_transport::http::HttpServerConfig;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Serves `server` over streamable HTTP on a free port of 127.0.0.1 until
/// the returned sender is dropped; its URL.
pub(crate) async fn serve_http(server: Server) -> (String, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, _served) = serve_on(server, listener);
    (format!("http://{addr}/mcp"), stop)
}

/// Serves `server` over streamable HTTP on `listener` until the returned
/// sender is dropped; the task ends once the server stopped and the
/// listener is closed (its port free to bind again).
pub(crate) fn serve_on(
    server: Server,
    listener: TcpListener,
) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        let _ = server
            .serve_http(listener, HttpServerConfig::new(), shutdown)
            .await;
    });
    (stop, served)
}
