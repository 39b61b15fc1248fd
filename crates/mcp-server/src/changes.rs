//! Announcing what changed to every client, in both eras: one broadcast
//! ([`ListChanges`]) that each `subscriptions/listen` stream (2026-07-28) and
//! each initialized handshake-era session ([`forward`]) subscribes to. It is
//! the one seam a cross-replica bus feeds.

use mcp_types::ServerCapabilities;
use tokio::sync::broadcast;

use crate::session::ServerSession;

/// Which list changed, for `subscriptions/listen` streams and handshake-era
/// sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListChange {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(String),
}

impl ListChange {
    /// What may have changed when a receiver lagged behind the broadcast and
    /// lost changes it cannot name: every list, and every resource in
    /// `subscribed`. Each listener sends the ones its client asked for.
    pub(crate) fn after_lag(subscribed: impl IntoIterator<Item = String>) -> Vec<ListChange> {
        let mut everything = vec![
            ListChange::Tools,
            ListChange::Prompts,
            ListChange::Resources,
        ];
        everything.extend(subscribed.into_iter().map(ListChange::ResourceUpdated));
        everything
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

/// Forwards `changes` to one handshake-era session once its client sent
/// `notifications/initialized`, until the connection ends. `changes` is
/// subscribed before the session answers `initialize`, so nothing sent
/// after that answer is missed; what comes before `initialized` waits for it.
///
/// A receiver that lags behind the broadcast lost changes it cannot name, so
/// it tells the session everything that may have changed once (every
/// advertised list, every subscribed resource): list changes and updates are
/// hints to re-read, so a repeated one costs a read and a lost one a stale view.
pub(crate) async fn forward(
    mut changes: broadcast::Receiver<ListChange>,
    session: ServerSession,
    advertised: Advertised,
    initialized: impl Future<Output = ()>,
) {
    let peer = session.peer().clone();
    tokio::select! {
        () = initialized => {}
        () = peer.closed() => return,
    }
    loop {
        let change = tokio::select! {
            change = changes.recv() => change,
            () = peer.closed() => break,
        };
        let sent = match change {
            Ok(change) => tell(&session, advertised, &change).await,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(
                    missed,
                    "a session fell behind the list changes; telling it every list and \
                     subscribed resource may have changed"
                );
                let mut sent = Ok(());
                for change in &ListChange::after_lag(session.subscriptions()) {
                    sent = tell(&session, advertised, change).await;
                    if sent.is_err() {
                        break;
                    }
                }
                sent
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "stopped forwarding list changes: the connection closed");
            break;
        }
    }
}

/// Sends one change to a handshake-era session, if it asked for it.
async fn tell(
    session: &ServerSession,
    advertised: Advertised,
    change: &ListChange,
) -> Result<(), crate::Error> {
    match change {
        ListChange::Tools if advertised.tools => session.send_tool_list_changed().await,
        ListChange::Prompts if advertised.prompts => session.send_prompt_list_changed().await,
        ListChange::Resources if advertised.resources => session.send_resource_list_changed().await,
        // Sent to subscribers only (the session checks).
        ListChange::ResourceUpdated(uri) => session.send_resource_updated(uri).await,
        ListChange::Tools | ListChange::Prompts | ListChange::Resources => Ok(()),
    }
}
