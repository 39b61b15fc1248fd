//! One stateless (2026-07-28) exchange: a single request validated against
//! its headers, called on the service's stateless [`mcp_core::Dispatcher`]
//! in the POST's own task, answered with JSON, or with SSE once the handler
//! sends a notification first.
//!
//! A stateless `notifications/cancelled` is a POST of its own: it reaches
//! the exchange running that request on this server when both come from
//! the same principal (the one `BearerGuard` verified, else the same
//! `Authorization` header, or both none), so one client cannot cancel
//! another's request. Without authentication every client counts as the
//! same principal: on such a server a client that guesses another's
//! request id can cancel it.
//!
//! The factory serves one dispatcher for all stateless exchanges; each
//! request is called on it with the exchange as its own outlet, so an
//! exchange costs no dispatcher, task or queue of its own unless the
//! handler streams.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use mcp_core::{Answered, CancellationToken, Outbound, Outlet, TransportContext, TransportError};
use mcp_types::methods::SubscriptionsListen;
use mcp_types::{
    CancelledNotificationParams, ErrorCode, JsonRpcMessage, JsonRpcNotification, Method as _,
    RequestId,
};
use tokio::sync::{mpsc, oneshot};

use super::body::{
    HttpBody, json_response, jsonrpc_error, jsonrpc_error_with_id, no_answer, plain_status,
    sse_response,
};
use super::checks::{read_envelope, stateless_status, status_for};
use super::{RequestHeaders, ServiceInner};
use crate::http::sse::encode_event;

/// The exchanges running on this service, by who sent them and their
/// request id, for `notifications/cancelled`.
#[derive(Default)]
pub(super) struct Exchanges {
    running: Mutex<HashMap<ExchangeKey, Weak<Exchange>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ExchangeKey {
    /// Who sent it: the verified principal, else the `Authorization` header.
    principal: Option<Vec<u8>>,
    id: RequestId,
}

impl ExchangeKey {
    fn new(headers: &HeaderMap, principal: Option<&str>, id: RequestId) -> Self {
        let principal = match principal {
            Some(verified) => Some(verified.as_bytes().to_vec()),
            None => headers
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes().to_vec()),
        };
        Self { principal, id }
    }
}

impl Exchanges {
    fn lock(&self) -> MutexGuard<'_, HashMap<ExchangeKey, Weak<Exchange>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The number of exchanges running.
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Ends every running `subscriptions/listen` exchange (the service
    /// drains): a listen stream is the stateless era's GET stream, which
    /// would otherwise hold graceful shutdown for its whole grace. The
    /// client sees its stream end and listens again elsewhere.
    pub(super) fn end_listens(&self) {
        let listening: Vec<_> = self
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .filter(|exchange| exchange.listen)
            .collect();
        for exchange in listening {
            exchange.cancel();
            exchange.close();
        }
    }

    /// Ends every running exchange (the service is closing).
    pub(super) fn close_all(&self) {
        let running: Vec<_> = self.lock().drain().collect();
        for (_, exchange) in running {
            if let Some(exchange) = exchange.upgrade() {
                exchange.cancel();
                exchange.close();
            }
        }
    }
}

/// The HTTP side of one exchange: where its request's messages go.
pub(super) struct Exchange {
    /// Cancels the running request.
    cancel: OnceLock<CancellationToken>,
    state: Mutex<State>,
    sse_queue: usize,
    /// A `subscriptions/listen` stream: ended when the service drains.
    listen: bool,
}

enum State {
    /// Before the first message: JSON if that is the response, SSE if a
    /// notification comes first.
    Waiting(oneshot::Sender<First>),
    Sse(mpsc::Sender<Bytes>),
    Done,
}

enum First {
    /// The answer alone, with the HTTP status it goes out with.
    Json(StatusCode, Bytes),
    Sse(mpsc::Receiver<Bytes>),
}

impl Exchange {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the exchange: an SSE answer ends.
    pub(super) fn close(&self) {
        *self.lock() = State::Done;
    }

