//! The Redis backends of the shared stores (feature `redis`): sessions in
//! hashes with expiry ([`RedisSessionStore`]), events in Redis Streams
//! ([`RedisEventStore`]: `XADD` with the event's own id, `XRANGE` to
//! replay), the message bus on pub/sub ([`RedisBus`]), and the tasks of
//! `mcp-tasks` ([`RedisTaskStore`]: a hash per task written by
//! compare-and-set, a sorted set per owner).
//!
//! Every key starts with the configured prefix, so several servers (or
//! several deployments) share one Redis; what names it (a session id, a
//! stream, a task's owner) is a SHA-256 digest in it, never the name
//! itself ([`RedisConfig::key`]). Each store talks through a
//! [`RedisConnection`], which connects again by itself after the connection
//! is lost, to the same Redis or, behind Redis Sentinel
//! (`redis+sentinel://`), to the primary the sentinels name after a
//! failover; meanwhile every operation fails within
//! [`RedisConfig::timeout`] with [`Error::Store`] or
//! [`Error::StoreTimeout`], never a hang.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::AsyncPushSender;

use super::SharedStores;
use crate::Error;

mod bus;
mod connection;
mod events;
mod session;
mod tasks;

pub use bus::RedisBus;
pub use connection::RedisConnection;
pub use events::RedisEventStore;
pub use session::RedisSessionStore;
pub use tasks::RedisTaskStore;

/// Where the Redis stores connect and how they keep their keys.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    pub(crate) url: String,
    pub(crate) prefix: String,
    pub(crate) timeout: Duration,
    pub(crate) event_ttl: Duration,
    pub(crate) max_events_per_stream: usize,
    pub(crate) max_bytes_per_stream: usize,
    pub(crate) write_queue: usize,
    pub(crate) bus_capacity: usize,
}

impl RedisConfig {
    /// Stores on the Redis at `url`: `redis://[:PASSWORD@]HOST:PORT[/DB]`
    /// for one Redis, or
    /// `redis+sentinel://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT…]/SERVICE[/DB]`
    /// for the primary that the Redis Sentinels at those addresses name for
    /// `SERVICE` (the credentials and database are the data nodes', the
    /// sentinels take none), followed to the new primary after a failover.
    /// With key prefix `mcp`, operations bounded by 2 s, each stream's events kept
    /// 30 min after its last event (1024 events, 4 MiB at most), 4096
    /// event writes queued at most, and bus subscribers lagging after 256
    /// messages.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: "mcp".into(),
            timeout: Duration::from_secs(2),
            event_ttl: Duration::from_secs(30 * 60),
            max_events_per_stream: 1024,
            max_bytes_per_stream: 4 * 1024 * 1024,
            write_queue: 4096,
            bus_capacity: 256,
        }
    }

    /// The prefix of every key and channel (default `mcp`): servers that
    /// share sessions use the same one, others a different one.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one operation may take, connecting included (default 2 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a stream's events outlive its last event (default 30 min;
    /// a server releases them earlier when their session ends).
    pub fn event_ttl(mut self, ttl: Duration) -> Self {
        self.event_ttl = ttl;
        self
    }

    /// The most events and bytes kept per stream (default 1024, 4 MiB).
    pub fn max_per_stream(mut self, events: usize, bytes: usize) -> Self {
        self.max_events_per_stream = events.max(1);
        self.max_bytes_per_stream = bytes;
        self
    }

    /// Event writes queued for Redis at most (default 4096); past it an
    /// event is delivered live but not stored (logged at `warn`).
    pub fn write_queue(mut self, events: usize) -> Self {
        self.write_queue = events.max(1);
        self
    }

    /// Messages a bus subscriber may fall behind before it lags (default 256).
    pub fn bus_capacity(mut self, messages: usize) -> Self {
        self.bus_capacity = messages.max(1);
        self
    }

    /// Connects the three stores. Must be called within a tokio runtime
    /// (the event store's writer runs on it).
    ///
    /// # Errors
    /// [`Error::Store`] when the URL is invalid or Redis cannot be reached.
    pub async fn connect(self) -> Result<SharedStores, Error> {
        let config = Arc::new(self);
        let connection = config.connect_with(None).await?;
        Ok(SharedStores {
            sessions: Arc::new(RedisSessionStore::new(connection.clone(), config.clone())),
            events: Arc::new(RedisEventStore::new(connection, config.clone())),
            bus: Arc::new(RedisBus::connect(config).await?),
        })
    }

    /// A connection to the configured Redis; with `push` (RESP3), what
    /// its subscriptions carry goes there.
    pub(crate) async fn connect_with(
        &self,
        push: Option<Arc<dyn AsyncPushSender>>,
    ) -> Result<RedisConnection, Error> {
        let target = connection::Target::parse(&self.url).map_err(|source| Error::Store {
            store: "redis",
            operation: "connect",
            source: Box::new(source),
        })?;
        RedisConnection::open(target, self.timeout, push).await
    }

    /// How long one operation may take.
    pub fn timeout_duration(&self) -> Duration {
        self.timeout
    }

    /// The key (or bus channel) of `name` of kind `kind`:
    /// `{prefix}:{kind}:{digest}`, the digest the SHA-256 of `name` in
    /// hex, so a key or channel listing (`SCAN`, `PUBSUB CHANNELS`)
    /// reveals no live session id, stream or task owner, and every key has
    /// a bounded length whatever the name. Also for another store on the
    /// same Redis.
    pub fn key(&self, kind: &str, name: &str) -> String {
        let digest = ring::digest::digest(&ring::digest::SHA256, name.as_bytes());
        let mut key = String::with_capacity(self.prefix.len() + kind.len() + 66);
        key.push_str(&self.prefix);
        key.push(':');
        key.push_str(kind);
        key.push(':');
        for byte in digest.as_ref() {
            let _ = write!(key, "{byte:02x}");
        }
        key
    }

    /// A connection on the configured Redis (followed to the new primary
    /// after a Sentinel failover), for another store that keeps its keys
    /// there; run its commands through [`bounded`].
    ///
    /// # Errors
    /// [`Error::Store`] or [`Error::StoreTimeout`] when Redis cannot be reached.
    pub async fn connection(&self) -> Result<RedisConnection, Error> {
        self.connect_with(None).await
    }
}

/// `PING` on `connection`, within the configured timeout.
pub(crate) async fn ping(
    config: &RedisConfig,
    store: &'static str,
    connection: &RedisConnection,
) -> Result<(), Error> {
    let mut connection = connection.clone();
    bounded(
        config,
        store,
        "ping",
        redis::cmd("PING").query_async::<()>(&mut connection),
    )
    .await
}

/// Runs one Redis operation within [`RedisConfig::timeout`]; its failure
/// is a typed store error naming `store` and `operation`.
///
/// # Errors
/// [`Error::Store`] when Redis answers with an error or the connection is
/// lost, [`Error::StoreTimeout`] when it does not answer in time.
pub async fn bounded<T>(
    config: &RedisConfig,
    store: &'static str,
    operation: &'static str,
    future: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, Error> {
    match tokio::time::timeout(config.timeout, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(source)) => Err(Error::Store {
            store,
            operation,
            source: Box::new(source),
        }),
        Err(_) => Err(Error::StoreTimeout {
            store,
            operation,
            after: config.timeout,
        }),
    }
}
