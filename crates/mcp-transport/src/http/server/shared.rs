//! What a service does when it shares its stores with other servers
//! ([`HttpServerConfig::shared`](super::HttpServerConfig::shared)): it
//! restores sessions another server minted, follows streams another server
//! writes, ends sessions everywhere on DELETE, and routes answers to
//! server-to-client requests to the server whose handler waits for them.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{JsonRpcMessage, RequestId};
use tokio::sync::{broadcast, mpsc};

use super::ServiceInner;
use super::body::{HttpBody, sse_response};
use super::session::untag;
use crate::http::sse::encode_event;
use crate::store::{Replay, SharedStores};

/// The bus topic of sessions ended by DELETE (payload: the session id).
const CLOSED_TOPIC: &str = "sessions.closed";
/// How often a stream of another server is read again while followed.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// A service's shared stores and its name among the servers sharing them.
pub(super) struct Shared {
    pub(super) stores: SharedStores,
    /// Random, per service: in its stream keys and in the ids of its
    /// server-to-client requests, `{instance}~{id}`.
    pub(super) instance: Arc<str>,
    /// Set once this service listens to the bus.
    listening: tokio::sync::OnceCell<()>,
}

impl Shared {
    pub(super) fn new(stores: SharedStores) -> Self {
        let mut instance = super::session::new_session_id();
        instance.truncate(12);
        Self {
            stores,
            instance: instance.into(),
            listening: tokio::sync::OnceCell::new(),
        }
    }

    fn answers_topic(instance: &str) -> String {
        format!("answers.{instance}")
    }
}

/// An answer routed to the server whose handler waits for it.
#[derive(serde::Serialize, serde::Deserialize)]
struct RoutedAnswer {
    session: String,
    message: JsonRpcMessage,
}

fn answer_id_mut(message: &mut JsonRpcMessage) -> Option<&mut RequestId> {
    match message {
        JsonRpcMessage::Response(r) => Some(&mut r.id),
        JsonRpcMessage::Error(e) => e.id.as_mut(),
        _ => None,
    }
}

/// Starts listening to the bus (once; again after a failure): answers
/// for this server, sessions ended elsewhere. The listener is a task of the
/// service, ended when it drains.
pub(super) async fn listen(inner: &Arc<ServiceInner>, shared: &Shared) -> Result<(), crate::Error> {
    shared
        .listening
        .get_or_try_init(|| async {
            let bus = &shared.stores.bus;
            let answers = bus
                .subscribe(&Shared::answers_topic(&shared.instance))
                .await?;
            let closed = bus.subscribe(CLOSED_TOPIC).await?;
            let service = Arc::downgrade(inner);
            let draining = inner.draining.clone();
            inner.tasks.spawn(async move {
                tokio::select! {
                    () = bus_listener(service, answers, closed) => {}
                    () = draining.cancelled() => {}
                }
            });
            Ok(())
        })
        .await
        .map(drop)
}

async fn bus_listener(
    service: std::sync::Weak<ServiceInner>,
    mut answers: broadcast::Receiver<Bytes>,
    mut closed: broadcast::Receiver<Bytes>,
) {
    loop {
        let (payload, is_answer) = tokio::select! {
            got = answers.recv() => (got, true),
            got = closed.recv() => (got, false),
        };
        let payload = match payload {
            Ok(payload) => payload,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "this server fell behind the shared message bus; messages were lost \
                     (raise the bus capacity, e.g. RedisConfig::bus_capacity)"
                );
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(service) = service.upgrade() else {
            return;
        };
        if is_answer {
            let Ok(routed) = serde_json::from_slice::<RoutedAnswer>(&payload) else {
                tracing::debug!("an unreadable answer on the bus; dropped");
                continue;
            };
            let session = service
                .lock_sessions()
                .get(routed.session.as_str())
                .cloned();
            let mut message = routed.message;
            match (session, answer_id_mut(&mut message)) {
                (Some(session), Some(id)) => {
                    if let Some((_, original)) = untag(id) {
                        *id = original;
                    }
                    if !session.forward(message).await {
                        tracing::debug!(session = %session.tag(), "an answer for a closed session");
                    }
                }
                _ => tracing::debug!("an answer for a session this server no longer holds"),
            }
        } else if let Ok(id) = std::str::from_utf8(&payload) {
            let session = service.lock_sessions().remove(id);
            if let Some(session) = session {
                tracing::debug!(session = %session.tag(), "session closed by DELETE on another server");
                session.close();
            }
        }
    }
}

