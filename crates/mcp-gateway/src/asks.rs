//! What an upstream sends in the course of a downstream call, passed to
//! that call's client: its requests of its client (sampling, elicitation,
//! roots) through the call's [`Context::ask`] (a server-to-client request
//! to a handshake-era client, an `input_required` round to a stateless
//! one), its log messages on the call's own stream, at the downstream
//! client's level ([`Relayed`]).
//!
//! Which call an upstream's message belongs to:
//! - a stateless upstream asks inside the result of our call (Multi
//!   Round-Trip Requests), and the client answers those rounds within the
//!   call's own future: the call is known exactly (a task-local);
//! - over streamable HTTP (either era) a message the upstream sends in the
//!   course of our request comes on that request's SSE stream, and the
//!   client says which ([`RequestInfo::related_request`](mcp_client::RequestInfo),
//!   [`NotificationInfo::related_request`](mcp_client::NotificationInfo)):
//!   each forwarded call is sent under an id of the gateway's choosing, so
//!   the call is known; over stdio nothing on the wire says which, so it
//!   goes to the one call in flight to that upstream. With several (or
//!   none), an ask is refused with an error saying why, and a log message
//!   is the upstream session's own: it stays in the gateway's log at debug
//!   (level and logger, never its data), for passing one upstream's log to
//!   every downstream client would leak it between clients.
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

use mcp_core::Progress;
use mcp_server::Context;
use mcp_types::{
    ErrorObject, InputRequest, InputResponse, LoggingMessageNotificationParams, RequestId,
    RequestMeta,
};
use tokio::sync::{Notify, mpsc};

use crate::naming::shown;

tokio::task_local! {
    /// The downstream call whose upstream call is being driven here.
    static CURRENT: Arc<Call>;
}

/// What an upstream sent in the course of a call, for the call's
/// forwarder to pass on to its client, in order of arrival.
pub(crate) enum Relayed {
    /// A progress report.
    Progress(Progress),
    /// A log message.
    Log(LoggingMessageNotificationParams),
}

