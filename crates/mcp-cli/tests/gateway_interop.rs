//! `mcp gateway` between independent peers (issue 29's interop acceptance):
//! - the Python SDK's client (`interop/python/client.py`, `mcp==2.3.0`)
//!   downstream over stdio and streamable HTTP in both eras, our demo server
//!   upstream: the interop contract passes through the gateway;
//! - three upstreams at once from a config file (our demo server over stdio,
//!   our everything-server over HTTP, the TypeScript reference
//!   server-everything over stdio), our client downstream in both eras:
//!   merged names without collisions, a call to each upstream, the
//!   TypeScript server's sampling and elicitation answered downstream, its
//!   progress reaching the downstream call. The contract's log checks
//!   cover the upstream's log messages reaching the downstream client of
//!   the call at that client's level.
//!
//! Needs `MCP_INTEROP_PYTHON` (a Python with `mcp` installed),
//! `MCP_INTEROP_EVERYTHING_TS` (server-everything's `dist/index.js`) and
//! `node`, and the demo programs `cargo test --workspace` builds beside this
//! test's `mcp`. `.ci/run` runs these with
//! `cargo test --workspace --test gateway_interop -- --ignored`.
//! Without the variables they are listed as ignored, and fail when run anyway.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use announced::{Announced, MCP, built};

mod announced;

const NEEDS_PYTHON: &str = "set MCP_INTEROP_PYTHON to a Python with mcp==2.3.0 (.ci/run makes one)";

/// How long one run of the contract may take.
const CONTRACT_WITHIN: Duration = Duration::from_secs(120);

fn python() -> String {
    match std::env::var("MCP_INTEROP_PYTHON") {
        Ok(python) if !python.is_empty() => python,
        _ => panic!("{NEEDS_PYTHON}"),
    }
}

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/python/client.py")
}

fn demo_server() -> String {
    built("mcp-demo-server").display().to_string()
}

