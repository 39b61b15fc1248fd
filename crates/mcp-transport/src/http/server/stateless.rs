//! One stateless (2026-07-28) exchange: a single request validated against
//! its headers, served by a dispatcher connection that lives as long as the
//! exchange, answered with JSON, or with SSE once the handler sends a
//! notification first.
//!
//! The exchange still hands the factory a [`SessionTransport`] per POST (a
//! dispatcher `Connection` per exchange); calling the handler directly
//! would need a factory that takes a handler instead of a transport.

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use mcp_core::{Inbound, Outbound, TransportContext, TransportError};
use mcp_types::{ErrorCode, JsonRpcMessage};
use tokio::sync::{mpsc, oneshot};

use super::body::{
    HttpBody, json_response, jsonrpc_error, jsonrpc_error_with_id, plain_status, sse_response,
};
use super::checks::{stateless_status, status_for, validate_stateless};
use super::session::LIVE_QUEUE;
use super::transport::SessionTransport;
use super::{ServiceInner, to_headers};
use crate::http::sse::encode_event;

/// The dispatcher side of one exchange.
pub(super) struct Exchange {
    inbound: Mutex<Option<mpsc::Sender<Inbound>>>,
    state: Mutex<State>,
}

enum State {
    /// Before the first message: JSON if that is the response, SSE if a
    /// notification comes first.
    Waiting(oneshot::Sender<First>),
    Sse(mpsc::Sender<Bytes>),
    Done,
}

enum First {
    Json(Bytes),
    Sse(mpsc::Receiver<Bytes>),
}

impl Exchange {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the exchange: the dispatcher sees the end of its inbound
    /// messages, and an SSE answer ends.
    pub(super) fn close(&self) {
        *self.lock() = State::Done;
        self.inbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// Routes one outbound message of the exchange's dispatcher.
    pub(super) fn route(&self, outbound: Outbound) -> Result<(), TransportError> {
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
        let json = Bytes::from(serde_json::to_vec(&outbound.message)?);
        let mut state = self.lock();
        let finished = match std::mem::replace(&mut *state, State::Done) {
            State::Done => return Err(TransportError::Closed),
            State::Waiting(first) if is_response => {
                let _ = first.send(First::Json(json));
                true
            }
            State::Waiting(first) => {
                let (tx, rx) = mpsc::channel(LIVE_QUEUE);
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

/// Ends a stateless exchange when dropped (the client went away, or the
/// answer was sent).
pub(crate) struct ExchangeGuard(Arc<Exchange>);

impl Drop for ExchangeGuard {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Serves one stateless POST.
pub(super) async fn exchange(
    service: &ServiceInner,
    mut messages: Vec<JsonRpcMessage>,
    headers: &HeaderMap,
) -> Response<HttpBody> {
    if messages.len() != 1 {
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "a batch is not allowed at this protocol version: send one request per POST",
        );
    }
    let request = match messages.remove(0) {
        JsonRpcMessage::Request(request) => request,
        // Stateless clients have no notifications the server acts on.
        JsonRpcMessage::Notification(_) => return plain_status(StatusCode::ACCEPTED),
        _ => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "a response cannot be posted at this protocol version",
            );
        }
    };
    if let Err(error) = validate_stateless(&request, headers) {
        return jsonrpc_error_with_id(status_for(error.code), Some(request.id), error);
    }
    let (inbound_tx, inbound_rx) = mpsc::channel(1);
    let (first_tx, first_rx) = oneshot::channel();
    let exchange = Arc::new(Exchange {
        inbound: Mutex::new(Some(inbound_tx.clone())),
        state: Mutex::new(State::Waiting(first_tx)),
    });
    service.start(SessionTransport::exchange(exchange.clone(), inbound_rx));
    let guard = ExchangeGuard(exchange);
    let context = TransportContext::with_headers(to_headers(headers));
    if inbound_tx
        .send(Inbound::Message(JsonRpcMessage::Request(request), context))
        .await
        .is_err()
    {
        return jsonrpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR,
            "the server could not take the request",
        );
    }
    drop(inbound_tx);
    match first_rx.await {
        Ok(First::Json(body)) => json_response(stateless_status(&body), body),
        Ok(First::Sse(rx)) => {
            let mut response = sse_response(rx, None);
            response
                .headers_mut()
                .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
            response.map(|body| body.guarded(guard))
        }
        Err(_) => jsonrpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR,
            "the server ended the exchange without answering",
        ),
    }
}
