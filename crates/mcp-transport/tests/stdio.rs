//! The stdio transport against a real child process and raw byte streams.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_core::{
    Connection, DispatcherConfig, Error, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext, SendOptions,
};
use mcp_transport::LineTransport;
use mcp_transport::stdio::{ServerCommand, StderrSink};
use mcp_types::{ErrorCode, ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(20);
const PEER: &str = env!("CARGO_BIN_EXE_mcp-transport-test-peer");

/// The client side serves nothing.
struct NoHandler;

impl Handler for NoHandler {
    async fn handle_request(
        &self,
        r: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Err(ErrorObject::method_not_found(&r.method))
    }
    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

fn raw(value: Value) -> Option<RawJson> {
    Some(RawJson::from_serialize(&value).expect("serializable"))
}

fn is_running(pid: u32) -> bool {
    // A zombie still has a /proc entry; read its state to tell.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_requests_over_a_child_process() {
    let (transport, child) = ServerCommand::new(PEER).spawn().expect("spawned");
    let connection = Connection::start(transport, NoHandler, DispatcherConfig::default());
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..1000u64 {
        let peer = connection.peer().clone();
        calls.spawn(async move {
            let params = raw(json!({"n": n, "delay_ms": (1000 - n) % 50}));
            let answer = peer
                .request("echo", params, SendOptions::new())
                .await
                .expect("answered");
            let value: Value = answer.parse().expect("JSON");
            assert_eq!(value["n"], n);
        });
    }
    while let Some(joined) = timeout(LIMIT, calls.join_next()).await.expect("in time") {
        joined.expect("task ok");
    }
    connection.shutdown().await;
    let status = timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
    assert!(
        status.success(),
        "the peer exits cleanly when its stdin closes: {status}"
    );
}

#[tokio::test]
async fn a_crash_mid_request_fails_the_caller_within_a_second() {
    let (transport, child) = ServerCommand::new(PEER)
        .stderr(StderrSink::Discard)
        .spawn()
        .expect("spawned");
    let connection = Connection::start(transport, NoHandler, DispatcherConfig::default());
    let peer = connection.peer().clone();
    let hanging = tokio::spawn(async move { peer.request("hang", None, SendOptions::new()).await });
    let started = Instant::now();
    let crash = connection.peer().request("crash", None, SendOptions::new());
    let err = timeout(Duration::from_secs(1), crash)
        .await
        .expect("within a second")
        .expect_err("crashed");
    assert!(matches!(err, Error::ConnectionClosed { .. }), "{err}");
    let err = timeout(Duration::from_secs(1), hanging)
        .await
        .expect("prompt")
        .expect("joined")
        .expect_err("closed");
    assert!(matches!(err, Error::ConnectionClosed { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));
    let status = timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn shutdown_leaves_no_process_even_when_the_child_ignores_stdin() {
    // `sleep` never reads stdin, so only the signals can stop it.
    let (transport, child) = ServerCommand::new("sleep")
        .arg("600")
        .shutdown_grace(Duration::from_millis(200))
        .spawn()
        .expect("spawned");
    let pid = child.pid().expect("running");
    assert!(is_running(pid));
    drop(transport);
    let status = timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
    assert!(!status.success());
    assert!(!is_running(pid), "process {pid} is still running");
}

#[tokio::test]
async fn a_child_that_ignores_closed_stdin_and_sigterm_is_killed_within_two_graces() {
    use std::os::unix::process::ExitStatusExt;
    // The shell ignores SIGTERM and `exec` hands that on to `sleep`, which
    // never reads stdin: only the last step, SIGKILL, can stop it.
    let grace = Duration::from_millis(300);
    let (transport, child) = ServerCommand::new("sh")
        .args(["-c", "trap '' TERM; exec sleep 600"])
        .shutdown_grace(grace)
        .spawn()
        .expect("spawned");
    let pid = child.pid().expect("running");
    drop(transport);
    let started = Instant::now();
    let status = timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
    let took = started.elapsed();
    assert_eq!(status.signal(), Some(SIGKILL), "{status}");
    assert!(!is_running(pid), "process {pid} is still running");
    assert!(took >= grace * 2, "both graces were waited: {took:?}");
    // Two graces, plus room for a loaded machine to reap it.
    assert!(
        took < grace * 2 + Duration::from_secs(5),
        "bounded: {took:?}"
    );
}

/// SIGKILL's number on Linux.
const SIGKILL: i32 = 9;

#[tokio::test]
async fn dropping_the_child_handle_kills_it() {
    let (transport, child) = ServerCommand::new("sleep")
        .arg("600")
        .spawn()
        .expect("spawned");
    let pid = child.pid().expect("running");
    drop(child);
    drop(transport);
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!is_running(pid), "process {pid} outlived its handle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_mib_message_passes_and_an_oversized_one_is_refused_cleanly() {
    let (transport, child) = ServerCommand::new(PEER)
        .args(["--max-line", &(20 * 1024 * 1024).to_string()])
        .spawn()
        .expect("spawned");
    let connection = Connection::start(transport, NoHandler, DispatcherConfig::default());
    let big = "x".repeat(16 * 1024 * 1024);
    let answer = timeout(
        LIMIT,
        connection
            .peer()
            .request("echo", raw(json!({"blob": big})), SendOptions::new()),
    )
    .await
    .expect("in time")
    .expect("a 16 MiB round trip");
    assert_eq!(answer.get().len(), big.len() + r#"{"blob":""}"#.len());
    // Over the peer's limit: dropped unread, but its id sits in the first
    // bytes, so the refusal reaches the caller; the connection stays usable.
    let too_big = "y".repeat(21 * 1024 * 1024);
    let err = timeout(
        LIMIT,
        connection
            .peer()
            .request("echo", raw(json!({"blob": too_big})), SendOptions::new()),
    )
    .await
    .expect("the refusal names the request")
    .expect_err("refused");
    let Error::Remote(refusal) = &err else {
        panic!("a JSON-RPC refusal, got {err}")
    };
    assert_eq!(refusal.code, ErrorCode::INVALID_REQUEST, "{err}");
    assert!(refusal.message.contains("limit"), "{err}");
    let answer = connection
        .peer()
        .request("echo", raw(json!({"after": 1})), SendOptions::new())
        .await
        .expect("still alive");
    assert_eq!(answer.get(), r#"{"after":1}"#);
    connection.shutdown().await;
    timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
}

/// A server on one end of an in-process pipe, the test writing raw bytes on the other.
struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        r: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Ok(r.params.unwrap_or_else(RawJson::empty_object))
    }
    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

#[tokio::test]
async fn malformed_and_invalid_lines_are_answered_and_the_connection_lives() {
    let (server_end, test_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let transport = LineTransport::with_max_line(server_read, server_write, 1024);
    let _server = Connection::start(transport, Echo, DispatcherConfig::default());
    let (test_read, mut test_write) = tokio::io::split(test_end);
    let mut lines = BufReader::new(test_read).lines();
    let mut exchange = async |line: &str| -> Value {
        test_write
            .write_all(line.as_bytes())
            .await
            .expect("written");
        test_write.write_all(b"\n").await.expect("written");
        let answer = timeout(LIMIT, lines.next_line())
            .await
            .expect("in time")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&answer).expect("the answer is JSON")
    };
    let parse_error = exchange("{this is not json").await;
    assert_eq!(parse_error["error"]["code"], -32700);
    assert!(parse_error.get("id").is_none());
    let invalid = exchange(r#"{"jsonrpc":"2.0","id":4}"#).await;
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(invalid["id"], 4);
    let bool_id = exchange(r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#).await;
    assert_eq!(bool_id["error"]["code"], -32600);
    let too_long = exchange(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"x","params":{{"p":"{}"}}}}"#,
        "z".repeat(2000)
    ))
    .await;
    assert_eq!(too_long["error"]["code"], -32600);
    assert!(
        too_long["error"]["message"]
            .as_str()
            .expect("text")
            .contains("1024")
    );
    assert_eq!(too_long["id"], 5, "the id in the first bytes is answered");
    let id_late = exchange(&format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}},"id":"late"}}"#,
        "z".repeat(5000)
    ))
    .await;
    assert_eq!(id_late["error"]["code"], -32600);
    assert!(
        id_late.get("id").is_none(),
        "an id past the kept prefix is unknown"
    );
    let fine = exchange(r#"{"jsonrpc":"2.0","id":6,"method":"echo","params":{"ok":true}}"#).await;
    assert_eq!(fine["id"], 6);
    assert_eq!(fine["result"], json!({"ok": true}));
}

