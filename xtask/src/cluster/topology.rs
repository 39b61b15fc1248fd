//! Starting the cluster: redis-server, N replicas of a server, and HAProxy
//! in front of them, all on 127.0.0.1, each a [`Process`] stopped by PID.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::process::{Process, first_exited, free_port};

/// How long each process may take to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// The response header HAProxy adds with the name of the replica that
/// answered (`r1`, `r2`, ...), so a scenario can tell where a stream is.
pub(crate) const REPLICA_HEADER: &str = "x-cluster-replica";

/// What runs as a replica.
#[derive(Debug, Clone)]
pub(crate) struct ReplicaProgram {
    /// The server binary.
    pub(crate) program: PathBuf,
    /// Its arguments to serve HTTP on a free port of 127.0.0.1 and print
    /// the address (the cluster adds `--key-file` and `--redis`).
    pub(crate) args: Vec<String>,
}

/// redis-server on a free port, its data in its own directory, with an
/// append-only file so a restart keeps what was stored.
pub(crate) struct Redis {
    process: Process,
    port: u16,
    dir: PathBuf,
}

impl Redis {
    pub(crate) async fn start(dir: &Path) -> Result<Self, String> {
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let port = free_port()?;
        let process = Self::spawn(&dir, port).await?;
        Ok(Self { process, port, dir })
    }

