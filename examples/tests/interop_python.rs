//! Interop with the official Python SDK v2 (`mcp==2.3.0`), both directions,
//! over stdio: the Rust client drives `interop/python/server.py`, and the
//! Python client (`interop/python/client.py`) drives the Rust demo server.
//!
//! They need `MCP_INTEROP_PYTHON`: a Python that has `mcp==2.3.0`
//! installed. `.ci/run` creates that venv and sets it; without it (at build
//! time, see `examples/build.rs`) `cargo test` lists these tests as ignored
//! with the reason. By hand:
//!
//! ```text
//! python3 -m venv target/interop-venv
//! target/interop-venv/bin/pip install -r interop/python/requirements.txt
//! MCP_INTEROP_PYTHON=$PWD/target/interop-venv/bin/python \
//!     cargo test -p mcp-examples --test interop_python
//! ```

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use mcp_client::Client;
use mcp_transport::stdio::ServerCommand;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-demo-server");

/// The Python to run; a test that runs without one (`--ignored`) fails.
fn python() -> String {
    match std::env::var("MCP_INTEROP_PYTHON") {
        Ok(python) if !python.is_empty() => python,
        _ => panic!(
            "MCP_INTEROP_PYTHON is not set: point it at a Python with mcp==2.3.0 \
             (see interop/python/README.md), or run the tests through .ci/run"
        ),
    }
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../interop/python")
        .join(name)
}

#[tokio::test]
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_rust_client_drives_the_python_server() {
    let python = python();
    let (config, events) = common::contract_config();
    let command = ServerCommand::new(python).arg(script("server.py"));
    let client = Client::connect_stdio(command, config)
        .await
        .expect("connected to the Python server");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
}

#[tokio::test]
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_rust_client_drives_the_python_server_statelessly() {
    let python = python();
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
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_python_client_drives_the_rust_server() {
    let python = python();
    python_client(&python, &[]).await;
}

#[tokio::test]
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_python_client_drives_the_rust_server_statelessly() {
    let python = python();
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
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_rust_client_drives_the_python_server_over_streamable_http() {
    let python = python();
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
#[cfg_attr(
    not(mcp_interop_python),
    ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
)]
async fn the_rust_client_drives_the_python_server_over_legacy_sse() {
    let python = python();
    let (mut child, port) = python_http_server(&python, "sse").await;
    let (config, events) = common::contract_config();
    let client = Client::connect_legacy_sse(&format!("http://127.0.0.1:{port}/sse"), config)
        .await
        .expect("connected over HTTP+SSE");
    common::check_contract(&client, &events).await;
    client.close().await.expect("closed");
    let _ = child.kill().await;
}
