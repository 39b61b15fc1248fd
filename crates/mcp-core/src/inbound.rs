//! Runs the peer's requests: each in its own task owned by the connection, at
//! most `max_concurrent_requests` at once, the excess waiting in a bounded
//! FIFO, each inside its request span and within the optional handler timeout.
//!
//! The read loop never waits for a free slot, only for room in the FIFO: a
//! handler that waits for the answer to a request it sent the peer needs the
//! read loop to keep reading. Only when the FIFO is full does reading pause
//! (back-pressure on the peer); if every running handler is then waiting for
//! an answer from the peer, they wait until their own request timeouts. That
//! is the price of a bounded queue, and why the FIFO is much larger than the
//! number of running handlers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_types::{
    ErrorCode, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcResultResponse,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::dispatcher::{Handler, IncomingRequest, RequestContext, Shared};
use crate::transport::Outbound;

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

/// The per-key rate limit of a connection (feature `rate-limit`): admits
/// each request or refuses it with the error to answer.
#[derive(Clone, Default)]
pub(crate) struct Gate {
    #[cfg(feature = "rate-limit")]
    limit: Option<(Arc<crate::limit::Limiter>, u64)>,
}

impl Gate {
    /// The gate of a connection under `config`.
    pub(crate) fn new(config: &crate::dispatcher::DispatcherConfig) -> Self {
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
    /// else its session, else this connection.
    #[cfg_attr(not(feature = "rate-limit"), allow(clippy::unnecessary_wraps))]
    pub(crate) fn admit(
        &self,
        transport: &crate::transport::TransportContext,
    ) -> Result<Option<Admission>, ErrorObject> {
        #[cfg(feature = "rate-limit")]
        if let Some((limiter, connection)) = &self.limit {
            use crate::limit::LimitKey;
            let key = LimitKey::for_request(
                transport.principal.as_ref(),
                transport.session_id.as_ref(),
                LimitKey::Connection(*connection),
            );
            return limiter
                .admit(key)
                .map(Some)
                .map_err(|limited| limited.to_error_object());
        }
        let _ = transport;
        Ok(None)
    }
}

/// A request read off the wire, waiting to run.
struct Job {
    request: IncomingRequest,
    context: RequestContext,
    span: tracing::Span,
    /// Held until the request's answer is sent.
    admission: Option<Admission>,
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
    warned_busy: AtomicBool,
    warned_full: AtomicBool,
}

impl<H: Handler> Runner<H> {
    pub(crate) fn new(handler: Arc<H>, shared: Arc<Shared>, limits: Limits, gate: Gate) -> Self {
        let limits = Limits {
            max_concurrent: limits.max_concurrent.max(1),
            max_queued: limits.max_queued.max(1),
            ..limits
        };
        let permits = Arc::new(Semaphore::new(limits.max_concurrent));
        let (queue, jobs) = mpsc::channel(limits.max_queued);
        let tasks = TaskTracker::new();
        let stop = shared.shutdown.child_token();
        let waiting = Arc::new(AtomicUsize::new(0));
        let exec = Exec {
            handler,
            shared,
            timeout: limits.timeout,
            warned_timeout: Arc::new(AtomicBool::new(false)),
        };
        tasks.spawn(start_in_turn(
            jobs,
            permits.clone(),
            waiting.clone(),
            tasks.clone(),
            exec.clone(),
        ));
        Runner {
            exec,
            limits,
            gate,
            permits,
            waiting,
            queue: Some(queue),
            tasks,
            stop,
            warned_busy: AtomicBool::new(false),
            warned_full: AtomicBool::new(false),
        }
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
        admission: Option<Admission>,
    ) -> Queued {
        if self.waiting.load(Ordering::Acquire) == 0 {
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                let job = Job {
                    request,
                    context,
                    span,
                    admission,
                };
                self.tasks.spawn(run(self.exec.clone(), job, permit));
                return Queued::Accepted;
            }
        }
        if !self.warned_busy.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                limit = self.limits.max_concurrent,
                "{} requests are running on this connection, the limit; later ones wait their \
                 turn; raise DispatcherConfig::max_concurrent_requests if the handlers can take more",
                self.limits.max_concurrent
            );
        }
        let Some(queue) = &self.queue else {
            return Queued::Closed;
        };
        let job = Job {
            request,
            context,
            span,
            admission,
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
        self.tasks.len().saturating_sub(1) + self.waiting.load(Ordering::Acquire)
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
                tasks.spawn(run(exec.clone(), job, permit));
            }
            _ => {
                // Cancelled before it started: it never runs and is not answered.
                exec.shared.lock().inbound.remove(&job.context.id);
            }
        }
        waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs one request to its answer, holding its slot until then.
async fn run<H: Handler>(exec: Exec<H>, job: Job, _permit: OwnedSemaphorePermit) {
    let Job {
        request,
        context,
        span,
        admission: _admission,
    } = job;
    let Exec {
        handler,
        shared,
        timeout,
        warned_timeout,
    } = exec;
    async move {
        let id = context.id.clone();
        let cancel = context.cancel.clone();
        let method = request.method.clone();
        let deadline = async {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            // A request cancelled while its handler finished is not answered.
            outcome = handler.handle_request(request, context) => {
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
                        "a handler ran longer than the request timeout and was cancelled; raise \
                         DispatcherConfig::request_timeout if handlers need longer"
                    );
                }
                Some(Err(ErrorObject::new(
                    ErrorCode::REQUEST_TIMEOUT,
                    format!("`{method}` ran longer than the server's {limit:?} limit and was cancelled"),
                )))
            }
        };
        shared.lock().inbound.remove(&id);
        let Some(outcome) = outcome else {
            tracing::debug!("request cancelled; no response is sent");
            return;
        };
        let message: JsonRpcMessage = match outcome {
            Ok(result) => JsonRpcResultResponse::new(id.clone(), result).into(),
            Err(error) => JsonRpcErrorResponse::new(Some(id.clone()), error).into(),
        };
        let mut out = Outbound::new(message);
        out.related_request = Some(id);
        if shared.outbound.send(out).await.is_err() {
            tracing::debug!("connection closed before a response could be sent");
        }
    }
    .instrument(span)
    .await;
}
