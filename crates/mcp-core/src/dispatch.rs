//! What becomes of each message from the peer that is not a request to run:
//! answers to our own requests, notifications the dispatcher handles itself
//! (`notifications/cancelled`, `notifications/progress`), and messages that
//! could not be read. Shared by both ways of being driven: a connection's
//! read loop and an owner handing messages in ([`crate::Dispatcher`]).

use mcp_types::peek::Shape;
use mcp_types::{
    CancelledNotificationParams, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage,
    JsonRpcNotification, ProgressNotificationParams, RequestId,
};

use crate::error::TransportError;
use crate::fault::Fault;
use crate::handler::{Handler, IncomingNotification};
use crate::peer::{Failure, Shared};
use crate::transport::{Inbound, Outbound};

/// Sends the peer an error answer (to a request of its, or with no id).
pub(crate) async fn send_error(shared: &Shared, id: Option<RequestId>, error: ErrorObject) {
    let response = JsonRpcErrorResponse::new(id, error);
    if let Err(error) = shared.send(Outbound::new(response.into())).await {
        tracing::debug!(%error, "an error answer could not be sent");
    }
}

/// Handles a notification the dispatcher serves itself; the rest is the
/// handler's, in order of arrival.
pub(crate) fn control(
    shared: &Shared,
    notification: JsonRpcNotification,
) -> Option<IncomingNotification> {
    match notification.method.as_str() {
        "notifications/cancelled" => {
            let params = notification
                .params
                .as_ref()
                .and_then(|p| p.parse::<CancelledNotificationParams>().ok());
            // Malformed cancellations are ignored, as the spec says.
            if let Some(id) = params.and_then(|p| p.request_id) {
                shared.cancel_inbound(&id);
            }
            None
        }
        "notifications/progress" => {
            let params = notification
                .params
                .as_ref()
                .and_then(|p| p.parse::<ProgressNotificationParams>().ok());
            if let Some(params) = params {
                shared.progress(params);
            }
            None
        }
        _ => Some(IncomingNotification {
            method: notification.method,
            params: notification.params,
        }),
    }
}

/// Takes the peer's answer to one of our requests: it wakes its caller; an
/// answer nothing waits on, or an error without an id, is a fault (the
/// error fails the one request waiting, if only one does).
pub(crate) fn settle_reply<H: Handler>(shared: &Shared, handler: &H, message: JsonRpcMessage) {
    match message {
        JsonRpcMessage::Response(response) => {
            if !shared.answer(&response.id, Ok(response.result)) {
                tracing::warn!(id = %response.id, "a response to no pending request; dropped");
                handler.on_fault(Fault::StrayResponse { id: response.id });
            }
        }
        JsonRpcMessage::Error(response) => match response.id {
            Some(id) => {
                if !shared.answer(&id, Err(Failure::Remote(response.error))) {
                    tracing::warn!(%id, "an error response to no pending request; dropped");
                    handler.on_fault(Fault::StrayResponse { id });
                }
            }
            None => {
                tracing::warn!(
                    code = %response.error.code,
                    message = %response.error.message,
                    "the peer reported an error with no request id"
                );
                // With exactly one request waiting, it is the one the error
                // can only be about: fail it rather than let it time out.
                let only = shared.lock().pending.take_only();
                let failed = only.map(|(id, request)| {
                    if request
                        .waiter
                        .send(Err(Failure::Remote(response.error.clone())))
                        .is_err()
                    {
                        tracing::trace!(%id, "the caller had left");
                    }
                    id
                });
                handler.on_fault(Fault::UnaddressedError {
                    error: response.error,
                    failed,
                });
            }
        },
        // Requests and notifications are not replies.
        other => tracing::debug!(method = other.method(), "not a reply; dropped"),
    }
}

/// Settles an inbound item that is not a well-formed message (or is a
/// failure the transport reports); `false` when the connection is gone.
pub(crate) async fn settle_other<H: Handler>(shared: &Shared, handler: &H, item: Inbound) -> bool {
    match item {
        Inbound::Message(message, _) => settle_reply(shared, handler, message),
        Inbound::Malformed(error) => {
            tracing::warn!(
                kind = ?error.kind,
                shape = ?error.shape,
                id = error.id.as_ref().map(tracing::field::display),
                "refused a malformed message"
            );
            let unread = Unread {
                id: error.id.clone(),
                shape: error.shape,
                answer: error.to_error_object(),
                failure: TransportError::InvalidResponse(error.clone()),
            };
            let failed = unread.settle(shared).await;
            handler.on_fault(Fault::Unreadable { error, failed });
        }
        Inbound::TooLarge { limit, id, shape } => {
            tracing::warn!(
                limit,
                shape = ?shape,
                id = id.as_ref().map(tracing::field::display),
                "refused a message over the size limit; raise the transport's limit if such \
                 messages are legitimate"
            );
            let unread = Unread {
                id: id.clone(),
                shape,
                answer: ErrorObject::invalid_request(format!(
                    "the message exceeds the {limit}-byte limit and was dropped"
                )),
                failure: TransportError::ResponseTooLarge { limit },
            };
            let failed = unread.settle(shared).await;
            handler.on_fault(Fault::TooLarge { limit, id, failed });
        }
        Inbound::Closed => return false,
        Inbound::RequestFailed { id, error } => {
            tracing::debug!(%id, %error, "the transport failed a request");
            if !shared.answer(&id, Err(Failure::Transport(error))) {
                tracing::debug!(%id, "the failed request was no longer waited for");
            }
        }
        Inbound::Fault(error) => {
            tracing::warn!(%error, "the transport failed outside a request");
            handler.on_fault(Fault::Transport(error));
        }
    }
    true
}

/// A message that could not be read, with what its first bytes showed: a
/// response fails the request of ours it answers (and is never answered
/// back), a request of the peer's gets an error answer.
struct Unread {
    id: Option<RequestId>,
    shape: Shape,
    /// The error answering it, should it be the peer's request.
    answer: ErrorObject,
    /// The error failing our request, should it answer one.
    failure: TransportError,
}

impl Unread {
    /// Settles the message; the id of our request it failed, if any.
    async fn settle(self, shared: &Shared) -> Option<RequestId> {
        let ours = {
            let mut state = shared.lock();
            match (&self.id, self.shape) {
                // An id of ours that the peer sent back is an answer, even
                // when the bytes did not show it: never answer it back.
                (Some(id), Shape::Response | Shape::Unknown) => {
                    state.pending.take(id).map(|request| (id.clone(), request))
                }
                // A response that lost its id can only answer a request of
                // ours when exactly one waits.
                (None, Shape::Response) => state.pending.take_only(),
                _ => None,
            }
        };
        if let Some((id, request)) = ours {
            if request
                .waiter
                .send(Err(Failure::Transport(self.failure)))
                .is_err()
            {
                tracing::trace!(%id, "the unreadable answer's caller had left");
            }
            return Some(id);
        }
        match self.shape {
            // Answers and notifications get no answer.
            Shape::Response | Shape::Notification => {}
            _ => send_error(shared, self.id, self.answer).await,
        }
        None
    }
}
