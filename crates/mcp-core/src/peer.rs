//! One peer's side of a connection: the requests sent to it and waiting
//! for their answers, the requests it sent that are running, where messages
//! to it go (an outlet), and [`Peer`], the handle to send it requests and
//! notifications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_types::{
    CancelledNotificationParams, ErrorObject, JsonObject, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, ProgressNotificationParams, ProgressToken, RawJson, RequestId,
};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::error::{Error, TransportError};
use crate::options::{Progress, ProgressCallback, SendOptions};
use crate::pending::PendingRequests;
use crate::span::{SessionClock, SessionSide, outbound_span_at, record_failure, record_outcome};
use crate::trace_context;
use crate::transport::{Headers, Outbound};

/// Where messages to the peer go when no write loop carries them: each is
/// taken at once (an HTTP session puts it on one of its streams, a
/// stateless exchange on its POST's answer). Called from the task that
/// sends; must not block.
pub trait Outlet: Send + Sync + 'static {
    /// Takes one message to the peer.
    ///
    /// # Errors
    /// [`TransportError::Closed`] when nothing carries messages to the peer
    /// any more.
    fn send(&self, message: Outbound) -> Result<(), TransportError>;
}

/// How a request ended without a result.
pub(crate) enum Failure {
    /// The peer answered with a JSON-RPC error.
    Remote(ErrorObject),
    /// The transport could not carry the request or its answer.
    Transport(TransportError),
}

pub(crate) type Waiter = oneshot::Sender<Result<RawJson, Failure>>;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) pending: PendingRequests<Waiter, ProgressCallback>,
    /// The peer's requests that are running or queued, by id.
    pub(crate) inbound: HashMap<RequestId, CancellationToken>,
    next_progress_token: i64,
    /// No more requests can be sent: the connection is closed, or the peer
    /// finished sending and so can no longer answer.
    pub(crate) closed: bool,
}

/// The queue a write loop drains (a stream transport), bounded in bytes
/// waiting to be written.
pub(crate) struct Queue {
    tx: mpsc::Sender<Outbound>,
    /// Bytes (about) of the messages queued and not yet written.
    unwritten: AtomicUsize,
    /// Signalled when the write loop brings `unwritten` below the budget.
    written: tokio::sync::Notify,
    max_unwritten: usize,
    warned_unwritten: AtomicBool,
    /// The peer finished sending and every request has ended: write what
    /// is queued, then close.
    pub(crate) finish: CancellationToken,
}

impl Queue {
    pub(crate) fn new(tx: mpsc::Sender<Outbound>, max_unwritten: usize) -> Self {
        Self {
            tx,
            unwritten: AtomicUsize::new(0),
            written: tokio::sync::Notify::new(),
            max_unwritten: max_unwritten.max(1),
            warned_unwritten: AtomicBool::new(false),
            finish: CancellationToken::new(),
        }
    }

    async fn send(&self, out: Outbound) -> Result<(), ()> {
        let weight = weight(&out.message);
        self.unwritten.fetch_add(weight, Ordering::AcqRel);
        if self.tx.send(out).await.is_err() {
            self.unwritten.fetch_sub(weight, Ordering::AcqRel);
            return Err(());
        }
        Ok(())
    }

