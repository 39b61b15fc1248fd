//! The message bus on Redis pub/sub: topic `t` is channel
//! `{prefix}:bus:{digest of t}` ([`RedisConfig::key`]: a channel listing
//! shows no topic, which may name a session). One RESP3 connection per bus
//! carries every subscription of the process; what arrives is fanned out
//! to the local subscribers of its channel. After a reconnection (or a
//! Sentinel failover) the [`RedisConnection`] subscribes again by itself
//! (what was published meanwhile is lost, as pub/sub says; the bus promises
//! at most once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use redis::{PushInfo, PushKind, Value};
use tokio::sync::broadcast;

use super::{RedisConfig, RedisConnection, bounded, ping};
use crate::Error;
use crate::store::{MessageBus, StoreFuture};

/// The local subscribers, by channel.
type Topics = Arc<Mutex<HashMap<String, broadcast::Sender<Bytes>>>>;

/// The Redis [`MessageBus`].
#[derive(Clone)]
pub struct RedisBus {
    connection: RedisConnection,
    config: Arc<RedisConfig>,
    topics: Topics,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("prefix", &self.config.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisBus {
    /// A bus on its own (RESP3) connection.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(config: Arc<RedisConfig>) -> Result<Self, Error> {
        let topics: Topics = Arc::default();
        let fan_out = topics.clone();
        let push = move |push: PushInfo| {
            deliver(&fan_out, push);
            Ok::<(), std::convert::Infallible>(())
        };
        let connection = config.connect_with(Some(Arc::new(push))).await?;
        Ok(Self {
            connection,
            config,
            topics,
        })
    }
}

/// Hands one pushed message to the local subscribers of its channel.
fn deliver(topics: &Topics, push: PushInfo) {
    if push.kind != PushKind::Message {
        return;
    }
    let [Value::BulkString(channel), Value::BulkString(payload)] = push.data.as_slice() else {
        return;
    };
    let Ok(channel) = std::str::from_utf8(channel) else {
        return;
    };
    let topics = topics.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tx) = topics.get(channel) {
        // No local subscriber left is not an error.
        let _ = tx.send(Bytes::from(payload.clone()));
    }
}

impl MessageBus for RedisBus {
    fn publish<'a>(&'a self, topic: &'a str, payload: Bytes) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let mut cmd = redis::cmd("PUBLISH");
            cmd.arg(self.config.key("bus", topic)).arg(payload.as_ref());
            bounded(
                &self.config,
                "bus",
                "publish",
                cmd.query_async::<u64>(&mut connection),
            )
            .await
            .map(drop)
        })
    }

    fn subscribe<'a>(&'a self, topic: &'a str) -> StoreFuture<'a, broadcast::Receiver<Bytes>> {
        Box::pin(async move {
            let channel = self.config.key("bus", topic);
            let receiver = {
                let mut topics = self.topics.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(tx) = topics.get(&channel) {
                    return Ok(tx.subscribe());
                }
                let (tx, rx) = broadcast::channel(self.config.bus_capacity);
                topics.insert(channel.clone(), tx);
                rx
            };
            let subscribed = bounded(
                &self.config,
                "bus",
                "subscribe",
                self.connection.subscribe(&channel),
            )
            .await;
            if let Err(error) = subscribed {
                self.connection.forget_channel(&channel);
                self.topics
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&channel);
                return Err(error);
            }
            Ok(receiver)
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(ping(&self.config, "bus", &self.connection))
    }
}
