//! The store contracts against the Redis backends, on a redis-server of
//! the test's own (each test two handles on it: two connections, as two
//! server processes would have).

use std::sync::Arc;

use mcp_transport::store::redis::{
    RedisBus, RedisConfig, RedisEventStore, RedisSessionStore, RedisTaskStore,
};
use mcp_transport::store::{MessageBus, SessionStore, contract};

#[path = "support/redis_server.rs"]
mod redis_server;
#[path = "support/shared_contracts.rs"]
mod shared_contracts;
use redis_server::RedisServer;

fn config(redis: &RedisServer) -> RedisConfig {
    RedisConfig::new(redis.url()).prefix("contract")
}

#[tokio::test]
async fn redis_event_store_meets_the_contract() {
    let redis = RedisServer::start();
    let config = config(&redis).max_per_stream(8, 1 << 20);
    let a = RedisEventStore::connect(config.clone())
        .await
        .expect("connect");
    let b = RedisEventStore::connect(config).await.expect("connect");
    contract::event_store(Arc::new(a), Arc::new(b), 8).await;
}

#[tokio::test]
async fn redis_session_store_meets_the_contract() {
    let redis = RedisServer::start();
    let a = RedisSessionStore::connect(config(&redis))
        .await
        .expect("connect");
    let b = RedisSessionStore::connect(config(&redis))
        .await
        .expect("connect");
    contract::session_store(Arc::new(a), Arc::new(b)).await;
}

#[tokio::test]
async fn redis_bus_meets_the_contract() {
    let redis = RedisServer::start();
    let a = RedisBus::connect(Arc::new(config(&redis)))
        .await
        .expect("connect");
    let b = RedisBus::connect(Arc::new(config(&redis)))
        .await
        .expect("connect");
    contract::message_bus(Arc::new(a), Arc::new(b)).await;
}

#[tokio::test]
async fn redis_task_store_meets_the_contract() {
    let redis = RedisServer::start();
    let a = RedisTaskStore::connect(config(&redis))
        .await
        .expect("connect");
    let b = RedisTaskStore::connect(config(&redis))
        .await
        .expect("connect");
    mcp_tasks::contract::task_store(Arc::new(a), Arc::new(b)).await;
}

#[tokio::test]
async fn connect_shares_one_redis_between_handles() {
    let redis = RedisServer::start();
    shared_contracts::two_connections_meet_the_contracts(config(&redis)).await;
}

#[tokio::test]
async fn a_lost_redis_is_a_typed_error_within_the_timeout_and_recovers() {
    let redis = RedisServer::start();
    let config = RedisConfig::new(redis.url())
        .prefix("loss")
        .timeout(std::time::Duration::from_millis(500));
    let sessions = RedisSessionStore::connect(config.clone())
        .await
        .expect("connect");
    let bus = RedisBus::connect(Arc::new(config)).await.expect("connect");
    let ttl = std::time::Duration::from_secs(60);
    assert!(!sessions.touch("x", ttl).await.expect("redis is up"));
    let port = redis.port();
    drop(redis);
    let started = std::time::Instant::now();
    let error = sessions.touch("x", ttl).await.expect_err("redis is down");
    assert!(
        shared_contracts::is_store_failure(&error, "session"),
        "{error:?}"
    );
    assert!(error.to_string().contains("session store"), "{error}");
    assert!(bus.publish("t", bytes::Bytes::new()).await.is_err());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "bounded"
    );

    // The same port again: the connection reconnects by itself.
    let _again = RedisServer::start_on(port);
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while sessions.touch("x", ttl).await.is_err() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the store recovers without being rebuilt");
}

/// Every key and bus channel, at once.
async fn listing(url: &str) -> Vec<String> {
    let client = redis::Client::open(url).expect("a redis url");
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let mut names: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut connection)
        .await
        .expect("keys");
    let channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .query_async(&mut connection)
        .await
        .expect("channels");
    names.extend(channels);
    names
}

#[tokio::test]
async fn a_key_listing_reveals_no_session_id() {
    let redis = RedisServer::start();
    let stores = config(&redis).connect().await.expect("connect");
    let session = "live-session-4f1c";
    let client = mcp_types::InitializeRequestParams::new(
        "2025-11-25",
        mcp_types::ClientCapabilities::default(),
        mcp_types::Implementation::new("listing", "1"),
    );
    let record = mcp_types::SessionRecord::new("2025-11-25", client);
    let ttl = std::time::Duration::from_secs(60);
    stores
        .sessions
        .save(session, &record, ttl)
        .await
        .expect("saved");
    let stream = format!("{session}-get");
    let first = stores
        .events
        .append(&stream, bytes::Bytes::from_static(b"{}"));
    let _listening = stores.bus.subscribe(session).await.expect("subscribed");
    let listed = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        // The event is written behind: wait until its stream is a key.
        loop {
            let names = listing(&redis.url()).await;
            if names.iter().filter(|n| n.starts_with("contract:")).count() >= 3 {
                return names;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the session, its stream and its channel are listed");
    assert!(
        listed.iter().all(|name| !name.contains(session)),
        "a name shows the session id: {listed:?}"
    );
    // Still found under the digests.
    assert!(
        stores
            .sessions
            .load(session, ttl)
            .await
            .expect("loaded")
            .is_some()
    );
    let replay = stores.events.replay_after(&first).await.expect("replayed");
    assert!(replay.is_some(), "replayed");
}

#[tokio::test]
async fn readiness_is_false_while_redis_is_away_and_true_once_it_is_back() {
    use mcp_transport::http::{HttpServerConfig, Readiness, StreamableHttpService};
    let redis = RedisServer::start();
    let stores = RedisConfig::new(redis.url())
        .prefix("ready")
        .timeout(std::time::Duration::from_millis(500))
        .connect()
        .await
        .expect("connect");
    let config = HttpServerConfig::new()
        .shared(stores)
        .readiness_reuse(std::time::Duration::ZERO);
    // Readiness is the service's own: no request reaches this handler.
    struct Refuse;
    impl mcp_core::Handler for Refuse {
        async fn handle_request(
            &self,
            request: mcp_core::IncomingRequest,
            _: mcp_core::RequestContext,
        ) -> Result<mcp_types::RawJson, mcp_types::ErrorObject> {
            Err(mcp_types::ErrorObject::method_not_found(&request.method))
        }
        async fn handle_notification(
            &self,
            _: mcp_core::IncomingNotification,
            _: mcp_core::NotificationContext,
        ) {
        }
    }
    let service = StreamableHttpService::new(config, |opening| {
        opening.serve(Refuse, mcp_core::DispatcherConfig::default())
    });
    let health = service.health();
    assert_eq!(health.readiness().await, Readiness::Ready);
    let port = redis.port();
    drop(redis);
    let started = std::time::Instant::now();
    assert_eq!(health.readiness().await, Readiness::StoresUnreachable);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "answered within the store timeout"
    );
    let _again = RedisServer::start_on(port);
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while health.readiness().await != Readiness::Ready {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("ready again once Redis is back");
}
