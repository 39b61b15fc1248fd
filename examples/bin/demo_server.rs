//! The demo server over stdio, for the stdio and interop tests.
//!
//! `mcp-demo-server [--with-crash-tool] [--with-task-tool] [--otlp URL]`:
//! with the first flag it also offers `crash`, a tool that kills the
//! process mid-call; with the second it runs tools as tasks (2025-11-25)
//! and offers `linger`, a task tool that runs until cancelled; with `--otlp` (or
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
    if std::env::args().any(|a| a == "--with-task-tool") {
        builder = with_task_tool(builder);
    }
    let served = builder
        .build()?
        .serve_stdio(mcp_server::shutdown_signal())
        .await;
    telemetry.shutdown();
    Ok(served?)
}

/// Runs tools as tasks, polled every 20 ms, and offers `linger`: a tool
/// that may run as a task and runs until it is cancelled (or the process
/// ends).
fn with_task_tool(builder: mcp_server::ServerBuilder) -> mcp_server::ServerBuilder {
    let mut linger = mcp_types::Tool::new("linger", mcp_types::JsonObject::new());
    linger.description = Some("Runs until cancelled (a task if asked)".into());
    linger.execution =
        Some(mcp_types::ToolExecution::new().with_task_support(mcp_types::TaskSupport::Optional));
    let tasks = mcp_server::TasksConfig::new().poll_interval(std::time::Duration::from_millis(20));
    builder.tasks(tasks).tool_with(linger, || async {
        std::future::pending::<()>().await;
        "never"
    })
}
