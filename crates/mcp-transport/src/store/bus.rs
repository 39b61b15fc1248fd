//! Messages between the server processes that share stores: the
//! [`MessageBus`] seam and its in-memory implementation.

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::broadcast;

use super::StoreFuture;

/// Publish/subscribe between server processes: what one publishes on a
/// topic, every subscriber of that topic in every process receives, in
/// the order published. Delivery is at most once and only to those
/// subscribed at the time; a subscriber that falls behind its receiver's
/// capacity sees [`broadcast::error::RecvError::Lagged`] and must
/// recover (re-read what it serves), as list changes do.
pub trait MessageBus: Send + Sync + 'static {
    /// Sends `payload` to the subscribers of `topic`.
    fn publish<'a>(&'a self, topic: &'a str, payload: Bytes) -> StoreFuture<'a, ()>;

    /// Receives what is published on `topic` from now on.
    fn subscribe<'a>(&'a self, topic: &'a str) -> StoreFuture<'a, broadcast::Receiver<Bytes>>;

    /// Whether the backend answers now (a readiness check): `Ok` by
    /// default, for a bus in this process's memory.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The bus of one process: a broadcast channel per topic.
#[derive(Debug)]
pub struct InMemoryBus {
    capacity: usize,
    topics: Mutex<HashMap<String, broadcast::Sender<Bytes>>>,
}

impl InMemoryBus {
    /// A bus whose subscribers may fall `capacity` messages behind
    /// (default 256) before they lag.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            topics: Mutex::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryBus {
    fn default() -> Self {
        Self::new(256)
    }
}

impl MessageBus for InMemoryBus {
    fn publish<'a>(&'a self, topic: &'a str, payload: Bytes) -> StoreFuture<'a, ()> {
        let mut topics = self.topics.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = topics.get(topic) {
            if tx.send(payload).is_err() {
                // Every subscriber is gone: the topic goes too, so the map
                // holds only topics someone listens to.
                topics.remove(topic);
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe<'a>(&'a self, topic: &'a str) -> StoreFuture<'a, broadcast::Receiver<Bytes>> {
        let mut topics = self.topics.lock().unwrap_or_else(|p| p.into_inner());
        let rx = match topics.get(topic) {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(self.capacity);
                topics.insert(topic.to_owned(), tx);
                rx
            }
        };
        Box::pin(std::future::ready(Ok(rx)))
    }
}
