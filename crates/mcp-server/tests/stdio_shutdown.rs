//! `serve_stdio`'s shutdown ends the serving and lets the process exit:
//! this test binary runs itself again as a stdio server (a real child
//! process), which a real signal stops while its stdin stays open.

use std::io::{BufRead as _, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_server::Server;

/// Set in the child: run the server instead of the test.
const CHILD: &str = "MCP_SERVER_STDIO_SHUTDOWN_CHILD";

/// The child's body (in the parent's own run it does nothing): a stdio
/// server stopped by ctrl-c or SIGTERM; the runtime is dropped when it has
/// stopped, which must not wait for stdin.
#[test]
fn stdio_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let server = Server::builder("stopped", "1")
            .tool("ping", "Answers pong", || async { "pong" })
            .build()
            .expect("a valid server");
        server
            .serve_stdio(mcp_server::shutdown_signal())
            .await
            .expect("served");
    });
    drop(runtime);
    eprintln!("the server stopped");
}

/// The child process, killed and reaped if a test fails before it exits.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The child, its stdin open, after it answered `initialize` (so it is
/// serving, and listening for signals).
fn serving_child() -> (Served, impl Write) {
    let spawned = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "stdio_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = Served(spawned.expect("spawned"));
    let mut stdin = child.0.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .expect("written");
    stdin.flush().expect("flushed");
    // Read on a thread, so that the wait is bounded. The harness's own
    // lines ("running 1 test") come before the answer.
    let stdout = BufReader::new(child.0.stdout.take().expect("stdout"));
    let (lines, answers) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Drained to the end: the harness writes after the server stopped.
        for line in stdout.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    loop {
        let line = answers
            .recv_timeout(Duration::from_secs(10))
            .expect("the child answers initialize within 10 s");
        if line.contains(r#""id":1"#) {
            return (child, stdin);
        }
    }
}

/// Sends `signal` to `child` with `kill`, a real signal from another process.
fn signal(child: &Served, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.0.id().to_string()])
        .status()
        .expect("kill ran");
    assert!(status.success(), "kill {signal} failed");
}

/// Waits at most 10 s for `child` to exit (else it is killed by the guard
/// and the test fails); its exit status and stderr.
fn exits_in_time(mut child: Served) -> (std::process::ExitStatus, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("waitable") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the stdio server still runs 10 s after its shutdown signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.0.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut stderr).expect("its stderr");
    }
    (status, stderr)
}

fn stops_on(signal_name: &str) {
    let (child, stdin) = serving_child();
    signal(&child, signal_name);
    let (status, stderr) = exits_in_time(child);
    // Stdin stayed open all along.
    drop(stdin);
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("the server stopped"), "{stderr}");
}

#[test]
#[cfg(unix)]
fn ctrl_c_stops_a_stdio_server_whose_stdin_stays_open() {
    stops_on("-INT");
}

#[test]
#[cfg(unix)]
fn sigterm_stops_a_stdio_server_whose_stdin_stays_open() {
    stops_on("-TERM");
}
