//! The tokio driver: owns the transport, runs the read and write loops, spawns
//! one task per inbound request, and hands out [`Peer`]s for outbound traffic.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_types::peek::Shape;
use mcp_types::{
    CancelledNotificationParams, ErrorCode, ErrorObject, JsonObject, JsonRpcErrorResponse,
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, NON_CANCELLABLE,
    ProgressNotificationParams, ProgressToken, RawJson, RequestId,
};
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::error::{Error, TransportError};
use crate::fault::Fault;
use crate::inbound::{Gate, Limits, Queued, Registration, Runner};
use crate::pending::PendingRequests;
use crate::span::{SessionClock, outbound_span_at, record_failure, record_outcome, request_span};
use crate::trace_context;
use crate::transport::{
    Headers, Inbound, Outbound, Transport, TransportContext, TransportReceiver, TransportSender,
};

/// A progress report received for a request this side sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; increases with every report.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// Called with each progress report of a request. Runs on the read loop:
/// keep it short (hand the value to a channel for anything slow).
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// How one outbound request is sent.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Give up (and cancel the request) after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Ask for progress and deliver it here; the dispatcher puts a fresh
    /// `progressToken` into the request's `params._meta`.
    pub on_progress: Option<ProgressCallback>,
    /// Extra headers for transports that carry them (HTTP).
    pub headers: Headers,
    /// A request id of the caller's choosing instead of the next integer.
    pub id: Option<RequestId>,
}

impl RequestOptions {
    /// Options with no timeout, no progress, no headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: Some(timeout),
            ..self
        }
    }

    /// Asks for progress reports, delivered to `callback`.
    #[must_use]
    pub fn with_progress(self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self {
            on_progress: Some(Arc::new(callback)),
            ..self
        }
    }

    /// Adds a header for transports that carry them.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Uses `id` as the request id.
    #[must_use]
    pub fn with_id(self, id: impl Into<RequestId>) -> Self {
        Self {
            id: Some(id.into()),
            ..self
        }
    }
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("headers", &self.headers)
            .field("id", &self.id)
            .finish()
    }
}

/// Settings of one connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DispatcherConfig {
    /// Capacity of the queue of messages waiting to be written. Default 256.
    pub outbound_queue: usize,
    /// Capacity of the queue of notifications waiting for the handler.
    /// Default 256.
    pub notification_queue: usize,
    /// Methods never cancelled when their request is dropped or times out.
    pub non_cancellable: Vec<String>,
    /// How many of the peer's requests run at once on this connection.
    /// Default 128. Requests beyond it wait their turn in a FIFO.
    pub max_concurrent_requests: usize,
    /// How many of the peer's requests may wait for a free slot. Default
    /// 1,024. When it is full, reading from the peer pauses until a request
    /// starts (back-pressure); responses to this side's own requests are
    /// then not read either, so keep it well above `max_concurrent_requests`.
    pub max_queued_requests: usize,
    /// Cancels a handler that runs longer and answers its caller with a
    /// `-32001` error saying so. Default `None` (no limit).
    pub request_timeout: Option<Duration>,
    /// How many bytes of messages may wait to be written before reading from
    /// the peer pauses (back-pressure on a peer that sends faster than it
    /// reads our answers, so large answers do not pile up in memory).
    /// Default 256 KiB; one larger message still goes through.
    pub max_unwritten_bytes: usize,
    /// How long running requests may still finish, and their answers be
    /// written, after the peer finished sending (stdio: stdin reached its
    /// end). Default 10 s; what is still running then is cancelled.
    pub eof_grace: Duration,
    /// Per-key limits on the peer's requests (feature `rate-limit`): keyed
    /// by the principal, else the session, else the connection; a refused
    /// request is answered with [`ErrorCode::RATE_LIMITED`](mcp_types::ErrorCode::RATE_LIMITED).
    /// Share one limiter between connections to limit across them. Default
    /// `None`. Over HTTP, `mcp_transport::http::RateLimitLayer` refuses
    /// earlier, with 429 and `Retry-After`.
    #[cfg(feature = "rate-limit")]
    pub rate_limit: Option<Arc<crate::limit::Limiter>>,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            outbound_queue: 256,
            notification_queue: 256,
            non_cancellable: NON_CANCELLABLE.iter().map(|m| (*m).to_owned()).collect(),
            max_concurrent_requests: 128,
            max_queued_requests: 1024,
            request_timeout: None,
            max_unwritten_bytes: 256 * 1024,
            eof_grace: Duration::from_secs(10),
            #[cfg(feature = "rate-limit")]
            rate_limit: None,
        }
    }
}

