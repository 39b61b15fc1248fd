//! Sessions in Redis hashes with expiry: `{prefix}:session:{digest of id}`
//! ([`RedisConfig::key`]: a key listing shows no live session id), field
//! `record` (the JSON [`SessionRecord`]), expiring after the idle timeout.

use std::sync::Arc;
use std::time::Duration;

use mcp_types::SessionRecord;

use super::{RedisConfig, RedisConnection, bounded, ping};
use crate::Error;
use crate::store::{SessionStore, StoreFuture};

/// The Redis [`SessionStore`].
#[derive(Clone)]
pub struct RedisSessionStore {
    connection: RedisConnection,
    config: Arc<RedisConfig>,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.config.prefix)
            .finish_non_exhaustive()
    }
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisSessionStore {
    pub(crate) fn new(connection: RedisConnection, config: Arc<RedisConfig>) -> Self {
        Self { connection, config }
    }

    /// A store on its own connection.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(config: RedisConfig) -> Result<Self, Error> {
        let connection = config.connect_with(None).await?;
        Ok(Self::new(connection, Arc::new(config)))
    }
}

impl SessionStore for RedisSessionStore {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let json = serde_json::to_string(record).map_err(|source| Error::StoreData {
                store: "session",
                source,
            })?;
            let key = self.config.key("session", id);
            let mut connection = self.connection.clone();
            let mut pipe = redis::pipe();
            pipe.atomic()
                .hset(&key, "record", json)
                .ignore()
                .pexpire(&key, millis(ttl) as i64)
                .ignore();
            bounded(
                &self.config,
                "session",
                "save",
                pipe.exec_async(&mut connection),
            )
            .await
        })
    }

    fn load<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let key = self.config.key("session", id);
            let mut connection = self.connection.clone();
            let mut pipe = redis::pipe();
            pipe.atomic()
                .hget(&key, "record")
                .pexpire(&key, millis(ttl) as i64)
                .ignore();
            let (json,): (Option<String>,) = bounded(
                &self.config,
                "session",
                "load",
                pipe.query_async(&mut connection),
            )
            .await?;
            json.map(|json| {
                serde_json::from_str(&json).map_err(|source| Error::StoreData {
                    store: "session",
                    source,
                })
            })
            .transpose()
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let key = self.config.key("session", id);
            let mut connection = self.connection.clone();
            let mut cmd = redis::cmd("PEXPIRE");
            cmd.arg(&key).arg(millis(ttl));
            bounded(
                &self.config,
                "session",
                "renew a session",
                cmd.query_async::<bool>(&mut connection),
            )
            .await
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let key = self.config.key("session", id);
            let mut connection = self.connection.clone();
            let mut cmd = redis::cmd("DEL");
            cmd.arg(&key);
            let removed: u64 = bounded(
                &self.config,
                "session",
                "delete a session",
                cmd.query_async(&mut connection),
            )
            .await?;
            Ok(removed > 0)
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(ping(&self.config, "session", &self.connection))
    }
}
