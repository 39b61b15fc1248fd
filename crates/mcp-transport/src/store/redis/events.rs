//! Events in Redis Streams: stream `{prefix}:events:{digest of stream}`
//! ([`RedisConfig::key`]), one entry
//! per event whose entry id `0-{n}` is the event's own sequence number
//! plus one (so `XRANGE (0-{n} +` is exactly the replay after event `n-1`),
//! field `d` its data, and a last entry with field `e` when the stream
//! ended. Writes go behind, in order, through one writer task.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use redis::streams::StreamRangeReply;
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::AbortOnDropHandle;

use super::{RedisConfig, RedisConnection, bounded};
use crate::Error;
use crate::store::{EventStore, Replay, StoreFuture, parse_event_id};

/// The Redis [`EventStore`].
///
/// Only the process that serves a stream appends to it; any process
/// replays it. Appends are queued for a writer task (bounded by
/// [`RedisConfig::write_queue`]) so that a session never waits on Redis
/// while it routes a message; a replay through the same store first waits
/// for the writes queued before it.
pub struct RedisEventStore {
    connection: RedisConnection,
    config: Arc<RedisConfig>,
    local: Mutex<HashMap<String, Local>>,
    writes: mpsc::Sender<Write>,
    /// The writer task, ended when the store is dropped.
    _writer: AbortOnDropHandle<()>,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("prefix", &self.config.prefix)
            .finish_non_exhaustive()
    }
}

/// What this process appended to one stream: its next sequence number
/// and the sizes of the events still kept, to bound it.
#[derive(Default)]
struct Local {
    next_seq: u64,
    kept: VecDeque<(u64, usize)>,
    bytes: usize,
}

enum Write {
    Append {
        key: String,
        seq: u64,
        data: Bytes,
        /// The oldest sequence number still kept, when older ones go.
        trim_before: Option<u64>,
    },
    End {
        key: String,
        seq: u64,
    },
    Forget {
        key: String,
    },
    Flush(oneshot::Sender<()>),
}

fn entry_id(seq: u64) -> String {
    format!("0-{}", seq + 1)
}

fn entry_seq(id: &str) -> Option<u64> {
    id.strip_prefix("0-")?.parse::<u64>().ok()?.checked_sub(1)
}

impl RedisEventStore {
    pub(crate) fn new(connection: RedisConnection, config: Arc<RedisConfig>) -> Self {
        let (writes, queue) = mpsc::channel(config.write_queue);
        let writer = tokio::spawn(write_behind(connection.clone(), config.clone(), queue));
        Self {
            connection,
            config,
            local: Mutex::new(HashMap::new()),
            writes,
            _writer: AbortOnDropHandle::new(writer),
        }
    }

