//! The MCP endpoint mounted in an axum app beside its own routes, with
//! graceful shutdown: on Ctrl-C (or after `--serve-for-ms N`, for tests) the
//! server stops accepting, the MCP service drains (its GET streams end, new
//! sessions are refused, calls in flight finish), and after a grace period
//! whatever still runs is cancelled.
//!
//! ```text
//! cargo run --example axum-mount -- --port 3000
//! cargo run -p mcp-cli -- --url http://127.0.0.1:3000/mcp tools list
//! ```

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use mcp_server::{Args, HttpServerConfig, Server};
use tokio::net::TcpListener;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// How long calls in flight may take to finish after shutdown begins.
const GRACE: Duration = Duration::from_secs(10);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 3000u16;
    let mut serve_for = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--port", Some(value)) => port = value.parse()?,
            ("--serve-for-ms", Some(value)) => {
                serve_for = Some(Duration::from_millis(value.parse()?))
            }
            _ => return Err("usage: axum-mount [--port N] [--serve-for-ms N]".into()),
        }
    }

    let server = Server::builder("axum-mounted", "1.0.0")
        .tool(
            "echo",
            "Sends the text back",
            |Args(args): Args<Echo>| async move { args.text },
        )
        .build()?;
    // Localhost-safe defaults: only Host/Origin of localhost and 127.0.0.1.
    // Behind a real name, list it: `.allowed_hosts(["mcp.example.com"])`.
    let mcp = server.streamable_http_service(HttpServerConfig::new());
    let shutdown = mcp.shutdown_handle();

    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route_service("/mcp", mcp);

    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("MCP endpoint on http://{}/mcp", listener.local_addr()?);
    // SSE answers are small writes: without TCP_NODELAY each one can wait
    // for the client's delayed ACK (tens of milliseconds per call).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });

    let drain = shutdown.clone();
    let (began, shutdown_began) = tokio::sync::oneshot::channel();
    let stop = async move {
        match serve_for {
            Some(duration) => tokio::time::sleep(duration).await,
            None => mcp_server::shutdown_signal().await,
        }
        // Begin draining as axum stops accepting: open GET streams end, so
        // axum's graceful shutdown is not held up by them forever.
        drain.drain();
        let _ = began.send(());
    };
    let served = axum::serve(listener, app).with_graceful_shutdown(stop);
    let grace = async {
        if shutdown_began.await.is_ok() {
            tokio::time::sleep(GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = std::future::IntoFuture::into_future(served) => result?,
        () = grace => eprintln!("calls still running {GRACE:?} after shutdown began: cancelling them"),
    }
    // Ends every session and cancels what still runs, then waits for it.
    shutdown.close().await;
    eprintln!("shut down");
    Ok(())
}
