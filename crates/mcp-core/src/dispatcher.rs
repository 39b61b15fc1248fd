//! A [`Dispatcher`] its owner drives by hand: no loop reads a stream. Each
//! message from the peer is handed in as it arrives (an HTTP POST carries
//! one), a request can be called and its answer handed back to the caller,
//! and messages to the peer go to an [`Outlet`] at once. An idle
//! dispatcher runs no task at all: an HTTP server keeps one per session,
//! and one for all its stateless exchanges.

use std::sync::Arc;

#[cfg(feature = "rate-limit")]
use mcp_types::JsonRpcErrorResponse;
use mcp_types::{JsonRpcMessage, JsonRpcRequest};

use crate::config::DispatcherConfig;
use crate::dispatch::{control, settle_reply};
#[cfg(feature = "rate-limit")]
use crate::engine::refusal_error;
use crate::engine::{Answered, Call, Runner};
use crate::handler::{BoxFuture, Handler, NotificationContext};
use crate::peer::{Outlet, Peer, Shared, Way};
use crate::transport::{Outbound, TransportContext};

/// The dispatcher of one peer, driven by its owner rather than by a loop
/// reading a stream: each message from the peer is handed in as it arrives,
/// a request can be called and its answer handed back, and messages to the
/// peer go to an [`Outlet`] at once. An idle dispatcher runs no task. Cheap
/// to clone; every clone drives the same dispatcher.
///
/// ```
/// use std::sync::Arc;
/// use mcp_core::{Dispatcher, DispatcherConfig, Handler, IncomingNotification, IncomingRequest,
///     NotificationContext, Outbound, Outlet, RequestContext, TransportContext, TransportError};
/// use mcp_types::{ErrorObject, JsonRpcRequest, RawJson};
///
/// struct Echo;
/// impl Handler for Echo {
///     async fn handle_request(&self, request: IncomingRequest, _: RequestContext)
///         -> Result<RawJson, ErrorObject> {
///         Ok(request.params.unwrap_or_else(RawJson::empty_object))
///     }
///     async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
/// }
/// struct Nowhere;
/// impl Outlet for Nowhere {
///     fn send(&self, _: Outbound) -> Result<(), TransportError> { Ok(()) }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dispatcher = Dispatcher::new(Echo, DispatcherConfig::default(), Arc::new(Nowhere), None);
/// let call = dispatcher.call(JsonRpcRequest::new(1, "echo", None), TransportContext::default(), None);
/// assert!(matches!(call.answer.await, mcp_core::Answered::Alone(_)));
/// dispatcher.close();
/// # }
/// ```
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<dyn Drive>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("peer", &self.inner.peer())
            .finish()
    }
}

impl Dispatcher {
    /// A dispatcher serving one peer with `handler` under `config`; what is
    /// sent to the peer goes to `outlet`. `network` is the semantic
    /// conventions' `network.transport`, for spans (`tcp` for HTTP).
    pub fn new<H: Handler>(
        handler: H,
        config: DispatcherConfig,
        outlet: Arc<dyn Outlet>,
        network: Option<&'static str>,
    ) -> Self {
        let shared = Arc::new(Shared::new(
            Way::Outlet(outlet),
            config.non_cancellable.clone(),
            network,
        ));
        let runner = Runner::new(Arc::new(handler), shared.clone(), &config, false);
        Self {
            inner: Arc::new(Driven { runner, shared }),
        }
    }

    /// Starts serving `request` in the caller's task (see [`Call`]): its
    /// answer comes back to the caller when nothing was sent for it before,
    /// else it follows what was sent, the same way. The connection's
    /// limits, cancellation, timeout and request span apply as to any
    /// request. Without an `outlet` the request belongs to the connection
    /// (its id must be unique among the running ones, a
    /// `notifications/cancelled` reaches it, what the handler sends for it
    /// goes to the connection's outlet); with one it is an exchange of its
    /// own (its id is not the connection's, and what the handler sends for
    /// it goes to that outlet).
    pub fn call(
        &self,
        request: JsonRpcRequest,
        transport: TransportContext,
        outlet: Option<Arc<dyn Outlet>>,
    ) -> Call {
        self.inner.call(request, transport, outlet)
    }

