//! The `mcp` binary against the Python SDK's server (`interop/python/server.py`,
//! `mcp==2.3.0`) over stdio in both eras and over streamable HTTP.
//!
//! Needs `MCP_INTEROP_PYTHON`, a Python with `mcp` installed: `.ci/run`
//! makes a venv and runs these with
//! `MCP_INTEROP_PYTHON=target/interop-venv/bin/python cargo test -p mcp-cli --test python -- --ignored`.
//! Without it they are listed as ignored, and fail when run anyway.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const NEEDS: &str = "set MCP_INTEROP_PYTHON to a Python with mcp==2.3.0 (.ci/run makes one)";

fn python() -> String {
    match std::env::var("MCP_INTEROP_PYTHON") {
        Ok(python) if !python.is_empty() => python,
        _ => panic!("{NEEDS}"),
    }
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/python/server.py")
}

async fn mcp(server: &[&str], args: &[&str]) -> (i32, String, String) {
    let run = tokio::process::Command::new(MCP)
        .args(server)
        .args(args)
        .env(
            "MCP_CLI_CONFIG_DIR",
            std::env::temp_dir().join("mcp-cli-python-test"),
        )
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("mcp finished in time")
        .expect("mcp runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

async fn json(server: &[&str], args: &[&str]) -> Value {
    let mut with_json = vec!["--json"];
    with_json.extend_from_slice(args);
    let (code, stdout, stderr) = mcp(server, &with_json).await;
    assert_eq!(code, 0, "mcp {args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

/// The `field` of each entry of the list `list` in a `* list` answer.
fn names<'a>(answer: &'a Value, list: &str, field: &str) -> Vec<&'a str> {
    answer[list]
        .as_array()
        .unwrap_or_else(|| panic!("a {list} list: {answer}"))
        .iter()
        .filter_map(|entry| entry[field].as_str())
        .collect()
}

/// What the interop contract's server offers (see interop/python/server.py).
async fn check(server: &[&str], revision: &str) {
    let info = json(server, &["info"]).await;
    assert_eq!(info["protocolVersion"], revision, "{info}");
    let tools = json(server, &["tools", "list"]).await;
    assert!(names(&tools, "tools", "name").contains(&"add"), "{tools}");
    // `a=2 b=3` reach the server as integers: `add` has an outputSchema,
    // so the sum comes back structured.
    let sum = json(server, &["tools", "call", "add", "a=2", "b=3"]).await;
    assert_eq!(
        sum["structuredContent"],
        serde_json::json!({"sum": 5}),
        "{sum}"
    );
    let resources = json(server, &["resources", "list"]).await;
    assert!(
        names(&resources, "resources", "uri").contains(&"file:///readme"),
        "{resources}"
    );
    let prompts = json(server, &["prompts", "list"]).await;
    assert!(
        names(&prompts, "prompts", "name").contains(&"review"),
        "{prompts}"
    );
    let pong = json(server, &["ping"]).await;
    assert_eq!(pong["ok"], true);
    // A tool's own error: exit 1.
    let (code, _, stderr) = mcp(server, &["tools", "call", "fail"]).await;
    assert_eq!(code, 1, "{stderr}");
    // stdin is not a terminal: the elicitation is declined, with a notice
    // (the Python server elicits with a server-to-client request, which
    // exists in the handshake era only).
    if revision == "2025-11-25" {
        let (code, stdout, stderr) = mcp(server, &["tools", "call", "ask_name"]).await;
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("declined"), "{stderr}");
        assert!(stdout.contains("decline"), "{stdout}");
    }
    // The Python SDK answers an unknown tool with a tool error (isError),
    // not a protocol error: exit 1, its message on stdout.
    let (code, stdout, stderr) = mcp(server, &["tools", "call", "no_such_tool"]).await;
    assert_eq!(code, 1, "an unknown tool fails: {stdout} {stderr}");
    assert!(stdout.contains("no_such_tool"), "{stdout}");
}

#[tokio::test]
#[ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0; .ci/run sets it and runs these)"]
async fn the_cli_drives_the_python_server_over_stdio_in_both_eras() {
    let command = format!("'{}' '{}'", python(), script().display());
    check(&["--stdio", &command, "--era", "stateless"], "2026-07-28").await;
    check(&["--stdio", &command, "--era", "handshake"], "2025-11-25").await;
}

#[tokio::test]
#[ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0; .ci/run sets it and runs these)"]
async fn the_cli_drives_the_python_server_over_streamable_http() {
    let python = python();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut child = tokio::process::Command::new(&python)
        .arg(script())
        .args([
            "--transport",
            "streamable-http",
            "--port",
            &port.to_string(),
        ])
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
            "the Python server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    check(&["--url", &url, "--era", "handshake"], "2025-11-25").await;
    check(&["--url", &url], "2026-07-28").await;
    let _ = child.kill().await;
}
