//! `cargo xtask bench`: our echo server (`mcp-bench-echo-server`, built on
//! `mcp-server`) against raw baselines (`mcp-transport-test-peer --raw`, a
//! tokio + serde_json stdio echo, and `raw-http-echo`, a hyper echo) and
//! against rmcp, the official Rust SDK (an echo server built in a scratch
//! directory, `rmcp.rs`), all measured in one run so the ratios are
//! comparable on a noisy machine: throughput, latency, CPU and peak RSS
//! under load, then the memory of idle sessions and GET streams
//! (`scale.rs`), then the rows across replicas (`cluster.rs`). The
//! gateway rows (`gateway.rs`, issue 29) put `mcp gateway` in front of the
//! stdio echo server and call it over HTTP, beside the same server called
//! directly over its stdio with as many calls in flight.
//!
//! `bench` (this debug binary) builds the programs and the driver with the
//! `production` profile (release with fat LTO and one codegen unit, what a
//! deployed server is built with; Cargo.toml) and runs `bench-run` in that
//! build of this same binary, so the load generator is optimized too. Each row spawns a fresh server child, so its
//! CPU time and peak RSS are that row's alone.

mod child;
mod cluster;
mod gateway;
mod http;
mod report;
mod rmcp;
mod scale;
mod stdio;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use report::Row;

/// The command that reproduces a full run, as the docs print it.
const COMMAND: &str = "cargo xtask bench";

/// How long and how much each row runs.
#[derive(Debug, Clone, Copy)]
struct Budget {
    /// Passes over the whole table; each row reports the median of its
    /// rounds, so a burst of load elsewhere on the machine skews one round
    /// of every row rather than all of one row.
    rounds: usize,
    /// Load before the measurement starts (caches, allocator, pools).
    warmup: Duration,
    /// The measured window of each row in each round.
    measure: Duration,
    /// At most this many calls per measured window (and per warmup).
    max_calls: usize,
}

impl Budget {
    /// 3 rounds of 35 rows (31 without rmcp) of 0.3 + 1.5 s: about 4
    /// minutes with process and connection start-up.
    const FULL: Self = Self {
        rounds: 3,
        warmup: Duration::from_millis(300),
        measure: Duration::from_millis(1500),
        max_calls: 1_000_000,
    };
    /// A smoke test: every row answers, nothing is timed.
    const QUICK: Self = Self {
        rounds: 1,
        warmup: Duration::ZERO,
        measure: Duration::from_millis(100),
        max_calls: 200,
    };
}

/// Every wait on a child is bounded by this, so a stuck server fails the
/// run instead of hanging it.
const PEER_TIMEOUT: Duration = Duration::from_secs(30);

/// What a row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `mcp-transport-test-peer --raw` over stdio.
    StdioRaw,
    /// `mcp-bench-echo-server` over stdio (2025-11-25 handshake).
    StdioMcp,
    /// `raw-http-echo` over HTTP, given the 2025-11-25 era's request body
    /// (without the session's two headers: it opens no session).
    HttpRaw,
    /// `raw-http-echo` over HTTP, given the 2026-07-28 call as the stateless
    /// rows send it: its three routing headers and its `_meta` (the
    /// protocol version, client info and capabilities), which any server
    /// of that era reads. The baseline of the stateless rows.
    HttpRawStateless,
    /// `mcp-bench-echo-server --http`, a 2025-11-25 session per connection.
    HttpSession,
    /// `mcp-bench-echo-server --http`, stateless 2026-07-28 requests.
    HttpStateless,
    /// rmcp's echo server (`rmcp.rs`), a 2025-11-25 session per connection.
    RmcpSession,
    /// rmcp's echo server, stateless 2026-07-28 requests.
    RmcpStateless,
    /// `mcp-bench-echo-server` over stdio, called directly: the reference
    /// of the gateway rows (the same upstream, as many calls in flight).
    GatewayDirect,
    /// `mcp gateway --stdio <echo server>` over HTTP, a 2025-11-25 session
    /// per connection.
    GatewaySession,
    /// `mcp gateway --stdio <echo server>` over HTTP, stateless 2026-07-28
    /// requests.
    GatewayStateless,
}

impl Kind {
    fn is_raw(self) -> bool {
        matches!(
            self,
            Self::StdioRaw | Self::HttpRaw | Self::HttpRawStateless
        )
    }

    fn baseline(self) -> Self {
        match self {
            Self::StdioRaw | Self::StdioMcp | Self::GatewayDirect => Self::StdioRaw,
            Self::HttpRaw | Self::HttpSession | Self::RmcpSession | Self::GatewaySession => {
                Self::HttpRaw
            }
            // Compared with raw hyper given the same request: the era's
            // larger call is read by any server, not added by ours.
            Self::HttpRawStateless
            | Self::HttpStateless
            | Self::RmcpStateless
            | Self::GatewayStateless => Self::HttpRawStateless,
        }
    }

