//! Announcing what changed to every client, in both eras: one broadcast
//! ([`ListChanges`]) that each `subscriptions/listen` stream (2026-07-28) and
//! each initialized handshake-era session (the runner's forwarder)
//! subscribes to. It is
//! the one seam a cross-replica bus feeds: list changes, resource updates
//! and task status changes alike. A task change names the task only (its
//! owner and id, plain data); each listener reads the task's state from the
//! [`TaskStore`](crate::tasks::TaskStore), so a shared store and a bus that
//! carries these names tell every replica's listeners.

use tokio::sync::broadcast;

/// Which list changed, for `subscriptions/listen` streams and handshake-era
/// sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListChange {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(String),
    /// Task `task_id` of `owner` changed: listeners re-read it.
    Task {
        owner: String,
        task_id: String,
    },
    /// Any task may have changed (a listener lagged): listeners re-read
    /// every task they watch.
    AnyTask,
}

/// The next changes a listener (a `subscriptions/listen` stream or a
/// handshake-era session) must consider, or `None` once the server is gone.
///
/// A receiver that lagged behind the broadcast lost changes it cannot name,
/// so it gets everything that may have changed once: every list, every
/// resource in `subscribed` and every task; each listener sends the ones its
/// client asked for. List changes and updates are hints to re-read, so a repeated one
/// costs a read and a lost one a stale view.
pub(crate) async fn next_changes(
    changes: &mut broadcast::Receiver<ListChange>,
    subscribed: impl FnOnce() -> Vec<String>,
) -> Option<Vec<ListChange>> {
    match changes.recv().await {
        Ok(change) => Some(vec![change]),
        Err(broadcast::error::RecvError::Lagged(missed)) => {
            tracing::debug!(
                missed,
                "a listener fell behind the list changes; telling it every list and \
                 subscribed resource may have changed"
            );
            let mut everything = vec![
                ListChange::Tools,
                ListChange::Prompts,
                ListChange::Resources,
            ];
            everything.extend(subscribed().into_iter().map(ListChange::ResourceUpdated));
            everything.push(ListChange::AnyTask);
            Some(everything)
        }
        Err(broadcast::error::RecvError::Closed) => None,
    }
}

/// Announces changes to what the server offers to every client that asked
/// for them, in both eras:
/// - each open `subscriptions/listen` stream (2026-07-28), as its filter says;
/// - each initialized handshake-era session (2024-11-05 to 2025-11-25) of
///   [`Server::serve`](crate::Server::serve), stdio and HTTP sessions alike:
///   `notifications/*/list_changed` for the lists the server advertises
///   `listChanged` on ([`ServerBuilder::list_changed`](crate::ServerBuilder::list_changed)),
///   `notifications/resources/updated` for the URIs the session subscribed
///   to with `resources/subscribe`.
///
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct ListChanges {
    tx: broadcast::Sender<ListChange>,
    /// Set when the server shares a message bus with other servers: every
    /// change goes through it, to each server's listeners (this one's too).
    #[cfg(feature = "http")]
    bridge: std::sync::Arc<std::sync::OnceLock<bus::Bridge>>,
}

impl ListChanges {
    pub(crate) fn new() -> Self {
        Self {
            tx: broadcast::channel(64).0,
            #[cfg(feature = "http")]
            bridge: std::sync::Arc::default(),
        }
    }

