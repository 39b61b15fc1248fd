//! The one place that knows where Redis is and how to reach it: one Redis
//! at a `redis://` URL, or the primary that Redis Sentinel names
//! (`redis+sentinel://`), found again after a failover.
//!
//! A [`RedisConnection`] holds one multiplexed connection at a time. When
//! an operation fails in a way that says the connection (or the primary)
//! is gone (the socket closed or timed out, or the node answers
//! `READONLY`/`MASTERDOWN` because it is a replica now), the connection is
//! marked lost: that operation fails with its error, every operation
//! after it fails at once with "reconnecting" (never a hang), and the
//! connection's watcher task connects again in the background: to the same
//! address for a `redis://` URL, to the primary the sentinels name (checked
//! with `ROLE`) for `redis+sentinel://`. The bus's subscriptions are made
//! again on the new connection before it is used. Nothing reconnects
//! behind the watcher's back, so a connection never silently lands on a
//! node that is no longer the primary.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use mcp_core::backoff::{Backoff, BackoffConfig};
use redis::aio::{AsyncPushSender, ConnectionLike, MultiplexedConnection};
use redis::sentinel::{Sentinel, SentinelNodeConnectionInfo};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ConnectionInfo, IntoConnectionInfo, Pipeline, PushInfo,
    PushKind, RedisError, RedisFuture, RedisResult, ServerErrorKind, Value,
};
use tokio_util::task::AbortOnDropHandle;

use crate::Error;

/// The URL scheme of a Sentinel-managed primary.
const SENTINEL_SCHEME: &str = "redis+sentinel://";

/// Where the stores connect: parsed from [`RedisConfig::new`](super::RedisConfig::new)'s URL.
#[derive(Clone)]
pub(crate) enum Target {
    /// One Redis.
    Direct(ConnectionInfo),
    /// The primary of `service`, as the sentinels at `sentinels` name it.
    Sentinel {
        sentinels: Vec<ConnectionInfo>,
        service: String,
        /// Database and credentials of the data nodes.
        node: redis::RedisConnectionInfo,
    },
}

impl Target {
    /// Parses `redis://…` (any URL the `redis` crate takes) or
    /// `redis+sentinel://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT…]/SERVICE[/DB]`.
    pub(crate) fn parse(url: &str) -> RedisResult<Self> {
        let Some(rest) = url.strip_prefix(SENTINEL_SCHEME) else {
            return Ok(Self::Direct(url.into_connection_info()?));
        };
        let invalid = |what: &'static str| {
            RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "invalid redis+sentinel:// URL",
                what.to_owned(),
            ))
        };
        let (authority, path) = rest.split_once('/').ok_or_else(|| {
            invalid("no service name: redis+sentinel://HOST:PORT[,HOST:PORT…]/SERVICE[/DB]")
        })?;
        let (credentials, hosts) = match authority.rsplit_once('@') {
            Some((credentials, hosts)) => (Some(credentials), hosts),
            None => (None, authority),
        };
        // The data nodes' credentials, percent-decoded as in a `redis://`
        // URL: read by the redis crate's own URL reader.
        let mut node = match credentials {
            Some(credentials) => format!("redis://{credentials}@localhost")
                .into_connection_info()?
                .redis_settings()
                .clone(),
            None => redis::RedisConnectionInfo::default(),
        };
        let sentinels = hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|host| format!("redis://{host}").into_connection_info())
            .collect::<RedisResult<Vec<_>>>()?;
        if sentinels.is_empty() {
            return Err(invalid("no sentinel address"));
        }
        let mut segments = path.split('/').filter(|s| !s.is_empty());
        let service = segments
            .next()
            .ok_or_else(|| invalid("no service name after the sentinel addresses"))?
            .to_owned();
        if let Some(db) = segments.next() {
            let db = db
                .parse()
                .map_err(|_| invalid("the database after the service name is not a number"))?;
            node = node.set_db(db);
        }
        if segments.next().is_some() {
            return Err(invalid("more path than /SERVICE/DB"));
        }
        Ok(Self::Sentinel {
            sentinels,
            service,
            node,
        })
    }

    fn db(&self) -> i64 {
        match self {
            Self::Direct(info) => info.redis_settings().db(),
            Self::Sentinel { node, .. } => node.db(),
        }
    }
}

/// Finds the node to connect to: the URL's, or the primary the sentinels
/// name now.
enum Locator {
    Direct(Client),
    Sentinel {
        /// Keeps a connection to a sentinel between two lookups.
        sentinel: tokio::sync::Mutex<Sentinel>,
        service: String,
        node: SentinelNodeConnectionInfo,
    },
}

