//! The server `cargo xtask bench` measures: one tool, `echo`, that returns
//! its `message`, built on `mcp-server` as a new user would build it.
//!
//! `mcp-bench-echo-server` serves on stdin/stdout;
//! `mcp-bench-echo-server --http` serves streamable HTTP with the default
//! config on a free port of 127.0.0.1 and prints `ADDRESS` (`127.0.0.1:PORT`)
//! as its first line on stdout once it accepts connections;
//! `--key-file PATH` seals `requestState` with the secret in that file and
//! `--redis URL` shares sessions on that Redis, as replicas behind a load
//! balancer do (`cargo xtask bench`'s rows across replicas).

use mcp_server::{Args, Server};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut http = false;
    let mut redis = None;
    let mut builder = Server::builder("mcp-bench-echo", env!("CARGO_PKG_VERSION")).tool(
        "echo",
        "Returns its message",
        |Args(args): Args<EchoArgs>| async move { args.message },
    );
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => http = true,
            "--key-file" => {
                let path = args.next().ok_or("--key-file needs a path")?;
                builder = builder.request_state_key(mcp_examples::read_secret(&path)?);
            }
            "--redis" => redis = Some(args.next().ok_or("--redis needs a URL")?),
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: mcp-bench-echo-server [--http] [--key-file PATH] [--redis URL]"
                )
                .into());
            }
        }
    }
    let server = builder.build()?;
    if http {
        // The default (multi-thread) runtime, as `#[tokio::main]` gives a
        // user; the raw hyper baseline runs on the same.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let mut config = mcp_transport::http::HttpServerConfig::new();
            if let Some(url) = redis {
                config = config.shared(mcp_examples::redis_stores(&url).await?.http);
            }
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            println!("{}", listener.local_addr()?);
            server
                .serve_http(listener, config, std::future::pending())
                .await?;
            Ok(())
        })
    } else if redis.is_some() {
        Err("--redis needs --http: a stdio server has one client".into())
    } else {
        // A stdio server serves one client: one thread is all it needs.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(server.serve_stdio(mcp_server::shutdown_signal()))?;
        Ok(())
    }
}
