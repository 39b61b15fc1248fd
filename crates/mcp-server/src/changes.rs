//! Announcing what changed to every `subscriptions/listen` stream.

use tokio::sync::broadcast;

/// Which list changed, for `subscriptions/listen` streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListChange {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(String),
}

/// Announces changes to what the server offers to every open
/// `subscriptions/listen` stream (2026-07-28) that asked for them. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ListChanges {
    tx: broadcast::Sender<ListChange>,
}

impl ListChanges {
    pub(crate) fn new() -> Self {
        Self {
            tx: broadcast::channel(64).0,
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ListChange> {
        self.tx.subscribe()
    }

    pub(crate) fn send(&self, change: ListChange) {
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
}
