//! A redis-server of a test's own: on a free 127.0.0.1 port, in a
//! temporary directory, persisting nothing, stopped by its PID when
//! dropped. Shared by the crates' tests that need Redis (included by path).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server.
pub(crate) struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one; panics with what to install when redis-server is missing.
    pub(crate) fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Self::start_on(port)
    }

    /// Starts one on `port` (to restart a stopped one where its clients
    /// reconnect).
    #[allow(dead_code)]
    pub(crate) fn start_on(port: u16) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args([
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "could not start redis-server ({e}); install it: apt-get install redis-server"
                )
            });
        let server = Self { child, port, dir };
        server.wait_until_listening();
        server
    }

    fn wait_until_listening(&self) {
        wait_for_port(self.port, "redis-server");
    }

    /// Its URL.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// Waits (10 s at most) until `program` listens on 127.0.0.1:`port`.
pub(crate) fn wait_for_port(port: u16, program: &str) {
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