/// Runs the Python contract client with `args`; panics unless every check
/// passed.
async fn contract(args: &[&str]) {
    let run = tokio::process::Command::new(python())
        .arg(client_script())
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(CONTRACT_WITHIN, run)
        .await
        .expect("the contract client finished in time")
        .expect("the contract client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let oks = stdout.lines().filter(|l| l.starts_with("ok: ")).count();
    let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL: ")).collect();
    assert!(
        failed.is_empty() && oks >= 25 && output.status.success(),
        "client.py {args:?}: {failed:#?}\n{stdout}\n{stderr}"
    );
}

#[tokio::test]
#[ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0; .ci/run sets it and runs these)"]
async fn the_python_client_through_the_gateway_over_stdio_in_both_eras() {
    let demo = demo_server();
    let gateway = [MCP, "gateway", "--stdio", &demo, "--stdio-out"];
    let mut handshake = vec!["--"];
    handshake.extend_from_slice(&gateway);
    contract(&handshake).await;
    let mut stateless = vec!["--era", "stateless", "--"];
    stateless.extend_from_slice(&gateway);
    contract(&stateless).await;
}

#[tokio::test]
#[ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0; .ci/run sets it and runs these)"]
async fn the_python_client_through_the_gateway_over_http_in_both_eras() {
    python();
    let demo = demo_server();
    let gateway = Announced::gateway(&["--stdio", &demo]).await;
    contract(&["--url", &gateway.url]).await;
    contract(&["--era", "stateless", "--url", &gateway.url]).await;
    gateway.stop().await;
}

const NEEDS_TS: &str = "set MCP_INTEROP_EVERYTHING_TS to server-everything's dist/index.js \
     (.ci/run installs it from interop/everything-ts)";

fn everything_ts() -> String {
    match std::env::var("MCP_INTEROP_EVERYTHING_TS") {
        Ok(path) if !path.is_empty() => path,
        _ => panic!("{NEEDS_TS}"),
    }
}

/// Our client, downstream of the gateway at `url` in `era`, answering
/// sampling requests with "Paris" and elicitations with the name "Ada".
async fn downstream(url: &str, era: mcp_client::Negotiation) -> mcp_client::Client {
    let config = mcp_client::ClientConfig::new("downstream", "1")
        .negotiation(era)
        .request_timeout(Duration::from_secs(60))
        .on_sampling(|_, _| async {
            Ok(mcp_types::CreateMessageResult::new(
                mcp_types::SamplingMessageContentBlock::text("Paris"),
                "test-model",
            ))
        })
        .on_elicitation(|_, _| async {
            let mut content = std::collections::BTreeMap::new();
            content.insert(
                "name".to_owned(),
                mcp_types::ElicitValue::String("Ada".into()),
            );
            Ok(mcp_types::ElicitResult::accept(content))
        });
    mcp_client::Client::connect_http(url, config)
        .await
        .expect("the downstream client connects")
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What issue 29 asks of three upstreams at once, seen by one downstream
/// client in `era`.
async fn three_upstreams(url: &str, era: mcp_client::Negotiation) {
    let client = downstream(url, era).await;
    let tools = client.list_all_tools().await.expect("the merged tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "no collisions: {names:?}");
    for name in [
        "demo_add",
        "everything_test_simple_text",
        "ts_get-sum",
        "ts_echo",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    // A call to each upstream.
    let sum = client
        .call_tool("demo_add", serde_json::json!({"a": 2, "b": 3}))
        .await
        .expect("demo_add");
    assert!(text(&sum).contains('5'), "{sum:?}");
    assert_eq!(
        sum.structured_content,
        Some(serde_json::json!({"sum": 5})),
        "{sum:?}"
    );
    let simple = client
        .call_tool("everything_test_simple_text", serde_json::json!({}))
        .await
        .expect("everything_test_simple_text");
    assert_eq!(simple.is_error, None, "{simple:?}");
    assert_eq!(
        text(&simple),
        "This is a simple text response for testing.",
        "{simple:?}"
    );
    let ts_sum = client
        .call_tool("ts_get-sum", serde_json::json!({"a": 2, "b": 40}))
        .await
        .expect("ts_get-sum");
    assert!(text(&ts_sum).contains("42"), "{ts_sum:?}");
    // The TypeScript server's sampling request, answered downstream.
    let sampled = client
        .call_tool(
            "ts_trigger-sampling-request",
            serde_json::json!({"prompt": "The capital of France?", "maxTokens": 20}),
        )
        .await
        .expect("ts_trigger-sampling-request");
    assert!(text(&sampled).contains("Paris"), "{sampled:?}");
    // And its elicitation.
    let elicited = client
        .call_tool("ts_trigger-elicitation-request", serde_json::json!({}))
        .await
        .expect("ts_trigger-elicitation-request");
    let elicited = text(&elicited);
    assert!(
        elicited.contains("provided the requested information") && elicited.contains("Ada"),
        "{elicited}"
    );
    // Its progress reaches the downstream client.
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = reports.clone();
    let options = mcp_client::RequestOptions::new().with_progress(move |progress| {
        seen.lock().expect("reports").push(progress.progress);
    });
    let long = client
        .call_tool_with(
            "ts_trigger-long-running-operation",
            serde_json::json!({"duration": 1, "steps": 3}),
            options,
        )
        .await
        .expect("ts_trigger-long-running-operation");
    assert!(text(&long).contains("Steps: 3"), "{long:?}");
    let reports = reports.lock().expect("reports").clone();
    assert_eq!(reports, [1.0, 2.0, 3.0], "progress reports");
    client.close().await.expect("closed");
}

#[tokio::test]
#[ignore = "needs MCP_INTEROP_EVERYTHING_TS (server-everything's dist/index.js) and node; .ci/run sets it and runs these"]
async fn our_client_through_three_upstreams_in_both_eras() {
    let ts = everything_ts();
    // Our everything-server on a free port of 127.0.0.1.
    let everything = Announced::start(
        &built("examples/everything-server"),
        &["--port", "0"],
        "everything-server: ",
    )
    .await;
    let dir = std::env::temp_dir().join(format!("mcp-gateway-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let config = dir.join("servers.json");
    let servers = serde_json::json!({"mcpServers": {
        "demo": {"command": demo_server(), "args": []},
        "everything": {"url": everything.url},
        "ts": {"command": "node", "args": [ts, "stdio"]},
    }});
    std::fs::write(&config, servers.to_string()).expect("the config written");
    let config_arg = config.display().to_string();
    let gateway = Announced::gateway(&["--config", &config_arg]).await;
    three_upstreams(&gateway.url, mcp_client::Negotiation::HandshakeOnly).await;
    three_upstreams(&gateway.url, mcp_client::Negotiation::StatelessOnly).await;
    gateway.stop().await;
    everything.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
