//! The Rust client against the Rust demo server over stdio: the whole
//! interop contract, and what must not hang or leak.

mod common;

use std::time::{Duration, Instant};

use mcp_client::{Client, ClientConfig};
use mcp_transport::stdio::{ServerCommand, StderrSink};
use serde_json::json;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-demo-server");

#[tokio::test]
async fn the_contract_holds_over_stdio() {
    let (config, events) = common::contract_config();
    let client = Client::connect_stdio(ServerCommand::new(SERVER), config)
        .await
        .expect("connected");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
}

#[tokio::test]
async fn the_stateless_contract_holds_over_stdio() {
    let client = Client::connect_stdio(ServerCommand::new(SERVER), ClientConfig::new("h", "1"))
        .await
        .expect("connected");
    common::check_stateless_contract(&client).await;
    client.close().await.expect("closed");
}

#[tokio::test]
async fn the_demo_tools_ask_the_client_in_the_stateless_era_over_stdio() {
    let (config, _) = common::contract_config_at(mcp_types::Revision::V2026_07_28);
    let client = Client::connect_stdio(ServerCommand::new(SERVER), config)
        .await
        .expect("connected");
    common::check_stateless_asks(&client).await;
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_server_crash_mid_call_fails_the_call_promptly() {
    let command = ServerCommand::new(SERVER)
        .arg("--with-crash-tool")
        .stderr(StderrSink::Discard);
    let client = Client::connect_stdio(command, ClientConfig::new("h", "1"))
        .await
        .expect("connected");
    let started = Instant::now();
    let error = tokio::time::timeout(Duration::from_secs(5), client.call_tool("crash", json!({})))
        .await
        .expect("no hang")
        .expect_err("the server died");
    assert!(error.is_connection_closed(), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let later = client.send_ping().await.expect_err("closed");
    assert!(later.is_connection_closed(), "{later}");
    client.close().await.expect("reaped");
}

#[tokio::test]
async fn closing_the_client_leaves_no_server_process() {
    let (transport, process) = ServerCommand::new(SERVER).spawn().expect("spawned");
    let pid = process.pid().expect("running");
    let session = mcp_client::ClientSession::new(transport, ClientConfig::new("h", "1"));
    session.initialize().await.expect("initialized");
    session.close().await;
    process.shutdown().await.expect("exited");
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
    assert!(!alive, "server process {pid} still exists after shutdown");
}

#[tokio::test]
async fn a_server_that_is_not_mcp_fails_initialize_with_a_clear_error() {
    let command = ServerCommand::new("sh").args(["-c", "echo 'not json'; sleep 5"]);
    let started = Instant::now();
    let result = Client::connect_stdio(
        command,
        ClientConfig::new("h", "1").request_timeout(Duration::from_secs(2)),
    )
    .await;
    let error = result.err().expect("initialize cannot succeed");
    assert!(
        error.is_timeout() || error.is_connection_closed() || error.remote().is_some(),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The demo server as a raw child: stdin and stdout piped, stderr discarded.
fn raw_server() -> tokio::process::Child {
    tokio::process::Command::new(SERVER)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawned")
}

fn initialize_lines() -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    format!("{initialize}\n{initialized}\n")
}

#[tokio::test]
async fn every_call_piped_before_stdin_ends_is_answered() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = raw_server();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    // As `printf '...' | server`: everything at once, then end of input.
    let mut input = initialize_lines();
    for id in 1..=1000 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": format!("call {id}")}}});
        input.push_str(&format!("{call}\n"));
    }
    let writer = tokio::spawn(async move {
        stdin.write_all(input.as_bytes()).await.expect("written");
        // Dropping stdin closes it: the server sees the end of its input.
    });
    let reader = tokio::spawn(async move {
        let mut answered = std::collections::BTreeSet::new();
        let mut lines = BufReader::new(stdout).lines();
        while let Some(line) = lines.next_line().await.expect("read") {
            let message: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            let id = message["id"].as_i64().expect("an answer with an id");
            if id > 0 {
                assert_eq!(
                    message["result"]["content"][0]["text"],
                    format!("call {id}"),
                    "{line}"
                );
            }
            answered.insert(id);
        }
        answered
    });
    writer.await.expect("joined");
    let answered = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the server answers and closes stdout")
        .expect("joined");
    assert_eq!(answered.len(), 1001, "initialize and every call answered");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits after answering")
        .expect("status");
    assert!(status.success(), "{status}");
}

/// The peak resident memory of a process so far, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number");
    kib * 1024
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_16_mib_echo_costs_at_most_four_times_its_size_in_memory() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const SIZE: usize = 16 * 1024 * 1024;
    let mut child = raw_server();
    let pid = child.id().expect("running");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    // A round trip after `initialized`, so the baseline is the idle server.
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for input in [initialize_lines(), format!("{ping}\n")] {
        stdin.write_all(input.as_bytes()).await.expect("written");
        stdin.flush().await.expect("flushed");
        line.clear();
        tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line))
            .await
            .expect("answered in time")
            .expect("read");
    }
    let baseline = peak_rss(pid);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(SIZE)}}});
    let mut bytes = serde_json::to_vec(&call).expect("JSON");
    bytes.push(b'\n');
    let writer = tokio::spawn(async move {
        stdin.write_all(&bytes).await.expect("written");
        stdin
    });
    line.clear();
    tokio::time::timeout(Duration::from_secs(60), stdout.read_line(&mut line))
        .await
        .expect("answered in time")
        .expect("read");
    let peak = peak_rss(pid);
    let _stdin = writer.await.expect("joined");
    let answer: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .map(str::len),
        Some(SIZE)
    );
    let delta = peak.saturating_sub(baseline);
    assert!(
        delta <= 4 * SIZE as u64,
        "a {SIZE}-byte echo raised peak RSS by {delta} bytes ({:.2}x)",
        delta as f64 / SIZE as f64
    );
}
