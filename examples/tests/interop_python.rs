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
#[cfg(feature = "otel")]
mod otel_support;

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
    python_listening(python, &["server.py", "--transport", transport]).await
}

/// Starts a Python script (`args[0]`, then its arguments) with `--port` on a
/// free port and waits until it listens.
async fn python_listening(python: &str, args: &[&str]) -> (tokio::process::Child, u16) {
    let port = free_port();
    let child = tokio::process::Command::new(python)
        .arg(script(args[0]))
        .args(&args[1..])
        .args(["--port", &port.to_string()])
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
            "the Python server ({args:?}) did not start"
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

/// Trace context across SDKs (SEP-414): the Python SDK's client span is the
/// parent of our server's span, and our client span the parent of the
/// Python server's span, in one trace, over stdio and streamable HTTP, in
/// both eras. The Python side records with the OpenTelemetry SDK's
/// in-memory exporter (`interop/python/traced.py`); ours with the in-memory
/// exporters in this process, or, for our server as a child process, over
/// OTLP to a collector in this test.
#[cfg(feature = "otel")]
mod traces {
    use std::process::Stdio;
    use std::time::Duration;

    use mcp_client::{Client, ClientConfig, Negotiation};
    use mcp_transport::http::HttpServerConfig;
    use mcp_transport::stdio::ServerCommand;
    use mcp_types::Era;
    use opentelemetry::trace::SpanKind;
    use serde_json::{Value, json};

    use super::{SERVER, python, python_listening, script};

    use super::otel_support;
    use otel_support::collector::Collector;

    /// The `--era` flag of the Python peer script.
    fn flag(era: Era) -> &'static str {
        match era {
            Era::Handshake => "handshake",
            Era::Stateless => "stateless",
        }
    }

    /// Runs `traced.py client` and answers its JSON report.
    async fn python_client(python: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
        let mut command = tokio::process::Command::new(python);
        command
            .arg(script("traced.py"))
            .arg("client")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("python starts");
        let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("the Python client finishes in time")
            .expect("output");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "the traced Python client failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout.lines().last().unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|e| panic!("a JSON report ({e}): {stdout}"))
    }

    fn id(report: &Value, key: &str) -> String {
        report[key].as_str().expect("an id").to_owned()
    }

    /// The Python client over stdio spawns our demo server, which exports
    /// over OTLP to a collector here.
    async fn python_client_our_stdio_server(python: &str, era: Era) {
        let collector = Collector::start().await;
        let report = python_client(
            python,
            &["--era", flag(era), "--", SERVER],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str()),
                ("OTEL_BSP_SCHEDULE_DELAY", "50"),
                ("OTEL_SERVICE_NAME", "mcp-demo-server"),
            ],
        )
        .await;
        let (trace_id, parent) = (id(&report, "trace_id"), id(&report, "client_span_id"));
        let served = collector
            .wait_for("server span of the Python client's tools/call", |s| {
                s.name == "tools/call echo" && s.kind == 2 && s.trace_id == trace_id
            })
            .await;
        assert_eq!(
            served.parent_span_id, parent,
            "{era:?}: the Python client span is the parent"
        );
        assert_eq!(
            served
                .attributes
                .get("network.transport")
                .map(String::as_str),
            Some("pipe")
        );
        assert_eq!(
            served
                .attributes
                .get("gen_ai.tool.name")
                .map(String::as_str),
            Some("echo")
        );
    }

    #[test]
    #[cfg_attr(
        not(mcp_interop_python),
        ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
    )]
    fn a_python_client_trace_continues_in_our_stdio_server() {
        let python = python();
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        for era in [Era::Handshake, Era::Stateless] {
            runtime.block_on(python_client_our_stdio_server(&python, era));
        }
    }

    /// The Python client over streamable HTTP to our server in this process.
    #[test]
    #[cfg_attr(
        not(mcp_interop_python),
        ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
    )]
    fn a_python_client_trace_continues_in_our_http_server() {
        let python = python();
        for era in [Era::Handshake, Era::Stateless] {
            let mut report = Value::Null;
            let recorded = otel_support::memory::record(|| async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bound");
                let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
                let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
                let serving = tokio::spawn(async move {
                    let _ = mcp_examples::demo_server()
                        .serve_http(listener, HttpServerConfig::new(), async {
                            let _ = stopped.await;
                        })
                        .await;
                });
                report = python_client(&python, &["--era", flag(era), "--url", &url], &[]).await;
                let _ = stop.send(());
                serving.await.expect("server stopped");
            });
            let (trace_id, parent) = (id(&report, "trace_id"), id(&report, "client_span_id"));
            let served: Vec<_> = recorded
                .spans
                .iter()
                .filter(|s| s.name == "tools/call echo" && s.span_kind == SpanKind::Server)
                .collect();
            assert_eq!(served.len(), 1, "{era:?}: {:#?}", recorded.spans);
            assert_eq!(
                format!("{:032x}", served[0].span_context.trace_id()),
                trace_id,
                "{era:?}"
            );
            assert_eq!(
                format!("{:016x}", served[0].parent_span_id),
                parent,
                "{era:?}"
            );
            assert!(served[0].parent_span_is_remote);
        }
    }

    /// Our client (in this process) calls `echo` on `traced.py server` and
    /// reads back the Python server's spans.
    async fn our_client_python_server(python: &str, era: Era, http: bool) -> Value {
        let negotiation = match era {
            Era::Handshake => Negotiation::HandshakeOnly,
            Era::Stateless => Negotiation::StatelessOnly,
        };
        let config = ClientConfig::new("traced-rust-client", "1").negotiation(negotiation);
        let mut child = None;
        let client = if http {
            let (spawned, port) = python_listening(
                python,
                &["traced.py", "server", "--transport", "streamable-http"],
            )
            .await;
            child = Some(spawned);
            Client::connect_http(&format!("http://127.0.0.1:{port}/mcp"), config)
                .await
                .expect("connected over HTTP")
        } else {
            let command = ServerCommand::new(python)
                .arg(script("traced.py"))
                .arg("server");
            Client::connect_stdio(command, config)
                .await
                .expect("connected over stdio")
        };
        client
            .call_tool("echo", json!({"text": "traced"}))
            .await
            .expect("echo");
        let recorded = client
            .call_tool("recorded_spans", json!({}))
            .await
            .expect("recorded_spans");
        client.close().await.expect("closed");
        if let Some(mut child) = child {
            let _ = child.kill().await;
        }
        let text = recorded
            .content
            .iter()
            .find_map(|b| b.as_text())
            .expect("text")
            .to_owned();
        serde_json::from_str(&text).expect("the spans as JSON")
    }

    #[test]
    #[cfg_attr(
        not(mcp_interop_python),
        ignore = "needs MCP_INTEROP_PYTHON (a Python with mcp==2.3.0, see interop/python/README.md)"
    )]
    fn our_client_trace_continues_in_the_python_server() {
        let python = python();
        for http in [false, true] {
            for era in [Era::Handshake, Era::Stateless] {
                let label = format!("{era:?} over {}", if http { "HTTP" } else { "stdio" });
                let mut python_spans = Value::Null;
                let recorded = otel_support::memory::record(|| async {
                    python_spans = our_client_python_server(&python, era, http).await;
                });
                let ours: Vec<_> = recorded
                    .spans
                    .iter()
                    .filter(|s| s.name == "tools/call echo" && s.span_kind == SpanKind::Client)
                    .collect();
                assert_eq!(ours.len(), 1, "{label}: {:#?}", recorded.spans);
                let theirs: Vec<&Value> = python_spans
                    .as_array()
                    .expect("a list")
                    .iter()
                    .filter(|s| {
                        s["kind"] == "server" && s["attributes"]["gen_ai.tool.name"] == "echo"
                    })
                    .collect();
                assert_eq!(theirs.len(), 1, "{label}: {python_spans:#}");
                assert_eq!(
                    theirs[0]["trace_id"],
                    format!("{:032x}", ours[0].span_context.trace_id()),
                    "{label}: one trace"
                );
                assert_eq!(
                    theirs[0]["parent_span_id"],
                    format!("{:016x}", ours[0].span_context.span_id()),
                    "{label}: our client span is the parent"
                );
                assert_eq!(theirs[0]["parent_is_remote"], true, "{label}");
            }
        }
    }
}