    /// Takes one message from the peer: a request runs in a task of the
    /// dispatcher's and its answer goes to the outlet; a notification is
    /// handled before this resolves (so a caller that awaits each keeps
    /// them in order); an answer to one of our requests wakes its caller.
    pub fn receive(
        &self,
        message: JsonRpcMessage,
        transport: TransportContext,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.inner.receive(message, transport)
    }

    /// The handle to send the peer requests and notifications.
    pub fn peer(&self) -> Peer {
        self.inner.peer()
    }

    /// Ends the dispatcher: running requests are cancelled, our pending
    /// requests fail, the peer is closed.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Waits until the dispatcher is closed and the requests it was running
    /// have ended.
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        self.inner.closed()
    }
}

trait Drive: Send + Sync + 'static {
    fn call(
        &self,
        request: JsonRpcRequest,
        transport: TransportContext,
        outlet: Option<Arc<dyn Outlet>>,
    ) -> Call;
    fn receive(&self, message: JsonRpcMessage, transport: TransportContext) -> BoxFuture<()>;
    fn peer(&self) -> Peer;
    fn close(&self);
    fn closed(&self) -> BoxFuture<()>;
}

/// What a [`Dispatcher`] holds.
struct Driven<H> {
    runner: Runner<H>,
    shared: Arc<Shared>,
}

impl<H: Handler> Drive for Driven<H> {
    fn call(
        &self,
        request: JsonRpcRequest,
        transport: TransportContext,
        outlet: Option<Arc<dyn Outlet>>,
    ) -> Call {
        self.runner.call(request, transport, outlet)
    }

    fn receive(&self, message: JsonRpcMessage, transport: TransportContext) -> BoxFuture<()> {
        let shared = self.shared.clone();
        match message {
            JsonRpcMessage::Request(request) => {
                let id = request.id.clone();
                let stream = transport.stream.clone();
                let call = self.runner.call(request, transport, None);
                self.runner.spawn(async move {
                    let answer = match call.answer.await {
                        Answered::Alone(answer) => answer,
                        // No answer will come: a stream waiting on one (an
                        // HTTP POST's) must hear it, or it stays open.
                        Answered::Cancelled => {
                            if let Some(stream) = stream {
                                stream.unanswered(&id);
                            }
                            return;
                        }
                        // Refused before it ran: answered as a refusal is
                        // on every connection.
                        #[cfg(feature = "rate-limit")]
                        Answered::Limited(limited) => {
                            JsonRpcErrorResponse::new(Some(id.clone()), refusal_error(&limited))
                                .into()
                        }
                        Answered::Sent => return,
                    };
                    let mut out = Outbound::new(answer);
                    out.related_request = Some(id);
                    if let Err(error) = shared.send(out).await {
                        tracing::debug!(%error, "a response could not be sent");
                    }
                });
                Box::pin(std::future::ready(()))
            }
            JsonRpcMessage::Notification(notification) => {
                let Some(incoming) = control(&shared, notification) else {
                    return Box::pin(std::future::ready(()));
                };
                let handler = self.runner.handler_arc();
                let peer = Peer::new(shared);
                Box::pin(async move {
                    let context = NotificationContext {
                        transport,
                        peer: peer.clone(),
                    };
                    tokio::select! {
                        () = handler.handle_notification(incoming, context) => {}
                        () = peer.closed() => {}
                    }
                })
            }
            reply => {
                settle_reply(&shared, self.runner.handler(), reply);
                Box::pin(std::future::ready(()))
            }
        }
    }

    fn peer(&self) -> Peer {
        Peer::new(self.shared.clone())
    }

    fn close(&self) {
        self.shared.close();
        self.shared.fail_pending();
        self.shared.session.end(self.shared.network);
        self.runner.cancel_all();
        self.runner.close_tasks();
    }

    fn closed(&self) -> BoxFuture<()> {
        let shared = self.shared.clone();
        let finished = self.runner.tracker();
        Box::pin(async move {
            shared.shutdown.cancelled().await;
            finished.wait().await;
        })
    }
}
