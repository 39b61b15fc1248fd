//! A redis-server (or redis-sentinel) of a test's own: on a free 127.0.0.1
//! port, in a temporary directory, persisting nothing, stopped by its PID
//! when dropped. Shared by the crates' tests that need Redis (included by
//! path).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server or redis-sentinel.
pub(crate) struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

#[allow(dead_code, reason = "each test file uses its part")]
impl RedisServer {
    /// Starts one; panics with what to install when redis-server is missing.
    pub(crate) fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Starts one on `port` (to restart a stopped one where its clients
    /// reconnect).
    pub(crate) fn start_on(port: u16) -> Self {
        Self::redis(port, &[])
    }

    /// Starts a replica of `primary`.
    pub(crate) fn start_replica_of(primary: &RedisServer) -> Self {
        let primary = primary.port.to_string();
        Self::redis(free_port(), &["--replicaof", "127.0.0.1", &primary])
    }

    /// Starts a redis-sentinel watching `primary` as `service`, which
    /// calls it down after a second without an answer (one sentinel is a
    /// quorum).
    pub(crate) fn start_sentinel_of(primary: &RedisServer, service: &str) -> Self {
        let port = free_port();
        let dir = directory(port);
        // The sentinel rewrites its configuration file, so it gets one of
        // its own.
        let config = dir.join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "sentinel monitor {service} 127.0.0.1 {} 1\n\
                 sentinel down-after-milliseconds {service} 1000\n\
                 sentinel failover-timeout {service} 10000\n",
                primary.port
            ),
        )
        .expect("sentinel.conf");
        let mut command = Command::new("redis-sentinel");
        command.arg(&config);
        Self::spawn(command, port, dir, "redis-sentinel")
    }

    /// A redis-server on `port` with `extra` arguments.
    fn redis(port: u16, extra: &[&str]) -> Self {
        let dir = directory(port);
        let mut command = Command::new("redis-server");
        command
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(extra);
        Self::spawn(command, port, dir, "redis-server")
    }

    /// Runs `command` (`package` is what to install when it is missing) on
    /// `port` of 127.0.0.1, and waits until it listens.
    fn spawn(mut command: Command, port: u16, dir: PathBuf, package: &str) -> Self {
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--loglevel", "warning"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("could not start {program} ({e}); install it: apt-get install {package}")
            });
        let server = Self { child, port, dir };
        wait_for_port(port, &program);
        server
    }

    /// Its port on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Its URL.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The temporary directory of the process on `port`, created.
fn directory(port: u16) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// Waits (10 s at most) until `program` listens on 127.0.0.1:`port`.
fn wait_for_port(port: u16, program: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{program} did not listen on 127.0.0.1:{port} within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
