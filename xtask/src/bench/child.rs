//! The server under test as a child process, and what `/proc` says about it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

use super::PEER_TIMEOUT;

/// Linux reports `utime`/`stime` in `USER_HZ` ticks, 100 per second on every
/// architecture Rust targets (the kernel ABI fixes it, whatever `HZ` is).
const TICKS_PER_SECOND: u64 = 100;

/// A running server. Dropping it kills the process (`kill_on_drop`), so an
/// early error never leaks one.
pub(super) struct Server {
    pub(super) child: Child,
    pid: u32,
}

impl Server {
    /// Starts `program args` with piped stdin and stdout; stderr is
    /// inherited, so a failing server says why.
    pub(super) fn spawn(program: &Path, args: &[&str]) -> Result<Self, String> {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {}: {e}; build it with `cargo xtask bench`",
                    program.display()
                )
            })?;
        let pid = child
            .id()
            .ok_or_else(|| format!("{} exited at once", program.display()))?;
        Ok(Self { child, pid })
    }

    /// Reads the first stdout line, the address an HTTP server listens on.
    pub(super) async fn read_address(&mut self) -> Result<std::net::SocketAddr, String> {
        let stdout: ChildStdout = self
            .child
            .stdout
            .take()
            .ok_or("the server's stdout is not piped")?;
        let mut line = String::new();
        tokio::time::timeout(PEER_TIMEOUT, BufReader::new(stdout).read_line(&mut line))
            .await
            .map_err(|_| "the server printed no address in 30 s".to_owned())?
            .map_err(|e| format!("reading the server's address: {e}"))?;
        line.trim()
            .parse()
            .map_err(|e| format!("the server printed `{}`, not an address: {e}", line.trim()))
    }

    /// User + system CPU time the process and its children (a gateway's
    /// upstream server) have used so far: its own, that of the children it
    /// has reaped (`cutime` + `cstime`), and that of each child still
    /// listed. A child's time thus moves from the last term to the second
    /// when it exits and is reaped, and is counted once either way.
    pub(super) fn cpu_time(&self) -> Result<Duration, String> {
        let (own, reaped) = cpu_times(self.pid)?;
        let mut total = own + reaped;
        for pid in children(self.pid) {
            // A child reaped in between has no stat left to read (its time
            // is in `reaped` from then on).
            total += cpu_time(pid).unwrap_or_default();
        }
        Ok(total)
    }

    /// The peak resident set size (`VmHWM`) in KiB of the process plus
    /// that of each live child: what a deployment of it holds at most.
    pub(super) fn peak_rss_kib(&self) -> Result<u64, String> {
        let mut total = peak_rss_kib(self.pid)?;
        for pid in children(self.pid) {
            total += peak_rss_kib(pid).unwrap_or(0);
        }
        Ok(total)
    }

    /// The resident set size now (`VmRSS`) in KiB.
    pub(super) fn rss_kib(&self) -> Result<u64, String> {
        status_kib(self.pid, "VmRSS:")
    }

    /// How many sockets the process has open (its entries of
    /// `/proc/<pid>/fd` that are sockets): tells that the connections a
    /// scale row holds are still open on the server's side.
    pub(super) fn open_sockets(&self) -> Result<usize, String> {
        let dir = format!("/proc/{}/fd", self.pid);
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {dir}: {e}"))?;
        Ok(entries
            .filter_map(Result::ok)
            .filter_map(|entry| std::fs::read_link(entry.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count())
    }

    /// Ends the process: waits up to 5 s for it to exit by itself (a stdio
    /// server whose stdin is closed), then kills it.
    pub(super) async fn stop(mut self) -> Result<(), String> {
        drop(self.child.stdin.take());
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.child
                .kill()
                .await
                .map_err(|e| format!("cannot kill the server: {e}"))?;
        }
        Ok(())
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s: for a
    /// process with children of its own (`mcp gateway` stops and reaps its
    /// upstream on SIGTERM; SIGKILL would leave that child to init).
    pub(super) async fn terminate(mut self) -> Result<(), String> {
        let pid = libc::pid_t::try_from(self.pid).map_err(|e| format!("pid {}: {e}", self.pid))?;
        // SAFETY: kill(2) on the child this Server started and has not
        // reaped (`child` still owns it), so the pid names no other process.
        #[allow(unsafe_code)]
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
        if sent == 0
            && tokio::time::timeout(Duration::from_secs(5), self.child.wait())
                .await
                .is_ok()
        {
            return Ok(());
        }
        self.kill().await
    }

    /// Kills the process at once (an HTTP server, which never exits alone).
    pub(super) async fn kill(mut self) -> Result<(), String> {
        self.child
            .kill()
            .await
            .map_err(|e| format!("cannot kill the server: {e}"))
    }
}

/// User + system CPU time process `pid` has used so far; the benchmark's
/// own (`std::process::id()`) tells what the load generator costs.
pub(super) fn cpu_time(pid: u32) -> Result<Duration, String> {
    cpu_times(pid).map(|(own, _)| own)
}

/// Process `pid`'s own CPU time and that of the children it has reaped
/// ([`parse_cpu_times`] of its `/proc/<pid>/stat`).
fn cpu_times(pid: u32) -> Result<(Duration, Duration), String> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    parse_cpu_times(&stat).ok_or_else(|| format!("{path} has no CPU times: {stat}"))
}