    /// Cancels the request: the client gave up on it (its own
    /// `notifications/cancelled`, or it went away).
    fn cancel(&self) {
        if let Some(cancel) = self.cancel.get() {
            cancel.cancel();
        }
    }

    /// Routes one message the handler sent for the request, or its answer.
    fn route(&self, outbound: Outbound) -> Result<(), TransportError> {
        let is_response = match &outbound.message {
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => true,
            JsonRpcMessage::Request(_) => {
                // The stateless era has no server-to-client requests (they
                // are input requests inside a result instead).
                tracing::warn!(
                    method = outbound.message.method().unwrap_or(""),
                    "a server request in a stateless exchange was dropped"
                );
                return Ok(());
            }
            JsonRpcMessage::Notification(_) => false,
        };
        let json = Bytes::from(outbound.message.to_vec()?);
        let mut state = self.lock();
        let finished = match std::mem::replace(&mut *state, State::Done) {
            State::Done => return Err(TransportError::Closed),
            State::Waiting(first) if is_response => {
                let status = stateless_status(&outbound.message);
                let _ = first.send(First::Json(status, json));
                true
            }
            State::Waiting(first) => {
                let (tx, rx) = mpsc::channel(self.sse_queue);
                let _ = tx.try_send(encode_event(None, None, &json));
                if first.send(First::Sse(rx)).is_ok() {
                    *state = State::Sse(tx);
                    false
                } else {
                    true
                }
            }
            State::Sse(tx) => {
                let sent = tx.try_send(encode_event(None, None, &json)).is_ok();
                if sent && !is_response {
                    *state = State::Sse(tx);
                }
                // Answered, or the client is gone or too slow: over.
                is_response || !sent
            }
        };
        drop(state);
        if finished {
            self.close();
        }
        Ok(())
    }
}

impl Outlet for Exchange {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        self.route(message)
    }
}

/// Ends a stateless exchange when dropped (the client went away, or the
/// answer was sent): an unanswered request is cancelled.
struct ExchangeGuard {
    exchange: Arc<Exchange>,
    /// Taken when dropped: the entry is looked up once, by value.
    key: Option<ExchangeKey>,
    exchanges: Arc<Exchanges>,
}

impl Drop for ExchangeGuard {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut running = self.exchanges.lock();
            if let Entry::Occupied(entry) = running.entry(key) {
                if std::ptr::eq(entry.get().as_ptr(), Arc::as_ptr(&self.exchange)) {
                    entry.remove();
                }
            }
        }
        self.exchange.cancel();
        self.exchange.close();
    }
}

/// Serves a stateless `notifications/cancelled`: the named request is
/// cancelled if it runs here for the same principal. Always 202: the
/// request may have ended already, and the client needs no answer.
fn cancelled(
    service: &ServiceInner,
    notification: JsonRpcNotification,
    headers: &HeaderMap,
    principal: Option<&str>,
) {
    let id = notification
        .params
        .as_ref()
        .and_then(|p| p.parse::<CancelledNotificationParams>().ok())
        .and_then(|p| p.request_id);
    let Some(id) = id else { return };
    let exchange = service
        .exchanges
        .lock()
        .get(&ExchangeKey::new(headers, principal, id))
        .and_then(Weak::upgrade);
    if let Some(exchange) = exchange {
        exchange.cancel();
    }
}