    /// Carries every change through `bus` from now on (once; a later call
    /// keeps the first bus), so that a change announced on any server
    /// sharing it reaches the listeners of all. Must be called within a
    /// tokio runtime (the bridge is a task this value owns).
    #[cfg(feature = "http")]
    pub(crate) fn share(&self, bus: std::sync::Arc<dyn mcp_transport::store::MessageBus>) {
        if self.bridge.get().is_some() {
            return;
        }
        match bus::Bridge::start(bus, self.tx.clone()) {
            Some(bridge) => {
                let _ = self.bridge.set(bridge);
            }
            None => tracing::warn!(
                "list changes are not shared with other servers: the HTTP service was built \
                 outside a tokio runtime; build it inside one"
            ),
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ListChange> {
        self.tx.subscribe()
    }

    pub(crate) fn send(&self, change: ListChange) {
        #[cfg(feature = "http")]
        let change = match self.bridge.get() {
            Some(bridge) => match bridge.send(change) {
                None => return,
                Some(change) => change,
            },
            None => change,
        };
        // No listener is not an error: nobody asked.
        let _ = self.tx.send(change);
    }

    /// The tool list changed.
    pub fn tools_changed(&self) {
        self.send(ListChange::Tools);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.send(ListChange::Prompts);
    }

    /// The resource list changed.
    pub fn resources_changed(&self) {
        self.send(ListChange::Resources);
    }

    /// The resource at `uri` changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.send(ListChange::ResourceUpdated(uri.into()));
    }

    /// Task `task_id` of `owner` changed in the server's
    /// [`TaskStore`](crate::tasks::TaskStore): listening clients that watch
    /// it are sent its new state, read from the store. The server calls
    /// this for every change it makes; a shared store's change feed calls
    /// it on the other replicas.
    pub fn task_changed(&self, owner: impl Into<String>, task_id: impl Into<String>) {
        self.send(ListChange::Task {
            owner: owner.into(),
            task_id: task_id.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_lagging_listener_is_told_everything_it_may_have_missed_then_the_rest() {
        let changes = ListChanges::new();
        let mut receiver = changes.subscribe();
        // One more than the broadcast keeps: the oldest is lost.
        for _ in 0..65 {
            changes.prompts_changed();
        }
        let subscribed = || vec!["file:///a".to_owned()];
        assert_eq!(
            next_changes(&mut receiver, subscribed).await,
            Some(vec![
                ListChange::Tools,
                ListChange::Prompts,
                ListChange::Resources,
                ListChange::ResourceUpdated("file:///a".into()),
                ListChange::AnyTask,
            ])
        );
        for _ in 0..64 {
            assert_eq!(
                next_changes(&mut receiver, subscribed).await,
                Some(vec![ListChange::Prompts])
            );
        }
        drop(changes);
        assert_eq!(next_changes(&mut receiver, subscribed).await, None);
    }
}

/// List changes on a message bus shared by several servers.
#[cfg(feature = "http")]
mod bus {
    use std::sync::Arc;

    use bytes::Bytes;
    use mcp_transport::store::MessageBus;
    use tokio::sync::{broadcast, mpsc};
    use tokio_util::task::AbortOnDropHandle;

    use super::ListChange;

    /// The topic list changes travel on.
    const TOPIC: &str = "changes";
    /// Changes waiting to be published, at most.
    const OUTGOING: usize = 256;

    /// Publishes this server's changes and hands everything the bus
    /// brings to the local listeners; its task ends when it is dropped.
    #[derive(Debug)]
    pub(super) struct Bridge {
        outgoing: mpsc::Sender<ListChange>,
        _task: AbortOnDropHandle<()>,
    }

    impl Bridge {
        pub(super) fn start(
            bus: Arc<dyn MessageBus>,
            local: broadcast::Sender<ListChange>,
        ) -> Option<Self> {
            let runtime = tokio::runtime::Handle::try_current().ok()?;
            let (outgoing, queue) = mpsc::channel(OUTGOING);
            let task = runtime.spawn(run(bus, local, queue));
            Some(Self {
                outgoing,
                _task: AbortOnDropHandle::new(task),
            })
        }

        /// Queues `change` for the bus; gives it back when the queue is
        /// full (it is then announced here only).
        pub(super) fn send(&self, change: ListChange) -> Option<ListChange> {
            match self.outgoing.try_send(change) {
                Ok(()) => None,
                Err(
                    mpsc::error::TrySendError::Full(change)
                    | mpsc::error::TrySendError::Closed(change),
                ) => {
                    tracing::warn!(
                        "list changes are announced faster than the shared bus takes them; \
                         this one reaches this server's clients only"
                    );
                    Some(change)
                }
            }
        }
    }

    fn encode(change: &ListChange) -> Bytes {
        match change {
            ListChange::Tools => Bytes::from_static(b"tools"),
            ListChange::Prompts => Bytes::from_static(b"prompts"),
            ListChange::Resources => Bytes::from_static(b"resources"),
            ListChange::ResourceUpdated(uri) => Bytes::from(format!("updated {uri}")),
            ListChange::AnyTask => Bytes::from_static(b"tasks"),
            // The owner and id, separated by a byte neither contains.
            ListChange::Task { owner, task_id } => Bytes::from(format!("task {owner}\n{task_id}")),
        }
    }

    fn decode(payload: &[u8]) -> Option<ListChange> {
        match payload {
            b"tools" => Some(ListChange::Tools),
            b"prompts" => Some(ListChange::Prompts),
            b"resources" => Some(ListChange::Resources),
            b"tasks" => Some(ListChange::AnyTask),
            other => {
                if let Some(task) = other.strip_prefix(b"task ") {
                    let task = std::str::from_utf8(task).ok()?;
                    let (owner, task_id) = task.rsplit_once('\n')?;
                    return Some(ListChange::Task {
                        owner: owner.to_owned(),
                        task_id: task_id.to_owned(),
                    });
                }
                let uri = other.strip_prefix(b"updated ")?;
                Some(ListChange::ResourceUpdated(
                    String::from_utf8(uri.to_vec()).ok()?,
                ))
            }
        }
    }

    async fn subscribe(bus: &dyn MessageBus) -> broadcast::Receiver<Bytes> {
        loop {
            match bus.subscribe(TOPIC).await {
                Ok(incoming) => return incoming,
                Err(error) => {
                    tracing::warn!(%error, "cannot subscribe to shared list changes; retrying in 1 s");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }

    async fn run(
        bus: Arc<dyn MessageBus>,
        local: broadcast::Sender<ListChange>,
        mut outgoing: mpsc::Receiver<ListChange>,
    ) {
        let mut incoming = subscribe(bus.as_ref()).await;
        loop {
            tokio::select! {
                change = outgoing.recv() => {
                    let Some(change) = change else { return };
                    if let Err(error) = bus.publish(TOPIC, encode(&change)).await {
                        tracing::warn!(%error, "a list change reaches this server's clients only");
                        let _ = local.send(change);
                    }
                }
                got = incoming.recv() => match got {
                    Ok(payload) => {
                        if let Some(change) = decode(&payload) {
                            let _ = local.send(change);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "fell behind the shared list changes");
                        // Each listener recovers from a lag of its own.
                        for change in [
                            ListChange::Tools,
                            ListChange::Prompts,
                            ListChange::Resources,
                            ListChange::AnyTask,
                        ] {
                            let _ = local.send(change);
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        incoming = subscribe(bus.as_ref()).await;
                    }
                },
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_change_crosses_the_bus_unchanged() {
            for change in [
                ListChange::Tools,
                ListChange::Prompts,
                ListChange::Resources,
                ListChange::ResourceUpdated("file:///a b".into()),
                ListChange::AnyTask,
                ListChange::Task {
                    owner: "principal:[\"i\",\"s\",null]".into(),
                    task_id: "t-1".into(),
                },
            ] {
                assert_eq!(decode(&encode(&change)), Some(change));
            }
            assert_eq!(decode(b"nonsense"), None);
        }
    }
}