impl DispatcherConfig {
    /// Sets [`max_concurrent_requests`](Self::max_concurrent_requests).
    #[must_use]
    pub fn with_max_concurrent_requests(self, limit: usize) -> Self {
        Self {
            max_concurrent_requests: limit,
            ..self
        }
    }

    /// Sets [`max_queued_requests`](Self::max_queued_requests).
    #[must_use]
    pub fn with_max_queued_requests(self, limit: usize) -> Self {
        Self {
            max_queued_requests: limit,
            ..self
        }
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    #[must_use]
    pub fn with_request_timeout(self, timeout: Duration) -> Self {
        Self {
            request_timeout: Some(timeout),
            ..self
        }
    }

    /// Sets [`max_unwritten_bytes`](Self::max_unwritten_bytes).
    #[must_use]
    pub fn with_max_unwritten_bytes(self, limit: usize) -> Self {
        Self {
            max_unwritten_bytes: limit,
            ..self
        }
    }

    /// Sets [`rate_limit`](Self::rate_limit).
    #[cfg(feature = "rate-limit")]
    #[must_use]
    pub fn with_rate_limit(self, limiter: Arc<crate::limit::Limiter>) -> Self {
        Self {
            rate_limit: Some(limiter),
            ..self
        }
    }

    /// Sets [`eof_grace`](Self::eof_grace).
    #[must_use]
    pub fn with_eof_grace(self, grace: Duration) -> Self {
        Self {
            eof_grace: grace,
            ..self
        }
    }
}

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

/// How a request ended without a result.
enum Failure {
    /// The peer answered with a JSON-RPC error.
    Remote(ErrorObject),
    /// The transport could not carry the request or its answer.
    Transport(TransportError),
}

type Waiter = oneshot::Sender<Result<RawJson, Failure>>;

#[derive(Default)]
pub(crate) struct State {
    pending: PendingRequests<Waiter, ProgressCallback>,
    /// The peer's requests that are running or queued, by id.
    pub(crate) inbound: HashMap<RequestId, CancellationToken>,
    next_progress_token: i64,
    /// No more requests can be sent: the connection is closed, or the peer
    /// finished sending and so can no longer answer.
    closed: bool,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    outbound: mpsc::Sender<Outbound>,
    /// Bytes (about) of the messages queued and not yet written.
    unwritten: AtomicUsize,
    /// Signalled when the write loop brings `unwritten` below the budget.
    written: tokio::sync::Notify,
    max_unwritten: usize,
    warned_unwritten: AtomicBool,
    /// The connection is gone: stop everything now.
    pub(crate) shutdown: CancellationToken,
    /// This side closed the connection ([`Peer::close`]); anything else
    /// ending it is a [`Fault::Disconnected`].
    closed_here: AtomicBool,
    /// The peer finished sending and every request has ended: write what is
    /// queued, then close.
    finish: CancellationToken,
    non_cancellable: Vec<String>,
    /// The transport's `network.transport`, for spans.
    pub(crate) network: Option<&'static str>,
    /// The handshake-era session's start, for its duration metric.
    pub(crate) session: SessionClock,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves plain bookkeeping behind;
        // carrying on is safer than poisoning every later call.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a message for the write loop; `Err` when the connection is
    /// closed.
    pub(crate) async fn send(&self, out: Outbound) -> Result<(), ()> {
        let weight = weight(&out.message);
        self.unwritten.fetch_add(weight, Ordering::AcqRel);
        if self.outbound.send(out).await.is_err() {
            self.unwritten.fetch_sub(weight, Ordering::AcqRel);
            return Err(());
        }
        Ok(())
    }

