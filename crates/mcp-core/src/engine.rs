//! Runs the peer's requests, each inside its request span, within the
//! optional handler timeout, cancellable, at most `max_concurrent_requests`
//! at once: queued (each in its own task owned by the connection, the
//! excess waiting in a bounded FIFO) for a connection's read loop, or called
//! (in the caller's own task, the answer handed back) by an owner that has
//! no read loop (an HTTP POST).
//!
//! The read loop never waits for a free slot, only for room in the FIFO: a
//! handler that waits for the answer to a request it sent the peer needs the
//! read loop to keep reading. Only when the FIFO is full does reading pause
//! (back-pressure on the peer); if every running handler is then waiting for
//! an answer from the peer, they wait until their own request timeouts. That
//! is the price of a bounded queue, and why the FIFO is much larger than the
//! number of running handlers.

use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use mcp_types::{
    ErrorCode, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcResultResponse, RequestId,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use std::future::Future;
use std::pin::Pin;

use mcp_types::JsonRpcRequest;

use crate::config::DispatcherConfig;
use crate::handler::{Handler, IncomingRequest, RequestContext};
use crate::peer::{CallWay, Outlet, Peer, Shared};
use crate::span::request_span;
use crate::transport::{Outbound, TransportContext};

/// The limits one connection's inbound requests run under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_concurrent: usize,
    pub(crate) max_queued: usize,
    pub(crate) timeout: Option<Duration>,
}

/// What a request admitted past the rate limit holds while it runs: its
/// concurrency slot (feature `rate-limit`), else nothing.
#[cfg(feature = "rate-limit")]
pub(crate) type Admission = crate::limit::Admitted;
#[cfg(not(feature = "rate-limit"))]
pub(crate) type Admission = ();

/// Why the rate limit refused a request (feature `rate-limit`); without
/// the feature nothing is ever refused.
#[cfg(feature = "rate-limit")]
pub(crate) type Refusal = crate::limit::Limited;
#[cfg(not(feature = "rate-limit"))]
pub(crate) type Refusal = std::convert::Infallible;

/// The JSON-RPC error a refused request is answered with where the
/// transport has no status of its own to give it (stdio, in memory, a
/// request inside an HTTP batch).
pub(crate) fn refusal_error(refusal: &Refusal) -> ErrorObject {
    #[cfg(feature = "rate-limit")]
    {
        refusal.to_error_object()
    }
    #[cfg(not(feature = "rate-limit"))]
    match *refusal {}
}

/// How a called request refused by the rate limit ends: the caller maps
/// the typed refusal to its own answer (HTTP: 429 with `Retry-After`).
fn refused(refusal: Refusal) -> Answered {
    #[cfg(feature = "rate-limit")]
    {
        Answered::Limited(refusal)
    }
    #[cfg(not(feature = "rate-limit"))]
    match refusal {}
}

/// The per-key rate limit of a dispatcher (feature `rate-limit`): admits
/// each request, whatever transport or era it came by, or refuses it.
#[derive(Clone, Default)]
pub(crate) struct Gate {
    #[cfg(feature = "rate-limit")]
    limit: Option<(Arc<crate::limit::Limiter>, u64)>,
}

impl Gate {
    /// The gate of a connection under `config`.
    pub(crate) fn new(config: &DispatcherConfig) -> Self {
        #[cfg(feature = "rate-limit")]
        {
            Gate {
                limit: config
                    .rate_limit
                    .clone()
                    .map(|limiter| (limiter, crate::limit::next_connection_number())),
            }
        }
        #[cfg(not(feature = "rate-limit"))]
        {
            let _ = config;
            Gate {}
        }
    }

    /// Admits a request that came with `transport`, keyed by its principal,
    /// else its session, else its peer address, else this connection.
    #[cfg_attr(not(feature = "rate-limit"), allow(clippy::unnecessary_wraps))]
    pub(crate) fn admit(
        &self,
        transport: &crate::transport::TransportContext,
    ) -> Result<Option<Admission>, Refusal> {
        #[cfg(feature = "rate-limit")]
        if let Some((limiter, connection)) = &self.limit {
            use crate::limit::LimitKey;
            let fallback = transport
                .peer_addr
                .map_or(LimitKey::Connection(*connection), |peer| {
                    LimitKey::Peer(peer.ip())
                });
            let key = LimitKey::for_request(
                transport.principal.as_ref(),
                transport.session_id.as_ref(),
                fallback,
            );
            return limiter.admit(key).map(Some);
        }
        let _ = transport;
        Ok(None)
    }
}