    /// A call through `mcp gateway`.
    fn is_gateway(self) -> bool {
        matches!(self, Self::GatewaySession | Self::GatewayStateless)
    }

    /// A 2025-11-25 session per HTTP connection.
    fn is_session_era(self) -> bool {
        matches!(
            self,
            Self::HttpSession | Self::RmcpSession | Self::GatewaySession
        )
    }

    /// Stateless 2026-07-28 requests over HTTP.
    fn is_stateless_era(self) -> bool {
        matches!(
            self,
            Self::HttpRawStateless
                | Self::HttpStateless
                | Self::RmcpStateless
                | Self::GatewayStateless
        )
    }

    fn is_rmcp(self) -> bool {
        matches!(self, Self::RmcpSession | Self::RmcpStateless)
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Case {
    kind: Kind,
    /// Bytes of the `message` argument.
    payload: usize,
    /// Calls in flight (stdio) or concurrent keep-alive connections (HTTP).
    parallel: usize,
}

/// The connection counts of the HTTP rows.
const HTTP_CONNECTIONS: [usize; 4] = [1, 16, 64, 256];

/// The rows, each baseline right before the servers compared with it;
/// rmcp's only when it was built (`with_rmcp`).
fn cases(with_rmcp: bool) -> Vec<Case> {
    let mut cases = Vec::new();
    for payload in [64, 64 * 1024] {
        for parallel in [1, 64] {
            for kind in [Kind::StdioRaw, Kind::StdioMcp] {
                cases.push(Case {
                    kind,
                    payload,
                    parallel,
                });
            }
        }
    }
    for parallel in HTTP_CONNECTIONS {
        for kind in [
            Kind::HttpRaw,
            Kind::HttpSession,
            Kind::HttpRawStateless,
            Kind::HttpStateless,
            Kind::RmcpSession,
            Kind::RmcpStateless,
        ] {
            if kind.is_rmcp() && !with_rmcp {
                continue;
            }
            cases.push(Case {
                kind,
                payload: 64,
                parallel,
            });
        }
    }
    // Issue 29: the direct reference right before the calls through the
    // gateway it is compared with.
    for kind in [
        Kind::GatewayDirect,
        Kind::GatewaySession,
        Kind::GatewayStateless,
    ] {
        cases.push(Case {
            kind,
            payload: 64,
            parallel: gateway::PARALLEL,
        });
    }
    cases
}

/// Where the built programs are.
struct Programs {
    bin_dir: PathBuf,
    /// rmcp's echo server, when it was built (not in `--quick`).
    rmcp: Option<PathBuf>,
}

impl Programs {
    fn path(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// The program and arguments of the server a row of `kind` measures.
    fn server(&self, kind: Kind) -> Result<(PathBuf, &'static [&'static str]), String> {
        Ok(match kind {
            Kind::StdioRaw => (self.path("mcp-transport-test-peer"), &["--raw"]),
            Kind::StdioMcp | Kind::GatewayDirect => (self.path("mcp-bench-echo-server"), &[]),
            Kind::HttpRaw | Kind::HttpRawStateless => (self.path("raw-http-echo"), &[]),
            Kind::HttpSession | Kind::HttpStateless => {
                (self.path("mcp-bench-echo-server"), &["--http"])
            }
            Kind::RmcpSession | Kind::RmcpStateless => (
                self.rmcp
                    .clone()
                    .ok_or("rmcp's echo server was not built (`--quick` skips it)")?,
                &[],
            ),
            // Its arguments name the upstream and a port (`gateway.rs`).
            Kind::GatewaySession | Kind::GatewayStateless => (self.path("mcp"), &[]),
        })
    }
}

/// `cargo xtask bench [--quick] [--no-write] [--only TEXT] [--skip-rmcp]`:
/// builds, then runs the driver.
pub(crate) fn build_and_run(root: &Path, args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    // The profile a deployed server is built with (see Cargo.toml), for
    // ours and the baselines alike; `--quick` only checks that rows run.
    let profile = if quick { "debug" } else { "production" };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(&cargo);
    build.current_dir(root).arg("build");
    if !quick {
        build.args(["--profile", profile]);
    }
    build.args([
        "-p",
        "xtask",
        "-p",
        "mcp-examples",
        "-p",
        "mcp-transport",
        "-p",
        "mcp-cli",
        "--bin",
        "xtask",
        "--bin",
        "raw-http-echo",
        "--bin",
        "mcp-bench-echo-server",
        "--bin",
        "mcp-transport-test-peer",
        // `mcp gateway` (the gateway rows).
        "--bin",
        "mcp",
        // The echo server's `--redis` (the rows across replicas).
        "--features",
        "mcp-examples/redis",
    ]);
    eprintln!("building the benchmark programs ({profile})");
    let status = build
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the benchmark programs failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin_dir = target.join(profile);
    let mut driver = Command::new(bin_dir.join("xtask"));
    driver
        .current_dir(root)
        .arg("bench-run")
        .arg("--bin-dir")
        .arg(&bin_dir)
        .args(args);
    // rmcp's echo server, built from crates.io into a scratch project: a
    // few minutes the first time, so `--quick` (CI's smoke run) leaves
    // rmcp's rows out, and `--skip-rmcp` does where crates.io is out of reach.
    if !quick && !args.iter().any(|a| a == "--skip-rmcp") {
        let rmcp = rmcp::build(&cargo, &target.join("bench-rmcp"), profile)?;
        driver.arg("--rmcp").arg(rmcp);
    }
    let status = driver
        .status()
        .map_err(|e| format!("cannot run {}: {e}", bin_dir.join("xtask").display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the benchmark failed ({status})"))
    }
}

/// The value after `flag` in `args`.
fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
}

/// `xtask bench-run --bin-dir DIR [--rmcp PATH] [--quick] [--no-write]
/// [--only TEXT]`: the driver.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    // `--only TEXT`: the rows whose description holds TEXT (say `HTTP` or
    // `64 KiB`), for working on one part; such a run is never written.
    let only = value_of(args, "--only");
    let bin_dir = value_of(args, "--bin-dir")
        .map(PathBuf::from)
        .ok_or("bench-run needs --bin-dir DIR; run `cargo xtask bench` instead")?;
    let programs = Programs {
        bin_dir,
        rmcp: value_of(args, "--rmcp").map(PathBuf::from),
    };
    // A run without rmcp's rows is never written either: the page keeps them.
    let write = !quick
        && only.is_none()
        && programs.rmcp.is_some()
        && !args.iter().any(|a| a == "--no-write");
    let budget = if quick { Budget::QUICK } else { Budget::FULL };
    let idle = if quick {
        scale::QUICK_COUNT
    } else {
        scale::FULL_COUNT
    };
    // The scale rows hold two connections per idle session open, in this
    // process and in the server (which inherits the limit), and the HTTP
    // rows up to 256: 2N + 512 leaves room for pipes and the runtime, and
    // stays under the usual soft limit of 1,024 in `--quick` (N = 20).
    child::raise_open_files_limit(u64::try_from(2 * idle + 512).unwrap_or(u64::MAX))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    let started = std::time::Instant::now();
    let all = cases(programs.rmcp.is_some());
    let chosen = |case: &Case| only.is_none_or(|text| report::describe(*case).contains(text));
    // A chosen row brings its raw baseline along, so its ratios print.
    let cases: Vec<Case> = all
        .iter()
        .filter(|case| {
            chosen(case)
                || all.iter().any(|other| {
                    chosen(other)
                        && Case {
                            kind: other.kind.baseline(),
                            ..*other
                        } == **case
                })
        })
        .copied()
        .collect();
    let mut rounds: Vec<Vec<Row>> = cases.iter().map(|_| Vec::new()).collect();
    for round in 1..=budget.rounds {
        for (case, measured) in cases.iter().zip(&mut rounds) {
            let row = runtime
                .block_on(measure(&programs, *case, budget))
                .map_err(|e| format!("{}: {e}", report::describe(*case)))?;
            eprintln!(
                "round {round}/{}: {}",
                budget.rounds,
                report::progress_line(&row)
            );
            measured.push(row);
        }
    }
    let rows: Vec<Row> = rounds.into_iter().filter_map(Row::median).collect();
    let scale = runtime.block_on(scale::run(
        &programs,
        idle,
        budget.rounds,
        only.map(String::as_str),
    ))?;
    let across = runtime.block_on(cluster::run(&programs, budget, only.map(String::as_str)))?;
    eprintln!("all rows in {:.0} s", started.elapsed().as_secs_f64());
    let mut text = report::render(&rows, &scale, quick);
    text.push_str(&cluster::render_section(&across, &rows));
    println!("{text}");
    if write {
        let docs = root.join("docs/benchmarks.md");
        report::write_docs(&docs, &text)?;
        eprintln!("wrote {}", docs.display());
    }
    Ok(())
}

async fn measure(programs: &Programs, case: Case, budget: Budget) -> Result<Row, String> {
    match case.kind {
        Kind::StdioRaw | Kind::StdioMcp | Kind::GatewayDirect => {
            stdio::measure(programs, case, budget).await
        }
        Kind::HttpRaw
        | Kind::HttpRawStateless
        | Kind::HttpSession
        | Kind::HttpStateless
        | Kind::RmcpSession
        | Kind::RmcpStateless
        | Kind::GatewaySession
        | Kind::GatewayStateless => http::measure(programs, case, budget).await,
    }
}

/// The latencies and count of one measured window.
#[derive(Debug, Default)]
struct Sample {
    calls: usize,
    elapsed: Duration,
    /// Per call, in nanoseconds; sorted by [`Sample::finish`].
    latencies: Vec<u64>,
}

impl Sample {
    fn record(&mut self, latency: Duration) {
        self.calls += 1;
        self.latencies
            .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
    }

