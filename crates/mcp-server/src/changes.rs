//! Announcing what changed to every client, in both eras: one broadcast
//! ([`ListChanges`]) that each `subscriptions/listen` stream (2026-07-28) and
//! each initialized handshake-era session ([`forward`]) subscribes to. It is
//! the one seam a cross-replica bus feeds: list changes, resource updates
//! and task status changes alike. A task change names the task only (its
//! owner and id, plain data); each listener reads the task's state from the
//! [`TaskStore`](crate::tasks::TaskStore), so a shared store and a bus that
//! carries these names tell every replica's listeners.

use std::sync::Arc;

use mcp_types::{ServerCapabilities, TaskStatusNotificationParams, methods};
use tokio::sync::broadcast;

use crate::session::ServerSession;
use crate::tasks::TaskEngine;

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

/// The lists whose changes a handshake-era session is told about: those the
/// server advertised `listChanged` on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Advertised {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Advertised {
    pub(crate) fn from(capabilities: &ServerCapabilities) -> Self {
        Self {
            tools: capabilities
                .tools
                .as_ref()
                .is_some_and(|c| c.list_changed == Some(true)),
            prompts: capabilities
                .prompts
                .as_ref()
                .is_some_and(|c| c.list_changed == Some(true)),
            resources: capabilities
                .resources
                .as_ref()
                .is_some_and(|c| c.list_changed == Some(true)),
        }
    }
}

/// The tasks a handshake-era session is told about (2025-11-25,
/// `notifications/tasks/status`): those of `owner` in `engine`'s store.
pub(crate) struct TaskFeed {
    pub(crate) engine: Arc<TaskEngine>,
    pub(crate) owner: String,
}

impl TaskFeed {
    /// Sends the state of task `task_id` if it is this session's.
    async fn tell(
        &self,
        session: &ServerSession,
        owner: &str,
        task_id: &str,
    ) -> Result<(), crate::Error> {
        if owner != self.owner {
            return Ok(());
        }
        match self.engine.store().get(owner, task_id).await {
            Ok(Some(record)) => {
                let params = TaskStatusNotificationParams::new(record.to_task());
                session
                    .send_notification::<methods::TaskStatus>(&params)
                    .await
            }
            // Expired meanwhile: nothing to tell.
            Ok(None) => Ok(()),
            Err(error) => {
                // Status notifications are a courtesy (the client polls).
                tracing::debug!(%error, "could not read a task to announce its status");
                Ok(())
            }
        }
    }
}

/// Forwards `changes` to one handshake-era session once its client sent
/// `notifications/initialized`, until the connection ends. `changes` is
/// subscribed before the session answers `initialize`, so nothing sent
/// after that answer is missed; what comes before `initialized` waits for it.
/// A lagging receiver recovers as [`next_changes`] says.
pub(crate) async fn forward(
    mut changes: broadcast::Receiver<ListChange>,
    session: ServerSession,
    advertised: Advertised,
    tasks: Option<TaskFeed>,
    initialized: impl Future<Output = ()>,
) {
    let peer = session.peer().clone();
    tokio::select! {
        () = initialized => {}
        () = peer.closed() => return,
    }
    loop {
        let batch = tokio::select! {
            batch = next_changes(&mut changes, || session.subscriptions()) => batch,
            () = peer.closed() => None,
        };
        let Some(batch) = batch else { break };
        for change in &batch {
            if let Err(error) = tell(&session, advertised, tasks.as_ref(), change).await {
                tracing::debug!(%error, "stopped forwarding list changes: the connection closed");
                return;
            }
        }
    }
}

/// Sends one change to a handshake-era session, if it asked for it.
async fn tell(
    session: &ServerSession,
    advertised: Advertised,
    tasks: Option<&TaskFeed>,
    change: &ListChange,
) -> Result<(), crate::Error> {
    match change {
        ListChange::Task { owner, task_id } => match tasks {
            Some(feed) => feed.tell(session, owner, task_id).await,
            None => Ok(()),
        },
        // The session keeps no list of its tasks to re-read, and status
        // notifications are optional: its client polls `tasks/get`.
        ListChange::AnyTask => Ok(()),
        ListChange::Tools if advertised.tools => session.send_tool_list_changed().await,
        ListChange::Prompts if advertised.prompts => session.send_prompt_list_changed().await,
        ListChange::Resources if advertised.resources => session.send_resource_list_changed().await,
        // Sent to subscribers only (the session checks).
        ListChange::ResourceUpdated(uri) => session.send_resource_updated(uri).await,
        ListChange::Tools | ListChange::Prompts | ListChange::Resources => Ok(()),
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
