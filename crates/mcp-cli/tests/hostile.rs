//! The host side against servers that misbehave: the client library and
//! the `mcp` binary driven against servers that each misbehave in one way
//! (tests/support/misbehaving.rs over stdio, as real child processes;
//! tests/support/misbehaving_http.rs over streamable HTTP on loopback), and
//! against the demo server killed and started again under a connected
//! client. Each check asserts a clear error or the right answer, bounded
//! by state (counts of requests, of sessions, of events; the peak memory
//! of the process), never by a sleep.
//!
//! This test binary has its own `main` (`harness = false`): run in a role
//! (`--mcp-test-role=...`) it *is* the server a check spawns.

mod support;

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::types::{DecodeErrorKind, JsonRpcMessage, Revision};
use mcp_client::{
    BackoffConfig, Client, ClientConfig, Error, Fault, HttpClientConfig, ListLimit, Negotiation,
    RestartReason, ServerCommand, SessionEvent,
};
use mcp_core::TransportError;
use support::misbehaving_http::{MisbehavingHttp, Way};
use support::{Check, Era, Mcp, checks};

const CHECKS: &[(&str, Check)] = checks![
    an_oversized_answer_fails_its_call_at_once_and_is_not_answered_back,
    an_answer_that_is_not_utf8_fails_its_call_at_once,
    an_array_answer_fails_its_call_at_once,
    an_answer_with_result_and_error_fails_its_call_and_is_not_answered_back,
    an_error_without_an_id_fails_the_one_waiting_call_and_reaches_the_host,
    a_silent_server_is_given_up_on_at_the_request_timeout,
    a_server_that_exits_mid_call_fails_it_and_the_host_hears_of_it,
    the_fault_channel_hears_a_stray_response_and_the_transport_drop,
    endless_large_pages_stop_at_the_byte_budget,
    a_cursor_loop_stops_at_the_page_budget,
    a_negative_cache_ttl_keeps_the_stateless_session,
    a_notification_flood_is_survived,
    the_child_process_is_reaped_on_close,
    the_get_stream_of_a_retry_zero_server_is_paced_and_bounded,
    a_server_restarted_under_the_client_gets_a_new_session,
    a_server_that_forgets_every_session_gets_a_clear_error_after_a_few_tries,
    a_redirect_to_another_origin_is_not_followed,
    an_sse_event_over_the_limit_fails_its_call,
    a_session_id_that_is_not_visible_ascii_is_refused,
    pipelined_initialize_is_a_barrier_a_thousand_times,
    the_cli_reports_an_oversized_answer_without_waiting,
    the_cli_stops_endless_pages_with_bounded_memory,
    the_cli_reads_a_negative_cache_ttl,
    the_cli_stateless_ping_asks_the_server_again,
];

fn main() -> ExitCode {
    support::main(CHECKS)
}

/// How long any one wait of a check may take before the check fails.
const LIMIT: Duration = Duration::from_secs(60);

/// What a client heard through `on_event`.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn config(&self, config: ClientConfig) -> ClientConfig {
        let heard = self.clone();
        config.on_event(move |event| {
            let line = match &event {
                SessionEvent::Restarted(restart) => format!("restarted {restart:?}"),
                SessionEvent::Fault(fault) => format!("fault {fault:?}"),
                _ => format!("{event:?}"),
            };
            heard.0.lock().expect("lock").push(line);
        })
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }

    fn count(&self, prefix: &str) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }
}

/// A client of the misbehaving stdio server `way` (a child process), in
/// the handshake era but for `negative-ttl`, which is stateless.
async fn misbehaving(way: &str, heard: &Heard) -> Client {
    let (exe, role) = support::role_program(&format!("misbehaving:{way}"));
    let command = ServerCommand::new(exe).arg(role);
    let config = heard.config(ClientConfig::new("hostile-test", "1").request_timeout(LIMIT));
    let config = if way == "negative-ttl" {
        config
    } else {
        config.negotiation(Negotiation::HandshakeOnly)
    };
    tokio::time::timeout(LIMIT, Client::connect_stdio(command, config))
        .await
        .expect("connected in time")
        .expect("connected")
}

/// How many responses carrying the ids of the client's own requests the
/// server was sent: asked of the server itself (its `ping` answer counts
/// them), so everything sent before the ping is counted.
async fn answered_back(client: &Client) -> u64 {
    let answer = client
        .peer()
        .request("ping", None, mcp_core::SendOptions::new())
        .await
        .expect("the server still answers");
    let answer: serde_json::Value = answer.parse().expect("JSON");
    answer["answeredBack"].as_u64().expect("a count")
}