    async fn spawn(dir: &Path, port: u16) -> Result<Process, String> {
        let args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--protected-mode",
            "yes",
            "--daemonize",
            "no",
            "--dir",
            &dir.display().to_string(),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--logfile",
            "",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let mut process = Process::spawn(
            "redis-server",
            Path::new("redis-server"),
            &args,
            &dir.join("redis-server.log"),
        )?;
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            if redis_ping(SocketAddr::from(([127, 0, 0, 1], port)))
                .await
                .is_ok()
            {
                return Ok(process);
            }
            if !process.is_running() || tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "redis-server did not answer PING on 127.0.0.1:{port}; its log ends with:\n{}",
                    process.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `redis://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Stops redis-server with SIGTERM (it writes its append-only file).
    pub(crate) async fn stop(&mut self) -> Result<(), String> {
        self.process.stop().await
    }

    /// Starts redis-server again on the same port and data directory.
    pub(crate) async fn start_again(&mut self) -> Result<(), String> {
        self.process = Self::spawn(&self.dir, self.port).await?;
        Ok(())
    }
}

/// Sends `PING` to the Redis (or sentinel) at `address` and expects `+PONG`.
pub(crate) async fn redis_ping(address: SocketAddr) -> Result<(), String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| e.to_string())?;
        stream
            .write_all(b"PING\r\n")
            .await
            .map_err(|e| e.to_string())?;
        let mut answer = [0u8; 7];
        stream
            .read_exact(&mut answer)
            .await
            .map_err(|e| e.to_string())?;
        if &answer == b"+PONG\r\n" {
            Ok(())
        } else {
            Err(format!("answered {:?}", String::from_utf8_lossy(&answer)))
        }
    };
    tokio::time::timeout(Duration::from_secs(1), exchange)
        .await
        .map_err(|_| "no answer in 1 s".to_owned())?
}

/// One replica of the server.
pub(crate) struct Replica {
    pub(crate) process: Process,
    pub(crate) address: SocketAddr,
}

/// The cluster: the processes and where to reach them.
pub(crate) struct Cluster {
    pub(crate) redis: Option<Redis>,
    pub(crate) replicas: Vec<Replica>,
    balancer: Process,
    /// HAProxy's frontend.
    pub(crate) address: SocketAddr,
}

/// How to start a cluster.
pub(crate) struct Plan<'a> {
    /// Where logs, keys and redis data go.
    pub(crate) dir: PathBuf,
    pub(crate) program: &'a ReplicaProgram,
    pub(crate) replicas: usize,
    /// Whether the replicas keep their state in redis (`--redis URL`) or
    /// each in its own memory.
    pub(crate) redis: bool,
}

impl Cluster {
    /// Starts redis-server (when asked), the replicas, then HAProxy.
    pub(crate) async fn start(plan: Plan<'_>) -> Result<Self, String> {
        std::fs::create_dir_all(&plan.dir)
            .map_err(|e| format!("cannot create {}: {e}", plan.dir.display()))?;
        let redis = if plan.redis {
            Some(Redis::start(&plan.dir).await?)
        } else {
            None
        };
        let key_file = write_key(&plan.dir)?;
        let mut replicas = Vec::with_capacity(plan.replicas);
        for index in 1..=plan.replicas {
            let mut args = plan.program.args.clone();
            args.push("--key-file".into());
            args.push(key_file.display().to_string());
            if let Some(redis) = &redis {
                args.push("--redis".into());
                args.push(redis.url());
            }
            let name = replica_name(index);
            let log = plan.dir.join(format!("{name}.log"));
            let mut process = Process::spawn(&name, &plan.program.program, &args, &log)?;
            let address = process.wait_for_log(READY_TIMEOUT, parse_address).await?;
            replicas.push(Replica { process, address });
        }
        let addresses: Vec<SocketAddr> = replicas.iter().map(|r| r.address).collect();
        let port = free_port()?;
        let config = plan.dir.join("haproxy.cfg");
        let bind = SocketAddr::from(([127, 0, 0, 1], port));
        std::fs::write(&config, haproxy_config(bind, &addresses, None))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let args = vec![
            "-db".to_owned(),
            "-f".to_owned(),
            config.display().to_string(),
        ];
        let mut balancer = Process::spawn(
            "haproxy",
            Path::new("haproxy"),
            &args,
            &plan.dir.join("haproxy.log"),
        )?;
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        balancer.wait_for_listen(address, READY_TIMEOUT).await?;
        Ok(Self {
            redis,
            replicas,
            balancer,
            address,
        })
    }

    /// The replica HAProxy calls `name`.
    pub(crate) fn replica_mut(&mut self, name: &str) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.process.name() == name)
    }

    /// The replicas' process ids.
    pub(crate) fn replica_pids(&self) -> Vec<u32> {
        self.replicas.iter().map(|r| r.process.pid()).collect()
    }

    /// The process ids of haproxy and redis-server (if any).
    pub(crate) fn support_pids(&self) -> Vec<u32> {
        let mut pids = vec![self.balancer.pid()];
        pids.extend(self.redis.as_ref().map(Redis::pid));
        pids
    }

    /// A replica or the balancer that exited by itself, with its log.
    pub(crate) fn exited(&mut self) -> Option<String> {
        let balancer = std::iter::once(&mut self.balancer);
        let replicas = self.replicas.iter_mut().map(|r| &mut r.process);
        first_exited(balancer.chain(replicas))
    }

    /// Stops every process by its PID: the balancer, the replicas, redis.
    pub(crate) async fn stop(mut self) -> Result<(), String> {
        let mut failures = Vec::new();
        if let Err(e) = self.balancer.stop().await {
            failures.push(e);
        }
        for replica in &mut self.replicas {
            if let Err(e) = replica.process.stop().await {
                failures.push(e);
            }
        }
        if let Some(redis) = &mut self.redis {
            if let Err(e) = redis.stop().await {
                failures.push(e);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }
}

/// `r1`, `r2`, ...: the replica's process name and HAProxy server name.
pub(crate) fn replica_name(index: usize) -> String {
    format!("r{index}")
}

/// A fresh random key for sealing `requestState`, shared by the replicas.
pub(crate) fn write_key(dir: &Path) -> Result<PathBuf, String> {
    let mut bytes = [0u8; 32];
    let mut random = std::fs::File::open("/dev/urandom")
        .map_err(|e| format!("cannot open /dev/urandom: {e}"))?;
    std::io::Read::read_exact(&mut random, &mut bytes)
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    let mut hex = String::with_capacity(64);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    let path = dir.join("request-state.key");
    std::fs::write(&path, hex).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The first `IP:PORT` in a log line, with or without `http://` and a
/// path around it (`everything-server: http://127.0.0.1:PORT/mcp`, or the
/// bench server's bare `127.0.0.1:PORT`).
pub(crate) fn parse_address(line: &str) -> Option<SocketAddr> {
    line.split_whitespace().find_map(|token| {
        let token = token.strip_prefix("http://").unwrap_or(token);
        let token = token.split('/').next().unwrap_or(token);
        token.parse().ok()
    })
}

/// What HAProxy checks on each replica besides accepting a connection.
pub(crate) struct HealthCheck<'a> {
    /// The readiness path (`GET`, 200 expected).
    pub(crate) path: &'a str,
    /// HAProxy's admin socket, to read which replicas it takes.
    pub(crate) stats_socket: &'a Path,
    /// Where HAProxy's own error answers are ([`write_balancer_errors`]).
    pub(crate) errors: &'a Path,
}

/// HAProxy's own answers, each an HTTP response whose body is a JSON-RPC
/// error saying what happened, so clients see a clear error: status,
/// reason, message.
const BALANCER_ERRORS: [(u16, &str, &str); 3] = [
    (
        502,
        "Bad Gateway",
        "Bad Gateway: the replica serving this request failed or was taken out of service during it; retry",
    ),
    (
        503,
        "Service Unavailable",
        "Service Unavailable: no replica is ready (their shared stores do not answer); retry shortly",
    ),
    (
        504,
        "Gateway Timeout",
        "Gateway Timeout: the replica did not answer in time; retry",
    ),
];

/// Writes `{status}.http` for each of HAProxy's own errors into `dir`.
pub(crate) fn write_balancer_errors(dir: &Path) -> Result<(), String> {
    for (status, reason, message) in BALANCER_ERRORS {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32603, "message": message}
        });
        let response = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}\n"
        );
        let path = dir.join(format!("{status}.http"));
        std::fs::write(&path, response)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// HAProxy's configuration: one HTTP frontend on `bind`, round-robin
