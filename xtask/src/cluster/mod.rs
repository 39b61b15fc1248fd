//! `cargo xtask cluster`: three replicas of the everything-server sharing
//! redis-server, behind HAProxy (round-robin, no stickiness), all on
//! 127.0.0.1, and the scenarios that prove a session does not care which
//! replica serves it:
//!
//! - `conformance-REVISION`: the official server suite's required scenarios
//!   through the balancer, for 2025-11-25 and 2026-07-28;
//! - `replica-killed`: SIGKILL of the replica holding a GET stream while a
//!   call runs elsewhere; the stream resumes on another replica with
//!   `Last-Event-ID`, every event once;
//! - `redis-restarted`: redis-server restarts under load; calls fail with a
//!   clear error meanwhile and are served again without restarting a replica.
//!
//! With `--netns` it runs instead the namespace mode ([`ha_faults`]): each
//! replica, the balancer and each Redis node (a primary, a replica, three
//! sentinels) on a host of its own, a network namespace joined by an
//! emulated wire ([`wire`]) that injects latency, loss and partitions;
//! `--runs N` (default 3) runs its four scenarios N times.
//!
//! Each scenario gets a fresh cluster. Every process is started here and
//! stopped by its PID at the end, on an error or on ctrl-c (dropping a
//! [`process::Process`] kills it); every wait is bounded. Logs, the
//! generated haproxy.cfg and the suite's results go to `target/cluster/`.

mod client;
mod conformance;
mod failover;
mod ha;
mod ha_faults;
mod load;
mod netns;
pub(crate) mod process;
mod redis_restart;
pub(crate) mod topology;
mod wire;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use topology::{Cluster, Plan, ReplicaProgram};

/// Replicas behind the balancer.
const REPLICAS: usize = 3;

/// The programs a cluster needs that this repository does not build.
pub(crate) const TOOLS: [(&str, &str); 2] =
    [("redis-server", "redis-server"), ("haproxy", "haproxy")];

/// The tools of [`TOOLS`] missing from `PATH`, as one sentence saying what
/// to install, or `None` when all are there.
pub(crate) fn missing_tools() -> Option<String> {
    let missing: Vec<&str> = TOOLS
        .iter()
        .filter(|(program, _)| !on_path(program))
        .map(|(_, package)| *package)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} not found on PATH; install with `apt-get install -y {}` (Debian/Ubuntu: \
             redis-server 7, haproxy 2.6 or newer)",
            missing.join(" and "),
            missing.join(" ")
        )
    })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The options of `cargo xtask cluster`.
struct Options {
    /// Run the scenarios whose name holds this text.
    only: Option<String>,
    /// Replicas without `--redis`: each keeps its state in its own memory.
    no_redis: bool,
    /// The debug build of the everything-server (quicker to build).
    debug: bool,
    /// The namespace mode.
    netns: bool,
    /// How often the namespace mode runs its scenarios.
    runs: usize,
}

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Self {
            only: None,
            no_redis: false,
            debug: false,
            netns: false,
            runs: 3,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--only" => {
                    options.only = Some(args.next().ok_or("--only needs a scenario name")?.clone());
                }
                "--no-redis" => options.no_redis = true,
                "--debug" => options.debug = true,
                "--netns" => options.netns = true,
                "--runs" => {
                    options.runs = args
                        .next()
                        .and_then(|n| n.parse().ok())
                        .filter(|n| *n > 0)
                        .ok_or("--runs needs a number above 0")?;
                }
                other => {
                    return Err(format!(
                        "unknown argument `{other}`; usage: cargo xtask cluster [--only TEXT] [--no-redis] [--debug] [--netns [--runs N]]"
                    ));
                }
            }
        }
        Ok(options)
    }
}