/// A request's id among the connection's running requests
/// (`State::inbound`): while it lasts, a `notifications/cancelled` reaches
/// the request and another request with its id is refused. Dropping it
/// removes the id, however the request ends: answered, cancelled before it
/// started, or its run dropped by the transport.
pub(crate) struct Registration {
    shared: Arc<Shared>,
    /// `None` for a request whose id is not the connection's (run with a
    /// sink of its own).
    id: Option<RequestId>,
}

impl Registration {
    /// Registers `id`, cancelled by `cancel`; the error to answer when a
    /// request with that id is already running or queued.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        id: &RequestId,
        method: &str,
        cancel: &CancellationToken,
    ) -> Result<Self, ErrorObject> {
        // One lookup for the check and the insert (the id hashed once); the
        // lock is released at the end of the statement, before any logging.
        let in_use = match shared.lock().inbound.entry(id.clone()) {
            Entry::Occupied(_) => true,
            Entry::Vacant(slot) => {
                slot.insert(cancel.clone());
                false
            }
        };
        if in_use {
            tracing::warn!(%id, %method,
                "refused a request whose id is already in use by a request in progress");
            return Err(ErrorObject::invalid_request(format!(
                "request id {id} is already in use by a request in progress"
            )));
        }
        Ok(Self {
            shared: shared.clone(),
            id: Some(id.clone()),
        })
    }

    /// A request whose id is its own, not the connection's.
    fn unregistered(shared: &Arc<Shared>) -> Self {
        Self {
            shared: shared.clone(),
            id: None,
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.shared.lock().inbound.remove(id);
        }
    }
}

/// Says once per connection that its requests are at the concurrency limit.
fn warn_busy(warned: &AtomicBool, limit: usize) {
    if !warned.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            limit,
            "{limit} requests are running on this connection, the limit; later ones wait their \
             turn; raise DispatcherConfig::max_concurrent_requests if the handlers can take more"
        );
    }
}

/// A request read off the wire, waiting to run.
struct Job {
    request: IncomingRequest,
    context: RequestContext,
    span: tracing::Span,
    registration: Registration,
    /// Held until the request's answer is sent.
    admission: Option<Admission>,
    /// For a barrier request: dropped once its answer is queued, which lets
    /// the read loop take up what the peer sent after it.
    done: Option<tokio::sync::oneshot::Sender<()>>,
}

/// What a queued request got when it was handed over.
pub(crate) enum Queued {
    /// It runs or waits its turn.
    Accepted,
    /// The connection closed while reading waited for room.
    Closed,
}

/// What running one request needs.
struct Exec<H> {
    handler: Arc<H>,
    shared: Arc<Shared>,
    timeout: Option<Duration>,
    /// Whether a timeout was already reported on this connection.
    warned_timeout: Arc<AtomicBool>,
}

impl<H> Clone for Exec<H> {
    fn clone(&self) -> Self {
        Self {
            handler: self.handler.clone(),
            shared: self.shared.clone(),
            timeout: self.timeout,
            warned_timeout: self.warned_timeout.clone(),
        }
    }
}

/// The owner of every inbound request task of one connection.
pub(crate) struct Runner<H> {
    exec: Exec<H>,
    limits: Limits,
    gate: Gate,
    permits: Arc<Semaphore>,
    /// Requests handed to the queue and not yet started.
    waiting: Arc<AtomicUsize>,
    queue: Option<mpsc::Sender<Job>>,
    tasks: TaskTracker,
    /// Cancels every running and queued request (its children are the
    /// requests' tokens).
    stop: CancellationToken,
    warned_busy: Arc<AtomicBool>,
    warned_full: AtomicBool,
}

impl<H: Handler> Runner<H> {
    /// The runner of a connection under `config`; `queued`: with the FIFO
    /// a read loop submits to (and the task that starts its requests in
    /// turn), else requests are only called.
    pub(crate) fn new(
        handler: Arc<H>,
        shared: Arc<Shared>,
        config: &DispatcherConfig,
        queued: bool,
    ) -> Self {
        let limits = Limits {
            max_concurrent: config.max_concurrent_requests.max(1),
            max_queued: config.max_queued_requests.max(1),
            timeout: config.request_timeout,
        };
        let permits = Arc::new(Semaphore::new(limits.max_concurrent));
        let tasks = TaskTracker::new();
        let stop = shared.shutdown.child_token();
        let waiting = Arc::new(AtomicUsize::new(0));
        let exec = Exec {
            handler,
            shared,
            timeout: limits.timeout,
            warned_timeout: Arc::new(AtomicBool::new(false)),
        };
        let queue = queued.then(|| {
            let (queue, jobs) = mpsc::channel(limits.max_queued);
            tasks.spawn(start_in_turn(
                jobs,
                permits.clone(),
                waiting.clone(),
                tasks.clone(),
                exec.clone(),
            ));
            queue
        });
        Runner {
            exec,
            limits,
            gate: Gate::new(config),
            permits,
            waiting,
            queue,
            tasks,
            stop,
            warned_busy: Arc::new(AtomicBool::new(false)),
            warned_full: AtomicBool::new(false),
        }
    }

