//! The Redis stores behind Redis Sentinel (`redis+sentinel://`): a
//! primary, a replica and one sentinel of the test's own on 127.0.0.1
//! (Debian's `redis-server` and `redis-sentinel`). The stores meet their
//! contracts there, and when the primary dies they fail with a typed error
//! within their timeout, then follow the sentinel to the promoted replica
//! without being rebuilt: the session saved before is still there and the
//! bus's subscription carries messages again.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_transport::store::redis::{RedisBus, RedisConfig, RedisSessionStore};
use mcp_transport::store::{MessageBus, SessionStore};
use mcp_types::{ClientCapabilities, Implementation, InitializeRequestParams, SessionRecord};

#[path = "support/redis_server.rs"]
#[allow(dead_code)]
mod redis_server;
#[path = "support/shared_contracts.rs"]
mod shared_contracts;

/// The service name the sentinel watches.
const SERVICE: &str = "contract";

/// A child process killed (by its PID) when dropped.
struct Node {
    child: Child,
    port: u16,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn start(program: &str, args: &[String], package: &str) -> Node {
    let port = args
        .iter()
        .skip_while(|a| *a != "--port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("a --port argument");
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("could not start {program} ({e}); install it: apt-get install {package}")
        });
    let node = Node { child, port };
    redis_server::wait_for_port(port, program);
    node
}

fn redis(dir: &std::path::Path, port: u16, replica_of: Option<u16>) -> Node {
    let mut args: Vec<String> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--loglevel",
        "warning",
        "--dir",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.push(dir.display().to_string());
    if let Some(primary) = replica_of {
        args.extend([
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary.to_string(),
        ]);
    }
    start("redis-server", &args, "redis-server")
}

/// Primary, replica, sentinel, and the directory they write in.
struct Deployment {
    primary: Option<Node>,
    _replica: Node,
    sentinel: Node,
    dir: PathBuf,
}

impl Drop for Deployment {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Deployment {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "mcp-sentinel-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let primary = redis(&dir, free_port(), None);
        let replica = redis(&dir, free_port(), Some(primary.port));
        // The sentinel rewrites its configuration file, so it gets one of
        // its own; a second without an answer is a dead primary, and one
        // sentinel is a quorum.
        let config = dir.join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "sentinel monitor {SERVICE} 127.0.0.1 {} 1\n\
                 sentinel down-after-milliseconds {SERVICE} 1000\n\
                 sentinel failover-timeout {SERVICE} 10000\n",
                primary.port
            ),
        )
        .expect("sentinel.conf");
        let port = free_port();
        let args: Vec<String> = vec![
            config.display().to_string(),
            "--port".into(),
            port.to_string(),
            "--bind".into(),
            "127.0.0.1".into(),
            "--loglevel".into(),
            "warning".into(),
        ];
        let sentinel = start("redis-sentinel", &args, "redis-sentinel");
        Self {
            primary: Some(primary),
            _replica: replica,
            sentinel,
            dir,
        }
    }

    fn url(&self) -> String {
        format!(
            "redis+sentinel://127.0.0.1:{}/{SERVICE}",
            self.sentinel.port
        )
    }

    /// Waits until the replica has everything the primary has written
    /// (`WAIT 1`), so that a failover loses nothing of it.
    fn replicated(&self) {
        let primary = self.primary.as_ref().expect("the primary runs");
        let out = Command::new("redis-cli")
            .args(["-p", &primary.port.to_string(), "WAIT", "1", "5000"])
            .output()
            .expect("redis-cli (apt-get install redis-tools)");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1", "WAIT 1");
    }
}

fn config(deployment: &Deployment) -> RedisConfig {
    RedisConfig::new(deployment.url())
        .prefix("sentinel")
        .timeout(Duration::from_millis(500))
}

#[tokio::test]
async fn sentinel_stores_meet_the_contracts() {
    let deployment = Deployment::start();
    shared_contracts::two_connections_meet_the_contracts(config(&deployment)).await;
}

#[tokio::test]
async fn stores_follow_a_failover_without_being_rebuilt() {
    let mut deployment = Deployment::start();
    let sessions = RedisSessionStore::connect(config(&deployment))
        .await
        .expect("connect");
    let listener = RedisBus::connect(Arc::new(config(&deployment)))
        .await
        .expect("connect");
    let publisher = RedisBus::connect(Arc::new(config(&deployment)))
        .await
        .expect("connect");
    let mut incoming = listener.subscribe("topic").await.expect("subscribe");
    let ttl = Duration::from_secs(60);
    let client = InitializeRequestParams::new(
        "2025-11-25",
        ClientCapabilities::default(),
        Implementation::new("sentinel-test", "1"),
    );
    let record = SessionRecord::new("2025-11-25", client);
    sessions
        .save("kept", &record, ttl)
        .await
        .expect("the primary is up");
    deployment.replicated();

    drop(deployment.primary.take());
    let started = Instant::now();
    let error = sessions
        .load("kept", ttl)
        .await
        .expect_err("the primary is gone");
    assert!(
        matches!(
            error,
            mcp_transport::Error::Store {
                store: "session",
                ..
            } | mcp_transport::Error::StoreTimeout {
                store: "session",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "bounded");

    // The sentinel promotes the replica (a second to call the primary
    // dead, then the failover); the stores find it by themselves.
    let loaded = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(loaded) = sessions.load("kept", ttl).await {
                return loaded;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the session store follows the failover");
    assert!(loaded.is_some(), "the session saved before the failover");

    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if publisher
                .publish("topic", Bytes::from_static(b"after"))
                .await
                .is_ok()
            {
                if let Ok(Ok(message)) =
                    tokio::time::timeout(Duration::from_millis(500), incoming.recv()).await
                {
                    assert_eq!(&message[..], b"after");
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the bus subscribes again on the new primary");
}