impl Locator {
    fn new(target: Target, resp3: bool) -> RedisResult<Self> {
        let protocol = if resp3 {
            redis::ProtocolVersion::RESP3
        } else {
            redis::ProtocolVersion::RESP2
        };
        Ok(match target {
            Target::Direct(info) => {
                let settings = info.redis_settings().clone().set_protocol(protocol);
                Self::Direct(Client::open(info.set_redis_settings(settings))?)
            }
            Target::Sentinel {
                sentinels,
                service,
                node,
            } => Self::Sentinel {
                sentinel: tokio::sync::Mutex::new(Sentinel::build(sentinels)?),
                service,
                node: SentinelNodeConnectionInfo::default()
                    .set_redis_connection_info(node.set_protocol(protocol)),
            },
        })
    }

    /// A client of the node to use now (for Sentinel: the primary it names,
    /// which answered `ROLE` as a primary).
    async fn locate(&self) -> RedisResult<Client> {
        match self {
            Self::Direct(client) => Ok(client.clone()),
            Self::Sentinel {
                sentinel,
                service,
                node,
            } => {
                sentinel
                    .lock()
                    .await
                    .async_master_for(service, Some(node))
                    .await
            }
        }
    }
}

/// A connection to the Redis the stores use, kept by its watcher task (see
/// the module's documentation). Cheap to clone; the clones share one
/// connection. Run commands on it with [`bounded`](super::bounded).
#[derive(Clone)]
pub struct RedisConnection {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sentinel = matches!(self.shared.locator, Locator::Sentinel { .. });
        f.debug_struct("RedisConnection")
            .field("sentinel", &sentinel)
            .field("connected", &self.shared.state().current.is_some())
            .finish_non_exhaustive()
    }
}

struct Shared {
    locator: Locator,
    timeout: Duration,
    db: i64,
    /// The bus's receiver of pushed messages, when this connection carries
    /// subscriptions (RESP3).
    push: Option<Arc<dyn AsyncPushSender>>,
    state: Mutex<State>,
    /// Wakes the watcher when the connection is lost.
    lost: Arc<tokio::sync::Notify>,
    /// Ends the watcher when the last clone is dropped.
    watcher: OnceLock<AbortOnDropHandle<()>>,
}

#[derive(Default)]
struct State {
    /// The connection in use, `None` while the watcher reconnects.
    current: Option<MultiplexedConnection>,
    /// Bumped by every new connection; an error seen on an older one
    /// changes nothing, and pushes from an older one are dropped.
    generation: u64,
    /// The channels subscribed, made again on every new connection.
    channels: BTreeSet<String>,
    /// Why the last connection attempt failed.
    last_error: Option<String>,
}

impl RedisConnection {
    /// Connects to `target` (within `timeout * 2`) and starts the watcher
    /// that connects again after a loss. `push` (RESP3) receives what the
    /// subscribed channels carry.
    pub(crate) async fn open(
        target: Target,
        timeout: Duration,
        push: Option<Arc<dyn AsyncPushSender>>,
    ) -> Result<Self, Error> {
        let failed = |source: RedisError| Error::Store {
            store: "redis",
            operation: "connect",
            source: Box::new(source),
        };
        let db = target.db();
        let locator = Locator::new(target, push.is_some()).map_err(failed)?;
        let shared = Arc::new(Shared {
            locator,
            timeout,
            db,
            push,
            state: Mutex::new(State::default()),
            lost: Arc::new(tokio::sync::Notify::new()),
            watcher: OnceLock::new(),
        });
        match tokio::time::timeout(timeout * 2, shared.connect(&BTreeSet::new())).await {
            Ok(Ok((connection, generation))) => {
                let mut state = shared.state();
                state.current = Some(connection);
                state.generation = generation;
            }
            Ok(Err(source)) => return Err(failed(source)),
            Err(_) => {
                return Err(Error::StoreTimeout {
                    store: "redis",
                    operation: "connect",
                    after: timeout * 2,
                });
            }
        }
        let watcher = tokio::spawn(watch(Arc::downgrade(&shared), shared.lost.clone()));
        let _ = shared.watcher.set(AbortOnDropHandle::new(watcher));
        Ok(Self { shared })
    }

