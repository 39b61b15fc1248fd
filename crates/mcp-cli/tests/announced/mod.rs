//! What the gateway tests over real processes share: the programs
//! `cargo test --workspace` builds beside this test's `mcp`, and a server
//! child process that says on stderr where it serves.

#![allow(dead_code, reason = "each test file uses its part")]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

pub(crate) const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The stderr lines of a server kept after the one that says where it
/// serves, for a failing test to show.
const KEPT_LINES: usize = 200;

/// The program `cargo test --workspace` built beside this test's `mcp`.
pub(crate) fn built(relative: &str) -> PathBuf {
    let dir = Path::new(MCP).parent().expect("the target directory");
    let path = dir.join(relative);
    assert!(
        path.is_file(),
        "{} is missing: cargo test --workspace builds it; \
         or build it alone with cargo build -p mcp-examples --bins --examples",
        path.display()
    );
    path
}

/// A server this test started, running until stopped or dropped, that
/// says where it serves on a stderr line `<prefix>URL`; its stderr is read
/// until that line, and its last lines after it are kept (see
/// [`log`](Self::log)).
pub(crate) struct Announced {
    child: tokio::process::Child,
    drain: tokio::task::JoinHandle<()>,
    kept: Arc<Mutex<VecDeque<String>>>,
    pub(crate) url: String,
}

impl Announced {
    pub(crate) async fn start(program: &Path, args: &[&str], prefix: &str) -> Self {
        Self::start_with_env(program, args, &[], prefix).await
    }

    /// [`start`](Self::start) with `env` set.
    pub(crate) async fn start_with_env(
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        prefix: &str,
    ) -> Self {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", program.display()));
        let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let mut seen = String::new();
        let find = async {
            while let Some(line) = lines.next_line().await.expect("stderr reads") {
                seen.push_str(&line);
                seen.push('\n');
                if let Some(url) = line.strip_prefix(prefix) {
                    return Some(url.trim().to_owned());
                }
            }
            None
        };
        let url = tokio::time::timeout(Duration::from_secs(60), find)
            .await
            .ok()
            .flatten();
        let Some(url) = url else {
            panic!(
                "{} {args:?} did not say where it serves:\n{seen}",
                program.display()
            );
        };
        // Its log goes on after the line; a full pipe would stall it.
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let keeping = kept.clone();
        let drain = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = keeping.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == KEPT_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        Self {
            child,
            drain,
            kept,
            url,
        }
    }

    /// `mcp gateway ARGS --listen 127.0.0.1:0`.
    pub(crate) async fn gateway(args: &[&str]) -> Self {
        let mut all = vec!["gateway"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--listen", "127.0.0.1:0"]);
        Self::start(Path::new(MCP), &all, "mcp gateway: serving ").await
    }

    /// The last stderr lines it wrote after saying where it serves.
    pub(crate) fn log(&self) -> String {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().map(|line| format!("{line}\n")).collect()
    }

    /// Kills it and waits until it is reaped.
    pub(crate) async fn stop(mut self) {
        let _ = self.child.kill().await;
        self.drain.abort();
    }
}