    /// The connection's handler.
    pub(crate) fn handler(&self) -> &H {
        &self.exec.handler
    }

    /// The connection's handler, shared.
    pub(crate) fn handler_arc(&self) -> Arc<H> {
        self.exec.handler.clone()
    }

    /// Takes no more request tasks (a runner without a queue).
    pub(crate) fn close_tasks(&self) {
        self.tasks.close();
    }

    /// The tracker of the request tasks, to wait on.
    pub(crate) fn tracker(&self) -> TaskTracker {
        self.tasks.clone()
    }

    /// The rate limit each request passes before it is queued.
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The token a new request's cancellation token descends from.
    pub(crate) fn request_token(&self) -> CancellationToken {
        self.stop.child_token()
    }

    /// Runs `request` now if a slot is free and nothing is queued before it;
    /// queues it otherwise. Waits only while the queue is full.
    pub(crate) async fn submit(
        &self,
        request: IncomingRequest,
        context: RequestContext,
        span: tracing::Span,
        registration: Registration,
        admission: Option<Admission>,
        done: Option<tokio::sync::oneshot::Sender<()>>,
    ) -> Queued {
        let job = Job {
            request,
            context,
            span,
            registration,
            admission,
            done,
        };
        if self.waiting.load(Ordering::Acquire) == 0 {
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                self.tasks.spawn(run_boxed(self.exec.clone(), job, permit));
                return Queued::Accepted;
            }
        }
        warn_busy(&self.warned_busy, self.limits.max_concurrent);
        let Some(queue) = &self.queue else {
            return Queued::Closed;
        };
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let job = match queue.try_send(job) {
            Ok(()) => return Queued::Accepted,
            Err(mpsc::error::TrySendError::Full(job)) => job,
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                return Queued::Closed;
            }
        };
        if !self.warned_full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                limit = self.limits.max_queued,
                "{} requests wait for a free slot, the queue's limit; reading from the peer \
                 pauses until one starts; raise DispatcherConfig::max_queued_requests or \
                 max_concurrent_requests",
                self.limits.max_queued
            );
        }
        tokio::select! {
            sent = queue.send(job) => match sent {
                Ok(()) => Queued::Accepted,
                Err(_) => {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    Queued::Closed
                }
            },
            () = self.exec.shared.shutdown.cancelled() => {
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                Queued::Closed
            }
        }
    }

    /// Takes no more requests; the queued ones still start in turn.
    pub(crate) fn close(&mut self) {
        self.queue = None;
        self.tasks.close();
    }

    /// Waits until every request, running or queued, has ended.
    pub(crate) async fn finished(&self) {
        self.tasks.wait().await;
    }

    /// Cancels every running and queued request.
    pub(crate) fn cancel_all(&self) {
        self.stop.cancel();
    }

    /// How many requests are running or queued.
    pub(crate) fn in_progress(&self) -> usize {
        // The starter task is tracked too; it is not a request.
        let starter = usize::from(self.queue.is_some());
        self.tasks.len().saturating_sub(starter) + self.waiting.load(Ordering::Acquire)
    }

    /// Spawns `work` as one of the connection's request tasks.
    pub(crate) fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.tasks.spawn(work);
    }

    /// Starts serving `request` in the caller's task: see [`Call`]. With an
    /// `outlet`, the request is an exchange of its own: its id is not the
    /// connection's, and what the handler sends for it goes to the outlet.
    pub(crate) fn call(
        &self,
        request: JsonRpcRequest,
        transport: TransportContext,
        outlet: Option<Arc<dyn Outlet>>,
    ) -> Call {
        let cancel = self.stop.child_token();
        let span = request_span(
            &request.method,
            &request.id,
            request.params.as_ref(),
            &transport,
            self.exec.shared.network,
        );
        let exec = self.exec.clone();
        let admission = self.gate.admit(&transport);
        let permits = self.permits.clone();
        let max_concurrent = self.limits.max_concurrent;
        let warned_busy = self.warned_busy.clone();
        let token = cancel.clone();
        // Dropped before its end (the caller gave up on it): cancelled, so
        // what the handler started hears of it.
        let guard = cancel.clone().drop_guard();
        // One async block, boxed once: the guard lives in it rather than in
        // a second block awaiting this one, which would hold this block's
        // state twice (as its capture and as its awaitee) and copy it twice.
        let answer = async move {
            let answer = 'run: {
                let shared = exec.shared.clone();
                let id = request.id;
                // Held until the answer is out.
                let _admission = match admission {
                    Ok(admission) => admission,
                    Err(refusal) => break 'run refused(refusal),
                };
                let registration = if outlet.is_none() {
                    match Registration::new(&shared, &id, &request.method, &token) {
                        Ok(registration) => registration,
                        Err(error) => {
                            break 'run Answered::Alone(
                                JsonRpcErrorResponse::new(Some(id), error).into(),
                            );
                        }
                    }
                } else {
                    Registration::unregistered(&shared)
                };
                let permit = match permits.clone().try_acquire_owned() {
                    Ok(permit) => Some(permit),
                    Err(_) => {
                        warn_busy(&warned_busy, max_concurrent);
                        tokio::select! {
                            permit = permits.acquire_owned() => permit.ok(),
                            () = token.cancelled() => None,
                        }
                    }
                };
                let Some(_permit) = permit else {
                    break 'run Answered::Cancelled;
                };
                let way = Arc::new(CallWay {
                    sent: AtomicBool::new(false),
                    outlet,
                });
                let peer = Peer {
                    shared,
                    related: Some(id.clone()),
                    call: Some(way.clone()),
                };
                let context = RequestContext {
                    id: id.clone(),
                    transport,
                    cancel: token,
                    peer: peer.clone(),
                };
                let incoming = IncomingRequest {
                    method: request.method,
                    params: request.params,
                };
                let Some(message) = answer(exec, incoming, context, registration).await else {
                    break 'run Answered::Cancelled;
                };
                if !way.sent.load(Ordering::Acquire) {
                    break 'run Answered::Alone(message);
                }
                // Behind what was sent for it, the same way.
                let mut out = Outbound::new(message);
                out.related_request = Some(id);
                if let Err(error) = peer.send_out(out).await {
                    tracing::debug!(%error, "a response could not be sent");
                }
                Answered::Sent
            };
            guard.disarm();
            answer
        }
        .instrument(span);
        Call {
            cancel,
            answer: Box::pin(answer),
        }
    }
}