    /// Subscribes to `channel` (a RESP3 connection with a push receiver),
    /// now and on every connection after this one.
    pub(crate) async fn subscribe(&self, channel: &str) -> RedisResult<()> {
        self.shared.state().channels.insert(channel.to_owned());
        let (mut connection, generation) = self.shared.current()?;
        let result = connection.subscribe(channel).await;
        self.shared.observe(&result, generation);
        result
    }

    /// Forgets `channel` (after a failed [`subscribe`](Self::subscribe)).
    pub(crate) fn forget_channel(&self, channel: &str) {
        self.shared.state().channels.remove(channel);
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The connection in use, or the error that says it is being replaced.
    fn current(&self) -> RedisResult<(MultiplexedConnection, u64)> {
        let state = self.state();
        match &state.current {
            Some(connection) => Ok((connection.clone(), state.generation)),
            None => {
                let why = state
                    .last_error
                    .as_deref()
                    .unwrap_or("the connection was lost");
                Err(RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    format!("not connected to Redis, reconnecting ({why})"),
                )))
            }
        }
    }

    /// Marks the connection of `generation` lost when `result` says it is
    /// gone or no longer on a primary.
    fn observe<T>(&self, result: &RedisResult<T>, generation: u64) {
        let Err(error) = result else {
            return;
        };
        if !connection_lost(error) {
            return;
        }
        self.lose(generation, error.to_string());
    }

    fn lose(&self, generation: u64, why: String) {
        let mut state = self.state();
        if state.generation != generation || state.current.is_none() {
            return;
        }
        tracing::warn!(error = %why, "lost the Redis connection; reconnecting");
        state.current = None;
        state.last_error = Some(why);
        drop(state);
        self.lost.notify_one();
    }

    /// A new connection to the node the locator names, with `channels`
    /// subscribed, and its generation.
    async fn connect(
        self: &Arc<Self>,
        channels: &BTreeSet<String>,
    ) -> RedisResult<(MultiplexedConnection, u64)> {
        let client = self.locator.locate().await?;
        let generation = self.state().generation + 1;
        // The connection's own response timeout fires a little before the
        // operation's bound (`bounded`), so a node that stops answering is
        // seen as a lost connection rather than a slow one.
        let mut config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout.mul_f64(0.9)));
        if let Some(push) = &self.push {
            let push = push.clone();
            let shared = Arc::downgrade(self);
            config = config.set_push_sender(move |info: PushInfo| {
                forward_push(&shared, generation, &push, info);
                Ok::<(), std::convert::Infallible>(())
            });
        }
        let mut connection = client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        for channel in channels {
            connection.subscribe(channel).await?;
        }
        Ok((connection, generation))
    }
}

/// Hands a push of the connection of `generation` to the bus, unless a
/// newer connection replaced it; a disconnection marks it lost.
fn forward_push(
    shared: &Weak<Shared>,
    generation: u64,
    push: &Arc<dyn AsyncPushSender>,
    info: PushInfo,
) {
    let Some(shared) = shared.upgrade() else {
        return;
    };
    if info.kind == PushKind::Disconnection {
        shared.lose(generation, "the connection was closed".into());
        return;
    }
    if shared.state().generation == generation {
        let _ = push.send(info);
    }
}

/// Whether `error` means the connection is gone or its node is no longer
/// the primary (so another node, or another connection, is needed).
fn connection_lost(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
        || matches!(
            error.kind(),
            redis::ErrorKind::Server(ServerErrorKind::ReadOnly | ServerErrorKind::MasterDown)
        )
}

/// How the watcher paces its reconnections ([`mcp_core::backoff`]): from
/// 50 ms, doubling up to 1 s while attempts fail, jittered so that the
/// replicas of a deployment do not all reach a new primary in step, and at
/// most 120 attempts a minute, so that a node that takes connections and
/// loses them at once is not hammered either.
fn reconnect_pacing() -> BackoffConfig {
    BackoffConfig::new()
        .with_floor(Duration::from_millis(50))
        .with_cap(Duration::from_secs(1))
        .with_budget(120, Duration::from_secs(60))
}