/// `cargo xtask cluster [--only TEXT] [--no-redis] [--debug] [--netns [--runs N]]`.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let options = Options::parse(args)?;
    if let Some(missing) = missing_tools() {
        return Err(missing);
    }
    if options.netns {
        let missing: Vec<&str> = [("redis-sentinel", "redis-sentinel"), ("ip", "iproute2")]
            .iter()
            .filter(|(program, _)| {
                !on_path(program) && !Path::new("/usr/sbin").join(program).is_file()
            })
            .map(|(_, package)| *package)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not found; install with `apt-get install -y {}`",
                missing.join(" and "),
                missing.join(" ")
            ));
        }
        // Before anything is built: a machine that refuses namespaces
        // fails at once, with the reason.
        netns::preflight()?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let profile = if options.debug { "debug" } else { "release" };
    eprintln!("building the everything-server ({profile}, with Redis)");
    let mut build = Command::new(&cargo);
    build
        .current_dir(root)
        .args(["build", "-p", "mcp-examples", "--features", "redis"])
        .args(["--example", "everything-server"]);
    if !options.debug {
        build.arg("--release");
    }
    let status = build
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the everything-server failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let program = ReplicaProgram {
        program: target.join(profile).join("examples/everything-server"),
        args: vec!["--port".into(), "0".into()],
    };
    let dir = target.join("cluster");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let suite = root.join("../shared/tools/conformance");
    if options.netns {
        return run_netns(&options, &program, &dir, &suite);
    }
    let runtime = runtime()?;
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        tokio::select! {
            results = scenarios(&options, &program, &dir, &suite) => Ok(results),
            _ = tokio::signal::ctrl_c() => Err("interrupted; every process started was killed".to_owned()),
        }
    });
    // The runtime's end drops what an interrupted run still held; its
    // processes were killed on drop.
    drop(runtime);
    summarize(outcome?, started, &dir)
}

/// The harness's runtime: two workers, like the CI machine's cores.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))
}

/// Prints the count of passed scenarios; `Err` names the failed ones.
fn summarize(
    results: Vec<(String, Result<String, String>)>,
    started: Instant,
    dir: &Path,
) -> Result<(), String> {
    let failed: Vec<&(String, Result<String, String>)> =
        results.iter().filter(|(_, r)| r.is_err()).collect();
    eprintln!(
        "\ncluster: {} of {} scenarios passed in {:.0} s (logs in {})",
        results.len() - failed.len(),
        results.len(),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    if results.is_empty() {
        return Err("no scenario matched --only".into());
    }
    if failed.is_empty() {
        Ok(())
    } else {
        let names: Vec<&str> = failed.iter().map(|(name, _)| name.as_str()).collect();
        Err(format!("failed: {}", names.join(", ")))
    }
}

/// Runs each scenario on a fresh cluster and reports it as it ends.
async fn scenarios(
    options: &Options,
    program: &ReplicaProgram,
    dir: &Path,
    suite: &Path,
) -> Vec<(String, Result<String, String>)> {
    let mut results = Vec::new();
    let wanted = |name: &str| {
        options
            .only
            .as_deref()
            .is_none_or(|only| name.contains(only))
    };
    let plan = |name: &str| Plan {
        dir: dir.join(name),
        program,
        replicas: REPLICAS,
        redis: !options.no_redis,
    };
    for revision in conformance::REVISIONS {
        let name = format!("conformance-{revision}");
        if wanted(&name) {
            let out = dir.join(&name).join("results");
            let suite = suite.to_path_buf();
            let outcome = scenario(plan(&name), Duration::from_secs(360), |cluster| {
                Box::pin(
                    async move { conformance::run(&suite, cluster.address, revision, &out).await },
                )
            })
            .await;
            results.push(report(name, outcome));
        }
    }
    if wanted("replica-killed") {
        let outcome = scenario(plan("replica-killed"), Duration::from_secs(90), |cluster| {
            Box::pin(failover::run(cluster))
        })
        .await;
        results.push(report("replica-killed".into(), outcome));
    }
    if wanted("redis-restarted") {
        let outcome = scenario(
            plan("redis-restarted"),
            Duration::from_secs(90),
            |cluster| Box::pin(redis_restart::run(cluster)),
        )
        .await;
        results.push(report("redis-restarted".into(), outcome));
    }
    results
}

/// The namespace mode: the network, then `--runs` runs of the four
/// scenarios, each on a fresh cluster; the network is deleted at the end,
/// on an error or on ctrl-c.
fn run_netns(
    options: &Options,
    program: &ReplicaProgram,
    dir: &Path,
    suite: &Path,
) -> Result<(), String> {
    let network = netns::Network::create(&ha::HOSTS)?;
    // This process is the client host: its sockets (and the conformance
    // suite it starts) live in that namespace from here on.
    network.enter("client")?;
    let runtime = runtime()?;
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        tokio::select! {
            results = ha_scenarios(options, &network, program, dir, suite) => Ok(results),
            _ = tokio::signal::ctrl_c() => Err("interrupted; every process started was killed".to_owned()),
        }
    });
    drop(runtime);
    drop(network);
    let results = outcome?;
    let summary: String = results
        .iter()
        .map(|(name, r)| match r {
            Ok(detail) => format!("pass: {name}: {detail}\n"),
            Err(error) => format!("FAIL: {name}: {error}\n"),
        })
        .collect();
    let file = dir.join("netns-summary.txt");
    let _ = std::fs::write(
        &file,
        format!("{summary}total {:.0} s\n", started.elapsed().as_secs_f64()),
    );
    summarize(results, started, dir)
}