/// Splits a session's posted messages: answers to this server's requests
/// (their ids restored) stay; answers to another server's go to it over
/// the bus.
pub(super) async fn route_answers(
    shared: &Shared,
    session: &str,
    messages: Vec<JsonRpcMessage>,
) -> Result<Vec<JsonRpcMessage>, crate::Error> {
    let mut here = Vec::with_capacity(messages.len());
    for mut message in messages {
        let Some(id) = answer_id_mut(&mut message) else {
            here.push(message);
            continue;
        };
        match untag(id) {
            Some((instance, original)) if instance == &*shared.instance => {
                *id = original;
                here.push(message);
            }
            Some((instance, _)) => {
                let topic = Shared::answers_topic(instance);
                let routed = RoutedAnswer {
                    session: session.to_owned(),
                    message,
                };
                let payload =
                    serde_json::to_vec(&routed).map_err(|source| crate::Error::StoreData {
                        store: "bus",
                        source,
                    })?;
                shared
                    .stores
                    .bus
                    .publish(&topic, Bytes::from(payload))
                    .await?;
            }
            None => here.push(message),
        }
    }
    Ok(here)
}

/// Ends session `id` for every server: removed from the store, and every
/// server holding it told to close it.
pub(super) async fn delete(shared: &Shared, id: &str) -> Result<bool, crate::Error> {
    let existed = shared.stores.sessions.delete(id).await?;
    shared
        .stores
        .bus
        .publish(CLOSED_TOPIC, Bytes::copy_from_slice(id.as_bytes()))
        .await?;
    Ok(existed)
}

/// What a client saw last of a stream another server held, as the store
/// keeps it: see [`last_seen`].
pub(super) struct Seen {
    /// The latest message of the stream, up to the client's last event,
    /// that the store keeps.
    pub(super) data: Bytes,
    /// How many events the client received after that one: those the other
    /// server delivered but whose writes never reached the store (it was cut
    /// off from the store, or died, before its writes behind went out).
    pub(super) unstored: usize,
}

/// What the client whose last event is `id` saw last, as the store keeps
/// it: that event's data, or, when the store never got that event, the
/// latest message before it that it has, and how many events came after
/// it. Looked for in one read when the event is kept (the usual case),
/// else further back in reads of doubling reach, up to the messages a
/// session keeps for a GET stream held elsewhere (one further back could
/// not be found among them). `None` when the store keeps no such message,
/// or fails (a takeover then matches on what follows `id` only).
pub(super) async fn last_seen(shared: &Shared, id: &str) -> Option<Seen> {
    let (stream, seq) = crate::store::parse_event_id(id)?;
    let mut reach = 1u64;
    while reach <= super::session::MAX_UNSENT as u64 {
        let before = seq.saturating_sub(reach);
        // `None`: older than what is kept, or (a store that says so) past
        // what it has; farther back may still be kept in the second case.
        let replay = shared
            .stores
            .events
            .replay_after(&format!("{stream}_{before}"))
            .await
            .ok()?;
        let kept = replay
            .iter()
            .flat_map(|r| r.events.iter())
            .rev()
            .find_map(|(event, data)| {
                let (_, n) = crate::store::parse_event_id(event)?;
                (n <= seq && !data.is_empty()).then_some((n, data))
            });
        if let Some((n, data)) = kept {
            return Some(Seen {
                data: data.clone(),
                unstored: usize::try_from(seq - n).ok()?,
            });
        }
        if before == 0 {
            break;
        }
        reach *= 2;
    }
    None
}

/// Serves a stream another server writes: what it stored after the
/// client's last event, then what it stores next, until it ends, the client
/// goes away or this service drains. The follower is a task of the service.
pub(super) fn follow(
    inner: &Arc<ServiceInner>,
    shared: &Shared,
    last_event_id: &str,
    replay: Replay,
) -> http::Response<HttpBody> {
    let queue = inner.config.sse_queue.max(replay.events.len() + 1);
    let (tx, rx) = mpsc::channel(queue);
    let events = shared.stores.events.clone();
    let draining = inner.draining.clone();
    let mut after = last_event_id.to_owned();
    inner.tasks.spawn(async move {
        let mut replay = replay;
        loop {
            for (id, data) in &replay.events {
                if !data.is_empty() && tx.send(encode_event(Some(id), None, data)).await.is_err() {
                    return;
                }
                after.clone_from(id);
            }
            if replay.ended {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(FOLLOW_EVERY) => {}
                () = tx.closed() => return,
                () = draining.cancelled() => return,
            }
            replay = match events.replay_after(&after).await {
                Ok(Some(next)) => next,
                // Forgotten (its session ended there) or trimmed past.
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, "stopped following a stream of another server");
                    return;
                }
            };
        }
    });
    sse_response(rx, None, inner.config.keep_alive)
}
