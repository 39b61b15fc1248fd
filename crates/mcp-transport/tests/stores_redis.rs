//! The store contracts against the Redis backends, on a redis-server of
//! the test's own (each test two handles on it: two connections, as two
//! server processes would have), and two services sharing one Redis
//! through a GET stream's takeover when one of them is cut off from it.

use std::sync::Arc;

use mcp_transport::store::redis::{
    RedisBus, RedisConfig, RedisEventStore, RedisSessionStore, RedisTaskStore,
};
use mcp_transport::store::{EventStore, MessageBus, SessionStore, contract};

#[path = "support/raw_http.rs"]
mod raw_http;
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

/// A TCP proxy to Redis that can be cut: from then on the bytes either
/// way are dropped and the connections stay open, as in a network
/// partition. Its tasks end when it is dropped.
struct Partition {
    url: String,
    cut: Arc<std::sync::atomic::AtomicBool>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Partition {
    async fn to(redis: &RedisServer) -> Self {
        use tokio::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        let addr = listener.local_addr().expect("addr");
        let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let port = redis.port();
        let flag = cut.clone();
        let accepting = tokio::spawn(async move {
            // Owned here: aborted with this task.
            let mut pumps = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", port)).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                pumps.spawn(pump(client_read, server_write, flag.clone()));
                pumps.spawn(pump(server_read, client_write, flag.clone()));
            }
        });
        Self {
            url: format!("redis://{addr}/"),
            cut,
            accepting,
        }
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Copies `from` to `to` until either ends; while `cut`, what is read is
/// dropped.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    cut: Arc<std::sync::atomic::AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if !cut.load(std::sync::atomic::Ordering::SeqCst)
            && to.write_all(&buffer[..n]).await.is_err()
        {
            return;
        }
    }
}

/// Answers `initialize` (saving the session for every server, as a
/// server layer does), and `announce` by sending its params to the
/// session's client as `notifications/resources/updated` tied to no
/// request: what every server holding the session sends when a resource
/// update comes over the bus, so the test announces on each server.
struct Announcer(Option<mcp_transport::store::SharedSession>);

impl mcp_core::Handler for Announcer {
    async fn handle_request(
        &self,
        request: mcp_core::IncomingRequest,
        context: mcp_core::RequestContext,
    ) -> Result<mcp_types::RawJson, mcp_types::ErrorObject> {
        match request.method.as_str() {
            "initialize" => {
                let client = mcp_types::InitializeRequestParams::new(
                    "2025-11-25",
                    mcp_types::ClientCapabilities::default(),
                    mcp_types::Implementation::new("takeover", "1"),
                );
                let record = mcp_types::SessionRecord::new("2025-11-25", client);
                let shared = self.0.as_ref().expect("a shared session");
                shared
                    .save(&record)
                    .await
                    .map_err(|e| mcp_core::internal_error(e.to_string()))?;
                let result = serde_json::json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "announcer", "version": "1"}
                });
                Ok(mcp_types::RawJson::from_serialize(&result).expect("json"))
            }
            "announce" => {
                let update = mcp_types::JsonRpcNotification::new(
                    "notifications/resources/updated",
                    request.params,
                );
                context
                    .peer
                    .unrelated()
                    .send_message(update.into())
                    .await
                    .map_err(|e| mcp_core::internal_error(e.to_string()))?;
                Ok(mcp_types::RawJson::empty_object())
            }
            other => Err(mcp_types::ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(
        &self,
        _: mcp_core::IncomingNotification,
        _: mcp_core::NotificationContext,
    ) {
    }
}

/// One server of the two, on 127.0.0.1.
struct Replica {
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Replica {
    async fn start(stores: mcp_transport::store::SharedStores) -> Self {
        use mcp_transport::http::{HttpServerConfig, ServeConfig, StreamableHttpService, serve};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let addr = listener.local_addr().expect("addr");
        let service =
            StreamableHttpService::new(HttpServerConfig::new().shared(stores), |opening| {
                let shared = opening.shared_session().cloned();
                opening.serve(Announcer(shared), mcp_core::DispatcherConfig::default())
            });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let config = ServeConfig::new().service_shutdown(service.shutdown_handle());
        let served = tokio::spawn(serve(listener, service, config, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            served,
        }
    }

    /// Sends `body` in `session` (none for `initialize`); the whole answer.
    async fn post(&self, session: Option<&str>, body: &serde_json::Value) -> raw_http::Answer {
        let mut headers = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        raw_http::request(self.addr, "POST", "/mcp", &headers, &body.to_string()).await
    }

    /// Announces an update of `uri` in `session`.
    async fn announce(&self, session: &str, id: u64, uri: &str) {
        let announce = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "announce",
                                          "params": {"uri": uri}});
        let answer = self.post(Some(session), &announce).await;
        assert_eq!(answer.status, 200, "{answer:?}");
    }

