//! Where handshake-era sessions are kept so that any server process
//! sharing the store can serve them: the [`SessionStore`] seam and its
//! in-memory implementation.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use mcp_types::SessionRecord;
use tokio::time::Instant;

use super::StoreFuture;

/// Keeps each handshake-era session's [`SessionRecord`] under its
/// `Mcp-Session-Id`, for as long as the session is used: every call that
/// finds a session renews its time to live (the server's idle timeout), so
/// a session expires only when no process has served it for that long.
///
/// Session ids are credentials: a backend must not log them.
pub trait SessionStore: Send + Sync + 'static {
    /// Stores (or replaces) the record of session `id`, to live `ttl`.
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;

    /// The record of session `id`, its time to live renewed to `ttl`;
    /// `None` when there is no such session (never created, deleted or
    /// expired).
    fn load<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>>;

    /// Renews session `id` for `ttl`; `false` when it no longer exists.
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool>;

    /// Ends session `id` for every process; `false` when it did not exist.
    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;

    /// Whether the backend answers now (a readiness check): `Ok` by
    /// default, for a store in this process's memory.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Sessions in this process's memory, each dropped once its time to live
/// has passed (checked when it is next asked for, and on each save).
#[derive(Debug, Default)]
pub struct InMemorySessionStore {
    sessions: Mutex<HashMap<String, (SessionRecord, Instant)>>,
}

impl InMemorySessionStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRecord, Instant)>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The live entry of `id`, renewed; an expired one is removed.
    fn renew(&self, id: &str, ttl: Duration) -> Option<SessionRecord> {
        let now = Instant::now();
        let mut sessions = self.lock();
        match sessions.get_mut(id) {
            Some((record, expires)) if *expires > now => {
                *expires = now + ttl;
                Some(record.clone())
            }
            Some(_) => {
                sessions.remove(id);
                None
            }
            None => None,
        }
    }
}

impl SessionStore for InMemorySessionStore {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let now = Instant::now();
        let mut sessions = self.lock();
        // Saving is rare (a session's changes): the moment to drop the
        // expired ones, so the map stays bounded by the live sessions.
        sessions.retain(|_, (_, expires)| *expires > now);
        sessions.insert(id.to_owned(), (record.clone(), now + ttl));
        Box::pin(std::future::ready(Ok(())))
    }

    fn load<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(std::future::ready(Ok(self.renew(id, ttl))))
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.renew(id, ttl).is_some())))
    }

    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.lock().remove(id).is_some())))
    }
}

/// One HTTP session's place in a shared [`SessionStore`], for the server
/// layer that serves it: the record it was restored from (when another
/// server minted it), and [`save`](Self::save) for every change of its
/// state. Cheap to clone.
#[derive(Clone)]
pub struct SharedSession {
    pub(crate) id: std::sync::Arc<str>,
    pub(crate) store: std::sync::Arc<dyn SessionStore>,
    pub(crate) ttl: Duration,
    pub(crate) restored: Option<std::sync::Arc<SessionRecord>>,
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSession")
            .field("session", &mcp_core::session_tag(&self.id))
            .field("restored", &self.restored.is_some())
            .finish_non_exhaustive()
    }
}

impl SharedSession {
    /// The record this session was restored from; `None` for a session
    /// that this server opened with `initialize`.
    pub fn restored(&self) -> Option<&SessionRecord> {
        self.restored.as_deref()
    }

    /// Stores the session's state for every server, renewing it.
    ///
    /// # Errors
    /// When the store fails (see [`crate::Error::Store`]).
    pub async fn save(&self, record: &SessionRecord) -> Result<(), crate::Error> {
        self.store.save(&self.id, record, self.ttl).await
    }

    /// The session's state as stored now (what any server saved last),
    /// renewing it; `None` once it expired or was deleted.
    ///
    /// # Errors
    /// When the store fails (see [`crate::Error::Store`]).
    pub async fn load(&self) -> Result<Option<SessionRecord>, crate::Error> {
        self.store.load(&self.id, self.ttl).await
    }
}
