//! What serves the peer: the [`Handler`] trait, and what a handler is told
//! of each request and notification.

use std::future::Future;
use std::pin::Pin;

use mcp_types::{ErrorCode, ErrorObject, ProgressToken, RawJson, RequestId};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::fault::Fault;
use crate::peer::Peer;
use crate::transport::TransportContext;

/// A boxed, sendable future: what a handler stored behind a `dyn Fn` (a
/// registered callback, a dispatcher driven by its owner) returns, since a
/// trait object cannot name its future's type.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// An inbound request: its method and unparsed params.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IncomingRequest {
    /// The method.
    pub method: String,
    /// The params, unparsed.
    pub params: Option<RawJson>,
}

/// An inbound notification.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IncomingNotification {
    /// The method.
    pub method: String,
    /// The params, unparsed.
    pub params: Option<RawJson>,
}

#[derive(Deserialize)]
struct MetaProbe {
    #[serde(rename = "_meta")]
    meta: Option<ProgressProbe>,
}

#[derive(Deserialize)]
struct ProgressProbe {
    #[serde(rename = "progressToken")]
    progress_token: Option<ProgressToken>,
}

impl IncomingRequest {
    /// The `params._meta.progressToken` the caller asked progress with.
    /// Reads the params on demand, so requests that never report progress
    /// pay nothing.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.params
            .as_ref()?
            .parse::<MetaProbe>()
            .ok()?
            .meta?
            .progress_token
    }
}

/// What a handler knows about the request it serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestContext {
    /// The request's id.
    pub id: RequestId,
    /// What the transport said about the message.
    pub transport: TransportContext,
    /// Cancelled when the peer cancels the request or the connection ends;
    /// the response is then not sent.
    pub cancel: CancellationToken,
    /// Sends requests and notifications to the peer, tied to this request
    /// (an HTTP transport routes them onto its stream).
    pub peer: Peer,
}

/// What a handler knows about a notification.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NotificationContext {
    /// What the transport said about the message.
    pub transport: TransportContext,
    /// Sends requests and notifications to the peer.
    pub peer: Peer,
}

/// Serves what the peer sends.
pub trait Handler: Send + Sync + 'static {
    /// Answers a request. Each request runs in its own task.
    fn handle_request(
        &self,
        request: IncomingRequest,
        context: RequestContext,
    ) -> impl Future<Output = Result<RawJson, ErrorObject>> + Send;

    /// Takes a notification. Notifications are handled one at a time, in
    /// order of arrival (`notifications/cancelled` and
    /// `notifications/progress` are handled by the dispatcher itself).
    fn handle_notification(
        &self,
        notification: IncomingNotification,
        context: NotificationContext,
    ) -> impl Future<Output = ()> + Send;

    /// Whether a request of `method` must be answered before anything the
    /// peer sent after it is taken up (MCP's `initialize`). Its answer is
    /// queued before the next request or notification is handed to the
    /// handler, so what the peer pipelines behind it sees its effect, in
    /// order, however the tasks are scheduled. Responses to this side's own
    /// requests still go through meanwhile. `false` by default.
    fn is_barrier(&self, method: &str) -> bool {
        let _ = method;
        false
    }

    /// Hears a [`Fault`]: something that went wrong on the connection that
    /// no caller waits for (an unreadable message, a response to nothing,
    /// the connection dropping). Called on the read loop: keep it short,
    /// hand anything slow to a channel. The dispatcher has already logged
    /// it; by default nothing else happens.
    fn on_fault(&self, fault: Fault) {
        let _ = fault;
    }
}

/// The `-32603` answer for a handler that failed without a specific error.
pub fn internal_error(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}