/// The children of process `pid`, from the `children` file of each of its
/// threads (`/proc/<pid>/task/<tid>/children`); none where the kernel does
/// not list them.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The peak resident set size (`VmHWM`) of process `pid` in KiB.
pub(super) fn peak_rss_kib(pid: u32) -> Result<u64, String> {
    status_kib(pid, "VmHWM:")
}

/// A `kB` figure of `/proc/<pid>/status`, by its label (`VmHWM:`, `VmRSS:`).
fn status_kib(pid: u32, label: &str) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    parse_status_kib(&status, label).ok_or_else(|| format!("{path} has no {label}"))
}

/// Raises this process's soft limit of open files (`RLIMIT_NOFILE`) to at
/// least `wanted`, within its hard limit; the servers it starts inherit it.
/// Fails, naming the limit to set, when the hard limit is lower.
pub(super) fn raise_open_files_limit(wanted: u64) -> Result<(), String> {
    let (soft, hard) = open_files_limit()?;
    if soft >= wanted {
        return Ok(());
    }
    if hard < wanted {
        return Err(format!(
            "the scale rows hold {wanted} files open in the load generator and in the \
             server, but the hard limit of open files is {hard}; raise it (`ulimit -Hn \
             {wanted}` as root, or `LimitNOFILE=` for a service) and run again"
        ));
    }
    set_open_files_limit(wanted, hard)
}

#[allow(unsafe_code)]
fn open_files_limit() -> Result<(u64, u64), String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live,
    // properly aligned local.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(format!(
            "cannot read the limit of open files: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok((limit.rlim_cur, limit.rlim_max))
}

#[allow(unsafe_code)]
fn set_open_files_limit(soft: u64, hard: u64) -> Result<(), String> {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads one `rlimit` through a pointer to a live local.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(format!(
            "cannot raise the limit of open files to {soft}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// A `stat` line's `utime + stime` (the process's own CPU time) and
/// `cutime + cstime` (that of the children it has waited for): fields 14
/// to 17 of `/proc/<pid>/stat`; the command name (field 2) may hold
/// spaces, so count from its closing `)`.
fn parse_cpu_times(stat: &str) -> Option<(Duration, Duration)> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut ticks = after_name
        .split_whitespace()
        .skip(11)
        .map(|field| field.parse::<u64>().ok());
    let mut next = || ticks.next().flatten();
    let own = next()? + next()?;
    let reaped = next()? + next()?;
    let time = |ticks: u64| Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND);
    Some((time(own), time(reaped)))
}

fn parse_status_kib(status: &str, label: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(label))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime() {
        let stat = "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 1 0";
        assert_eq!(
            parse_cpu_times(stat).map(|(own, _)| own),
            Some(Duration::from_millis(2810))
        );
    }

    #[test]
    fn reaped_children_time_is_cutime_plus_cstime() {
        let stat = "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 7 5 20 0 1 0";
        assert_eq!(
            parse_cpu_times(stat),
            Some((Duration::from_millis(2810), Duration::from_millis(120)))
        );
    }

    #[test]
    fn peak_rss_is_vm_hwm() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    4321 kB\nVmRSS:\t 4000 kB\n";
        assert_eq!(parse_status_kib(status, "VmHWM:"), Some(4321));
        assert_eq!(parse_status_kib(status, "VmRSS:"), Some(4000));
        assert_eq!(parse_status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn the_open_files_limit_is_raised_within_the_hard_limit() {
        let (soft, hard) = open_files_limit().expect("getrlimit");
        assert!(soft <= hard);
        raise_open_files_limit(soft).expect("nothing to raise");
        if hard != libc::RLIM_INFINITY {
            let error = raise_open_files_limit(hard + 1).expect_err("over the hard limit");
            assert!(error.contains("ulimit -Hn"), "{error}");
        }
    }

    #[test]
    fn a_child_is_listed_under_its_parent() {
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep starts");
        let listed = children(std::process::id()).contains(&sleeper.id());
        sleeper.kill().expect("killed");
        sleeper.wait().expect("reaped");
        assert!(listed, "the child is not listed");
    }

    #[test]
    fn this_process_has_stats() {
        let own = std::process::id();
        let stat = std::fs::read_to_string(format!("/proc/{own}/stat")).expect("stat");
        let status = std::fs::read_to_string(format!("/proc/{own}/status")).expect("status");
        assert!(parse_cpu_times(&stat).is_some());
        assert!(parse_status_kib(&status, "VmHWM:").is_some_and(|kib| kib > 0));
    }
}