#[tokio::test]
async fn stderr_lines_reach_the_chosen_sink() {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let (transport, child) = ServerCommand::new("sh")
        .args(["-c", "echo to-stderr >&2; read line"])
        .stderr(StderrSink::Lines(Arc::new(move |line| {
            sink.lock().expect("lock").push(line)
        })))
        .spawn()
        .expect("spawned");
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines.lock().expect("lock").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(lines.lock().expect("lock").as_slice(), ["to-stderr"]);
    drop(transport);
    timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
}

/// Stderr is the child's free text: a line that is not UTF-8 or longer
/// than the limit neither stops the reading (the child would block on a
/// full pipe) nor is kept whole; a line kept whole loses its CR as its LF.
#[tokio::test]
async fn stderr_lines_are_bounded_and_read_past_bad_bytes() {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let script = "printf 'bad \\377 byte\\n' >&2; head -c 100000 /dev/zero | tr '\\0' x >&2; \
                  printf '\\r\\nwindows\\r\\nlast\\n' >&2; read line";
    let (transport, child) = ServerCommand::new("sh")
        .args(["-c", script])
        .max_line(1000)
        .stderr(StderrSink::Lines(Arc::new(move |line| {
            sink.lock().expect("lock").push(line)
        })))
        .spawn()
        .expect("spawned");
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines.lock().expect("lock").len() < 4 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let expected = [
        "bad \u{fffd} byte".to_owned(),
        "x".repeat(1000),
        "windows".to_owned(),
        "last".to_owned(),
    ];
    assert_eq!(lines.lock().expect("lock").as_slice(), expected);
    drop(transport);
    timeout(LIMIT, child.shutdown())
        .await
        .expect("in time")
        .expect("reaped");
}