    fn finish(mut self, elapsed: Duration) -> Self {
        self.elapsed = elapsed;
        self.latencies.sort_unstable();
        self
    }

    /// The `q` quantile (0..=1) in milliseconds, nearest rank.
    fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = (q * self.latencies.len() as f64).ceil() as usize;
        let index = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies[index] as f64 / 1e6
    }
}

/// Finds `message` as a string anywhere in `value`: the echo came back.
fn contains_string(value: &serde_json::Value, message: &str) -> bool {
    match value {
        serde_json::Value::String(s) => s == message,
        serde_json::Value::Array(items) => items.iter().any(|v| contains_string(v, message)),
        serde_json::Value::Object(map) => map.values().any(|v| contains_string(v, message)),
        _ => false,
    }
}

/// Checks one full JSON-RPC answer to an `echo` call: a result, not an
/// error or a tool error, that carries the message back.
fn check_echo(answer: &[u8], message: &str) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_slice(answer).map_err(|e| {
        format!(
            "the answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&answer[..answer.len().min(200)])
        )
    })?;
    let Some(result) = value.get("result") else {
        return Err(format!("no result in the answer: {value}"));
    };
    if result.get("isError") == Some(&serde_json::Value::Bool(true)) {
        return Err(format!("the tool failed: {result}"));
    }
    if !contains_string(result, message) {
        return Err("the answer does not carry the message back".into());
    }
    Ok(())
}

