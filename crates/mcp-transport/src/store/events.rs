//! Where SSE events are kept so that a client can resume a stream with
//! `Last-Event-ID`: the [`EventStore`] seam and its in-memory
//! implementation.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;

use super::StoreFuture;

/// Keeps the events of each SSE stream for replay after a reconnection,
/// bounded per stream in events and bytes (older ones are dropped first).
///
/// Event ids must be unique across every server sharing the store and name
/// their stream, so that [`replay_after`](Self::replay_after) can find it.
/// [`append`](Self::append), [`end`](Self::end) and
/// [`forget`](Self::forget) are called under a session's routing lock and
/// must not block: a remote backend writes behind, in order, and a
/// `replay_after` on the same store sees every write made before it.
pub trait EventStore: Send + Sync + 'static {
    /// Stores `data` (one JSON-RPC message, or empty for a priming event)
    /// as the next event of `stream`, and returns its event id.
    fn append(&self, stream: &str, data: Bytes) -> String;

    /// `stream` gets no more events (its requests are answered): a replay
    /// says so, and a process following it from another one stops.
    fn end(&self, stream: &str);

    /// The stream an event id belongs to and the events after it, oldest
    /// first, without a gap: `None` when the id is unknown, or older than
    /// what is kept (the client cannot resume without losing events).
    fn replay_after<'a>(&'a self, last_event_id: &'a str) -> StoreFuture<'a, Option<Replay>>;

    /// Drops what is stored for `stream` (its session ended, or its
    /// resumption window passed).
    fn forget(&self, stream: &str);
}

/// What [`EventStore::replay_after`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replay {
    /// The stream the event belongs to.
    pub stream: String,
    /// Its events after the one named, oldest first, with their ids.
    pub events: Vec<(String, Bytes)>,
    /// Whether the stream has ended (no event will follow these).
    pub ended: bool,
}

/// The stream and sequence number of an event id `{stream}_{seq}` (the
/// form every store here makes). `None` for a sequence number of
/// `u64::MAX`, which no store reaches: an id is the peer's
/// (`Last-Event-ID`), and the one after it must be countable.
pub fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once('_')?;
    let seq: u64 = seq.parse().ok()?;
    (seq < u64::MAX).then_some((stream, seq))
}

/// The default store: each stream's latest events in memory.
#[derive(Debug)]
pub struct InMemoryEventStore {
    max_events_per_stream: usize,
    max_bytes_per_stream: usize,
    streams: Mutex<HashMap<String, StoredStream>>,
}

#[derive(Debug, Default)]
struct StoredStream {
    next_seq: u64,
    bytes: usize,
    ended: bool,
    events: VecDeque<(u64, Bytes)>,
}

impl InMemoryEventStore {
    /// A store keeping up to `max_events_per_stream` events (and 4 MiB)
    /// per stream (older ones cannot be replayed).
    pub fn new(max_events_per_stream: usize) -> Self {
        Self {
            max_events_per_stream: max_events_per_stream.max(1),
            max_bytes_per_stream: 4 * 1024 * 1024,
            streams: Mutex::new(HashMap::new()),
        }
    }

    /// Keeps at most `bytes` of event data per stream (default 4 MiB).
    pub fn max_bytes_per_stream(mut self, bytes: usize) -> Self {
        self.max_bytes_per_stream = bytes;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredStream>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        Self::new(1024)
    }
}

impl EventStore for InMemoryEventStore {
    fn append(&self, stream: &str, data: Bytes) -> String {
        let mut streams = self.lock();
        // The key is allocated once per stream, not per event.
        if !streams.contains_key(stream) {
            streams.insert(stream.to_owned(), StoredStream::default());
        }
        let Some(stored) = streams.get_mut(stream) else {
            unreachable!("inserted above")
        };
        let seq = stored.next_seq;
        stored.next_seq += 1;
        stored.bytes += data.len();
        stored.events.push_back((seq, data));
        while stored.events.len() > self.max_events_per_stream
            || (stored.bytes > self.max_bytes_per_stream && stored.events.len() > 1)
        {
            if let Some((_, dropped)) = stored.events.pop_front() {
                stored.bytes -= dropped.len();
            }
        }
        format!("{stream}_{seq}")
    }

    fn end(&self, stream: &str) {
        if let Some(stored) = self.lock().get_mut(stream) {
            stored.ended = true;
        }
    }

    fn replay_after<'a>(&'a self, last_event_id: &'a str) -> StoreFuture<'a, Option<Replay>> {
        let replay = parse_event_id(last_event_id).and_then(|(stream, seq)| {
            let streams = self.lock();
            let stored = streams.get(stream)?;
            // An id older than what is kept cannot be resumed without a gap.
            if stored
                .events
                .front()
                .is_some_and(|(first, _)| *first > seq + 1)
                || seq >= stored.next_seq
            {
                return None;
            }
            let events = stored
                .events
                .iter()
                .filter(|(s, _)| *s > seq)
                .map(|(s, data)| (format!("{stream}_{s}"), data.clone()))
                .collect();
            Some(Replay {
                stream: stream.to_owned(),
                events,
                ended: stored.ended,
            })
        });
        Box::pin(std::future::ready(Ok(replay)))
    }

    fn forget(&self, stream: &str) {
        self.lock().remove(stream);
    }
}
