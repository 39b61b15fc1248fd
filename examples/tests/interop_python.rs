//! Interop with the official Python SDK v2 (`mcp==2.3.0`), both directions,
//! over stdio: the Rust client drives `interop/python/server.py`, and the
//! Python client (`interop/python/client.py`) drives the Rust demo server.
//!
//! Set `MCP_INTEROP_PYTHON` to a Python that has `mcp` installed (`.ci/run`
//! creates a venv and sets it); without it these tests say so and pass.

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use mcp_client::Client;
use mcp_transport::stdio::ServerCommand;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-demo-server");

fn python() -> Option<String> {
    match std::env::var("MCP_INTEROP_PYTHON") {
        Ok(python) if !python.is_empty() => Some(python),
        _ => {
            // CI must run these; elsewhere they need a Python with `mcp`.
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but MCP_INTEROP_PYTHON is not set: run the tests through .ci/run"
            );
            eprintln!("MCP_INTEROP_PYTHON is not set: skipping the Python interop test");
            None
        }
    }
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../interop/python")
        .join(name)
}

#[tokio::test]
async fn the_rust_client_drives_the_python_server() {
    let Some(python) = python() else { return };
    let (config, events) = common::contract_config();
    let command = ServerCommand::new(python).arg(script("server.py"));
    let client = Client::connect_stdio(command, config)
        .await
        .expect("connected to the Python server");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
}

#[tokio::test]
async fn the_rust_client_drives_the_python_server_statelessly() {
    let Some(python) = python() else { return };
    let command = ServerCommand::new(python).arg(script("server.py"));
    // The default config negotiates the newest era: 2026-07-28 via discover.
    let client = Client::connect_stdio(command, mcp_client::ClientConfig::new("interop", "1"))
        .await
        .expect("connected to the Python server");
    common::check_stateless_contract(&client).await;
    client.close().await.expect("closed");
}

/// Runs `client.py` with `args` against the Rust demo server; fails on any failed check.
async fn python_client(python: &str, args: &[&str]) {
    let child = tokio::process::Command::new(python)
        .arg(script("client.py"))
        .args(args)
        .arg("--")
        .arg(SERVER)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the Python client finishes in time")
        .expect("output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client's checks failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("ok:") || stderr.contains("ok:"),
        "the Python client ran no checks:\n{stdout}\n{stderr}"
    );
}

#[tokio::test]
async fn the_python_client_drives_the_rust_server() {
    let Some(python) = python() else { return };
    python_client(&python, &[]).await;
}

#[tokio::test]
async fn the_python_client_drives_the_rust_server_statelessly() {
    let Some(python) = python() else { return };
    python_client(&python, &["--era", "stateless"]).await;
}

/// A free port on 127.0.0.1 (bound, then released for the child to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Starts `server.py` on an HTTP transport and waits until it listens.
async fn python_http_server(python: &str, transport: &str) -> (tokio::process::Child, u16) {
    let port = free_port();
    let child = tokio::process::Command::new(python)
        .arg(script("server.py"))
        .args(["--transport", transport, "--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the Python {transport} server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, port)
}

#[tokio::test]
async fn the_rust_client_drives_the_python_server_over_streamable_http() {
    let Some(python) = python() else { return };
    let (mut child, port) = python_http_server(&python, "streamable-http").await;
    let (config, events) = common::contract_config();
    let client = Client::connect_http(&format!("http://127.0.0.1:{port}/mcp"), config)
        .await
        .expect("connected over streamable HTTP");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
    let _ = child.kill().await;
}

#[tokio::test]
async fn the_rust_client_drives_the_python_server_over_legacy_sse() {
    let Some(python) = python() else { return };
    let (mut child, port) = python_http_server(&python, "sse").await;
    let (config, events) = common::contract_config();
    let client = Client::connect_legacy_sse(&format!("http://127.0.0.1:{port}/sse"), config)
        .await
        .expect("connected over HTTP+SSE");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
    let _ = child.kill().await;
}
