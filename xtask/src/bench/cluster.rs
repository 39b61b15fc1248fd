//! Rows across replicas (issue 13): the HTTP C=16 echo of both eras through
//! HAProxy, to one in-memory replica (what the balancer costs), and to one
//! and three replicas keeping their state in redis-server (what the shared
//! stores cost), each compared with the in-memory single replica of the
//! main table, measured in the same run.
//!
//! The cluster is the one `cargo xtask cluster` starts
//! ([`crate::cluster::topology`]), with `mcp-bench-echo-server` as the
//! replica; the load is the main table's HTTP load generator. The rows are
//! skipped, with the reason printed, when redis-server or haproxy is
//! missing.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::http::{Client, load};
use super::report::Row;
use super::{Budget, Case, Kind, Programs, child};
use crate::cluster::topology::{Cluster, Plan, ReplicaProgram};

/// Where the calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    replicas: usize,
    redis: bool,
}

/// The layouts measured, all behind HAProxy.
const LAYOUTS: [Layout; 3] = [
    Layout {
        replicas: 1,
        redis: false,
    },
    Layout {
        replicas: 1,
        redis: true,
    },
    Layout {
        replicas: 3,
        redis: true,
    },
];

/// The shape of every row: the main table's HTTP C=16 echo.
const PAYLOAD: usize = 64;
const PARALLEL: usize = 16;

/// One measured row across replicas.
pub(super) struct ClusterRow {
    layout: Layout,
    /// The load and the replicas' CPU and (highest) peak RSS.
    row: Row,
    /// haproxy's and redis-server's CPU per 1,000 calls, in ms.
    support_cpu_ms_per_1000: f64,
}

/// What the section across replicas has to show.
pub(super) enum Across {
    /// `--only` left none of its rows.
    NotAsked,
    /// The tools are missing: why.
    Skipped(String),
    Rows(Vec<ClusterRow>),
}

/// Measures the rows `only` (the `--only` text) leaves, `budget.rounds`
/// times each, in rounds like the main table.
pub(super) async fn run(
    programs: &Programs,
    budget: Budget,
    only: Option<&str>,
) -> Result<Across, String> {
    let cases = match cases() {
        Ok(cases) => cases,
        Err(reason) => {
            eprintln!("skipping the rows across replicas: {reason}");
            return Ok(Across::Skipped(reason));
        }
    };
    let cases: Vec<(Kind, Layout)> = cases
        .into_iter()
        .filter(|(kind, layout)| only.is_none_or(|text| describe(*kind, *layout).contains(text)))
        .collect();
    if cases.is_empty() {
        return Ok(Across::NotAsked);
    }
    let dir = programs
        .bin_dir
        .parent()
        .unwrap_or(&programs.bin_dir)
        .join("bench-cluster");
    let mut rounds: Vec<Vec<ClusterRow>> = cases.iter().map(|_| Vec::new()).collect();
    for round in 1..=budget.rounds {
        for (index, ((kind, layout), measured)) in cases.iter().zip(&mut rounds).enumerate() {
            let row_dir = dir.join(format!("row-{index}"));
            let _ = std::fs::remove_dir_all(&row_dir);
            let row = measure(programs, *kind, *layout, budget, &row_dir)
                .await
                .map_err(|e| format!("{}: {e}", describe(*kind, *layout)))?;
            eprintln!("round {round}/{}: {}", budget.rounds, progress_line(&row));
            measured.push(row);
        }
    }
    Ok(Across::Rows(
        rounds.into_iter().filter_map(median).collect(),
    ))
}

/// The section for the report (nothing when `--only` left no row).
pub(super) fn render_section(across: &Across, main: &[Row]) -> String {
    match across {
        Across::NotAsked => String::new(),
        Across::Skipped(reason) => render(&[], main, Some(reason)),
        Across::Rows(rows) => render(rows, main, None),
    }
}

/// The cases measured, or why none can be.
fn cases() -> Result<Vec<(Kind, Layout)>, String> {
    if let Some(missing) = crate::cluster::missing_tools() {
        return Err(missing);
    }
    Ok([Kind::HttpSession, Kind::HttpStateless]
        .into_iter()
        .flat_map(|kind| LAYOUTS.map(|layout| (kind, layout)))
        .collect())
}

/// `HTTP 2025-11-25 mcp-server 64 B C=16, 3 replicas on redis via haproxy`.
fn describe(kind: Kind, layout: Layout) -> String {
    format!(
        "{}, {}",
        super::report::describe(case(kind)),
        layout_name(layout)
    )
}

fn layout_name(layout: Layout) -> String {
    let replicas = if layout.replicas == 1 {
        "1 replica".to_owned()
    } else {
        format!("{} replicas", layout.replicas)
    };
    let store = if layout.redis {
        "on redis"
    } else {
        "in memory"
    };
    format!("{replicas} {store} via haproxy")
}

fn case(kind: Kind) -> Case {
    Case {
        kind,
        payload: PAYLOAD,
        parallel: PARALLEL,
    }
}