/// A line over the limit is reported with the id its first bytes hold
/// however the peer's bytes are cut into reads: here one byte at a time,
/// the id well past the limit (found by the `line_framing` fuzz target).
#[tokio::test]
async fn an_overlong_line_keeps_its_id_however_its_bytes_arrive() {
    use mcp_core::{Inbound, Transport, TransportReceiver};
    let line = br#"{"jsonrpc":"2.0","method":"x","params":{},"id":77}"#;
    for read_size in [1, 7, line.len() + 1] {
        let (reader_end, mut writer_end) = tokio::io::duplex(read_size);
        let transport = LineTransport::with_max_line(reader_end, tokio::io::sink(), 16);
        let (_sender, mut receiver) = transport.split();
        let writing = tokio::spawn(async move {
            writer_end.write_all(line).await.expect("written");
            writer_end.write_all(b"\n").await.expect("written");
        });
        match timeout(LIMIT, receiver.recv()).await.expect("in time") {
            Some(Inbound::TooLarge { id, .. }) => assert_eq!(
                id,
                Some(mcp_types::RequestId::Number(77)),
                "reads of {read_size} bytes"
            ),
            other => panic!("reads of {read_size} bytes: {other:?}"),
        }
        writing.await.expect("the writer ends");
    }
}

#[test]
fn a_commands_debug_names_its_environment_but_never_its_values() {
    let command = ServerCommand::new("server")
        .arg("--verbose")
        .env("API_TOKEN", "s3cret-value");
    let shown = format!("{command:?}");
    assert!(shown.contains("API_TOKEN"), "{shown}");
    assert!(shown.contains("--verbose"), "{shown}");
    assert!(!shown.contains("s3cret-value"), "{shown}");
}