/// Starts queued requests in order of arrival as slots free up.
async fn start_in_turn<H: Handler>(
    mut jobs: mpsc::Receiver<Job>,
    permits: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    tasks: TaskTracker,
    exec: Exec<H>,
) {
    while let Some(job) = jobs.recv().await {
        let cancel = job.context.cancel.clone();
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.ok(),
            () = cancel.cancelled() => None,
        };
        match permit {
            Some(permit) if !cancel.is_cancelled() => {
                tasks.spawn(run_boxed(exec.clone(), job, permit));
            }
            // Cancelled before it started: it never runs and is not
            // answered (dropping the job frees its id).
            _ => {}
        }
        waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// [`run`] on the heap, for a request's own task: spawning moves a task's
/// future several times (into the tracker's wrapper, into the task's cell,
/// and tokio rewrites the cell's stage at the end), each move a copy of the
/// whole future at its largest state's size; boxed once, each is a pointer.
fn run_boxed<H: Handler>(
    exec: Exec<H>,
    job: Job,
    permit: OwnedSemaphorePermit,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(run(exec, job, permit))
}

/// Runs one request to its answer, holding its slot until then.
async fn run<H: Handler>(exec: Exec<H>, job: Job, _permit: OwnedSemaphorePermit) {
    let Job {
        request,
        context,
        span,
        registration,
        admission: _admission,
        done,
    } = job;
    let shared = exec.shared.clone();
    async move {
        let id = context.id.clone();
        let Some(message) = answer(exec, request, context, registration).await else {
            return;
        };
        let mut out = Outbound::new(message);
        out.related_request = Some(id);
        if let Err(error) = shared.send(out).await {
            tracing::debug!(%error, "a response could not be sent");
        }
        // A barrier's answer is queued: what the peer sent after it goes on.
        drop(done);
    }
    .instrument(span)
    .await;
}

/// Runs the handler within the request's cancellation and timeout; its
/// answer, or `None` when the request was cancelled (it gets no answer).
/// The request's id is free again before its answer is sent.
async fn answer<H: Handler>(
    exec: Exec<H>,
    request: IncomingRequest,
    context: RequestContext,
    registration: Registration,
) -> Option<JsonRpcMessage> {
    let Exec {
        handler,
        timeout,
        warned_timeout,
        ..
    } = exec;
    let id = context.id.clone();
    let cancel = context.cancel.clone();
    let method = request.method.clone();
    // The limit counts from here, however late the deadline is first
    // polled (`sleep_until`, below, registers no timer until then).
    let deadline_at = timeout.map(|limit| tokio::time::Instant::now() + limit);
    // On the heap: a handler's future is large (every await of the typed
    // layer nests in it), and a request's own future is moved whole (into
    // its task, or into the `Box` of a `Call`) before it is first
    // polled; kept small, those moves copy a pointer, not the handler's state.
    let mut handled = Box::pin(handler.handle_request(request, context));
    // The handler's first poll on its own: one that finishes there (most
    // do) never polls the token or the deadline, so its request neither
    // waits on the token nor puts its deadline into the runtime's timer.
    // Only that first poll goes alone: the select below keeps its random
    // order, since a deadline polled after a handler that spent the task's
    // cooperative budget would always find it spent and never fire.
    let first = std::future::poll_fn(|cx| Poll::Ready(handled.as_mut().poll(cx))).await;
    let outcome = match first {
        // A request cancelled while its handler finished is not answered.
        Poll::Ready(outcome) => (!cancel.is_cancelled()).then_some(outcome),
        Poll::Pending => {
            let deadline = async {
                match deadline_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = &mut handled => {
                    (!cancel.is_cancelled()).then_some(outcome)
                }
                () = cancel.cancelled() => None,
                () = deadline => {
                    // Tell whatever the handler started that it is over.
                    cancel.cancel();
                    let limit = timeout.unwrap_or_default();
                    if !warned_timeout.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            ?limit,
                            "a handler ran longer than the request timeout and was cancelled; \
                             raise DispatcherConfig::request_timeout if handlers need longer"
                        );
                    }
                    Some(Err(ErrorObject::new(
                        ErrorCode::REQUEST_TIMEOUT,
                        format!(
                            "`{method}` ran longer than the server's {limit:?} limit and was \
                             cancelled"
                        ),
                    )))
                }
            }
        }
    };
    drop(registration);
    let Some(outcome) = outcome else {
        tracing::debug!("request cancelled; no response is sent");
        return None;
    };
    crate::span::record_outcome(&tracing::Span::current(), &method, outcome.as_ref());
    Some(match outcome {
        Ok(result) => JsonRpcResultResponse::new(id, result).into(),
        Err(error) => JsonRpcErrorResponse::new(Some(id), error).into(),
    })
}

