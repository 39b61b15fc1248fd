//! The demo server over stdio, for the stdio and interop tests.
//!
//! `mcp-demo-server [--with-crash-tool] [--otlp URL]`: with the flag it also
//! offers `crash`, a tool that kills the process mid-call; with `--otlp` (or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` set) it exports its spans and metrics over
//! OTLP/HTTP. It stops when stdin closes, on ctrl-c or on SIGTERM.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let telemetry = mcp_examples::telemetry("mcp-demo-server")?;
    let mut builder = mcp_examples::demo_builder();
    if std::env::args().any(|a| a == "--with-crash-tool") {
        builder = builder.tool(
            "crash",
            "Exits the server process mid-call",
            || async move {
                std::process::exit(3);
                #[allow(unreachable_code)]
                ""
            },
        );
    }
    let served = builder
        .build()?
        .serve_stdio(mcp_server::shutdown_signal())
        .await;
    telemetry.shutdown();
    Ok(served?)
}