    /// A store on its own connection.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(config: RedisConfig) -> Result<Self, Error> {
        let connection = config.connect_with(None).await?;
        Ok(Self::new(connection, Arc::new(config)))
    }

    fn queue(&self, write: Write) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.writes.try_send(write) {
            tracing::warn!(
                queue = self.config.write_queue,
                "Redis falls behind the events written; an event was delivered but not stored \
                 for resumption (raise RedisConfig::write_queue, or check Redis)"
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Local>> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the writes queued so far reached Redis (or failed).
    async fn flush(&self) -> Result<(), Error> {
        let (done, flushed) = oneshot::channel();
        self.queue(Write::Flush(done));
        match tokio::time::timeout(self.config.timeout * 2, flushed).await {
            Ok(_) => Ok(()),
            Err(_) => Err(Error::StoreTimeout {
                store: "event",
                operation: "write the events queued before a replay",
                after: self.config.timeout * 2,
            }),
        }
    }
}

impl EventStore for RedisEventStore {
    fn append(&self, stream: &str, data: Bytes) -> String {
        let (seq, trim_before) = {
            let mut local = self.lock();
            if !local.contains_key(stream) {
                local.insert(stream.to_owned(), Local::default());
            }
            let Some(s) = local.get_mut(stream) else {
                unreachable!("inserted above")
            };
            let seq = s.next_seq;
            s.next_seq += 1;
            s.kept.push_back((seq, data.len()));
            s.bytes += data.len();
            let mut trimmed = false;
            while s.kept.len() > self.config.max_events_per_stream
                || (s.bytes > self.config.max_bytes_per_stream && s.kept.len() > 1)
            {
                if let Some((_, len)) = s.kept.pop_front() {
                    s.bytes -= len;
                    trimmed = true;
                }
            }
            let first = s.kept.front().map(|(seq, _)| *seq);
            (seq, first.filter(|_| trimmed))
        };
        self.queue(Write::Append {
            key: self.config.key("events", stream),
            seq,
            data,
            trim_before,
        });
        format!("{stream}_{seq}")
    }

    fn end(&self, stream: &str) {
        let seq = {
            let mut local = self.lock();
            let Some(s) = local.get_mut(stream) else {
                return;
            };
            let seq = s.next_seq;
            s.next_seq += 1;
            seq
        };
        self.queue(Write::End {
            key: self.config.key("events", stream),
            seq,
        });
    }

    fn replay_after<'a>(&'a self, last_event_id: &'a str) -> StoreFuture<'a, Option<Replay>> {
        Box::pin(async move {
            let Some((stream, seq)) = parse_event_id(last_event_id) else {
                return Ok(None);
            };
            self.flush().await?;
            let key = self.config.key("events", stream);
            let mut connection = self.connection.clone();
            let mut pipe = redis::pipe();
            pipe.cmd("XRANGE")
                .arg(&key)
                .arg("-")
                .arg("+")
                .arg("COUNT")
                .arg(1);
            pipe.cmd("XRANGE")
                .arg(&key)
                .arg(format!("({}", entry_id(seq)))
                .arg("+");
            let (first, after): (StreamRangeReply, StreamRangeReply) = bounded(
                &self.config,
                "event",
                "replay a stream",
                pipe.query_async(&mut connection),
            )
            .await?;
            // Unknown, or older than what is kept: no replay without a gap.
            let Some(first) = first.ids.first().and_then(|e| entry_seq(&e.id)) else {
                return Ok(None);
            };
            if first > seq + 1 {
                return Ok(None);
            }
            let mut replay = Replay {
                stream: stream.to_owned(),
                events: Vec::with_capacity(after.ids.len()),
                ended: false,
            };
            for entry in after.ids {
                let Some(n) = entry_seq(&entry.id) else {
                    continue;
                };
                if entry.map.contains_key("e") {
                    replay.ended = true;
                    continue;
                }
                let data = match entry.map.get("d") {
                    Some(redis::Value::BulkString(bytes)) => Bytes::from(bytes.clone()),
                    _ => Bytes::new(),
                };
                replay.events.push((format!("{stream}_{n}"), data));
            }
            Ok(Some(replay))
        })
    }

    fn forget(&self, stream: &str) {
        self.lock().remove(stream);
        self.queue(Write::Forget {
            key: self.config.key("events", stream),
        });
    }
}

/// Writes what `queue` brings, a batch per round trip, until the store
/// is dropped.
async fn write_behind(
    mut connection: RedisConnection,
    config: Arc<RedisConfig>,
    mut queue: mpsc::Receiver<Write>,
) {
    let ttl = i64::try_from(config.event_ttl.as_millis()).unwrap_or(i64::MAX);
    let mut batch = Vec::new();
    while queue.recv_many(&mut batch, 256).await > 0 {
        let mut pipe = redis::pipe();
        let mut flushed = Vec::new();
        let writes = batch.len();
        for write in batch.drain(..) {
            match write {
                Write::Append {
                    key,
                    seq,
                    data,
                    trim_before,
                } => {
                    pipe.cmd("XADD")
                        .arg(&key)
                        .arg(entry_id(seq))
                        .arg("d")
                        .arg(data.as_ref())
                        .ignore();
                    if let Some(first) = trim_before {
                        pipe.cmd("XTRIM")
                            .arg(&key)
                            .arg("MINID")
                            .arg(entry_id(first))
                            .ignore();
                    }
                    pipe.pexpire(&key, ttl).ignore();
                }
                Write::End { key, seq } => {
                    pipe.cmd("XADD")
                        .arg(&key)
                        .arg(entry_id(seq))
                        .arg("e")
                        .arg(1)
                        .ignore();
                    pipe.pexpire(&key, ttl).ignore();
                }
                Write::Forget { key } => {
                    pipe.del(&key).ignore();
                }
                Write::Flush(done) => flushed.push(done),
            }
        }
        if writes > flushed.len() {
            if let Err(error) = bounded(
                &config,
                "event",
                "store events",
                pipe.exec_async(&mut connection),
            )
            .await
            {
                tracing::warn!(
                    %error,
                    "events were delivered but not stored for resumption; a client that \
                     reconnects may be unable to resume"
                );
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}
