//! What the gateway knows of its upstreams right now: each one's phase,
//! live session and last lists, and the catalog merged from them. The
//! supervisors write it; calls read it.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use mcp_client::ClientSession;
use tokio::sync::{Notify, broadcast, watch};

use crate::error::Error;
use crate::events::GatewayEvent;
use crate::lists::Lists;
use crate::naming::{Dropped, Merged, Naming};

/// Where an upstream stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Connecting for the first time.
    Starting,
    /// Connected: calls are forwarded.
    Ready,
    /// Its connection ended or could not be made; it is being connected
    /// again (after a backoff). Its last lists stay in the catalog.
    Restarting,
    /// The gateway shut down.
    Stopped,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Restarting => "restarting",
            Phase::Stopped => "stopped",
        })
    }
}

/// One upstream's state, for health and readiness checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpstreamStatus {
    /// Where it stands.
    pub phase: Phase,
    /// Whether it has been connected at least once (readiness).
    pub connected_once: bool,
    /// How many times its connection ended and was made again.
    pub restarts: u64,
}

struct Entry {
    status: UpstreamStatus,
    session: Option<ClientSession>,
    lists: Arc<Lists>,
    /// The resources subscribed to through the gateway: made again in
    /// each new session of a handshake-era upstream, followed by a
    /// stateless upstream's listen stream.
    followed: watch::Sender<BTreeSet<String>>,
    /// Woken when its HTTP session is found lost, for its supervisor.
    lost: Arc<Notify>,
    /// The resources its listen stream was last acknowledged for.
    acked: Arc<watch::Sender<BTreeSet<String>>>,
}

struct State {
    entries: BTreeMap<Arc<str>, Entry>,
    merged: Arc<Merged>,
}

/// The shared picture of every upstream.
pub(crate) struct Board {
    naming: Box<dyn Naming>,
    state: RwLock<State>,
    events: broadcast::Sender<GatewayEvent>,
    /// Bumped at every change of an upstream's phase, for waiters.
    version: watch::Sender<u64>,
}