/// How a called request ended (see [`Dispatcher::call`](crate::Dispatcher::call)).
#[derive(Debug)]
#[non_exhaustive]
pub enum Answered {
    /// Its answer, and nothing else was sent for it: the caller sends it as
    /// it likes (HTTP: one JSON body).
    Alone(JsonRpcMessage),
    /// The handler sent messages for the request before answering (progress,
    /// log, a request to the peer): the answer went the same way behind them
    /// (the connection's way, or the request's outlet), so they stay in
    /// order.
    Sent,
    /// The request was cancelled (by the peer, the caller, or the
    /// connection closing): it gets no answer.
    Cancelled,
    /// The dispatcher's rate limit ([`DispatcherConfig::rate_limit`]) refused
    /// the request before it ran (feature `rate-limit`). The caller answers
    /// it: HTTP with `429 Too Many Requests` and `Retry-After`, elsewhere
    /// with [`Limited::to_error_object`](crate::limit::Limited::to_error_object)
    /// for the request's id.
    #[cfg(feature = "rate-limit")]
    Limited(crate::limit::Limited),
}

/// One request started by [`Dispatcher::call`](crate::Dispatcher::call).
#[non_exhaustive]
pub struct Call {
    /// Cancels the request (the client went away, or sent
    /// `notifications/cancelled` some other way).
    pub cancel: CancellationToken,
    /// Runs the request to its end; poll it in the caller's task. Dropping
    /// it before it ends cancels the request.
    pub answer: Pin<Box<dyn Future<Output = Answered> + Send>>,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}