/// Connects again whenever the connection is lost, each attempt paced by
/// [`reconnect_pacing`], until the connection is dropped.
async fn watch(shared: Weak<Shared>, lost: Arc<tokio::sync::Notify>) {
    let mut backoff = Backoff::new(reconnect_pacing());
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let lost = lost.notified();
        let channels = {
            let state = strong.state();
            state.current.is_none().then(|| state.channels.clone())
        };
        // Holds no strong reference while it waits, so the last clone's
        // drop ends this task.
        drop(strong);
        let Some(channels) = channels else {
            lost.await;
            continue;
        };
        match backoff.next(Instant::now(), None) {
            Ok(wait) => tokio::time::sleep(wait).await,
            Err(spent) => {
                tokio::time::sleep_until(spent.until.into()).await;
                continue;
            }
        }
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let attempt = tokio::time::timeout(strong.timeout * 2, strong.connect(&channels)).await;
        match attempt {
            Ok(Ok((connection, generation))) => {
                // Channels subscribed while it connected are made too.
                let missed: Vec<String> = {
                    let mut state = strong.state();
                    state.current = Some(connection.clone());
                    state.generation = generation;
                    state.last_error = None;
                    state.channels.difference(&channels).cloned().collect()
                };
                tracing::info!("connected to Redis again");
                let mut connection = connection;
                for channel in missed {
                    if let Err(error) = connection.subscribe(&channel).await {
                        strong.lose(generation, error.to_string());
                    }
                }
                backoff.succeeded();
            }
            Ok(Err(error)) => strong.state().last_error = Some(error.to_string()),
            Err(_) => {
                strong.state().last_error = Some(format!(
                    "no connection within {} ms",
                    (strong.timeout * 2).as_millis()
                ));
            }
        }
    }
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let (mut connection, generation) = self.shared.current()?;
            let result = connection.send_packed_command(cmd).await;
            self.shared.observe(&result, generation);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let (mut connection, generation) = self.shared.current()?;
            let result = connection.send_packed_commands(cmd, offset, count).await;
            self.shared.observe(&result, generation);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.shared.db
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redis_url_is_one_node() {
        let target = Target::parse("redis://127.0.0.1:6379/3").expect("a URL");
        assert!(matches!(&target, Target::Direct(_)));
        assert_eq!(target.db(), 3);
    }

    #[test]
    fn a_sentinel_url_names_the_sentinels_the_service_and_the_database() {
        let target = Target::parse("redis+sentinel://:secret@10.0.0.1:26379,10.0.0.2:26380/main/2")
            .expect("a sentinel URL");
        let Target::Sentinel {
            sentinels,
            service,
            node,
        } = target
        else {
            panic!("not a sentinel target");
        };
        let addresses: Vec<String> = sentinels.iter().map(|s| s.addr().to_string()).collect();
        assert_eq!(addresses, ["10.0.0.1:26379", "10.0.0.2:26380"]);
        assert_eq!(service, "main");
        assert_eq!(node.db(), 2);
        assert_eq!(node.password(), Some("secret"));
        assert_eq!(node.username(), None);
    }

    #[test]
    fn a_sentinel_urls_credentials_are_percent_decoded_as_in_a_redis_url() {
        let url = "redis+sentinel://app%3Aone:p%40ss%2Fw%3Ard@10.0.0.1:26379/main";
        let Target::Sentinel { node, .. } = Target::parse(url).expect("a sentinel URL") else {
            panic!("not a sentinel target");
        };
        assert_eq!(node.username(), Some("app:one"));
        assert_eq!(node.password(), Some("p@ss/w:rd"));
        let Target::Direct(direct) =
            Target::parse("redis://app%3Aone:p%40ss%2Fw%3Ard@10.0.0.1/").expect("a URL")
        else {
            panic!("not a direct target");
        };
        assert_eq!(direct.redis_settings().username(), node.username());
        assert_eq!(direct.redis_settings().password(), node.password());
    }

    #[test]
    fn a_sentinel_url_without_service_or_sentinel_is_refused() {
        for url in [
            "redis+sentinel://10.0.0.1:26379",
            "redis+sentinel://10.0.0.1:26379/",
            "redis+sentinel:///main",
            "redis+sentinel://10.0.0.1:26379/main/x",
            "redis+sentinel://10.0.0.1:26379/main/0/extra",
        ] {
            assert!(Target::parse(url).is_err(), "{url} was accepted");
        }
    }

    #[test]
    fn lost_connections_and_demoted_primaries_are_told_from_answers() {
        let readonly = RedisError::from((
            redis::ErrorKind::Server(ServerErrorKind::ReadOnly),
            "READONLY",
        ));
        assert!(connection_lost(&readonly));
        let gone = RedisError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(connection_lost(&gone));
        let wrong_type = RedisError::from((
            redis::ErrorKind::Server(ServerErrorKind::ResponseError),
            "WRONGTYPE",
        ));
        assert!(!connection_lost(&wrong_type));
    }
}
