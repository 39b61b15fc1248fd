//! The Redis stores behind Redis Sentinel (`redis+sentinel://`): a
//! primary, a replica and one sentinel of the test's own on 127.0.0.1
//! (Debian's `redis-server` and `redis-sentinel`). The stores meet their
//! contracts there, and when the primary dies they fail with a typed error
//! within their timeout, then follow the sentinel to the promoted replica
//! without being rebuilt: the session saved before is still there and the
//! bus's subscription carries messages again.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_transport::store::redis::{RedisBus, RedisConfig, RedisSessionStore};
use mcp_transport::store::{MessageBus, SessionStore};
use mcp_types::{ClientCapabilities, Implementation, InitializeRequestParams, SessionRecord};

#[path = "support/redis_server.rs"]
mod redis_server;
#[path = "support/shared_contracts.rs"]
mod shared_contracts;
use redis_server::RedisServer;

/// The service name the sentinel watches.
const SERVICE: &str = "contract";

/// Primary, replica and sentinel.
struct Deployment {
    primary: Option<RedisServer>,
    _replica: RedisServer,
    sentinel: RedisServer,
}

impl Deployment {
    fn start() -> Self {
        let primary = RedisServer::start();
        let replica = RedisServer::start_replica_of(&primary);
        let sentinel = RedisServer::start_sentinel_of(&primary, SERVICE);
        Self {
            primary: Some(primary),
            _replica: replica,
            sentinel,
        }
    }

    fn url(&self) -> String {
        format!(
            "redis+sentinel://127.0.0.1:{}/{SERVICE}",
            self.sentinel.port()
        )
    }

    /// Waits until the replica has everything the primary has written
    /// (`WAIT 1`), so that a failover loses nothing of it.
    fn replicated(&self) {
        let primary = self.primary.as_ref().expect("the primary runs");
        let out = Command::new("redis-cli")
            .args(["-p", &primary.port().to_string(), "WAIT", "1", "5000"])
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
        shared_contracts::is_store_failure(&error, "session"),
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
