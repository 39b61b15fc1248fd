//! A real MCP server and client talking over stdio.
//!
//! `cargo run --example stdio-demo` starts this same program again as a
//! child process in server mode (`--server`: the demo server of
//! `mcp_examples::demo_server` on its stdin/stdout), connects to it as a
//! client, and exercises tools, sampling, elicitation, progress, logging,
//! resources and prompts, printing what comes back. It negotiates the newest
//! protocol revision (2026-07-28); `--protocol 2025-11-25` (or any other
//! revision) makes the client speak at most that one. The tools that ask the
//! client (`sample`, `ask_name`) work the same in either era.
//!
//! `--otlp http://127.0.0.1:4318` (or `OTEL_EXPORTER_OTLP_ENDPOINT` set)
//! exports both sides' spans and metrics over OTLP/HTTP: the host's run is
//! one trace, each request a client span under it, and the server's spans
//! continue it (see docs/observability.md).

use std::collections::BTreeMap;

use tracing::Instrument as _;

use mcp_client::{Client, ClientConfig, RequestOptions};
use mcp_transport::stdio::ServerCommand;
use mcp_types::{
    CreateMessageResult, ElicitResult, ElicitValue, ResourceContents, SamplingMessageContentBlock,
};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `--otlp URL` (or OTEL_EXPORTER_OTLP_ENDPOINT): export spans and metrics.
    let telemetry = mcp_examples::telemetry(if std::env::args().any(|a| a == "--server") {
        "stdio-demo-server"
    } else {
        "stdio-demo-host"
    })?;
    // The host's run is one root span, so the whole run is one trace.
    let root = if std::env::args().any(|a| a == "--server") {
        tracing::Span::none()
    } else {
        tracing::info_span!("stdio-demo")
    };
    let result = run().instrument(root).await;
    telemetry.shutdown();
    result
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--server") {
        // Server mode: stdout is the protocol channel; nothing else prints there.
        let server = mcp_examples::demo_server();
        return Ok(server.serve_stdio(mcp_server::shutdown_signal()).await?);
    }

    let args: Vec<String> = std::env::args().collect();
    let revision = match args.iter().position(|a| a == "--protocol") {
        Some(i) => {
            let wanted = args.get(i + 1).map(String::as_str).unwrap_or_default();
            mcp_types::Revision::from_version(wanted).ok_or_else(|| {
                format!("unknown protocol revision `{wanted}`; try 2026-07-28 or 2025-11-25")
            })?
        }
        None => mcp_types::Revision::LATEST,
    };
    let config = ClientConfig::new("stdio-demo-host", env!("CARGO_PKG_VERSION"))
        .protocol_version(revision)
        // A host would run its model here; the demo answers itself.
        .on_sampling(|params, _| async move {
            let question = params
                .messages
                .last()
                .and_then(|m| m.content.blocks().iter().find_map(|b| b.as_text()))
                .unwrap_or_default()
                .to_owned();
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text(format!("(the host's model read: {question:?})")),
                "demo-model",
            ))
        })
        // A host would show a form to its user; the demo fills it in.
        .on_elicitation(|_, _| async move {
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::String("Ada".into()),
            )])))
        })
        .on_logging(|message| async move {
            println!("  server log [{}]: {}", message.level, message.data);
        });

    let mut server = ServerCommand::new(std::env::current_exe()?).arg("--server");
    // The server side exports to the same collector (and continues the
    // host's trace through `_meta`).
    if let Some(url) = std::env::args().skip_while(|a| a != "--otlp").nth(1) {
        server = server.args(["--otlp", &url]);
    }
    let client = Client::connect_stdio(server, config).await?;
    let (name, version) = client
        .server_info()
        .map_or(("(unnamed)".into(), String::new()), |i| (i.name, i.version));
    println!(
        "connected to {name} {version} over stdio, protocol {}",
        client.protocol_version()
    );

    let tools = client.list_all_tools().await?;
    println!("tools:");
    for tool in &tools {
        println!(
            "  {:<9} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
    println!(
        "add(2, 40) -> structured {}",
        sum.structured_content.unwrap_or_default()
    );

    let bad = client
        .call_tool("add", json!({"a": "two", "b": 40}))
        .await?;
    println!("add(\"two\", 40) -> isError: {}", text(&bad));

    let sampled = client
        .call_tool("sample", json!({"prompt": "What is MCP?"}))
        .await?;
    println!("sample -> {}", text(&sampled));

    let named = client.call_tool("ask_name", json!({})).await?;
    println!("ask_name -> {}", text(&named));

    let done = client
        .call_tool_with(
            "progress",
            json!({"steps": 3}),
            RequestOptions::new().with_progress(|p| {
                println!("  progress {}/{}", p.progress, p.total.unwrap_or_default());
            }),
        )
        .await?;
    println!("progress -> {}", text(&done));

    // The handshake era sets a session-wide level; the stateless era asks
    // for log messages on each call.
    if !client.is_stateless() {
        client
            .set_logging_level(mcp_types::LoggingLevel::Info)
            .await?;
    }
    let logged = client
        .call_tool_with(
            "log",
            json!({}),
            RequestOptions::new().with_log_level(mcp_types::LoggingLevel::Info),
        )
        .await?;
    println!("log -> {}", text(&logged));

    let readme = client.read_resource("file:///readme").await?;
    if let Some(ResourceContents::Text(t)) = readme.contents.first() {
        println!("file:///readme -> {:?}", t.text);
    }
    let profile = client.read_resource("users://7/profile").await?;
    if let Some(ResourceContents::Text(t)) = profile.contents.first() {
        println!("users://7/profile -> {:?}", t.text);
    }

    let prompt = client
        .get_prompt(
            "review",
            BTreeMap::from([
                ("code".to_owned(), "fn main() {}".to_owned()),
                ("language".to_owned(), "Rust".to_owned()),
            ]),
        )
        .await?;
    println!(
        "prompt review -> {:?}",
        prompt.messages[0].content.as_text().unwrap_or_default()
    );

    client.close().await?;
    println!("closed; the server process has exited");
    Ok(())
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or("")
}
