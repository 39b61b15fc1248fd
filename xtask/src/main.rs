//! Project automation. Run `cargo xtask help` for the list of tasks.

mod bench;
mod cluster;
mod conformance;
mod guide;
mod layers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::{env, fs, io};

const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sync-spec") => sync_spec(args.get(1).map(PathBuf::from)),
        Some("bench") => bench::build_and_run(&workspace_root(), &args[1..]),
        Some("bench-run") => bench::run(&workspace_root(), &args[1..]),
        Some("cluster") => cluster::run(&workspace_root(), &args[1..]),
        Some("conformance-judge") => conformance::run_cli(&args[1..]),
        Some("guide") => guide::run(&workspace_root(), &args[1..]),
        Some("layers") => layers::run(&workspace_root(), &args[1..]),
        Some("help") | None => {
            eprintln!(
                "cargo xtask <task>\n\n\
                 tasks:\n  \
                 sync-spec [DIR]  copy the official schemas and examples from DIR\n                   \
                 (default ../shared/mcp-spec) into crates/mcp-types/tests/spec\n  \
                 bench [--quick] [--no-write] [--only TEXT] [--skip-rmcp]\n                   \
                 measure the MCP echo server against raw tokio/hyper echoes\n                   \
                 and rmcp's (stdio, HTTP, idle sessions and GET streams) and\n                   \
                 write the tables to docs/benchmarks.md; --quick runs every\n                   \
                 row briefly (a smoke test without rmcp, nothing judged or\n                   \
                 written), --no-write only prints, --only TEXT runs the rows\n                   \
                 whose name holds TEXT (never written), --skip-rmcp leaves\n                   \
                 rmcp (built from crates.io) out\n  \
                 cluster [--only TEXT] [--no-redis] [--debug] [--netns [--runs N]]\n                   \
                 three everything-server replicas on redis-server behind\n                   \
                 haproxy (both installed with apt): the conformance suites\n                   \
                 through the balancer, a replica killed under an SSE stream,\n                   \
                 redis restarted under load; --only TEXT runs the scenarios\n                   \
                 whose name holds TEXT, --no-redis starts the replicas\n                   \
                 without shared stores (to see what needs them), --debug\n                   \
                 runs the debug build; --netns puts each replica, haproxy\n                   \
                 and each Redis node (with redis-sentinel) in a network\n                   \
                 namespace of its own and runs the fault scenarios (Redis\n                   \
                 failover, latency and loss, partitions) --runs N times\n                   \
                 (default 3; needs root, iproute2 and /dev/net/tun)\n  \
                 conformance-judge server|client LIST [REVISION=]DIR...\n                   \
                 judge the conformance suite's results in each DIR (its -o\n                   \
                 folder) from their checks.json: fails on a failed or warned\n                   \
                 check, a scenario without a real check, a check skipped as\n                   \
                 not declared, a scenario of LIST (`conformance list --LEG`\n                   \
                 output) without results, or one tagged REVISION missing\n                   \
                 from a REVISION=DIR run\n  \
                 guide [--only TEXT]\n                   \
                 build and run each guide chapter's Rust blocks with exactly\n                   \
                 the dependency list the chapter shows (a scratch crate per\n                   \
                 chapter under target/guide-check); --only TEXT checks the\n                   \
                 chapters whose file name holds TEXT\n  \
                 layers [--crate NAME]\n                   \
                 the file-level import graph of each crate: prints every\n                   \
                 circle (files that import each other, directly or through\n                   \
                 others) with the names that tie it; fails on a circle in\n                   \
                 mcp-core, mcp-tasks, mcp-client, mcp-server,\n                   \
                 mcp-testing or mcp-cli"
            );
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`; run `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Vendors `schema.json` (and `examples/`, where a revision has them) of every
/// revision, so `cargo test` on a fresh clone needs nothing outside the repo.
fn sync_spec(source: Option<PathBuf>) -> Result<(), String> {
    let root = workspace_root();
    let source = source.unwrap_or_else(|| root.join("../shared/mcp-spec"));
    let target = root.join("crates/mcp-types/tests/spec");
    for revision in REVISIONS {
        let from = source.join(revision);
        let to = target.join(revision);
        if !from.join("schema.json").is_file() {
            return Err(format!(
                "{} has no schema.json; pass the folder that holds one folder per revision",
                from.display()
            ));
        }
        if to.exists() {
            fs::remove_dir_all(&to).map_err(|e| format!("cannot clear {}: {e}", to.display()))?;
        }
        let copied =
            copy_tree(&from, &to).map_err(|e| format!("copying {}: {e}", from.display()))?;
        eprintln!("{revision}: {copied} files");
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> io::Result<usize> {
    fs::create_dir_all(to)?;
    let mut copied = 0;
    let mut entries: Vec<_> = fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copied += copy_tree(&path, &dest)?;
        } else if path.extension().is_some_and(|ext| ext == "json") {
            fs::copy(&path, &dest)?;
            copied += 1;
        }
    }
    Ok(copied)
}
