//! The cluster's child processes: each one's output goes to its own log
//! file, and each is stopped by its PID: at the end, and on any early
//! return (an error, ctrl-c) because dropping a [`Process`] kills it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// How long a process may take to exit after SIGTERM before it gets SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running child. Dropping it sends SIGKILL (`kill_on_drop`), so an
/// early error or an interrupted run never leaves one behind.
pub(crate) struct Process {
    name: String,
    child: Child,
    pid: u32,
    log: PathBuf,
    /// Killed on purpose by [`kill`](Self::kill) (a scenario's crash).
    killed: bool,
}

impl Process {
    /// Starts `program args` with stdin closed and stdout and stderr
    /// appended to `log`.
    pub(crate) fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        log: &Path,
    ) -> Result<Self, String> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("cannot share {}: {e}", log.display()))?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {name} ({}): {e}", program.display()))?;
        let pid = child
            .id()
            .ok_or_else(|| format!("{name} exited as it started"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            pid,
            log: log.to_path_buf(),
            killed: false,
        })
    }

    /// The name the harness reports this process by.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the process is still running (not exited, or exited but not
    /// yet reaped counts as exited).
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The whole log as written so far.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last lines of the log, for an error message.
    pub(crate) fn log_tail(&self) -> String {
        log_tail(&self.log, 20)
    }

    /// Waits until `parse` finds what it looks for in a line of the log (an
    /// address the process listens on), failing when the process exits
    /// first or `timeout` passes.
    pub(crate) async fn wait_for_log<T>(
        &mut self,
        timeout: Duration,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(found) = text.lines().find_map(&parse) {
                return Ok(found);
            }
            if !self.is_running() {
                return Err(format!(
                    "{} exited before it was ready; its log ({}) ends with:\n{}",
                    self.name,
                    self.log.display(),
                    self.log_tail()
                ));
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "{} was not ready within {} s; its log ({}) ends with:\n{}",
                    self.name,
                    timeout.as_secs(),
                    self.log.display(),
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `address` accepts a connection (the process listens),
    /// failing when the process exits first or `timeout` passes.
    pub(crate) async fn wait_for_listen(
        &mut self,
        address: std::net::SocketAddr,
        timeout: Duration,
    ) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + timeout;
        while tokio::net::TcpStream::connect(address).await.is_err() {
            if !self.is_running() || tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "{} did not listen on {address}; its log ends with:\n{}",
                    self.name,
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Whether [`kill`](Self::kill) ended it.
    pub(crate) fn was_killed(&self) -> bool {
        self.killed
    }

    /// SIGKILL now, then reaps the process: the crash a scenario simulates.
    pub(crate) async fn kill(&mut self) -> Result<(), String> {
        self.killed = true;
        self.child
            .kill()
            .await
            .map_err(|e| format!("cannot kill {} (pid {}): {e}", self.name, self.pid))
    }

    /// SIGTERM, then SIGKILL if it has not exited within a few seconds.
    pub(crate) async fn stop(&mut self) -> Result<(), String> {
        if !self.is_running() {
            return Ok(());
        }
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        if sent.is_ok_and(|s| s.success())
            && tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_ok()
        {
            return Ok(());
        }
        self.kill().await
    }
}

/// The first of `processes` that exited by itself (not by
/// [`Process::kill`]), with its log, for an error message.
pub(crate) fn first_exited<'a>(
    processes: impl IntoIterator<Item = &'a mut Process>,
) -> Option<String> {
    processes.into_iter().find_map(|process| {
        (!process.was_killed() && !process.is_running()).then(|| {
            format!(
                "{} (pid {}) exited; its log ends with:\n{}",
                process.name(),
                process.pid(),
                process.log_tail()
            )
        })
    })
}

/// The last `lines` lines of the file at `path`.
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A port of 127.0.0.1 that was free a moment ago, for a program that
/// cannot be told to pick its own (redis-server, haproxy).
pub(crate) fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot read a bound port: {e}"))
}