    fn try_send(&self, out: Outbound) -> bool {
        let weight = weight(&out.message);
        self.unwritten.fetch_add(weight, Ordering::AcqRel);
        if self.tx.try_send(out).is_err() {
            self.unwritten.fetch_sub(weight, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Notes a message written.
    pub(crate) fn wrote(&self, weight: usize) {
        let before = self.unwritten.fetch_sub(weight, Ordering::AcqRel);
        if before > self.max_unwritten {
            self.written.notify_one();
        }
    }

    /// Whether more than the budget of bytes waits to be written.
    pub(crate) fn over_budget(&self) -> bool {
        self.unwritten.load(Ordering::Acquire) > self.max_unwritten
    }

    /// Waits while more than the budget of bytes waits to be written.
    pub(crate) async fn room_to_read(&self) {
        while self.over_budget() {
            if !self.warned_unwritten.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    limit = self.max_unwritten,
                    "the peer reads our answers slower than it sends requests; reading pauses \
                     while {} bytes wait to be written (raise \
                     DispatcherConfig::max_unwritten_bytes to buffer more)",
                    self.max_unwritten
                );
            }
            self.written.notified().await;
        }
    }
}

/// Where one peer's messages go.
pub(crate) enum Way {
    /// A write loop's queue.
    Queue(Queue),
    /// An outlet that takes each message at once.
    Outlet(Arc<dyn Outlet>),
}

/// One peer's side of a connection, shared by everything that serves it.
pub(crate) struct Shared {
    state: Mutex<State>,
    pub(crate) way: Way,
    /// The connection is gone: stop everything now.
    pub(crate) shutdown: CancellationToken,
    /// This side closed the connection ([`Peer::close`]); anything else
    /// ending it is a [`Fault::Disconnected`](crate::Fault::Disconnected).
    pub(crate) closed_here: AtomicBool,
    non_cancellable: Vec<String>,
    /// The transport's `network.transport`, for spans.
    pub(crate) network: Option<&'static str>,
    /// The handshake-era session's start, for its duration metric.
    pub(crate) session: SessionClock,
}

impl Shared {
    pub(crate) fn new(
        way: Way,
        non_cancellable: Vec<String>,
        network: Option<&'static str>,
    ) -> Self {
        Self {
            state: Mutex::new(State::default()),
            way,
            shutdown: CancellationToken::new(),
            closed_here: AtomicBool::new(false),
            non_cancellable,
            network,
            session: SessionClock::default(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves plain bookkeeping behind;
        // carrying on is safer than poisoning every later call.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The write loop's queue, for a stream transport.
    pub(crate) fn queue(&self) -> Option<&Queue> {
        match &self.way {
            Way::Queue(queue) => Some(queue),
            Way::Outlet(_) => None,
        }
    }

    /// Sends a message the peer's way; `Err` when it cannot go (the
    /// connection is closed, or the outlet says why not).
    pub(crate) async fn send(&self, out: Outbound) -> Result<(), TransportError> {
        match &self.way {
            Way::Queue(queue) => queue.send(out).await.map_err(|()| TransportError::Closed),
            Way::Outlet(outlet) => outlet.send(out),
        }
    }

    /// Sends a message without waiting; `false` when it could not go.
    fn try_send(&self, out: Outbound) -> bool {
        match &self.way {
            Way::Queue(queue) => queue.try_send(out),
            Way::Outlet(outlet) => outlet.send(out).is_ok(),
        }
    }

    /// Ends the connection: pending requests fail, running handlers are
    /// cancelled.
    pub(crate) fn close(&self) {
        self.closed_here.store(true, Ordering::Release);
        self.shutdown.cancel();
    }

    /// Fails every request of ours still waiting: the peer can no longer
    /// answer.
    pub(crate) fn fail_pending(&self) {
        let waiters = {
            let mut state = self.lock();
            state.closed = true;
            state.pending.drain()
        };
        drop(waiters);
    }

    /// Hands `outcome` to the caller waiting on `id`; `false` when nothing
    /// waits on it.
    pub(crate) fn answer(&self, id: &RequestId, outcome: Result<RawJson, Failure>) -> bool {
        let request = self.lock().pending.take(id);
        match request {
            Some(request) => {
                // The waiter may have given up in the meantime; that is fine.
                if request.waiter.send(outcome).is_err() {
                    tracing::trace!(method = %request.method, %id, "answer arrived after its caller left");
                }
                true
            }
            None => false,
        }
    }

    /// Cancels the peer's running request `id`, if it runs.
    pub(crate) fn cancel_inbound(&self, id: &RequestId) {
        if let Some(token) = self.lock().inbound.get(id) {
            token.cancel();
        }
    }

    /// Hands a progress report to the request of ours that asked for it.
    pub(crate) fn progress(&self, params: ProgressNotificationParams) {
        let route = self
            .lock()
            .pending
            .progress_route(&params.progress_token)
            .cloned();
        match route {
            Some(callback) => callback(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            }),
            None => tracing::debug!(
                token = %params.progress_token,
                "progress for no pending request; dropped"
            ),
        }
    }
}

/// About the bytes a message takes: what varies with the message, its
/// params or result (enough for a memory budget).
pub(crate) fn weight(message: &JsonRpcMessage) -> usize {
    const ENVELOPE: usize = 64;
    ENVELOPE
        + match message {
            JsonRpcMessage::Request(r) => r.params.as_ref().map_or(0, |p| p.get().len()),
            JsonRpcMessage::Notification(n) => n.params.as_ref().map_or(0, |p| p.get().len()),
            JsonRpcMessage::Response(r) => r.result.get().len(),
            JsonRpcMessage::Error(e) => e.error.message.len(),
        }
}

/// Sends requests and notifications to the other side. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(crate) shared: Arc<Shared>,
    pub(crate) related: Option<RequestId>,
    /// For a request whose answer goes back to its caller (an HTTP POST):
    /// notes that something was sent for it first, and where its messages
    /// go when they have a way of their own (a stateless exchange).
    pub(crate) call: Option<Arc<CallWay>>,
}

/// Where the messages sent while serving one called request go.
pub(crate) struct CallWay {
    /// Something was sent for the request before its answer: the answer
    /// then follows the same way, behind it.
    pub(crate) sent: AtomicBool,
    /// The request's own outlet, instead of the connection's way.
    pub(crate) outlet: Option<Arc<dyn Outlet>>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("related", &self.related)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Cleans up a request whose future is dropped before its answer arrived,
/// and tells the peer it is cancelled.
struct InFlight<'a> {
    peer: &'a Peer,
    id: RequestId,
    method: &'a str,
    done: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let shared = &self.peer.shared;
        let was_pending = shared.lock().pending.take(&self.id).is_some();
        let cancellable = !shared.non_cancellable.iter().any(|m| m == self.method);
        if was_pending && cancellable && !shared.shutdown.is_cancelled() {
            let params = CancelledNotificationParams::new(self.id.clone())
                .with_reason("the request was cancelled by its sender");
            if let Ok(params) = RawJson::from_serialize(&params) {
                let message = JsonRpcNotification::new("notifications/cancelled", Some(params));
                // Drop cannot wait; a full queue loses the notice, and the
                // peer's late answer is discarded anyway.
                if !shared.try_send(self.peer.outbound(message.into(), Headers::new())) {
                    tracing::debug!(id = %self.id, "could not queue notifications/cancelled");
                }
            }
        }
    }
}

/// The caller's error for a message to the peer that could not go: a
/// closed connection is [`Error::Closed`], any other reason is
/// [`Error::Transport`] naming `method`. The method is copied here, on
/// failure only, so sending allocates nothing for it.
fn sent(method: &str, error: TransportError) -> Error {
    match error {
        TransportError::Closed => Error::Closed,
        source => Error::Transport {
            method: method.to_owned(),
            source,
        },
    }
}

impl Peer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            related: None,
            call: None,
        }
    }

    fn outbound(&self, message: JsonRpcMessage, headers: Headers) -> Outbound {
        let mut out = Outbound::new(message);
        out.related_request = self.related.clone();
        out.headers = headers;
        out
    }

    /// Sends `out` the peer's way, or the called request's own way; `Err`
    /// says why it cannot go ([`sent`] makes it the caller's [`Error`]).
    pub(crate) async fn send_out(&self, out: Outbound) -> Result<(), TransportError> {
        let outlet = self.call.as_ref().and_then(|call| {
            call.sent.store(true, Ordering::Release);
            call.outlet.as_ref()
        });
        match outlet {
            Some(outlet) => outlet.send(out),
            None => self.shared.send(out).await,
        }
    }

    /// Sends a request and waits for the peer's result.
    ///
    /// Dropping the returned future cancels the request: the peer is sent
    /// `notifications/cancelled` (unless the method is non-cancellable, such
    /// as `initialize`) and a late answer is discarded.
    ///
    /// # Errors
    /// [`Error::Remote`] when the peer answers with an error,
    /// [`Error::Timeout`] when no answer arrives in time,
    /// [`Error::ConnectionClosed`] when the connection ends first,
    /// [`Error::Closed`] when it is closed already,
    /// [`Error::Transport`] when the transport cannot carry the request or
    /// its answer,
    /// [`Error::DuplicateId`] when a chosen id is still pending.
    pub async fn request(
        &self,
        method: &str,
        params: Option<RawJson>,
        options: SendOptions,
    ) -> Result<RawJson, Error> {
        // The id is recorded once it is chosen; arguments never are.
        let span = outbound_span_at(
            method,
            params.as_ref(),
            &options.headers,
            self.shared.network,
            self.shared.session.version(),
        );
        self.request_in(method, params, options, &span)
            .instrument(span.clone())
            .await
    }

    async fn request_in(
        &self,
        method: &str,
        params: Option<RawJson>,
        options: SendOptions,
        span: &tracing::Span,
    ) -> Result<RawJson, Error> {
        let (tx, rx) = oneshot::channel();
        let (id, progress_token) = {
            let mut state = self.shared.lock();
            if state.closed {
                return Err(Error::Closed);
            }
            let id = match options.id {
                Some(id) => id,
                None => state.pending.allocate_id(),
            };
            let progress = options.on_progress.map(|callback| {
                state.next_progress_token += 1;
                (ProgressToken::Number(state.next_progress_token), callback)
            });
            let token = progress.as_ref().map(|(t, _)| t.clone());
            if state
                .pending
                .insert(id.clone(), method.to_owned(), tx, progress)
                .is_err()
            {
                return Err(Error::DuplicateId(id));
            }
            (id, token)
        };
        span.record("jsonrpc.request.id", tracing::field::display(&id));
        let mut in_flight = InFlight {
            peer: self,
            id: id.clone(),
            method,
            done: false,
        };
        let params = match progress_token {
            Some(token) => {
                Some(
                    with_progress_token(params, token).map_err(|source| Error::Json {
                        method: method.to_owned(),
                        source,
                    })?,
                )
            }
            None => params,
        };
        let mut headers = options.headers;
        let params = match trace_context::outgoing(span) {
            Some(context) => {
                // SEP-414 in `_meta`; the standard headers too where the
                // transport carries headers (HTTP).
                headers.append(trace_context::TRACEPARENT, context.traceparent());
                if let Some(state) = context.tracestate() {
                    headers.append(trace_context::TRACESTATE, state);
                }
                trace_context::inject(params, &context)
            }
            None => params,
        };
        let message = JsonRpcRequest::new(id, method, params);
        if let Err(error) = self.send_out(self.outbound(message.into(), headers)).await {
            in_flight.done = true;
            self.shared.lock().pending.take(&in_flight.id);
            let error = sent(method, error);
            let failure = match error {
                Error::Closed => "connection_closed",
                _ => "transport",
            };
            record_failure(span, failure);
            return Err(error);
        }
        let answer = match options.timeout {
            Some(timeout) => match tokio::time::timeout(timeout, rx).await {
                Ok(answer) => answer,
                // `in_flight` drops below without `done`: cancelled on the wire.
                Err(_) => {
                    record_failure(span, "timeout");
                    return Err(Error::Timeout {
                        method: method.to_owned(),
                        timeout,
                    });
                }
            },
            None => rx.await,
        };
        in_flight.done = true;
        match &answer {
            Ok(Ok(result)) => record_outcome(span, method, Ok(result)),
            Ok(Err(Failure::Remote(error))) => record_outcome(span, method, Err(error)),
            Ok(Err(Failure::Transport(_))) => record_failure(span, "transport"),
            Err(_) => record_failure(span, "connection_closed"),
        }
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(Failure::Remote(error))) => Err(Error::Remote(error)),
            Ok(Err(Failure::Transport(source))) => Err(Error::Transport {
                method: method.to_owned(),
                source,
            }),
            Err(_) => Err(Error::ConnectionClosed {
                method: method.to_owned(),
            }),
        }
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed;
    /// [`Error::Transport`] when the transport cannot carry it.
    pub async fn notify(&self, method: &str, params: Option<RawJson>) -> Result<(), Error> {
        self.notify_with_headers(method, params, Headers::new())
            .await
    }

    /// Sends a notification with extra transport headers.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed;
    /// [`Error::Transport`] when the transport cannot carry it.
    pub async fn notify_with_headers(
        &self,
        method: &str,
        params: Option<RawJson>,
        headers: Headers,
    ) -> Result<(), Error> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        let params = match trace_context::outgoing(&tracing::Span::current()) {
            Some(context) => trace_context::inject(params, &context),
            None => params,
        };
        let message = JsonRpcNotification::new(method, params);
        self.send_out(self.outbound(message.into(), headers))
            .await
            .map_err(|error| sent(method, error))
    }

    /// Reports progress on a request the peer sent with `token`.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed;
    /// [`Error::Transport`] when the transport cannot carry it.
    pub async fn notify_progress(
        &self,
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), Error> {
        let mut params = ProgressNotificationParams::new(token, progress);
        params.total = total;
        params.message = message;
        let params = RawJson::from_serialize(&params).map_err(|source| Error::Json {
            method: "notifications/progress".into(),
            source,
        })?;
        self.notify("notifications/progress", Some(params)).await
    }

    /// Marks this connection an MCP session from now on, as `side` (the
    /// handshake era's `initialize`, sent or received): its end is then
    /// reported with its duration (`mcp.client.session.duration` or
    /// `mcp.server.session.duration`). Once per connection; later calls
    /// change nothing. The layer that speaks `initialize` calls it: this
    /// crate knows no method.
    pub fn begin_session(&self, side: SessionSide) {
        self.shared.session.start(side);
    }

    /// Records the revision the session settled on, for the spans of the
    /// requests this side sends from now on (`mcp.protocol.version`).
    /// The first revision recorded stays.
    pub fn settle_session(&self, revision: &str) {
        self.shared.session.settle(revision);
    }

    /// The inbound request this peer's traffic is tied to, if any.
    pub fn related_request(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    /// This peer without the tie to an inbound request.
    pub fn unrelated(&self) -> Peer {
        Peer::new(self.shared.clone())
    }

    /// This peer tied to the inbound request `id`: what it sends is about
    /// that request, so a transport with a stream per request (streamable
    /// HTTP) carries it there while the request is open, and on the
    /// standalone stream after. Inside a handler the peer is tied to its
    /// request already; this is for traffic sent from elsewhere (a task
    /// spawned by the handler, a queue worker).
    pub fn related_to(&self, id: RequestId) -> Peer {
        Peer {
            shared: self.shared.clone(),
            related: Some(id),
            call: None,
        }
    }

    /// Sends a prebuilt JSON-RPC message as it is: the low-level escape
    /// hatch for traffic this crate does not shape (delivering queued
    /// messages, relaying another peer's). Nothing is tracked: the answer
    /// to a request sent this way reaches no caller (it is reported as a
    /// [`Fault::StrayResponse`](crate::Fault::StrayResponse)), and no cancellation or
    /// timeout applies. Use [`Peer::request`] to wait for an answer.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed;
    /// [`Error::Transport`] when the transport cannot carry it.
    pub async fn send_message(&self, message: JsonRpcMessage) -> Result<(), Error> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        // Kept for the error only: this is the escape hatch, not the hot path.
        let method = message.method().unwrap_or_default().to_owned();
        self.send_out(self.outbound(message, Headers::new()))
            .await
            .map_err(|error| sent(&method, error))
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.shutdown.is_cancelled()
    }

    /// Waits until the connection is closed.
    pub async fn closed(&self) {
        self.shared.shutdown.cancelled().await;
    }

    /// Closes the connection: pending requests fail, running handlers are
    /// cancelled, and the transport is closed.
    pub fn close(&self) {
        self.shared.close();
    }

    /// How many requests this side sent that still wait for an answer.
    pub fn pending_requests(&self) -> usize {
        self.shared.lock().pending.len()
    }
}

/// Inserts `_meta.progressToken` into request params, keeping the rest.
fn with_progress_token(
    params: Option<RawJson>,
    token: ProgressToken,
) -> Result<RawJson, serde_json::Error> {
    let mut object: JsonObject = match &params {
        Some(raw) => raw.parse()?,
        None => JsonObject::new(),
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    if let serde_json::Value::Object(meta) = meta {
        meta.insert("progressToken".into(), serde_json::to_value(&token)?);
    }
    RawJson::from_serialize(&object)
}