/// One downstream call forwarded upstream.
struct Call {
    cx: Context,
    /// The call's forwarder's queue (bounded: when full, more are dropped).
    relay: mpsc::Sender<Relayed>,
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

/// Calls in flight by upstream, by the number of their request id. An
/// upstream's entry stays when its last call ends: upstreams are few (the
/// config's), calls come and go.
type Calls = HashMap<Arc<str>, HashMap<u64, Arc<Call>>>;

/// What the gateway's request ids start with ([`Inflight::request_id`]).
const ID_PREFIX: &str = "gateway-";

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
        if let Some(calls) = self.inflight.lock().get_mut(self.upstream) {
            calls.remove(&self.id);
        }
    }
}

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call to `upstream` a message belongs to: the one sent under
    /// `related`, else the only one in flight; else how many are.
    fn belonging(
        &self,
        upstream: &Arc<str>,
        related: Option<&RequestId>,
    ) -> Result<Arc<Call>, usize> {
        let calls = self.lock();
        let Some(calls) = calls.get(upstream) else {
            return Err(0);
        };
        let named = related.and_then(|related| calls.get(&number(related)?));
        match named {
            Some(call) => Ok(call.clone()),
            None if calls.len() == 1 => calls.values().next().cloned().ok_or(0),
            None => Err(calls.len()),
        }
    }

    /// Passes `upstream`'s log message to the call it belongs to (the
    /// downstream client's level applies there); one that belongs to no
    /// call is noted at debug, without its data.
    pub(crate) fn log(
        &self,
        upstream: &Arc<str>,
        related: Option<&RequestId>,
        params: LoggingMessageNotificationParams,
    ) {
        // Sent as it is; given back, to be noted, when the queue is full.
        let (params, calls) = match self.belonging(upstream, related) {
            Ok(call) => match call.relay.try_send(Relayed::Log(params)) {
                Ok(()) => return,
                Err(full) => match full.into_inner() {
                    Relayed::Log(params) => (params, None),
                    Relayed::Progress(_) => return,
                },
            },
            Err(calls) => (params, Some(calls)),
        };
        // The logger's name is the upstream's text: escaped and cut.
        let (level, logger) = (params.level, params.logger.as_deref().map(shown));
        match calls {
            None => {
                tracing::debug!(%upstream, ?level, logger = logger.map(tracing::field::display), "an upstream log message was dropped: its call's queue is full")
            }
            Some(calls) => {
                tracing::debug!(%upstream, ?level, logger = logger.map(tracing::field::display), calls, "an upstream log message belongs to no one call")
            }
        }
    }

    /// A fresh id to send an upstream request under (see
    /// [`run`](Self::run)).
    pub(crate) fn request_id(&self) -> (u64, RequestId) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        (id, RequestId::from(format!("{ID_PREFIX}{id}")))
    }

    /// Runs `work` (the upstream call, sent under the request id numbered
    /// `id` by [`request_id`](Self::request_id)) for the downstream call
    /// `cx` to `upstream`: its asks go to `cx`'s client, its log messages
    /// to `relay`.
    pub(crate) async fn run<F: Future>(
        &self,
        upstream: &Arc<str>,
        id: u64,
        (cx, relay): (Context, mpsc::Sender<Relayed>),
        work: F,
    ) -> Ran<F::Output> {
        let call = Arc::new(Call {
            cx,
            relay,
            awaiting: AtomicBool::new(false),
            wake: Notify::new(),
        });
        self.lock()
            .entry(upstream.clone())
            .or_default()
            .insert(id, call.clone());
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
            Err(_) => self.belonging(upstream, related).map_err(|count| {
                ErrorObject::internal_error(format!(
                    "the gateway cannot tell which of its clients' calls this \
                     `{method}` request belongs to ({count} calls in flight to upstream \
                     `{upstream}`): unless the transport says (streamable HTTP), it \
                     forwards such a request only while exactly one call to the \
                     upstream is in flight"
                ))
            })?,
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

/// An upstream's request tied to one of its own tasks (`_meta`
/// related-task): refused, since no downstream request waits for its
/// answer (the downstream client polls its task), and guessing which
/// client's call it belongs to could hand it to another client.
///
/// # Errors
/// The refusal, for such a request.
pub(crate) fn refuse_task_asks(meta: Option<&RequestMeta>) -> Result<(), ErrorObject> {
    match meta.and_then(|meta| meta.related_task.as_ref()) {
        Some(_) => Err(ErrorObject::internal_error(
            "the gateway does not pass on requests an upstream task makes: run the tool \
             without a task to be asked",
        )),
        None => Ok(()),
    }
}

/// The number of one of the gateway's request ids, if `id` is one: of the
/// very form [`Inflight::request_id`] writes (no sign, no leading zero),
/// so no other id finds the call.
fn number(id: &RequestId) -> Option<u64> {
    let RequestId::String(id) = id else {
        return None;
    };
    let digits = id.strip_prefix(ID_PREFIX)?;
    let written =
        digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    written.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::{Inflight, number, refuse_task_asks};
    use mcp_types::{ErrorObject, RelatedTaskMetadata, RequestId, RequestMeta};

    #[test]
    fn only_the_ids_the_gateway_writes_find_a_call() {
        let inflight = Inflight::default();
        for _ in 0..11 {
            let (n, id) = inflight.request_id();
            assert_eq!(number(&id), Some(n), "{id:?}");
        }
        for other in [
            "gateway-07",
            "gateway-+7",
            "gateway-",
            "gateway-7 ",
            "Gateway-7",
            "7",
        ] {
            assert_eq!(number(&RequestId::from(other)), None, "{other}");
        }
        assert_eq!(number(&RequestId::Number(7)), None);
        let too_big = format!("gateway-{}0", u64::MAX);
        assert_eq!(number(&RequestId::from(too_big)), None);
    }

    #[test]
    fn an_upstream_tasks_asks_are_refused_and_others_pass() {
        let mut meta = RequestMeta::default();
        assert!(refuse_task_asks(None).is_ok());
        assert!(refuse_task_asks(Some(&meta)).is_ok());
        meta.related_task = Some(RelatedTaskMetadata::new("t"));
        let refused = refuse_task_asks(Some(&meta)).expect_err("a task's ask is refused");
        assert_eq!(refused.code, ErrorObject::internal_error("").code);
        assert!(
            refused.message.contains("without a task"),
            "says what to do instead: {}",
            refused.message
        );
    }
}
