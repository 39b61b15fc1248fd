//! Round trips through the dispatcher, over memory and over stdio to a child,
//! against a raw tokio + serde_json echo over the same pipe, in one run.
//!
//! Run: `cargo bench -p mcp-transport --bench roundtrip`
//! (each case runs for about a second; the whole bench takes under a minute).

use std::time::{Duration, Instant};

use mcp_core::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest, MemoryTransport,
    NotificationContext, Peer, RequestContext, SendOptions,
};
use mcp_transport::stdio::ServerCommand;
use mcp_types::{ErrorObject, RawJson};

const PEER: &str = env!("CARGO_BIN_EXE_mcp-transport-test-peer");
const CASE_TIME: Duration = Duration::from_millis(1200);
const MAX_CALLS: u64 = 2_000_000;

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

fn payload(bytes: usize) -> RawJson {
    // `{"data":"xxx…"}` of about `bytes` bytes.
    RawJson::from_string(format!(
        r#"{{"data":"{}"}}"#,
        "x".repeat(bytes.saturating_sub(11))
    ))
    .expect("valid JSON")
}

/// Calls `echo` from `in_flight` workers until the time is up; returns calls made.
async fn drive(peer: &Peer, params: &RawJson, in_flight: usize) -> (u64, Duration) {
    let start = Instant::now();
    let deadline = start + CASE_TIME;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..in_flight {
        let peer = peer.clone();
        let params = params.clone();
        workers.spawn(async move {
            let mut calls = 0u64;
            while Instant::now() < deadline && calls < MAX_CALLS {
                peer.request("echo", Some(params.clone()), SendOptions::new())
                    .await
                    .expect("echo answered");
                calls += 1;
            }
            calls
        });
    }
    let mut total = 0;
    while let Some(calls) = workers.join_next().await {
        total += calls.expect("worker ok");
    }
    (total, start.elapsed())
}

/// CPU time (user + system) of a process, from /proc.
fn cpu_of(pid: u32) -> Duration {
    let ticks_per_second = 100.0; // USER_HZ on Linux
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // After the command: state is field 0, utime 11, stime 12.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    Duration::from_secs_f64(ticks / ticks_per_second)
}

fn own_cpu() -> Duration {
    cpu_of(std::process::id())
}

struct Row {
    transport: &'static str,
    server: &'static str,
    payload: usize,
    in_flight: usize,
    calls_per_second: f64,
    cpu_ms_per_1000: f64,
}

async fn stdio_case(raw: bool, payload_bytes: usize, in_flight: usize) -> Row {
    let mut command = ServerCommand::new(PEER);
    if raw {
        command = command.arg("--raw");
    }
    let (transport, child) = command.spawn().expect("spawned");
    let pid = child.pid().expect("running");
    let connection = Connection::start(transport, Echo, DispatcherConfig::default());
    let params = payload(payload_bytes);
    // Warm up, then measure.
    for _ in 0..100 {
        connection
            .peer()
            .request("echo", Some(params.clone()), SendOptions::new())
            .await
            .expect("warm-up");
    }
    let before = cpu_of(pid);
    let (calls, elapsed) = drive(connection.peer(), &params, in_flight).await;
    let cpu = cpu_of(pid).saturating_sub(before);
    connection.shutdown().await;
    child.shutdown().await.expect("reaped");
    Row {
        transport: "stdio",
        server: if raw { "raw echo" } else { "dispatcher" },
        payload: payload_bytes,
        in_flight,
        calls_per_second: calls as f64 / elapsed.as_secs_f64(),
        cpu_ms_per_1000: cpu.as_secs_f64() * 1000.0 / (calls as f64 / 1000.0),
    }
}

async fn memory_case(payload_bytes: usize, in_flight: usize) -> Row {
    let (a, b) = MemoryTransport::pair(256);
    let server = Connection::start(a, Echo, DispatcherConfig::default());
    let client = Connection::start(b, Echo, DispatcherConfig::default());
    let params = payload(payload_bytes);
    let before = own_cpu();
    let (calls, elapsed) = drive(client.peer(), &params, in_flight).await;
    let cpu = own_cpu().saturating_sub(before);
    client.shutdown().await;
    server.wait().await;
    Row {
        transport: "memory",
        server: "dispatcher (both sides)",
        payload: payload_bytes,
        in_flight,
        calls_per_second: calls as f64 / elapsed.as_secs_f64(),
        cpu_ms_per_1000: cpu.as_secs_f64() * 1000.0 / (calls as f64 / 1000.0),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        println!("| transport | server | payload | in flight | calls/s | server CPU ms / 1000 calls | throughput vs raw | CPU vs raw |");
        println!("|---|---|---|---|---|---|---|---|");
        for payload_bytes in [64, 64 * 1024] {
            for in_flight in [1, 64] {
                let raw = stdio_case(true, payload_bytes, in_flight).await;
                let ours = stdio_case(false, payload_bytes, in_flight).await;
                let memory = memory_case(payload_bytes, in_flight).await;
                for row in [&raw, &ours, &memory] {
                    let (throughput, cpu) = if row.transport == "stdio" {
                        (
                            format!("{:.2}x", row.calls_per_second / raw.calls_per_second),
                            format!("{:.2}x", row.cpu_ms_per_1000 / raw.cpu_ms_per_1000.max(f64::EPSILON)),
                        )
                    } else {
                        ("-".into(), "-".into())
                    };
                    println!(
                        "| {} | {} | {} | {} | {:.0} | {:.1} | {} | {} |",
                        row.transport,
                        row.server,
                        if row.payload >= 1024 { format!("{} KiB", row.payload / 1024) } else { format!("{} B", row.payload) },
                        row.in_flight,
                        row.calls_per_second,
                        row.cpu_ms_per_1000,
                        throughput,
                        cpu
                    );
                }
            }
        }
        println!("\nserver CPU: the child's user+system time for stdio (10 ms resolution); for memory, the whole bench process (client and server).");
    });
}