/// over the replicas with no stickiness, and timeouts fit for SSE; with
/// `health`, each replica is taken out while its readiness fails, and the
/// streams it carried are cut so that their clients reconnect elsewhere.
pub(crate) fn haproxy_config(
    bind: SocketAddr,
    replicas: &[SocketAddr],
    health: Option<&HealthCheck<'_>>,
) -> String {
    let global = match health {
        Some(health) => format!(
            "    stats socket {} mode 600 level admin\n",
            health.stats_socket.display()
        ),
        None => String::new(),
    };
    let mut config = format!(
        "# Generated by `cargo xtask cluster`.
global
    maxconn 4096
{global}
defaults
    mode http
    # A request is retried on another replica when its connection is
    # refused (a replica that just died), never once it was sent.
    retries 3
    option redispatch 1
    timeout connect 2s
    timeout http-request 10s
    timeout http-keep-alive 10s
    # An SSE stream is idle between events; the server sends a keep-alive
    # comment every 15 s (HttpServerConfig::keep_alive), so 60 s of silence
    # means a dead peer.
    timeout client 60s
    timeout server 60s

frontend mcp
    bind {bind}
    default_backend replicas

backend replicas
    # Round-robin per request, no stickiness: any replica may get any
    # request of a session.
    balance roundrobin
    http-response set-header {REPLICA_HEADER} %[srv_name]
"
    );
    let check = match health {
        Some(health) => {
            let _ = writeln!(
                config,
                "    # Readiness (GET {path}: 503 while the shared stores do not
    # answer); a replica taken out has its streams cut, so their clients
    # resume elsewhere with Last-Event-ID.
    errorfile 502 {errors}/502.http
    errorfile 503 {errors}/503.http
    errorfile 504 {errors}/504.http
    option httpchk
    http-check send meth GET uri {path}
    http-check expect status 200
    timeout check 1500ms
    default-server on-marked-down shutdown-sessions",
                path = health.path,
                errors = health.errors.display()
            );
            "check inter 500ms fall 2 rise 2"
        }
        None => "check inter 500ms fall 1 rise 2",
    };
    for (index, address) in replicas.iter().enumerate() {
        let _ = writeln!(
            config,
            "    server {} {address} {check}",
            replica_name(index + 1)
        );
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_found_in_either_servers_first_line() {
        let expected: SocketAddr = "127.0.0.1:4242".parse().expect("address");
        assert_eq!(
            parse_address("everything-server: http://127.0.0.1:4242/mcp"),
            Some(expected)
        );
        assert_eq!(parse_address("127.0.0.1:4242"), Some(expected));
        assert_eq!(parse_address("listening soon"), None);
    }

    #[test]
    fn the_balancer_lists_every_replica_round_robin() {
        let replicas: Vec<SocketAddr> = ["127.0.0.1:1001", "127.0.0.1:1002"]
            .iter()
            .map(|a| a.parse().expect("address"))
            .collect();
        let bind = "127.0.0.1:9000".parse().expect("address");
        let config = haproxy_config(bind, &replicas, None);
        assert!(config.contains("bind 127.0.0.1:9000"));
        assert!(config.contains("balance roundrobin"));
        assert!(config.contains("server r1 127.0.0.1:1001 check"));
        assert!(config.contains("server r2 127.0.0.1:1002 check"));
        let directives = config.lines().map(str::trim_start);
        assert!(
            !directives
                .clone()
                .any(|l| l.starts_with("stick") || l.starts_with("cookie")),
            "no stickiness"
        );
        assert!(!config.contains("httpchk"), "a connection check only");
    }

    #[test]
    fn with_a_health_check_the_balancer_asks_readiness_and_cuts_streams() {
        let replicas: Vec<SocketAddr> = vec!["198.18.1.1:3000".parse().expect("address")];
        let bind = "198.18.0.2:8080".parse().expect("address");
        let socket = Path::new("/tmp/haproxy.sock");
        let health = HealthCheck {
            path: "/readyz",
            stats_socket: socket,
            errors: Path::new("/tmp/errors"),
        };
        let config = haproxy_config(bind, &replicas, Some(&health));
        assert!(config.contains("http-check send meth GET uri /readyz"));
        assert!(config.contains("on-marked-down shutdown-sessions"));
        assert!(config.contains("errorfile 503 /tmp/errors/503.http"));
        assert!(config.contains("stats socket /tmp/haproxy.sock"));
        assert!(config.contains("server r1 198.18.1.1:3000 check inter 500ms fall 2 rise 2"));
    }

    #[test]
    fn the_balancers_own_errors_are_json_rpc_errors() {
        let dir = std::env::temp_dir().join(format!("xtask-errors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        write_balancer_errors(&dir).expect("written");
        for status in [502, 503, 504] {
            let text = std::fs::read_to_string(dir.join(format!("{status}.http"))).expect("a file");
            assert!(text.starts_with(&format!("HTTP/1.1 {status} ")), "{text}");
            let body = text.split("\r\n\r\n").nth(1).expect("a body");
            let error: serde_json::Value = serde_json::from_str(body.trim()).expect("JSON");
            assert!(error.pointer("/error/message").is_some());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
