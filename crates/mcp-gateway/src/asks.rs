//! An upstream's requests of its client (sampling, elicitation, roots)
//! passed to the downstream client of the call they belong to, through
//! that call's [`Context::ask`] (a server-to-client request to a
//! handshake-era client, an `input_required` round to a stateless one).
//!
//! Which call an upstream's request belongs to:
//! - a stateless upstream asks inside the result of our call (Multi
//!   Round-Trip Requests), and the client answers those rounds within the
//!   call's own future: the call is known exactly (a task-local);
//! - a handshake-era upstream sends a request of its own: over streamable
//!   HTTP it comes on the SSE stream of our request, and the client says
//!   which ([`RequestInfo::related_request`](mcp_client::RequestInfo)):
//!   each forwarded call is sent under an id of the gateway's choosing, so
//!   the call is known; over stdio nothing on the wire says which, so it
//!   goes to the one call in flight to that upstream, and is refused with
//!   an error saying why when there are several (or none).
//!
//! A stateless downstream client answers by calling again: the call's
//! handler returns at once (the runner answers `input_required`), the
//! upstream call is cancelled, and the retry calls the upstream again from
//! the start, its asks now answered. A handshake-era upstream's tool thus
//! runs again up to where it asked.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_server::Context;
use mcp_types::{ErrorObject, InputRequest, InputResponse, RequestId};
use tokio::sync::Notify;

tokio::task_local! {
    /// The downstream call whose upstream call is being driven here.
    static CURRENT: Arc<Call>;
}

/// One downstream call forwarded upstream.
struct Call {
    cx: Context,
    /// The id the upstream request is sent under.
    request: RequestId,
    /// Set when the downstream client must answer first (stateless era).
    awaiting: AtomicBool,
    wake: Notify,
}

/// How a forwarded call ended.
pub(crate) enum Ran<T> {
    /// The upstream answered (or failed).
    Done(T),
    /// The downstream client is asked for input first: return anything,
    /// the server answers `input_required`.
    AwaitingInput,
}

/// Calls in flight by upstream, each under an id of its own.
type Calls = HashMap<Arc<str>, Vec<(u64, Arc<Call>)>>;

/// The downstream calls in flight, by the upstream they went to.
#[derive(Default)]
pub(crate) struct Inflight {
    calls: Mutex<Calls>,
    next: AtomicU64,
}

/// Takes a call off the table when its forwarding ends (or is dropped).
struct Registered<'a> {
    inflight: &'a Inflight,
    upstream: &'a Arc<str>,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let mut calls = self.inflight.lock();
        if let Some(list) = calls.get_mut(self.upstream) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                calls.remove(self.upstream);
            }
        }
    }
}

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id to send an upstream request under (see
    /// [`run`](Self::run)).
    pub(crate) fn request_id(&self) -> (u64, RequestId) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        (id, RequestId::from(format!("gateway-{id}")))
    }

    /// Runs `work` (the upstream call, sent under `request`, from
    /// [`request_id`](Self::request_id)) for the downstream call `cx` to
    /// `upstream`: its asks go to `cx`'s client.
    pub(crate) async fn run<F: Future>(
        &self,
        upstream: &Arc<str>,
        (id, request): (u64, RequestId),
        cx: Context,
        work: F,
    ) -> Ran<F::Output> {
        let call = Arc::new(Call {
            cx,
            request,
            awaiting: AtomicBool::new(false),
            wake: Notify::new(),
        });
        self.lock()
            .entry(upstream.clone())
            .or_default()
            .push((id, call.clone()));
        let _registered = Registered {
            inflight: self,
            upstream,
            id,
        };
        let scoped = CURRENT.scope(call.clone(), work);
        let ran = tokio::select! {
            out = scoped => Ran::Done(out),
            () = call.wake.notified() => Ran::AwaitingInput,
        };
        if call.awaiting.load(Ordering::Acquire) {
            Ran::AwaitingInput
        } else {
            ran
        }
    }

    /// Answers `upstream`'s `request` through the downstream call it
    /// belongs to.
    ///
    /// # Errors
    /// The error the upstream is answered with: no call to ask (or
    /// several), the downstream client cannot or did not answer, or it is
    /// being asked in a round of its own (stateless era).
    pub(crate) async fn ask(
        &self,
        upstream: &Arc<str>,
        related: Option<&RequestId>,
        request: InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        let method = request.method();
        let call = match CURRENT.try_with(Arc::clone) {
            Ok(call) => call,
            Err(_) => {
                let calls = self.lock();
                let list = calls.get(upstream).map(Vec::as_slice);
                let named = related
                    .and_then(|related| list?.iter().find(|(_, call)| call.request == *related));
                match (named, list) {
                    (Some((_, call)), _) | (None, Some([(_, call)])) => call.clone(),
                    (None, other) => {
                        let count = other.map_or(0, <[_]>::len);
                        return Err(ErrorObject::internal_error(format!(
                            "the gateway cannot tell which of its clients' calls this \
                             `{method}` request belongs to ({count} calls in flight to upstream \
                             `{upstream}`): unless the transport says (streamable HTTP), it \
                             forwards such a request only while exactly one call to the \
                             upstream is in flight"
                        )));
                    }
                }
            }
        };
        match call.cx.ask(request).await {
            Ok(response) => Ok(response),
            Err(mcp_server::Error::AwaitingInput { .. }) => {
                call.awaiting.store(true, Ordering::Release);
                call.wake.notify_one();
                Err(ErrorObject::internal_error(
                    "the gateway's client is asked first; the call is made again with its answer",
                ))
            }
            Err(error) => Err(error.to_error_object()),
        }
    }
}
