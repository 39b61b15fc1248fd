//! The 2025-11-25 status notifications of a handshake-era session
//! (`notifications/tasks/status`): the session watches every task of its
//! owner. Each change the server's feed names is re-read from the store and
//! sent; after a lag (the feed lost changes it cannot name) every task of
//! the owner is re-read and sent, except those whose end the session was
//! already told, so a task that ended meanwhile is not missed.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_types::{TaskStatusNotificationParams, methods};

use super::{DEFAULT_MAX_TASKS, TaskEngine, TaskRecord};
use crate::changes::ListChange;
use crate::session::ServerSession;

/// The tasks one handshake-era session is told about: those of `owner`.
pub(crate) struct TaskFeed {
    engine: Arc<TaskEngine>,
    owner: String,
    /// Tasks whose end this session was told, so a lag does not tell them
    /// again; at most [`DEFAULT_MAX_TASKS`] (beyond, it starts over, and a
    /// later lag may repeat an end, which clients tolerate).
    told_ended: HashSet<String>,
}

impl TaskFeed {
    pub(crate) fn new(engine: Arc<TaskEngine>, owner: String) -> Self {
        Self {
            engine,
            owner,
            told_ended: HashSet::new(),
        }
    }

    /// Sends the states `change` calls for: the task it names if it is
    /// this session's; after a lag ([`ListChange::AnyTask`]) every task of
    /// this session's whose end it was not told.
    pub(crate) async fn tell(
        &mut self,
        session: &ServerSession,
        change: &ListChange,
    ) -> Result<(), crate::Error> {
        match change {
            ListChange::Task { owner, task_id } if *owner == self.owner => {
                match self.engine.store().get(owner, task_id).await {
                    Ok(Some(record)) => self.send(session, &record).await,
                    // Expired meanwhile: nothing to tell.
                    Ok(None) => Ok(()),
                    Err(error) => {
                        // Status notifications are a courtesy (the client polls).
                        tracing::debug!(%error, "could not read a task to announce its status");
                        Ok(())
                    }
                }
            }
            ListChange::AnyTask => self.catch_up(session).await,
            _ => Ok(()),
        }
    }

    /// Re-sends the state of every task of the owner whose end the session
    /// was not told.
    async fn catch_up(&mut self, session: &ServerSession) -> Result<(), crate::Error> {
        let mut listed = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = match self.engine.list(&self.owner, cursor.as_deref()).await {
                Ok(page) => page,
                Err(error) => {
                    tracing::debug!(%error, "could not list tasks to announce their status");
                    return Ok(());
                }
            };
            for record in &page.tasks {
                listed.insert(record.task_id.clone());
                if !self.told_ended.contains(&record.task_id) {
                    self.send(session, record).await?;
                }
            }
            cursor = page.next_cursor;
            // The store bounds an owner's tasks; so does this walk.
            if cursor.is_none() || listed.len() >= DEFAULT_MAX_TASKS {
                break;
            }
        }
        // Expired tasks are not told again anyway.
        if cursor.is_none() {
            self.told_ended.retain(|id| listed.contains(id));
        }
        Ok(())
    }

    async fn send(
        &mut self,
        session: &ServerSession,
        record: &TaskRecord,
    ) -> Result<(), crate::Error> {
        if record.status.is_terminal() {
            if self.told_ended.len() >= DEFAULT_MAX_TASKS {
                self.told_ended.clear();
            }
            self.told_ended.insert(record.task_id.clone());
        }
        let params = TaskStatusNotificationParams::new(record.to_task());
        session
            .send_notification::<methods::TaskStatus>(&params)
            .await
    }
}
