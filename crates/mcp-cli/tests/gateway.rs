//! `mcp gateway` as a child process, in front of the demo server served
//! over streamable HTTP on 127.0.0.1: as a stdio server for a host
//! (`--stdio-out`, the `mcp-remote` use), and over HTTP (`--listen`) to
//! clients of both eras, until SIGTERM stops it cleanly.

use std::process::Stdio;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, Negotiation, ServerCommand};
use mcp_server::HttpServerConfig;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const WAIT: Duration = Duration::from_secs(30);

/// The demo server on a free port of 127.0.0.1 until the sender is
/// dropped; its URL.
async fn demo_over_http() -> (String, oneshot::Sender<()>) {
    let server = mcp_examples::demo_server();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        let _ = server
            .serve_http(listener, HttpServerConfig::new(), shutdown)
            .await;
    });
    (format!("http://{addr}/mcp"), stop)
}

fn config(era: Negotiation) -> ClientConfig {
    ClientConfig::new("gateway-cli-test", "1")
        .negotiation(era)
        .request_timeout(WAIT)
}

async fn echo(client: &Client) -> String {
    let result = client
        .call_tool("echo", json!({"text": "through the gateway"}))
        .await
        .expect("echo");
    result.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_remote_server_served_over_stdio() {
    let (url, _stop) = demo_over_http().await;
    for era in [Negotiation::Newest, Negotiation::HandshakeOnly] {
        let command = ServerCommand::new(MCP).args(["gateway", "--url", &url, "--stdio-out"]);
        let client = Client::connect_stdio(command, config(era))
            .await
            .expect("the gateway serves over stdio");
        let tools = client.list_all_tools().await.expect("tools");
        // One upstream: its names as they are.
        assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
        assert_eq!(echo(&client).await, "through the gateway");
        // Closing stdin stops the gateway, and it exits cleanly.
        client.close().await.expect("the gateway exited");
    }
}

#[tokio::test]
async fn an_http_endpoint_for_both_eras_until_sigterm() {
    let (url, _stop) = demo_over_http().await;
    let mut gateway = tokio::process::Command::new(MCP)
        .args(["gateway", "--url", &url, "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the gateway runs");
    let stderr = gateway.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let endpoint = tokio::time::timeout(WAIT, async {
        loop {
            let line = lines.next_line().await.expect("read").expect("a line");
            if let Some(endpoint) = line.strip_prefix("mcp gateway: serving ") {
                break endpoint.to_owned();
            }
        }
    })
    .await
    .expect("the gateway says where it serves");
    for era in [Negotiation::Newest, Negotiation::HandshakeOnly] {
        let client = Client::connect_http(&endpoint, config(era))
            .await
            .expect("the gateway serves over HTTP");
        assert_eq!(echo(&client).await, "through the gateway");
        client.close().await.expect("closed");
    }
    let pid = gateway.id().expect("running");
    let pid = i32::try_from(pid).expect("a pid");
    // SAFETY: kill(2) on the child this test started, still unreaped.
    #[allow(unsafe_code)]
    let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM sent");
    let status = tokio::time::timeout(WAIT, gateway.wait())
        .await
        .expect("the gateway stops on SIGTERM")
        .expect("status");
    assert!(status.success(), "{status:?}");
}