    /// Queues a message without waiting; `false` when the queue is full or
    /// closed.
    fn try_send(&self, out: Outbound) -> bool {
        let weight = weight(&out.message);
        self.unwritten.fetch_add(weight, Ordering::AcqRel);
        if self.outbound.try_send(out).is_err() {
            self.unwritten.fetch_sub(weight, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Notes a message written.
    fn wrote(&self, weight: usize) {
        let before = self.unwritten.fetch_sub(weight, Ordering::AcqRel);
        if before > self.max_unwritten {
            self.written.notify_one();
        }
    }

    /// Whether more than the budget of bytes waits to be written.
    fn over_budget(&self) -> bool {
        self.unwritten.load(Ordering::Acquire) > self.max_unwritten
    }

    /// Waits while more than the budget of bytes waits to be written.
    async fn room_to_read(&self) {
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

/// About the bytes a message takes: what varies with the message, its
/// params or result (enough for a memory budget).
fn weight(message: &JsonRpcMessage) -> usize {
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
    /// For a request run directly by its transport ([`crate::Direct`]):
    /// notes that something was sent for it, and where it goes.
    pub(crate) tie: Option<Arc<Tie>>,
}

/// What ties a directly run request's traffic to its transport.
pub(crate) struct Tie {
    /// Something was sent for the request before its answer: the answer
    /// then follows the same way, behind it.
    pub(crate) sent: std::sync::atomic::AtomicBool,
    /// Where its messages go instead of the connection's queue (a
    /// stateless HTTP exchange).
    pub(crate) sink: Option<Arc<dyn crate::inbound::RequestSink>>,
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

impl Peer {
    fn outbound(&self, message: JsonRpcMessage, headers: Headers) -> Outbound {
        let mut out = Outbound::new(message);
        out.related_request = self.related.clone();
        out.headers = headers;
        out
    }

    /// Queues `out` for the peer, or hands it to the request's sink.
    pub(crate) async fn send_out(&self, out: Outbound) -> Result<(), Error> {
        if let Some(tie) = &self.tie {
            tie.sent.store(true, std::sync::atomic::Ordering::Release);
            if let Some(sink) = &tie.sink {
                return sink.send(out).map_err(|_| Error::Closed);
            }
        }
        self.shared.send(out).await.map_err(|_| Error::Closed)
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
    /// [`Error::DuplicateId`] when a chosen id is still pending.
    pub async fn request(
        &self,
        method: &str,
        params: Option<RawJson>,
        options: RequestOptions,
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
        options: RequestOptions,
        span: &tracing::Span,
    ) -> Result<RawJson, Error> {
        if method == "initialize" {
            self.shared.session.start("client");
        }
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
        if self
            .send_out(self.outbound(message.into(), headers))
            .await
            .is_err()
        {
            in_flight.done = true;
            self.shared.lock().pending.take(&in_flight.id);
            return Err(Error::Closed);
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
            Ok(Ok(result)) => {
                self.shared.session.initialized(method, result);
                record_outcome(span, method, Ok(result));
            }
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
    /// [`Error::Closed`] when the connection is closed.
    pub async fn notify(&self, method: &str, params: Option<RawJson>) -> Result<(), Error> {
        self.notify_with_headers(method, params, Headers::new())
            .await
    }

    /// Sends a notification with extra transport headers.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed.
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
        self.send_out(self.outbound(message.into(), headers)).await
    }

    /// Reports progress on a request the peer sent with `token`.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is closed.
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

    /// The inbound request this peer's traffic is tied to, if any.
    pub fn related_request(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    /// This peer without the tie to an inbound request.
    pub fn unrelated(&self) -> Peer {
        Peer {
            shared: self.shared.clone(),
            related: None,
            tie: None,
        }
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
        self.shared.closed_here.store(true, Ordering::Release);
        self.shared.shutdown.cancel();
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

/// A running connection: its [`Peer`] and the tasks that drive it.
#[derive(Debug)]
pub struct Connection {
    peer: Peer,
    tasks: TaskTracker,
}

impl Connection {
    /// Starts driving `transport`, serving inbound traffic with `handler`.
    ///
    /// Must be called inside a tokio runtime.
    pub fn start<T: Transport, H: Handler>(
        transport: T,
        handler: H,
        config: DispatcherConfig,
    ) -> Self {
        let network = transport.network_transport();
        let mut transport = transport;
        let (outbound_tx, outbound_rx) = mpsc::channel(config.outbound_queue.max(1));
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            outbound: outbound_tx,
            unwritten: AtomicUsize::new(0),
            written: tokio::sync::Notify::new(),
            max_unwritten: config.max_unwritten_bytes.max(1),
            warned_unwritten: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
            closed_here: AtomicBool::new(false),
            finish: CancellationToken::new(),
            non_cancellable: config.non_cancellable.clone(),
            network,
            session: SessionClock::default(),
        });
        let peer = Peer {
            shared: shared.clone(),
            related: None,
            tie: None,
        };
        let tasks = TaskTracker::new();
        let (notify_tx, notify_rx) = mpsc::channel(config.notification_queue.max(1));
        let handler = Arc::new(handler);
        let runner = Runner::new(
            handler.clone(),
            shared.clone(),
            Limits {
                max_concurrent: config.max_concurrent_requests,
                max_queued: config.max_queued_requests,
                timeout: config.request_timeout,
            },
            Gate::new(&config),
        );
        // A transport that can run requests in the task that received them
        // (HTTP) keeps this; the rest ignore it.
        transport.attach(runner.direct());
        let (sender, receiver) = transport.split();
        tasks.spawn(write_loop(sender, outbound_rx, shared.clone()));
        tasks.spawn(notification_loop(handler, notify_rx, peer.clone()));
        tasks.spawn(read_loop(
            receiver,
            runner,
            peer.clone(),
            notify_tx,
            config.eof_grace,
            config.max_queued_requests,
        ));
        tasks.close();
        Connection { peer, tasks }
    }

    /// The peer of this connection.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Closes the connection and waits until its tasks have ended.
    pub async fn shutdown(self) {
        self.peer.close();
        self.tasks.wait().await;
    }

    /// Waits until the connection ends (the peer left or it was closed) and
    /// its tasks have stopped.
    ///
    /// When the peer only finished sending (stdio: its stdin ended), the
    /// requests it sent still finish within
    /// [`DispatcherConfig::eof_grace`] and their answers are written first.
    pub async fn wait(&self) {
        self.tasks.wait().await;
    }
}

async fn write_loop<S: TransportSender>(
    mut sender: S,
    mut outbound: mpsc::Receiver<Outbound>,
    shared: Arc<Shared>,
) {
    /// Messages written between two flushes at most, so one busy stream
    /// cannot delay the flush unboundedly.
    const BURST: usize = 64;
    'outer: loop {
        // What is queued is written before closing, whichever way we close.
        let message = tokio::select! {
            biased;
            message = outbound.recv() => message,
            () = shared.shutdown.cancelled() => None,
            () = shared.finish.cancelled() => None,
        };
        let Some(mut message) = message else { break };
        let mut written = 0;
        loop {
            let weight = weight(&message.message);
            let sent = sender.send(message).await;
            shared.wrote(weight);
            if let Err(error) = sent {
                tracing::warn!(%error, "sending failed; closing the connection");
                shared.shutdown.cancel();
                break 'outer;
            }
            written += 1;
            if written == BURST {
                break;
            }
            match outbound.try_recv() {
                Ok(next) => message = next,
                Err(_) => break,
            }
        }
        if let Err(error) = sender.flush().await {
            tracing::warn!(%error, "sending failed; closing the connection");
            shared.shutdown.cancel();
            break;
        }
    }
    sender.close().await;
    shared.shutdown.cancel();
}

async fn notification_loop<H: Handler>(
    handler: Arc<H>,
    mut notifications: mpsc::Receiver<(IncomingNotification, TransportContext)>,
    peer: Peer,
) {
    while let Some((notification, transport)) = notifications.recv().await {
        let context = NotificationContext {
            transport,
            peer: peer.clone(),
        };
        tokio::select! {
            () = handler.handle_notification(notification, context) => {}
            () = peer.closed() => break,
        }
    }
}

/// How reading ended.
enum ReadEnd {
    /// The peer finished sending; it may still read our answers.
    PeerFinished,
    /// The connection is gone or was closed.
    Closed,
}

/// What the read loop holds back while a barrier request
/// ([`Handler::is_barrier`]) runs: the peer's later requests and
/// notifications, in order of arrival.
struct Held {
    /// Resolves once the barrier request's answer is queued (its sender
    /// is dropped then, or when the request ends unanswered).
    barrier: Option<oneshot::Receiver<()>>,
    messages: std::collections::VecDeque<(JsonRpcMessage, TransportContext)>,
    /// At most this many are held; reading pauses past it.
    limit: usize,
}

impl Held {
    /// Whether `message` must wait for the running barrier.
    fn holds(&self, message: &JsonRpcMessage) -> bool {
        self.barrier.is_some()
            && matches!(
                message,
                JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_)
            )
    }
}

async fn read_loop<R: TransportReceiver, H: Handler>(
    mut receiver: R,
    mut runner: Runner<H>,
    peer: Peer,
    notifications: mpsc::Sender<(IncomingNotification, TransportContext)>,
    eof_grace: Duration,
    max_held: usize,
) {
    let shared = peer.shared.clone();
    let mut held = Held {
        barrier: None,
        messages: std::collections::VecDeque::new(),
        limit: max_held.max(1),
    };
    // The peer finished sending; what is held is still taken up.
    let mut eof = false;
    let end = 'read: loop {
        if eof && held.messages.is_empty() {
            break ReadEnd::PeerFinished;
        }
        let barrier_ended = async {
            match held.barrier.as_mut() {
                Some(barrier) => {
                    let _ = barrier.await;
                }
                None => std::future::pending().await,
            }
        };
        let item = tokio::select! {
            biased;
            () = shared.shutdown.cancelled() => break ReadEnd::Closed,
            () = barrier_ended => {
                held.barrier = None;
                // What waited goes on in order, up to the next barrier.
                while held.barrier.is_none() {
                    let Some((message, context)) = held.messages.pop_front() else {
                        break;
                    };
                    let dispatched =
                        dispatch(message, context, &runner, &peer, &notifications, &mut held)
                            .await;
                    if let Dispatched::Closed = dispatched {
                        break 'read ReadEnd::Closed;
                    }
                }
                continue;
            }
            item = receiver.recv(), if !eof && held.messages.len() < held.limit => item,
        };
        let Some(item) = item else {
            eof = true;
            continue;
        };
        // What waits to be written bounds what is taken in: the message in
        // hand waits (and reading with it) while the peer lags behind.
        if shared.over_budget() {
            tokio::select! {
                biased;
                () = shared.shutdown.cancelled() => break ReadEnd::Closed,
                () = shared.room_to_read() => {}
            }
        }
        match item {
            Inbound::Message(message, context) => {
                if held.holds(&message) {
                    held.messages.push_back((message, context));
                    continue;
                }
                if let Dispatched::Closed =
                    dispatch(message, context, &runner, &peer, &notifications, &mut held).await
                {
                    break ReadEnd::Closed;
                }
            }
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
                let failed = unread.settle(&peer).await;
                runner
                    .handler()
                    .on_fault(Fault::Unreadable { error, failed });
            }
            Inbound::TooLarge { limit, id, shape } => {
                tracing::warn!(
                    limit,
                    shape = ?shape,
                    id = id.as_ref().map(tracing::field::display),
                    "refused a message over the size limit; raise the transport's limit if \
                     such messages are legitimate"
                );
                let unread = Unread {
                    id: id.clone(),
                    shape,
                    answer: ErrorObject::invalid_request(format!(
                        "the message exceeds the {limit}-byte limit and was dropped"
                    )),
                    failure: TransportError::ResponseTooLarge { limit },
                };
                let failed = unread.settle(&peer).await;
                runner
                    .handler()
                    .on_fault(Fault::TooLarge { limit, id, failed });
            }
            Inbound::Closed => break ReadEnd::Closed,
            Inbound::RequestFailed { id, error } => {
                tracing::debug!(%id, %error, "the transport failed a request");
                if !answer(&peer, &id, Err(Failure::Transport(error))) {
                    tracing::debug!(%id, "the failed request was no longer waited for");
                }
            }
            Inbound::Fault(error) => {
                tracing::warn!(%error, "the transport failed outside a request");
                runner.handler().on_fault(Fault::Transport(error));
            }
        }
    };
    drop(notifications);
    // Either way the peer cannot answer any more: fail what waits.
    let waiters = {
        let mut state = shared.lock();
        state.closed = true;
        state.pending.drain()
    };
    drop(waiters);
    shared.session.end(shared.network);
    if !shared.closed_here.load(Ordering::Acquire) {
        runner.handler().on_fault(Fault::Disconnected);
    }
    runner.close();
    if let ReadEnd::PeerFinished = end {
        tracing::debug!("the peer finished sending; finishing the requests it sent");
        let finished = tokio::select! {
            done = tokio::time::timeout(eof_grace, runner.finished()) => done.is_ok(),
            () = shared.shutdown.cancelled() => false,
        };
        if !finished && !shared.shutdown.is_cancelled() {
            tracing::warn!(
                running = runner.in_progress(),
                grace = ?eof_grace,
                "requests still running after the peer finished sending are cancelled; raise \
                 DispatcherConfig::eof_grace to let them finish"
            );
        }
    }
    runner.cancel_all();
    runner.finished().await;
    // Every answer is queued now; the write loop writes them and closes.
    shared.finish.cancel();
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
    async fn settle(self, peer: &Peer) -> Option<RequestId> {
        let ours = {
            let mut state = peer.shared.lock();
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
            _ => send_error(peer, self.id, self.answer).await,
        }
        None
    }
}

async fn send_error(peer: &Peer, id: Option<RequestId>, error: ErrorObject) {
    let response = JsonRpcErrorResponse::new(id, error);
    if peer
        .shared
        .send(Outbound::new(response.into()))
        .await
        .is_err()
    {
        tracing::debug!("connection closed before an error answer could be sent");
    }
}

/// Whether reading may go on after a message.
enum Dispatched {
    Continue,
    Closed,
}

async fn dispatch<H: Handler>(
    message: JsonRpcMessage,
    transport: TransportContext,
    runner: &Runner<H>,
    peer: &Peer,
    notifications: &mpsc::Sender<(IncomingNotification, TransportContext)>,
    held: &mut Held,
) -> Dispatched {
    let shared = &peer.shared;
    match message {
        JsonRpcMessage::Request(request) => {
            let admission = match runner.gate().admit(&transport) {
                Ok(admission) => admission,
                Err(error) => {
                    send_error(peer, Some(request.id), error).await;
                    return Dispatched::Continue;
                }
            };
            let cancel = runner.request_token();
            let registration =
                match Registration::new(shared, &request.id, &request.method, &cancel) {
                    Ok(registration) => registration,
                    Err(error) => {
                        send_error(peer, Some(request.id), error).await;
                        return Dispatched::Continue;
                    }
                };
            if request.method == "initialize" {
                shared.session.start("server");
            }
            // What the peer sent after a barrier waits until it is answered.
            let done = runner.handler().is_barrier(&request.method).then(|| {
                let (done, ended) = oneshot::channel();
                held.barrier = Some(ended);
                done
            });
            let id = request.id;
            let span = request_span(
                &request.method,
                &id,
                request.params.as_ref(),
                &transport,
                shared.network,
            );
            let context = RequestContext {
                id: id.clone(),
                transport,
                cancel,
                peer: Peer {
                    shared: shared.clone(),
                    related: Some(id),
                    tie: None,
                },
            };
            let incoming = IncomingRequest {
                method: request.method,
                params: request.params,
            };
            return match runner
                .submit(incoming, context, span, registration, admission, done)
                .await
            {
                Queued::Accepted => Dispatched::Continue,
                Queued::Closed => Dispatched::Closed,
            };
        }
        JsonRpcMessage::Notification(notification) => match notification.method.as_str() {
            "notifications/cancelled" => {
                let params = notification
                    .params
                    .as_ref()
                    .and_then(|p| p.parse::<CancelledNotificationParams>().ok());
                // Malformed cancellations are ignored, as the spec says.
                if let Some(id) = params.and_then(|p| p.request_id) {
                    if let Some(token) = shared.lock().inbound.get(&id) {
                        token.cancel();
                    }
                }
            }
            "notifications/progress" => {
                let params = notification
                    .params
                    .as_ref()
                    .and_then(|p| p.parse::<ProgressNotificationParams>().ok());
                if let Some(params) = params {
                    let route = shared
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
            _ => {
                let incoming = IncomingNotification {
                    method: notification.method,
                    params: notification.params,
                };
                if notifications.send((incoming, transport)).await.is_err() {
                    tracing::debug!("notification handler has stopped");
                }
            }
        },
        JsonRpcMessage::Response(response) => {
            if !answer(peer, &response.id, Ok(response.result)) {
                tracing::warn!(id = %response.id, "a response to no pending request; dropped");
                runner
                    .handler()
                    .on_fault(Fault::StrayResponse { id: response.id });
            }
        }
        JsonRpcMessage::Error(response) => match response.id {
            Some(id) => {
                if !answer(peer, &id, Err(Failure::Remote(response.error))) {
                    tracing::warn!(%id, "an error response to no pending request; dropped");
                    runner.handler().on_fault(Fault::StrayResponse { id });
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
                runner.handler().on_fault(Fault::UnaddressedError {
                    error: response.error,
                    failed,
                });
            }
        },
    }
    Dispatched::Continue
}

/// Hands `outcome` to the caller waiting on `id`; `false` when nothing
/// waits on it.
fn answer(peer: &Peer, id: &RequestId, outcome: Result<RawJson, Failure>) -> bool {
    let request = peer.shared.lock().pending.take(id);
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

/// The `-32603` answer for a handler that failed without a specific error.
pub fn internal_error(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}
