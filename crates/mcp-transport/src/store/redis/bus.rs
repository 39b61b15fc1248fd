//! The message bus on Redis pub/sub: topic `t` is channel
//! `{prefix}:bus:t`. One RESP3 connection per bus carries every
//! subscription of the process; what arrives is fanned out to the local
//! subscribers of its topic. After a reconnection the connection manager
//! subscribes again by itself (what was published meanwhile is lost, as
//! pub/sub says; the bus promises at most once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{PushInfo, PushKind, Value};
use tokio::sync::broadcast;

use super::{RedisConfig, bounded};
use crate::Error;
use crate::store::{MessageBus, StoreFuture};

type Topics = Arc<Mutex<HashMap<String, broadcast::Sender<Bytes>>>>;

/// The Redis [`MessageBus`].
#[derive(Clone)]
pub struct RedisBus {
    connection: ConnectionManager,
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
        let channel_prefix = format!("{}:bus:", config.prefix);
        let fan_out = topics.clone();
        let push = ConnectionManagerConfig::new()
            .set_automatic_resubscription()
            .set_push_sender(move |push: PushInfo| {
                deliver(&fan_out, &channel_prefix, push);
                Ok::<(), std::convert::Infallible>(())
            });
        let connection = config.connect_with(Some(push)).await?;
        Ok(Self {
            connection,
            config,
            topics,
        })
    }
}

/// Hands one pushed message to the local subscribers of its topic.
fn deliver(topics: &Topics, channel_prefix: &str, push: PushInfo) {
    if push.kind != PushKind::Message {
        return;
    }
    let [Value::BulkString(channel), Value::BulkString(payload)] = push.data.as_slice() else {
        return;
    };
    let Some(topic) = std::str::from_utf8(channel)
        .ok()
        .and_then(|c| c.strip_prefix(channel_prefix))
    else {
        return;
    };
    let topics = topics.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tx) = topics.get(topic) {
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
            let receiver = {
                let mut topics = self.topics.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(tx) = topics.get(topic) {
                    return Ok(tx.subscribe());
                }
                let (tx, rx) = broadcast::channel(self.config.bus_capacity);
                topics.insert(topic.to_owned(), tx);
                rx
            };
            let mut connection = self.connection.clone();
            let subscribed = bounded(
                &self.config,
                "bus",
                "subscribe",
                connection.subscribe(self.config.key("bus", topic)),
            )
            .await;
            if let Err(error) = subscribed {
                self.topics
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(topic);
                return Err(error);
            }
            Ok(receiver)
        })
    }
}
