//! Bookkeeping of outbound requests: id allocation, the table of requests
//! awaiting an answer, and progress-token routes. A plain state machine with
//! no I/O, so every rule here is unit-tested without a runtime.

use std::collections::HashMap;

use mcp_types::{ProgressToken, RequestId};

/// One request awaiting its answer.
#[derive(Debug)]
pub(crate) struct PendingRequest<W> {
    /// The method, for error messages.
    pub(crate) method: String,
    /// Whoever waits for the answer.
    pub(crate) waiter: W,
    /// The progress token this request asked with, to drop its route.
    pub(crate) progress_token: Option<ProgressToken>,
}

/// The requests this side sent and still waits on, and their progress routes.
#[derive(Debug)]
pub(crate) struct PendingRequests<W, P> {
    next_id: i64,
    requests: HashMap<RequestId, PendingRequest<W>>,
    progress: HashMap<ProgressToken, P>,
}

impl<W, P> Default for PendingRequests<W, P> {
    fn default() -> Self {
        Self {
            next_id: 1,
            requests: HashMap::new(),
            progress: HashMap::new(),
        }
    }
}

impl<W, P> PendingRequests<W, P> {
    /// A fresh integer id not used by any pending request.
    pub(crate) fn allocate_id(&mut self) -> RequestId {
        loop {
            let id = RequestId::Number(self.next_id);
            self.next_id = self.next_id.checked_add(1).unwrap_or(1);
            if !self.requests.contains_key(&id) {
                return id;
            }
        }
    }

    /// Records a request; refuses an id already pending.
    pub(crate) fn insert(
        &mut self,
        id: RequestId,
        method: String,
        waiter: W,
        progress: Option<(ProgressToken, P)>,
    ) -> Result<(), W> {
        if self.requests.contains_key(&id) {
            return Err(waiter);
        }
        let progress_token = progress.map(|(token, route)| {
            self.progress.insert(token.clone(), route);
            token
        });
        self.requests.insert(
            id,
            PendingRequest {
                method,
                waiter,
                progress_token,
            },
        );
        Ok(())
    }

    /// Takes the request an answer with `id` belongs to. A string id holding
    /// the decimal form of a pending integer id matches it: some peers
    /// stringify ids.
    pub(crate) fn take(&mut self, id: &RequestId) -> Option<PendingRequest<W>> {
        let key = if self.requests.contains_key(id) {
            id.clone()
        } else {
            match id {
                RequestId::String(_) => RequestId::Number(id.as_integer()?),
                RequestId::Number(n) => RequestId::String(n.to_string()),
            }
        };
        let request = self.requests.remove(&key)?;
        if let Some(token) = &request.progress_token {
            self.progress.remove(token);
        }
        Some(request)
    }

    /// Takes the one request that waits, when exactly one does (an answer
    /// that lost its id can only be for it).
    pub(crate) fn take_only(&mut self) -> Option<(RequestId, PendingRequest<W>)> {
        if self.requests.len() != 1 {
            return None;
        }
        let id = self.requests.keys().next()?.clone();
        let request = self.take(&id)?;
        Some((id, request))
    }

    /// The progress route of `token`, if a pending request asked with it.
    pub(crate) fn progress_route(&self, token: &ProgressToken) -> Option<&P> {
        self.progress.get(token)
    }

    /// Removes every pending request (the connection ended).
    pub(crate) fn drain(&mut self) -> Vec<PendingRequest<W>> {
        self.progress.clear();
        self.requests.drain().map(|(_, r)| r).collect()
    }

    /// How many requests wait.
    pub(crate) fn len(&self) -> usize {
        self.requests.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stringified_id_still_matches_its_numeric_request() {
        let mut pending = PendingRequests::<u8, ()>::default();
        let id = pending.allocate_id();
        assert_eq!(id, RequestId::Number(1));
        pending
            .insert(id, "tools/list".into(), 7, None)
            .expect("new id");
        let taken = pending.take(&RequestId::from("1")).expect("matches");
        assert_eq!(taken.waiter, 7);
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn a_non_canonical_string_does_not_match() {
        let mut pending = PendingRequests::<u8, ()>::default();
        pending
            .insert(RequestId::Number(1), "ping".into(), 1, None)
            .expect("new id");
        assert!(pending.take(&RequestId::from("01")).is_none());
        assert!(pending.take(&RequestId::from("1")).is_some());
    }

    #[test]
    fn a_duplicate_id_is_refused_and_allocation_skips_ids_in_use() {
        let mut pending = PendingRequests::<u8, ()>::default();
        pending
            .insert(RequestId::Number(1), "a".into(), 1, None)
            .expect("new id");
        assert_eq!(
            pending.insert(RequestId::Number(1), "b".into(), 2, None),
            Err(2)
        );
        assert_eq!(pending.allocate_id(), RequestId::Number(2));
    }

    #[test]
    fn a_progress_route_lives_as_long_as_its_request() {
        let mut pending = PendingRequests::<u8, &str>::default();
        let token = ProgressToken::from("p1");
        pending
            .insert(
                RequestId::Number(5),
                "tools/call".into(),
                0,
                Some((token.clone(), "route")),
            )
            .expect("new id");
        assert_eq!(pending.progress_route(&token), Some(&"route"));
        pending.take(&RequestId::Number(5));
        assert_eq!(pending.progress_route(&token), None);
    }

    #[test]
    fn only_a_lone_request_is_taken_without_its_id() {
        let mut pending = PendingRequests::<u8, ()>::default();
        assert!(pending.take_only().is_none());
        pending
            .insert(RequestId::Number(1), "a".into(), 1, None)
            .expect("new id");
        pending
            .insert(RequestId::Number(2), "b".into(), 2, None)
            .expect("new id");
        assert!(pending.take_only().is_none(), "two wait: neither is known");
        pending.take(&RequestId::Number(1));
        let (id, request) = pending.take_only().expect("one waits");
        assert_eq!((id, request.waiter), (RequestId::Number(2), 2));
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn drain_empties_everything() {
        let mut pending = PendingRequests::<u8, &str>::default();
        pending
            .insert(
                RequestId::Number(1),
                "a".into(),
                0,
                Some((ProgressToken::from(1), "r")),
            )
            .expect("new id");
        assert_eq!(pending.drain().len(), 1);
        assert_eq!(pending.progress_route(&ProgressToken::from(1)), None);
    }
}