impl Board {
    /// Upstreams `names`, all starting, merged in that order by `naming`;
    /// `event_queue` events kept for a slow listener.
    pub(crate) fn new(
        names: impl IntoIterator<Item = Arc<str>>,
        naming: Box<dyn Naming>,
        event_queue: usize,
    ) -> Self {
        let entries = names
            .into_iter()
            .map(|name| {
                let entry = Entry {
                    status: UpstreamStatus {
                        phase: Phase::Starting,
                        connected_once: false,
                        restarts: 0,
                    },
                    session: None,
                    lists: Arc::default(),
                    followed: watch::channel(BTreeSet::new()).0,
                    lost: Arc::default(),
                    acked: Arc::new(watch::channel(BTreeSet::new()).0),
                };
                (name, entry)
            })
            .collect();
        Self {
            naming,
            state: RwLock::new(State {
                entries,
                merged: Arc::default(),
            }),
            events: broadcast::channel(event_queue.max(1)).0,
            version: watch::channel(0).0,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// `name` is connected over `session` and offers `lists`.
    pub(crate) fn connected(&self, name: &Arc<str>, session: ClientSession, lists: Lists) {
        self.update(name, |entry| {
            if entry.status.connected_once {
                entry.status.restarts += 1;
            }
            entry.status.phase = Phase::Ready;
            entry.status.connected_once = true;
            entry.session = Some(session);
            entry.lists = Arc::new(lists);
        });
        self.emit(GatewayEvent::UpstreamUp {
            upstream: name.clone(),
        });
    }

    /// `name`'s lists were read again.
    pub(crate) fn lists_changed(&self, name: &Arc<str>, lists: Lists) {
        self.update(name, |entry| entry.lists = Arc::new(lists));
    }

    /// `name`'s connection ended or could not be made: it is being
    /// restarted, its last lists kept.
    pub(crate) fn down(&self, name: &Arc<str>) {
        let was_up = self.update(name, |entry| {
            let was_up = entry.session.take().is_some();
            entry.status.phase = Phase::Restarting;
            was_up
        });
        if was_up == Some(true) {
            self.emit(GatewayEvent::UpstreamDown {
                upstream: name.clone(),
            });
        }
    }

    /// `name` was shut down with the gateway.
    pub(crate) fn stopped(&self, name: &Arc<str>) {
        self.update(name, |entry| {
            entry.session = None;
            entry.status.phase = Phase::Stopped;
        });
    }

    /// Changes `name`'s entry and, when its lists changed, merges the
    /// catalog again and tells listeners when its entries changed; what
    /// `change` returned, or `None` for an unknown upstream.
    fn update<T>(&self, name: &Arc<str>, change: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        let mut state = self.write();
        let entry = state.entries.get_mut(name)?;
        let lists = Arc::as_ptr(&entry.lists);
        let answer = change(entry);
        let relist = !std::ptr::eq(lists, Arc::as_ptr(&entry.lists));
        let changed = relist && self.merge(&mut state);
        drop(state);
        self.version.send_modify(|version| *version += 1);
        if changed {
            self.emit(GatewayEvent::CatalogChanged);
        }
        Some(answer)
    }

    /// Merges the catalog from every upstream's lists, logging what is
    /// newly left out; whether its entries changed.
    fn merge(&self, state: &mut State) -> bool {
        let merged = Merged::merge(
            state
                .entries
                .iter()
                .map(|(name, entry)| (name, &*entry.lists)),
            &*self.naming,
        );
        let before: HashSet<&Dropped> = state.merged.dropped.iter().collect();
        for dropped in &merged.dropped {
            if !before.contains(dropped) {
                tracing::warn!(upstream = %dropped.upstream, "{dropped}");
            }
        }
        drop(before);
        let changed = !merged.same_entries(&state.merged);
        state.merged = Arc::new(merged);
        changed
    }

    /// Tells the listeners (none listening is fine).
    pub(crate) fn emit(&self, event: GatewayEvent) {
        let _ = self.events.send(event);
    }

    /// A receiver of the events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.events.subscribe()
    }

    /// Wakes at every change of an upstream's state.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The merged catalog as it is now.
    pub(crate) fn merged(&self) -> Arc<Merged> {
        self.read().merged.clone()
    }

    /// Every upstream's status, by name.
    pub(crate) fn statuses(&self) -> BTreeMap<Arc<str>, UpstreamStatus> {
        let state = self.read();
        state
            .entries
            .iter()
            .map(|(name, entry)| (name.clone(), entry.status))
            .collect()
    }

    /// The resources subscribed to at `name` through the gateway, as they
    /// change.
    pub(crate) fn followed(&self, name: &Arc<str>) -> watch::Receiver<BTreeSet<String>> {
        match self.read().entries.get(name) {
            Some(entry) => entry.followed.subscribe(),
            None => watch::channel(BTreeSet::new()).1,
        }
    }

    /// Where `name`'s acknowledged subscriptions are set, and read.
    pub(crate) fn acked(&self, name: &Arc<str>) -> Option<Arc<watch::Sender<BTreeSet<String>>>> {
        self.read()
            .entries
            .get(name)
            .map(|entry| entry.acked.clone())
    }

    /// Counts `uri` as subscribed to at `name`, or no longer.
    pub(crate) fn follow(&self, name: &Arc<str>, uri: &str, follow: bool) {
        if let Some(entry) = self.read().entries.get(name) {
            entry.followed.send_if_modified(|uris| {
                if follow {
                    uris.insert(uri.to_owned())
                } else {
                    uris.remove(uri)
                }
            });
        }
    }

    /// Where `name`'s supervisor hears that its HTTP session was lost.
    pub(crate) fn lost(&self, name: &Arc<str>) -> Arc<Notify> {
        match self.read().entries.get(name) {
            Some(entry) => entry.lost.clone(),
            None => Arc::default(),
        }
    }

    /// `name` no longer knows the gateway's session (a call found out):
    /// its supervisor starts a new one.
    pub(crate) fn session_lost(&self, name: &Arc<str>) {
        if let Some(entry) = self.read().entries.get(name) {
            entry.lost.notify_one();
        }
    }

    /// The live session of `name`.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when it is not connected now.
    pub(crate) fn session(&self, name: &Arc<str>) -> Result<ClientSession, Error> {
        let state = self.read();
        let entry = state.entries.get(name);
        match entry.and_then(|entry| entry.session.clone()) {
            Some(session) => Ok(session),
            None => Err(Error::Unavailable {
                upstream: name.to_string(),
                state: entry.map_or(Phase::Stopped, |e| e.status.phase).to_string(),
            }),
        }
    }
}

/// Whether the upstreams readiness waits for have all connected at least
/// once.
#[derive(Clone)]
pub(crate) struct ReadyCheck {
    pub(crate) board: Arc<Board>,
    pub(crate) requires: Arc<[Arc<str>]>,
}

impl ReadyCheck {
    /// The required upstreams that never connected yet (none: ready).
    pub(crate) fn waiting(&self) -> Vec<Arc<str>> {
        let statuses = self.board.statuses();
        self.requires
            .iter()
            .filter(|name| !statuses.get(*name).is_some_and(|s| s.connected_once))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{JsonObject, Tool};

    use super::*;
    use crate::naming::Prefix;

    #[test]
    fn a_phase_change_keeps_the_merged_catalog_and_a_relisting_merges_anew() {
        let name: Arc<str> = "a".into();
        let board = Board::new([name.clone()], Box::new(Prefix::default()), 8);
        let mut events = board.subscribe();
        let mut lists = Lists::new();
        lists.tools.push(Tool::new("echo", JsonObject::new()));
        board.lists_changed(&name, lists.clone());
        assert!(matches!(
            events.try_recv(),
            Ok(GatewayEvent::CatalogChanged)
        ));
        let merged = board.merged();
        assert!(merged.tool("a_echo").is_some());

        // Going down keeps the lists: the catalog is the very same one.
        board.down(&name);
        assert!(Arc::ptr_eq(&merged, &board.merged()));
        assert_eq!(board.statuses()[&name].phase, Phase::Restarting);
        board.stopped(&name);
        assert!(Arc::ptr_eq(&merged, &board.merged()));
        assert_eq!(board.statuses()[&name].phase, Phase::Stopped);

        // The same lists read again: merged anew, but no change to tell.
        board.lists_changed(&name, lists);
        assert!(!Arc::ptr_eq(&merged, &board.merged()));
        assert!(board.merged().same_entries(&merged));
        assert!(matches!(
            events.try_recv(),
            Err(tokio::sync::broadcast::error::TryRecvError::Empty)
        ));
    }
}
