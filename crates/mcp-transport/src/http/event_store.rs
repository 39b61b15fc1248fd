//! Where SSE events are kept so that a client can resume a stream with
//! `Last-Event-ID`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;

/// Keeps the events of each SSE stream for replay after a reconnection.
///
/// Event ids must be unique within a session and name their stream, so
/// that [`replay_after`](Self::replay_after) can find it. Implementations
/// are called under the session's routing lock and must not block.
pub trait EventStore: Send + Sync + 'static {
    /// Stores `data` (one JSON-RPC message, or empty for a priming event)
    /// as the next event of `stream`, and returns its event id.
    fn append(&self, stream: &str, data: Bytes) -> String;

    /// The stream an event id belongs to, and the events after it, oldest
    /// first. `None` when the id is unknown or its events are gone.
    fn replay_after(&self, last_event_id: &str) -> Option<(String, Vec<(String, Bytes)>)>;

    /// Drops what is stored for `stream` (its session ended).
    fn forget(&self, stream: &str);
}

/// The default store: each stream's latest events in memory.
#[derive(Debug)]
pub struct InMemoryEventStore {
    max_events_per_stream: usize,
    streams: Mutex<HashMap<String, StoredStream>>,
}

#[derive(Debug, Default)]
struct StoredStream {
    next_seq: u64,
    events: VecDeque<(u64, Bytes)>,
}

impl InMemoryEventStore {
    /// A store keeping up to `max_events_per_stream` events per stream
    /// (older ones cannot be replayed).
    pub fn new(max_events_per_stream: usize) -> Self {
        Self {
            max_events_per_stream: max_events_per_stream.max(1),
            streams: Mutex::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        Self::new(1024)
    }
}

impl EventStore for InMemoryEventStore {
    fn append(&self, stream: &str, data: Bytes) -> String {
        let mut streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        let stored = streams.entry(stream.to_owned()).or_default();
        let seq = stored.next_seq;
        stored.next_seq += 1;
        stored.events.push_back((seq, data));
        if stored.events.len() > self.max_events_per_stream {
            stored.events.pop_front();
        }
        format!("{stream}_{seq}")
    }

    fn replay_after(&self, last_event_id: &str) -> Option<(String, Vec<(String, Bytes)>)> {
        let (stream, seq) = last_event_id.rsplit_once('_')?;
        let seq: u64 = seq.parse().ok()?;
        let streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        let stored = streams.get(stream)?;
        // An id older than what is kept cannot be resumed without a gap.
        if stored
            .events
            .front()
            .is_some_and(|(first, _)| *first > seq + 1)
        {
            return None;
        }
        let events = stored
            .events
            .iter()
            .filter(|(s, _)| *s > seq)
            .map(|(s, data)| (format!("{stream}_{s}"), data.clone()))
            .collect();
        Some((stream.to_owned(), events))
    }

    fn forget(&self, stream: &str) {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_returns_what_followed_the_last_seen_event() {
        let store = InMemoryEventStore::new(3);
        let first = store.append("s", Bytes::from_static(b""));
        store.append("s", Bytes::from_static(b"a"));
        store.append("s", Bytes::from_static(b"b"));
        let (stream, events) = store.replay_after(&first).expect("known");
        assert_eq!(stream, "s");
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].1, Bytes::from_static(b"b"));
        store.append("s", Bytes::from_static(b"c"));
        store.append("s", Bytes::from_static(b"d"));
        assert!(store.replay_after(&first).is_none(), "evicted: a gap");
        assert!(store.replay_after("nope").is_none());
        store.forget("s");
        assert!(store.replay_after("s_3").is_none());
    }
}
