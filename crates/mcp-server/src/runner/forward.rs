//! Forwarding the server's [`ListChanges`](crate::ListChanges) to one
//! handshake-era session: the task each such connection runs, which tells
//! its client what changed in the lists it was advertised and the
//! resources and tasks it follows.

use std::pin::Pin;

use mcp_types::ServerCapabilities;
use tokio::sync::broadcast;

use crate::changes::{ListChange, next_changes};
use crate::session::ServerSession;
use crate::tasks::TaskFeed;

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
/// A lagging receiver recovers as [`next_changes`] says.
///
/// Every idle handshake-era session keeps this task waiting, so what it
/// holds while it waits is kept small: the wait for `initialized` and each
/// send are boxed, and take their memory only while they run.
pub(crate) async fn forward(
    mut changes: broadcast::Receiver<ListChange>,
    session: ServerSession,
    advertised: Advertised,
    mut tasks: Option<TaskFeed>,
    initialized: Pin<Box<dyn Future<Output = ()> + Send>>,
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
            let told = Box::pin(tell(&session, advertised, tasks.as_mut(), change)).await;
            if let Err(error) = told {
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
    tasks: Option<&mut TaskFeed>,
    change: &ListChange,
) -> Result<(), crate::Error> {
    match change {
        ListChange::Task { .. } | ListChange::AnyTask => match tasks {
            Some(feed) => feed.tell(session, change).await,
            None => Ok(()),
        },
        ListChange::Tools if advertised.tools => session.send_tool_list_changed().await,
        ListChange::Prompts if advertised.prompts => session.send_prompt_list_changed().await,
        ListChange::Resources if advertised.resources => session.send_resource_list_changed().await,
        // Sent to subscribers only (the session checks).
        ListChange::ResourceUpdated(uri) => session.send_resource_updated(uri).await,
        ListChange::Tools | ListChange::Prompts | ListChange::Resources => Ok(()),
    }
}
