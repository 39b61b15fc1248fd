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
