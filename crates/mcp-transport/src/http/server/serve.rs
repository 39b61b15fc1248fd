//! A ready HTTP/1.1 server for the MCP endpoint on hyper.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use http::{Request, Response};

use super::HttpBody;

/// Serves `service` (a [`StreamableHttpService`](super::StreamableHttpService),
/// or any tower service of the MCP endpoint such as a `BearerGuard` around
/// one) on `listener` (HTTP/1.1) until `shutdown` resolves.
///
/// # Errors
/// Only if accepting connections fails persistently; per-connection errors
/// are logged.
pub async fn serve<S>(
    listener: tokio::net::TcpListener,
    service: S,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()>
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
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let hyper_service = hyper::service::service_fn(move |request| {
                let mut service = service.clone();
                async move { service.call(request).await }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper_service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