/// The `tools/call` request for `echo`, split around its id so each call
/// only formats a number. `meta` is the 2026-07-28 `_meta` envelope.
struct CallTemplate {
    head: Vec<u8>,
    tail: Vec<u8>,
    message: String,
}

impl CallTemplate {
    fn new(payload: usize, meta: Option<serde_json::Value>) -> Self {
        let message = "x".repeat(payload);
        let mut params = serde_json::json!({"name": "echo", "arguments": {"message": message}});
        if let (Some(meta), Some(object)) = (meta, params.as_object_mut()) {
            object.insert("_meta".into(), meta);
        }
        let tail = format!(r#","method":"tools/call","params":{params}}}"#).into_bytes();
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            tail,
            message,
        }
    }

    /// The request with `id`, appended to `out`.
    fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(id.to_string().as_bytes());
        out.extend_from_slice(&self.tail);
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock: the date
/// part of the timestamp the task records carry.
fn today() -> String {
    let mut stamp = mcp_tasks::iso8601(mcp_tasks::now_ms());
    stamp.truncate("YYYY-MM-DD".len());
    stamp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut sample = Sample::default();
        for ms in 1..=100u64 {
            sample.record(Duration::from_millis(ms));
        }
        let sample = sample.finish(Duration::from_secs(1));
        assert_eq!(sample.quantile_ms(0.5), 50.0);
        assert_eq!(sample.quantile_ms(0.99), 99.0);
        assert_eq!(sample.calls, 100);
    }

    #[test]
    fn the_call_template_is_the_request_with_its_id() {
        let template = CallTemplate::new(3, Some(serde_json::json!({"k": 1})));
        let mut out = Vec::new();
        template.write(42, &mut out);
        let value: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(value["id"], 42);
        assert_eq!(value["method"], "tools/call");
        assert_eq!(value["params"]["arguments"]["message"], "xxx");
        assert_eq!(value["params"]["_meta"]["k"], 1);
    }

    #[test]
    fn an_echo_answer_is_checked_for_its_message() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(check_echo(ok, "hi"), Ok(()));
        assert!(check_echo(ok, "other").is_err());
        let tool_error = br#"{"id":1,"result":{"isError":true,"content":[{"text":"hi"}]}}"#;
        assert!(check_echo(tool_error, "hi").is_err());
        let error = br#"{"id":1,"error":{"code":-32601,"message":"hi"}}"#;
        assert!(check_echo(error, "hi").is_err());
    }

    #[test]
    fn today_is_a_date() {
        let date = today();
        assert_eq!(date.len(), 10, "{date}");
        assert!(date.starts_with("20"), "{date}");
    }
}