    /// Opens the GET stream of `session`, resuming after `last_event_id`;
    /// the connection, after its status line.
    async fn listen(&self, session: &str, last_event_id: Option<&str>) -> tokio::net::TcpStream {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut get = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connected");
        let resume = last_event_id.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
        let request = format!(
            "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n{resume}\r\n"
        );
        get.write_all(request.as_bytes()).await.expect("sent");
        let mut head = [0u8; 12];
        tokio::time::timeout(WAIT, get.read_exact(&mut head))
            .await
            .expect("the stream opened")
            .expect("read");
        if &head != b"HTTP/1.1 200" {
            let mut rest = String::from_utf8_lossy(&head).into_owned();
            while !rest.ends_with('}') {
                let mut more = [0u8; 1024];
                let n = tokio::time::timeout(WAIT, get.read(&mut more))
                    .await
                    .expect("the answer goes on")
                    .expect("read");
                assert!(n > 0, "the GET stream did not open: {rest}");
                rest.push_str(&String::from_utf8_lossy(&more[..n]));
            }
            panic!("the GET stream did not open: {rest}");
        }
        get
    }

    async fn stop(mut self) {
        let _ = self.stop.take().expect("running").send(());
        tokio::time::timeout(WAIT, &mut self.served)
            .await
            .expect("serve returns")
            .expect("joined")
            .expect("served");
    }
}

/// How long a step may take.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads `stream` into `text` until it holds `needle`; the id of the last
/// event read.
async fn read_until(stream: &mut tokio::net::TcpStream, text: &mut String, needle: &str) -> String {
    use tokio::io::AsyncReadExt;
    let read = async {
        while !text.contains(needle) {
            let mut buffer = [0u8; 4096];
            let n = stream.read(&mut buffer).await.expect("read");
            assert!(n > 0, "the stream ended before {needle}: {text}");
            text.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    };
    tokio::time::timeout(WAIT, read)
        .await
        .unwrap_or_else(|_| panic!("no {needle} within {WAIT:?}: {text}"));
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("id: "))
        .expect("an event id")
        .trim()
        .to_owned()
}

/// The server holding a GET stream is cut off from Redis: the event it
/// delivered last never reached the store. The client resumes on the
/// other server, which takes the stream over from what it kept for it:
/// it goes on right after what the client saw (counted from the last
/// event the store kept), so nothing comes twice and nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_whose_last_events_were_never_stored_is_taken_over_without_repeats() {
    let redis = RedisServer::start();
    let partition = Partition::to(&redis).await;
    let config = || {
        RedisConfig::new(redis.url())
            .prefix("takeover")
            .timeout(std::time::Duration::from_millis(500))
    };
    // The first server writes its events through the partition.
    let mut stores_a = config().connect().await.expect("connect");
    let events_a = Arc::new(
        RedisEventStore::connect(
            RedisConfig::new(partition.url.clone())
                .prefix("takeover")
                .timeout(std::time::Duration::from_millis(500)),
        )
        .await
        .expect("connect"),
    );
    stores_a.events = events_a.clone();
    let a = Replica::start(stores_a).await;
    let b = Replica::start(config().connect().await.expect("connect")).await;

    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "takeover", "version": "1"}}});
    let opened = a.post(None, &initialize).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let mut get = a.listen(&session, None).await;
    let mut seen = String::new();
    // Each update reaches both servers: a delivers it on the GET stream
    // (and stores it), b keeps it for the GET stream it does not hold.
    for (id, uri) in [(1, "test://1"), (2, "test://2")] {
        a.announce(&session, id, uri).await;
        b.announce(&session, id, uri).await;
    }
    let stored = read_until(&mut get, &mut seen, "test://2").await;
    // Flushes a's writes behind, and checks they arrived.
    events_a
        .replay_after(&stored)
        .await
        .expect("Redis answers")
        .expect("a's events so far are in Redis");

    partition.cut();
    a.announce(&session, 3, "test://3").await;
    b.announce(&session, 3, "test://3").await;
    let last = read_until(&mut get, &mut seen, "test://3").await;
    assert_ne!(last, stored, "test://3 came with an id of its own: {seen}");
    // The premise: the store never got that event (else this is an
    // ordinary takeover, and the count of unstored events goes untested).
    let observer = RedisEventStore::connect(config()).await.expect("connect");
    let kept = observer
        .replay_after(&stored)
        .await
        .expect("Redis answers")
        .expect("a's stream is known");
    assert!(
        kept.events.iter().all(|(id, _)| *id != last),
        "test://3 reached the store despite the cut: {kept:?}"
    );
    drop(get);
    // Reaches b only (a is cut off), before the client is back.
    b.announce(&session, 4, "test://4").await;

    let mut resumed = b.listen(&session, Some(&last)).await;
    b.announce(&session, 5, "test://5").await;
    let mut text = String::new();
    read_until(&mut resumed, &mut text, "test://5").await;
    let updates: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| data.split("\"uri\":\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(
        updates,
        ["test://4", "test://5"],
        "after test://3, each once and nothing seen before: {text}"
    );
    a.stop().await;
    b.stop().await;
}