async fn ha_scenarios(
    options: &Options,
    network: &netns::Network,
    program: &ReplicaProgram,
    dir: &Path,
    suite: &Path,
) -> Vec<(String, Result<String, String>)> {
    const NAMES: [&str; 4] = [
        "redis-failover",
        "redis-latency",
        "replica-cut-from-redis",
        "stream-replica-cut-off",
    ];
    let mut results = Vec::new();
    for run in 1..=options.runs {
        for name in NAMES {
            if !options
                .only
                .as_deref()
                .is_none_or(|only| name.contains(only))
            {
                continue;
            }
            let label = format!("{name} (run {run} of {})", options.runs);
            let out = dir.join(format!("{name}-{run}"));
            let timeout = if name == "redis-latency" {
                Duration::from_secs(600)
            } else {
                Duration::from_secs(120)
            };
            let started = Instant::now();
            let outcome = ha_scenario(network, program, suite, &out, name, timeout).await;
            let outcome = outcome
                .map(|detail| format!("{detail} [{:.0} s]", started.elapsed().as_secs_f64()));
            results.push(report(label, outcome));
        }
    }
    results
}

/// Starts a cluster on `network`, runs scenario `name` within `timeout`,
/// stops the cluster and heals the wire.
async fn ha_scenario(
    network: &netns::Network,
    program: &ReplicaProgram,
    suite: &Path,
    dir: &Path,
    name: &str,
    timeout: Duration,
) -> Result<String, String> {
    network.wire.heal();
    let mut cluster = ha::HaCluster::start(network, program, dir).await?;
    let body = async {
        match name {
            "redis-failover" => ha_faults::redis_failover(&mut cluster).await,
            "redis-latency" => ha_faults::redis_latency(&mut cluster, network, suite, dir).await,
            "replica-cut-from-redis" => {
                ha_faults::replica_cut_from_redis(&mut cluster, network).await
            }
            _ => ha_faults::stream_replica_cut_off(&mut cluster, network).await,
        }
    };
    let outcome = match tokio::time::timeout(timeout, body).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("did not finish within {} s", timeout.as_secs())),
    };
    network.wire.heal();
    let exited = cluster.exited();
    settle(outcome, exited, cluster.stop().await)
}

type Boxed<'a> = std::pin::Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Starts a cluster, runs `body` on it within `timeout`, and stops it.
async fn scenario(
    plan: Plan<'_>,
    timeout: Duration,
    body: impl for<'c> FnOnce(&'c mut Cluster) -> Boxed<'c>,
) -> Result<String, String> {
    let mut cluster = Cluster::start(plan).await?;
    let outcome = match tokio::time::timeout(timeout, body(&mut cluster)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("did not finish within {} s", timeout.as_secs())),
    };
    let exited = cluster.exited();
    settle(outcome, exited, cluster.stop().await)
}

/// A scenario's outcome with what else went wrong: a replica that died by
/// itself (worth knowing whatever the outcome), a cluster that would not
/// stop.
fn settle(
    outcome: Result<String, String>,
    exited: Option<String>,
    stopped: Result<(), String>,
) -> Result<String, String> {
    let outcome = match (outcome, exited) {
        (Err(e), Some(exited)) => Err(format!("{e}\n  also: {exited}")),
        (outcome, _) => outcome,
    };
    match (outcome, stopped) {
        (Ok(detail), Err(e)) => Err(format!("{detail}; but stopping the cluster failed: {e}")),
        (outcome, _) => outcome,
    }
}

fn report(name: String, outcome: Result<String, String>) -> (String, Result<String, String>) {
    match &outcome {
        Ok(detail) => eprintln!("pass: {name}: {detail}"),
        Err(error) => eprintln!("FAIL: {name}: {error}"),
    }
    (name, outcome)
}