/// Serves one stateless POST.
pub(super) async fn exchange(
    service: &ServiceInner,
    mut messages: Vec<JsonRpcMessage>,
    headers: &Arc<RequestHeaders>,
    sender: super::Sender,
    keep_alive: Option<Duration>,
) -> Response<HttpBody> {
    let principal = sender.principal.as_deref();
    if messages.len() != 1 {
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "a batch is not allowed at this protocol version: send one request per POST",
        );
    }
    let request = match messages.remove(0) {
        JsonRpcMessage::Request(request) => request,
        JsonRpcMessage::Notification(notification) => {
            // Of the stateless client's notifications the server acts on
            // one: the cancellation of a request running in another POST.
            if notification.method == "notifications/cancelled" {
                cancelled(service, notification, headers, principal);
            }
            return plain_status(StatusCode::ACCEPTED);
        }
        _ => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "a response cannot be posted at this protocol version",
            );
        }
    };
    let (envelope, parsed) = match read_envelope(&request, headers) {
        Ok(read) => read,
        Err(error) => {
            return jsonrpc_error_with_id(status_for(error.code), Some(request.id), error);
        }
    };
    let dispatcher = service.stateless_dispatcher();
    let (first_tx, mut first_rx) = oneshot::channel();
    let exchange = Arc::new(Exchange {
        cancel: OnceLock::new(),
        state: Mutex::new(State::Waiting(first_tx)),
        sse_queue: service.config.sse_queue,
        listen: request.method == SubscriptionsListen::NAME,
    });
    let key = ExchangeKey::new(headers, principal, request.id.clone());
    service
        .exchanges
        .lock()
        .entry(key.clone())
        .and_modify(|e| {
            if e.strong_count() == 0 {
                *e = Arc::downgrade(&exchange);
            }
        })
        .or_insert_with(|| Arc::downgrade(&exchange));
    let guard = ExchangeGuard {
        exchange: exchange.clone(),
        key: Some(key),
        exchanges: service.exchanges.clone(),
    };
    // Asked after registering, as `drain` ends the listens after it
    // starts draining: a listen stream opening meanwhile is either
    // refused here or ended there, never left open.
    if exchange.listen && service.draining.is_cancelled() {
        return super::shutting_down();
    }
    let mut context = TransportContext::with_headers(headers.to_headers());
    // `requestState` is bound to the principal (2026-07-28 input-required
    // results); the rate limit keys on it, else on the peer address.
    sender.fill(&mut context);
    context.envelope = Some(Ok(envelope));
    context.parsed = parsed;
    let outlet: Arc<dyn Outlet> = exchange.clone();
    #[cfg(feature = "rate-limit")]
    let id = request.id.clone();
    let run = dispatcher.call(request, context, Some(outlet));
    let _ = exchange.cancel.set(run.cancel);
    let mut answer = run.answer;
    tokio::select! {
        biased;
        outcome = &mut answer => match outcome {
            Answered::Alone(message) => {
                exchange.close();
                return match message.to_vec() {
                    Ok(body) => json_response(stateless_status(&message), Bytes::from(body)),
                    Err(e) => jsonrpc_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        ErrorCode::INTERNAL_ERROR,
                        format!("the answer could not be serialized: {e}"),
                    ),
                };
            }
            // Sent: the answer went to the exchange behind what came first.
            Answered::Sent => {}
            #[cfg(feature = "rate-limit")]
            Answered::Limited(limited) => {
                exchange.close();
                return super::body::too_many_requests(id, &limited);
            }
            // Cancelled: no answer; the POST ends without one.
            _ => {
                exchange.close();
                return no_answer(None);
            }
        },
        // Outside tokio's cooperative budget: the answer, polled first, may
        // have spent it (a handler that yields only to the budget), and a
        // stream that opened would then wait for the handler to finish.
        first = tokio::task::coop::unconstrained(&mut first_rx) => {
            // The handler streams: the rest of its run is the service's,
            // and ends when the body (the guard) is dropped.
            service.tasks.spawn(async move {
                // Its run is over: nothing more comes for the exchange. An
                // answer has closed it already; a cancelled request has
                // none, and its stream ends here rather than staying open
                // for an answer that will never come.
                answer.await;
                exchange.close();
            });
            return answer_with(first, guard, keep_alive);
        }
    }
    answer_with(first_rx.await, guard, keep_alive)
}

/// The POST's answer once the exchange chose JSON or SSE.
fn answer_with(
    first: Result<First, oneshot::error::RecvError>,
    guard: ExchangeGuard,
    keep_alive: Option<Duration>,
) -> Response<HttpBody> {
    match first {
        Ok(First::Json(status, body)) => json_response(status, body),
        Ok(First::Sse(rx)) => {
            let mut response = sse_response(rx, None, keep_alive);
            response
                .headers_mut()
                .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
            response.map(|body| body.holding(guard))
        }
        Err(_) => jsonrpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR,
            "the server ended the exchange without answering",
        ),
    }
}