/// The transport error a failed call carries.
fn transport(error: &Error) -> &TransportError {
    error
        .transport()
        .unwrap_or_else(|| panic!("a transport error, not {error:?}"))
}

/// Calls the `call` tool; its error.
async fn failed_call(client: &Client) -> Error {
    let outcome = tokio::time::timeout(LIMIT, client.call_tool("call", ()))
        .await
        .expect("the call ended in time");
    let error = outcome.expect_err("the call fails");
    assert!(
        !error.is_timeout(),
        "failed at once, not by timeout: {error}"
    );
    error
}

// ---------------------------------------------------------------------------
// Answers the client cannot read.

async fn an_oversized_answer_fails_its_call_at_once_and_is_not_answered_back() {
    let heard = Heard::default();
    let client = misbehaving("oversized-answer", &heard).await;
    let error = failed_call(&client).await;
    assert!(
        matches!(transport(&error), TransportError::ResponseTooLarge { limit } if *limit == 32 * 1024 * 1024),
        "{error:?}"
    );
    assert_eq!(answered_back(&client).await, 0);
    assert_eq!(heard.count("fault TooLarge"), 1, "{:?}", heard.lines());
    client.close().await.expect("closed");
}

async fn an_answer_that_is_not_utf8_fails_its_call_at_once() {
    let heard = Heard::default();
    let client = misbehaving("not-utf8-answer", &heard).await;
    let error = failed_call(&client).await;
    match transport(&error) {
        TransportError::InvalidResponse(decode) => {
            assert_eq!(decode.kind, DecodeErrorKind::NotUtf8, "{decode}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(answered_back(&client).await, 0);
    client.close().await.expect("closed");
}

async fn an_array_answer_fails_its_call_at_once() {
    let heard = Heard::default();
    let client = misbehaving("array-answer", &heard).await;
    let error = failed_call(&client).await;
    match transport(&error) {
        TransportError::InvalidResponse(decode) => {
            assert_eq!(decode.kind, DecodeErrorKind::Batch, "{decode}");
            assert!(
                error.to_string().contains("not a single message"),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(answered_back(&client).await, 0);
    client.close().await.expect("closed");
}

async fn an_answer_with_result_and_error_fails_its_call_and_is_not_answered_back() {
    let heard = Heard::default();
    let client = misbehaving("result-and-error", &heard).await;
    let error = failed_call(&client).await;
    match transport(&error) {
        TransportError::InvalidResponse(decode) => {
            assert_eq!(decode.kind, DecodeErrorKind::ResultAndError, "{decode}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(answered_back(&client).await, 0);
    assert_eq!(heard.count("fault Unreadable"), 1, "{:?}", heard.lines());
    client.close().await.expect("closed");
}

async fn an_error_without_an_id_fails_the_one_waiting_call_and_reaches_the_host() {
    let heard = Heard::default();
    let client = misbehaving("null-id-error", &heard).await;
    let error = failed_call(&client).await;
    let remote = error.remote().expect("the server's own error");
    assert_eq!(remote.message, "something broke");
    let faults = heard.lines();
    assert!(
        faults
            .iter()
            .any(|l| l.starts_with("fault UnaddressedError") && l.contains("failed: Some")),
        "{faults:?}"
    );
    client.close().await.expect("closed");
}

// ---------------------------------------------------------------------------
// Servers that stop answering.

async fn a_silent_server_is_given_up_on_at_the_request_timeout() {
    let heard = Heard::default();
    let client = misbehaving("silent", &heard).await;
    let options = mcp_client::RequestOptions::new().with_timeout(Duration::from_millis(300));
    let error = tokio::time::timeout(LIMIT, client.call_tool_with("call", (), options))
        .await
        .expect("given up on in time")
        .expect_err("no answer");
    assert!(error.is_timeout(), "{error:?}");
    client.close().await.expect("closed");
}

async fn a_server_that_exits_mid_call_fails_it_and_the_host_hears_of_it() {
    let heard = Heard::default();
    let client = misbehaving("exits-mid-call", &heard).await;
    let error = failed_call(&client).await;
    assert!(error.is_connection_closed(), "{error:?}");
    let closed = tokio::time::timeout(LIMIT, client.closed()).await;
    assert!(closed.is_ok(), "the session ended");
    assert_eq!(heard.count("fault Disconnected"), 1, "{:?}", heard.lines());
    client.close().await.expect("closed");
}

async fn the_fault_channel_hears_a_stray_response_and_the_transport_drop() {
    let heard = Heard::default();
    let client = misbehaving("stray-then-exit", &heard).await;
    let result = tokio::time::timeout(LIMIT, client.call_tool("call", ()))
        .await
        .expect("in time")
        .expect("the real answer still arrives");
    assert_eq!(result.content[0].as_text(), Some("answered"));
    let closed = tokio::time::timeout(LIMIT, client.closed()).await;
    assert!(closed.is_ok(), "the session ended");
    let lines = heard.lines();
    let stray = lines
        .iter()
        .position(|l| l.starts_with("fault StrayResponse") && l.contains("nobody-asked"));
    let dropped = lines
        .iter()
        .position(|l| l.starts_with("fault Disconnected"));
    assert!(
        matches!((stray, dropped), (Some(s), Some(d)) if s < d),
        "the stray response, then the drop: {lines:?}"
    );
    client.close().await.expect("closed");
}

// ---------------------------------------------------------------------------
// Lists that never end.

/// The limit `list_all_tools` of the misbehaving server `way` stops at.
async fn list_limit_reached(way: &str) -> ListLimit {
    let heard = Heard::default();
    let client = misbehaving(way, &heard).await;
    let error = tokio::time::timeout(LIMIT, client.list_all_tools())
        .await
        .expect("stopped in time")
        .expect_err("too much");
    client.close().await.expect("closed");
    match error {
        Error::ListLimit { limit, .. } => limit,
        other => panic!("{other:?}"),
    }
}

async fn endless_large_pages_stop_at_the_byte_budget() {
    assert_eq!(
        list_limit_reached("endless-pages").await,
        ListLimit::Bytes(64 * 1024 * 1024)
    );
}

async fn a_cursor_loop_stops_at_the_page_budget() {
    assert_eq!(
        list_limit_reached("cursor-loop").await,
        ListLimit::Pages(1000)
    );
}

// ---------------------------------------------------------------------------
// Leniency.

async fn a_negative_cache_ttl_keeps_the_stateless_session() {
    let heard = Heard::default();
    let client = misbehaving("negative-ttl", &heard).await;
    assert!(client.is_stateless(), "discover was read");
    assert_eq!(client.protocol_version(), Revision::V2026_07_28);
    assert_eq!(client.discover_result().and_then(|d| d.ttl_ms), Some(0));
    let tools = client.list_all_tools().await.expect("listed");
    assert_eq!(tools.len(), 1);
    // Stale at once: asked again, not served from the cache.
    client.list_all_tools().await.expect("listed again");
    client.close().await.expect("closed");
}

async fn a_notification_flood_is_survived() {
    let heard = Heard::default();
    let client = misbehaving("notification-flood", &heard).await;
    let result = tokio::time::timeout(LIMIT, client.call_tool("call", ()))
        .await
        .expect("answered in time")
        .expect("answered");
    assert_eq!(result.content[0].as_text(), Some("survived"));
    client.close().await.expect("closed");
}

async fn the_child_process_is_reaped_on_close() {
    let (exe, role) = support::role_program("misbehaving:silent");
    let (transport, child) = ServerCommand::new(exe).arg(role).spawn().expect("spawned");
    let pid = child.pid().expect("running");
    let client = Client::connect(transport, ClientConfig::new("hostile-test", "1"))
        .await
        .expect("connected");
    client.close().await.expect("closed");
    child.shutdown().await.expect("stopped");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the child is reaped, not left a zombie"
    );
}

// ---------------------------------------------------------------------------
// Streamable HTTP.

async fn the_get_stream_of_a_retry_zero_server_is_paced_and_bounded() {
    let server = MisbehavingHttp::start(Way::GetStorm).await;
    let heard = Heard::default();
    let (spent_tx, spent_rx) = tokio::sync::oneshot::channel::<()>();
    let spent_tx = Mutex::new(Some(spent_tx));
    let record = heard.clone();
    let config = ClientConfig::new("hostile-test", "1")
        .negotiation(Negotiation::HandshakeOnly)
        .on_event(move |event| {
            if let SessionEvent::Fault(Fault::Transport(TransportError::ReconnectBudgetSpent {
                ..
            })) = &event
            {
                if let Some(tx) = spent_tx.lock().expect("lock").take() {
                    let _ = tx.send(());
                }
            }
            record.0.lock().expect("lock").push(format!("{event:?}"));
        });
    // Four reconnections a minute, 10 ms apart at least: the budget is
    // spent quickly, and the count of GETs then says it all.
    let http = HttpClientConfig::new().reconnect(
        BackoffConfig::new()
            .with_floor(Duration::from_millis(10))
            .with_budget(4, Duration::from_secs(60)),
    );
    let client = Client::connect_http_with(&server.url, http, config)
        .await
        .expect("connected");
    tokio::time::timeout(LIMIT, spent_rx)
        .await
        .expect("the budget was spent in time")
        .expect("heard");
    assert_eq!(
        server.counts.gets.load(Ordering::SeqCst),
        5,
        "the first GET and four reconnections: {:?}",
        heard.lines()
    );
    // The session itself is fine.
    let tools = client.list_all_tools().await.expect("listed");
    assert_eq!(tools.len(), 1);
    client.close().await.expect("closed");
}

async fn a_server_restarted_under_the_client_gets_a_new_session() {
    let address = format!("127.0.0.1:{}", support::closed_port());
    let start = || {
        let (exe, role) = support::role_program(&format!("demo-http:{address}"));
        tokio::process::Command::new(exe)
            .arg(role)
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts")
    };
    let url = format!("http://{address}/mcp");
    let mut server = start();
    let heard = Heard::default();
    let config = heard
        .config(ClientConfig::new("hostile-test", "1").protocol_version(Revision::V2025_11_25));
    let client = tokio::time::timeout(LIMIT, async {
        loop {
            match Client::connect_http(&url, config.clone()).await {
                Ok(client) => return client,
                Err(error) if error.is_connection_closed() => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => panic!("{error:?}"),
            }
        }
    })
    .await
    .expect("the server listens");
    client
        .subscribe_resource("file:///readme")
        .await
        .expect("subscribed");
    let listed = client.list_all_tools().await.expect("listed");

    // Killed (its sessions with it) and started again on the same port.
    server.start_kill().expect("killed");
    server.wait().await.expect("reaped");
    let mut server = start();
    let relisted = tokio::time::timeout(LIMIT, async {
        loop {
            match client.list_all_tools().await {
                Ok(tools) => return tools,
                Err(error) if error.is_connection_closed() => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => panic!("{error:?}"),
            }
        }
    })
    .await
    .expect("served again");
    assert_eq!(relisted.len(), listed.len());
    let restarts: Vec<_> = heard
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("restarted"))
        .collect();
    assert_eq!(restarts.len(), 1, "{:?}", heard.lines());
    assert!(restarts[0].contains("SessionExpired"), "{restarts:?}");
    assert!(restarts[0].contains("resubscribed: 1"), "{restarts:?}");
    client.close().await.expect("closed");
    server.start_kill().expect("killed");
    server.wait().await.expect("reaped");
}

async fn a_server_that_forgets_every_session_gets_a_clear_error_after_a_few_tries() {
    let server = MisbehavingHttp::start(Way::ForgetsSessions).await;
    let heard = Heard::default();
    let config = heard
        .config(ClientConfig::new("hostile-test", "1"))
        .negotiation(Negotiation::HandshakeOnly)
        .session_restarts(
            BackoffConfig::new()
                .with_floor(Duration::from_millis(10))
                .with_budget(3, Duration::from_secs(60)),
        );
    let client = Client::connect_http(&server.url, config)
        .await
        .expect("connected");
    let mut lost = 0;
    for _ in 0..6 {
        let error = tokio::time::timeout(LIMIT, client.list_all_tools())
            .await
            .expect("answered in time")
            .expect_err("forgotten");
        assert!(error.is_session_expired(), "{error:?}");
        if matches!(error, Error::SessionLost { .. }) {
            lost += 1;
            assert!(error.to_string().contains("3 new sessions"), "{error}");
        }
    }
    assert!(lost >= 3, "the budget ran out and stayed out");
    assert_eq!(
        server.counts.initializes.load(Ordering::SeqCst),
        4,
        "the first session and three restarts, no more"
    );
    assert_eq!(heard.count("restarted"), 3, "{:?}", heard.lines());
    let reasons = heard.lines();
    assert!(
        reasons
            .iter()
            .filter(|l| l.starts_with("restarted"))
            .all(|l| l.contains(&format!("{:?}", RestartReason::SessionExpired)))
    );
    client.close().await.expect("closed");
}

fn handshake_client() -> ClientConfig {
    ClientConfig::new("hostile-test", "1").negotiation(Negotiation::HandshakeOnly)
}

async fn a_redirect_to_another_origin_is_not_followed() {
    let elsewhere = MisbehavingHttp::start(Way::GetStorm).await;
    let port: u16 = elsewhere
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .expect("a port");
    let server = MisbehavingHttp::start(Way::RedirectsTo(port)).await;
    let error = Client::connect_http(&server.url, handshake_client())
        .await
        .err()
        .expect("refused");
    assert_eq!(error.http_status(), Some(307), "{error:?}");
    assert_eq!(elsewhere.counts.requests.load(Ordering::SeqCst), 0);
}

async fn an_sse_event_over_the_limit_fails_its_call() {
    let server = MisbehavingHttp::start(Way::OversizedEvent).await;
    let http = HttpClientConfig::new().max_message(64 * 1024);
    let client = Client::connect_http_with(&server.url, http, handshake_client())
        .await
        .expect("connected");
    let error = failed_call(&client).await;
    assert!(
        matches!(transport(&error), TransportError::ResponseTooLarge { limit } if *limit == 64 * 1024),
        "{error:?}"
    );
    client.close().await.expect("closed");
}

async fn a_session_id_that_is_not_visible_ascii_is_refused() {
    let server = MisbehavingHttp::start(Way::BadSessionId).await;
    let error = Client::connect_http(&server.url, handshake_client())
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(error.transport(), Some(TransportError::InvalidSessionId)),
        "{error:?}"
    );
}

// ---------------------------------------------------------------------------
// The server side seen by clients that pipeline.

/// Writes `initialize`, `notifications/initialized` and `tools/list` in one
/// write to a fresh stdio server; the two answers, in the order they came.
async fn pipelined_once() -> (JsonRpcMessage, JsonRpcMessage) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let (exe, role) = support::role_program("demo-stdio-threads");
    let mut child = tokio::process::Command::new(exe)
        .arg(role)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let three = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeline","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n",
    );
    stdin.write_all(three.as_bytes()).await.expect("written");
    stdin.flush().await.expect("flushed");
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let line = lines.next_line().await.expect("read").expect("an answer");
        answers.push(JsonRpcMessage::from_str(&line).expect("JSON-RPC"));
    }
    let second = answers.pop().expect("two");
    let first = answers.pop().expect("two");
    drop(stdin);
    let _ = child.wait().await;
    (first, second)
}

async fn pipelined_initialize_is_a_barrier_a_thousand_times() {
    let mut runs = tokio::task::JoinSet::new();
    let mut started = 0;
    let mut done = 0;
    while done < 1000 {
        while started < 1000 && runs.len() < 8 {
            runs.spawn(pipelined_once());
            started += 1;
        }
        let (first, second) = tokio::time::timeout(LIMIT, runs.join_next())
            .await
            .expect("answered in time")
            .expect("a run")
            .expect("the run did not panic");
        match (&first, &second) {
            (JsonRpcMessage::Response(init), JsonRpcMessage::Response(list)) => {
                assert_eq!(init.id, 1.into(), "initialize answered first");
                assert_eq!(list.id, 2.into());
            }
            other => panic!("run {done}: {other:?}"),
        }
        done += 1;
    }
}

// ---------------------------------------------------------------------------
// The CLI.

async fn the_cli_reports_an_oversized_answer_without_waiting() {
    let mcp = Mcp::stdio_role("misbehaving:oversized-answer", Era::Handshake);
    let ran = mcp
        .run(&["--timeout", "600", "tools", "call", "call"])
        .await;
    assert_ne!(ran.code, 0, "{ran:?}");
    assert!(
        ran.stderr.contains("exceeds the 33554432-byte limit"),
        "{ran:?}"
    );
}

async fn the_cli_stops_endless_pages_with_bounded_memory() {
    let mcp = Mcp::stdio_role("misbehaving:endless-pages", Era::Handshake);
    let (ran, peak) = mcp.run_measured(&["tools", "list"]).await;
    assert_ne!(ran.code, 0, "{ran:?}");
    assert!(ran.stderr.contains("67108864 bytes"), "{ran:?}");
    // 64 MiB read at most, some of it held twice while parsed: far from
    // the 2 GiB that 1,000 pages of 1 MiB took before the byte budget.
    eprintln!("peak RSS of the CLI: {} MiB", peak >> 20);
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}

async fn the_cli_reads_a_negative_cache_ttl() {
    let mcp = Mcp::stdio_auto("misbehaving:negative-ttl");
    let listed = mcp.json(&["tools", "list"]).await;
    assert_eq!(listed["tools"][0]["name"], "call", "{listed}");
    let info = mcp.json(&["info"]).await;
    assert_eq!(info["era"], "stateless", "{info}");
}

/// A stateless `ping` is a `server/discover` round trip: the answer the
/// session negotiated with is no proof the server is still there.
async fn the_cli_stateless_ping_asks_the_server_again() {
    let mcp = Mcp::stdio_role("misbehaving:discover-then-exit", Era::Stateless);
    let ran = mcp.run(&["ping"]).await;
    assert_ne!(
        ran.code, 0,
        "a server gone after negotiating is no pong: {ran:?}"
    );
    assert!(ran.stderr.contains("pinging the server"), "{ran:?}");
}