/// Measures one row: starts the cluster, loads it, stops it.
async fn measure(
    programs: &Programs,
    kind: Kind,
    layout: Layout,
    budget: Budget,
    dir: &Path,
) -> Result<ClusterRow, String> {
    let program = ReplicaProgram {
        program: programs.path("mcp-bench-echo-server"),
        args: vec!["--http".into()],
    };
    let cluster = Cluster::start(Plan {
        dir: dir.to_path_buf(),
        program: &program,
        replicas: layout.replicas,
        redis: layout.redis,
    })
    .await?;
    let measured = load_cluster(&cluster, kind, layout, budget).await;
    let stopped = cluster.stop().await;
    let row = measured?;
    stopped?;
    Ok(row)
}

async fn load_cluster(
    cluster: &Cluster,
    kind: Kind,
    layout: Layout,
    budget: Budget,
) -> Result<ClusterRow, String> {
    let case = case(kind);
    let mut clients = Vec::with_capacity(PARALLEL);
    for _ in 0..PARALLEL {
        let mut client = Client::open(cluster.address, case).await?;
        client.probe().await?;
        clients.push(client);
    }
    if !budget.warmup.is_zero() {
        let (warm, _) = load(clients, budget.warmup, budget.max_calls).await?;
        clients = warm;
    }
    let cpu = |pids: &[u32]| -> Result<Duration, String> {
        pids.iter().map(|pid| child::cpu_time(*pid)).sum()
    };
    let replicas = cluster.replica_pids();
    let support = cluster.support_pids();
    let (replicas_before, support_before) = (cpu(&replicas)?, cpu(&support)?);
    let own_before = child::cpu_time(std::process::id())?;
    let (clients, sample) = load(clients, budget.measure, budget.max_calls).await?;
    let replicas_cpu = cpu(&replicas)?.saturating_sub(replicas_before);
    let support_cpu = cpu(&support)?.saturating_sub(support_before);
    let own_cpu = child::cpu_time(std::process::id())?.saturating_sub(own_before);
    let mut peak_rss_kib = 0;
    for pid in &replicas {
        peak_rss_kib = peak_rss_kib.max(child::peak_rss_kib(*pid)?);
    }
    for client in clients {
        client.close().await;
    }
    let calls = sample.calls.max(1) as f64;
    let support_cpu_ms_per_1000 = support_cpu.as_secs_f64() * 1e6 / calls;
    Ok(ClusterRow {
        layout,
        row: Row::new(case, sample, replicas_cpu, own_cpu, peak_rss_kib),
        support_cpu_ms_per_1000,
    })
}

/// One row from the rounds of a case: the medians (see [`Row::median`]).
fn median(rounds: Vec<ClusterRow>) -> Option<ClusterRow> {
    let layout = rounds.first()?.layout;
    let mut support: Vec<f64> = rounds.iter().map(|r| r.support_cpu_ms_per_1000).collect();
    support.sort_by(f64::total_cmp);
    let support_cpu_ms_per_1000 = support[support.len() / 2];
    let row = Row::median(rounds.into_iter().map(|r| r.row).collect())?;
    Some(ClusterRow {
        layout,
        row,
        support_cpu_ms_per_1000,
    })
}

fn progress_line(row: &ClusterRow) -> String {
    format!(
        "{}, {}; haproxy + redis CPU {:.1} ms/1000",
        super::report::progress_line(&row.row),
        layout_name(row.layout),
        row.support_cpu_ms_per_1000
    )
}

/// The section under the main table: each row against the in-memory
/// single replica of the same era in `main` (the main table's rows).
fn render(rows: &[ClusterRow], main: &[Row], skipped: Option<&str>) -> String {
    let mut out = String::from(
        "\nAcross replicas (issue 13): the same echo through HAProxy (round-robin, no \
         stickiness) to replicas of `mcp-bench-echo-server`, against the in-memory single \
         replica above. Replica CPU is the sum over the replicas; haproxy + redis CPU is \
         the rest of the server side.\n",
    );
    if let Some(reason) = skipped {
        let _ = writeln!(out, "\nSkipped: {reason}.");
        return out;
    }
    out.push_str(
        "\n| era | replicas | calls/s | p50 ms | p99 ms | replica CPU ms / 1000 calls \
         | haproxy + redis CPU ms / 1000 calls | peak RSS MiB (largest replica) \
         | calls/s vs 1 in-memory | p50 vs 1 in-memory |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let alone = main.iter().find(|r| r.case() == row.row.case());
        let versus = |figure: fn(&Row) -> f64| {
            alone
                .map(|alone| figure(&row.row) / figure(alone))
                .filter(|r| r.is_finite())
                .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"))
        };
        let era = match row.row.case().kind {
            Kind::HttpSession => "2025-11-25 (sessions)",
            _ => "2026-07-28 (stateless)",
        };
        let _ = writeln!(
            out,
            "| {era} | {} | {:.0} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} | {} | {} |",
            layout_name(row.layout),
            row.row.calls_per_second(),
            row.row.p50_ms(),
            row.row.p99_ms(),
            row.row.cpu_ms_per_1000(),
            row.support_cpu_ms_per_1000,
            row.row.peak_rss_kib() as f64 / 1024.0,
            versus(Row::calls_per_second),
            versus(Row::p50_ms),
        );
    }
    out
}
