//! One handshake-era session (2025-03-26 to 2025-11-25): its POST streams,
//! its GET stream, resumption from the event store, and where each
//! outbound message of its dispatcher goes.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use mcp_core::{
    Answered, Dispatcher, Headers, Outbound, StreamControl, TransportContext, TransportError,
};
use mcp_types::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcRequest, RequestId, Revision};
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::TaskTracker;

use super::body::{
    HttpBody, json_response, jsonrpc_error, jsonrpc_error_with_id, no_answer, plain_status,
    session_not_found, set_session_header, sse_response,
};
use super::checks::header_str;
use super::{RequestHeaders, Sender, ServiceStats};
use crate::http::sse::encode_event;
use crate::store::{EventStore, Replay};

/// One session: the routing state between its HTTP requests and its
/// dispatcher.
pub(super) struct Session {
    pub(super) id: Arc<str>,
    /// What serves the session (set as it opens): each POST's messages are
    /// handed to it, a request called in the POST's own task.
    dispatcher: OnceLock<Dispatcher>,
    router: Mutex<Router>,
    store: Arc<dyn EventStore>,
    retry: Option<Duration>,
    json_response: bool,
    keep_alive: Option<Duration>,
    sse_queue: usize,
    resumption_window: Duration,
    max_events: usize,
    max_event_bytes: usize,
    /// This server's tag when the session is shared with other servers:
    /// it names this server's streams and server-to-client requests.
    instance: Option<Arc<str>>,
}

/// Where outbound messages of one session go.
struct Router {
    /// By the number this side gave each (so the fast hasher).
    streams: foldhash::HashMap<u64, Stream>,
    /// Streams by their key in the event store (those that stored events).
    by_key: HashMap<String, u64>,
    by_request: HashMap<RequestId, u64>,
    standalone: Option<u64>,
    next: u64,
    closed: bool,
    /// The last time a request arrived or a stream was answered.
    last_active: Instant,
    /// The `initialize` request, until its answer names the version.
    initialize: Option<RequestId>,
    /// The negotiated protocol version, once `initialize` is answered.
    version: Option<Revision>,
    /// Events and bytes of all streams still in the event store.
    events: usize,
    event_bytes: usize,
    /// Of those, the events and bytes of answered streams: what the budget
    /// bounds (an open stream is bounded by the store's own per-stream cap).
    answered_events: usize,
    /// The answered streams, oldest first (ids grow): the budget releases
    /// from the front without scanning every stream.
    answered: std::collections::BTreeSet<u64>,
    answered_event_bytes: usize,
    /// Shared sessions only: the latest messages for the GET stream while
    /// it is held by another server (or by none), kept so that this server
    /// can take it over without a gap (see `Session::take_over`).
    unsent: VecDeque<Bytes>,
}

impl Router {
    /// Takes `id` off the requests running in the session.
    fn forget_request(&mut self, id: &RequestId) -> Option<u64> {
        self.by_request.remove(id)
    }

    /// Gives the emptied tables' memory back, at each sweep: an idle
    /// session keeps no table for the streams and requests it no longer
    /// has (a map keeps its capacity when emptied, a few hundred bytes per
    /// session for `streams`), while a busy one reuses its tables from one
    /// request to the next instead of allocating them for each.
    fn shrink_idle(&mut self) {
        free_if_empty(&mut self.streams);
        free_if_empty(&mut self.by_request);
        free_if_empty(&mut self.by_key);
    }
}

fn free_if_empty<K, V, S: Default>(map: &mut HashMap<K, V, S>) {
    if map.is_empty() && map.capacity() > 0 {
        *map = HashMap::default();
    }
}

enum Live {
    None,
    /// A POST whose request runs and has sent nothing yet: its answer alone
    /// goes out as JSON; anything sent before it opens the SSE stream,
    /// whose receiver goes to the waiting POST.
    Undecided(Option<oneshot::Sender<mpsc::Receiver<Bytes>>>),
    Sse(mpsc::Sender<Bytes>),
    Json {
        reply: Option<oneshot::Sender<Vec<Bytes>>>,
        collected: Vec<Bytes>,
    },
}

struct Stream {
    /// Its key in the event store, made when it stores its first event: a
    /// POST answered with one JSON body never needs one.
    key: Option<String>,
    open_requests: usize,
    live: Live,
    standalone: bool,
    /// When the last request of this POST stream was answered.
    answered: Option<Instant>,
    /// Whether the stream starts with a priming event (2025-11-25 on).
    primes: bool,
    events: usize,
    event_bytes: usize,
}

enum PostBody {
    Sse(mpsc::Receiver<Bytes>),
    Json(oneshot::Receiver<Vec<Bytes>>),
}

/// The event store key of stream `n` of session `session`, made (and
/// indexed in `by_key`) the first time the stream stores an event. Shared,
/// a stream's key names this server (`instance`) too: another one serving
/// the same session numbers its streams from 0 as well.
fn store_key<'a>(
    session: &str,
    instance: Option<&str>,
    (n, standalone): (u64, bool),
    key: &'a mut Option<String>,
    by_key: &mut HashMap<String, u64>,
) -> &'a str {
    key.get_or_insert_with(|| {
        let key = match instance {
            None => format!("{session}.{n}"),
            // A GET stream's number is marked, so that another server
            // resuming it knows to take it over rather than follow it.
            Some(instance) if standalone => format!("{session}.{instance}.{GET_MARK}{n}"),
            Some(instance) => format!("{session}.{instance}.{n}"),
        };
        by_key.insert(key.clone(), n);
        key
    })
}

/// A new random session id: 24 bytes from the OS, URL-safe base64.
pub(super) fn new_session_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 24];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS random source failing is not recoverable here; a
        // predictable id would be worse than refusing to make one.
        panic!("the operating system's random number generator is unavailable");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The id a server-to-client request of `instance` goes out with: its
/// answer may reach another server sharing the stores, which finds the
/// instance again with [`untag`].
pub(super) fn tag_request_id(instance: &str, id: &RequestId) -> RequestId {
    RequestId::String(match id {
        RequestId::Number(n) => format!("{instance}~n{n}"),
        RequestId::String(s) => format!("{instance}~s{s}"),
    })
}

/// The server a tagged id names, and the id its dispatcher knows.
pub(super) fn untag(id: &RequestId) -> Option<(&str, RequestId)> {
    let RequestId::String(tagged) = id else {
        return None;
    };
    let (instance, rest) = tagged.split_once('~')?;
    let original = match rest.split_at_checked(1)? {
        ("n", n) => RequestId::Number(n.parse().ok()?),
        ("s", s) => RequestId::String(s.to_owned()),
        _ => return None,
    };
    Some((instance, original))
}

impl Session {
    /// A session with no dispatcher yet ([`serve_with`](Self::serve_with)).
    pub(super) fn new(
        id: Arc<str>,
        config: &super::HttpServerConfig,
        instance: Option<Arc<str>>,
        version: Option<Revision>,
    ) -> Self {
        Self {
            id,
            dispatcher: OnceLock::new(),
            router: Mutex::new(Router {
                streams: foldhash::HashMap::default(),
                by_key: HashMap::new(),
                by_request: HashMap::new(),
                standalone: None,
                next: 0,
                closed: false,
                last_active: Instant::now(),
                initialize: None,
                version,
                events: 0,
                event_bytes: 0,
                answered_events: 0,
                answered_event_bytes: 0,
                answered: std::collections::BTreeSet::new(),
                unsent: VecDeque::new(),
            }),
            store: config.event_store.clone(),
            retry: config.retry,
            json_response: config.json_response,
            keep_alive: config.keep_alive,
            sse_queue: config.sse_queue,
            resumption_window: config.resumption_window,
            max_events: config.max_session_events,
            max_event_bytes: config.max_session_event_bytes,
            instance,
        }
    }

    /// Hands the dispatcher a message that reached another server (an
    /// answer routed over the bus); `false` once the session is closed.
    pub(super) async fn forward(&self, message: JsonRpcMessage) -> bool {
        let Some(dispatcher) = self.dispatcher() else {
            return false;
        };
        let context = self.context(&Headers::new(), &Sender::default(), None);
        dispatcher.receive(message, context).await;
        true
    }

    /// Keeps the dispatcher that serves the session.
    pub(super) fn serve_with(&self, dispatcher: Dispatcher) {
        if let Err(spare) = self.dispatcher.set(dispatcher) {
            spare.close();
        }
    }

    /// The session's dispatcher, while the session is open.
    fn dispatcher(&self) -> Option<Dispatcher> {
        if self.is_closed() {
            return None;
        }
        self.dispatcher.get().cloned()
    }

    /// The session in logs: the first characters of its id, which is a
    /// credential and never logged whole.
    pub(super) fn tag(&self) -> &str {
        mcp_core::session_tag(&self.id)
    }

    /// Notes a request of the client's: the session is in use.
    pub(super) fn touch(&self) {
        self.lock().last_active = Instant::now();
    }

    /// When the session went idle (no request running, no stream open);
    /// `None` while it is busy.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let router = self.lock();
        let busy = router
            .streams
            .values()
            .any(|s| s.open_requests > 0 || matches!(&s.live, Live::Sse(tx) if !tx.is_closed()));
        (!busy).then_some(router.last_active)
    }

    /// Releases the answered streams whose resumption window has passed,
    /// and gives back the tables an idle session no longer uses (the
    /// sweeper calls this for every session).
    pub(super) fn release_answered(&self, now: Instant) {
        let mut router = self.lock();
        let expired: Vec<u64> = router
            .streams
            .iter()
            .filter(|(_, s)| {
                s.answered
                    .is_some_and(|at| now.saturating_duration_since(at) >= self.resumption_window)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            self.release(&mut router, id);
        }
        router.shrink_idle();
    }

    /// Drops a stream and its stored events.
    fn release(&self, router: &mut Router, id: u64) {
        if let Some(stream) = router.streams.remove(&id) {
            if let Some(key) = &stream.key {
                router.by_key.remove(key);
                self.store.forget(key);
            }
            router.events -= stream.events;
            router.event_bytes -= stream.event_bytes;
            if stream.answered.is_some() {
                router.answered_events -= stream.events;
                router.answered_event_bytes -= stream.event_bytes;
                router.answered.remove(&id);
            }
        }
    }

    /// Keeps the session's stored events within its budget by releasing
    /// its oldest answered streams early.
    fn enforce_budget(&self, router: &mut Router) {
        while router.answered_events > self.max_events
            || router.answered_event_bytes > self.max_event_bytes
        {
            let Some(&oldest) = router.answered.first() else {
                break;
            };
            tracing::debug!(
                session = %self.tag(),
                events = router.answered_events,
                bytes = router.answered_event_bytes,
                "event budget of the session reached; releasing its oldest answered stream \
                 before its resumption window (raise HttpServerConfig::max_session_events to \
                 keep more)"
            );
            self.release(router, oldest);
        }
    }

    /// Ends the GET stream (the server is shutting down).
    pub(super) fn end_standalone(&self) {
        let mut router = self.lock();
        if let Some(id) = router.standalone.take() {
            self.release(&mut router, id);
        }
    }

    /// Adds this session's numbers to `stats`.
    pub(super) fn add_stats(&self, stats: &mut ServiceStats) {
        let router = self.lock();
        stats.streams += router.streams.len();
        stats.stored_events += router.events;
        stats.stored_event_bytes += router.event_bytes;
    }

    /// Whether a JSON array (batch) may be posted: only at 2025-03-26.
    fn check_batch(&self, headers: &HeaderMap) -> Result<(), Response<HttpBody>> {
        let version = self.lock().version.or_else(|| {
            header_str(headers, &super::checks::PROTOCOL_VERSION).and_then(Revision::from_version)
        });
        match version {
            Some(Revision::V2025_03_26) => Ok(()),
            version => Err(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Bad Request: a JSON array (batch) is only allowed at protocol version \
                     2025-03-26, and this session speaks {}: send one message per POST",
                    version.map_or("a later version", |v| v.as_str())
                ),
            )),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Router> {
        self.router.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Ends the session: its streams end, its events are forgotten, and its
    /// dispatcher is closed (what runs is cancelled).
    pub(super) fn close(&self) {
        let mut router = self.lock();
        router.closed = true;
        for stream in router.streams.values_mut() {
            stream.live = Live::None;
            if let Some(key) = &stream.key {
                self.store.forget(key);
            }
        }
        router.streams.clear();
        drop(router);
        if let Some(dispatcher) = self.dispatcher.get() {
            dispatcher.close();
        }
    }

    /// Counts an event stored for `stream`.
    fn stored(router: &mut Router, stream: u64, bytes: usize) {
        if let Some(s) = router.streams.get_mut(&stream) {
            s.events += 1;
            s.event_bytes += bytes;
            router.events += 1;
            router.event_bytes += bytes;
            if s.answered.is_some() {
                router.answered_events += 1;
                router.answered_event_bytes += bytes;
            }
        }
    }

    fn new_stream(&self, router: &mut Router, live: Live, standalone: bool) -> u64 {
        let n = router.next;
        router.next += 1;
        router.streams.insert(
            n,
            Stream {
                key: None,
                open_requests: 0,
                live,
                standalone,
                answered: None,
                primes: false,
                events: 0,
                event_bytes: 0,
            },
        );
        n
    }

    /// Sends a priming event (an id and empty data) so the client can resume
    /// the stream even before the first message.
    fn prime(&self, router: &mut Router, stream: u64) {
        let Some(s) = router.streams.get_mut(&stream) else {
            return;
        };
        let key = store_key(
            &self.id,
            self.instance.as_deref(),
            (stream, s.standalone),
            &mut s.key,
            &mut router.by_key,
        );
        let id = self.store.append(key, Bytes::new());
        if let Live::Sse(tx) = &s.live {
            let _ = tx.try_send(encode_event(Some(&id), self.retry, b""));
        }
        Self::stored(router, stream, 0);
    }

    /// Takes the messages of one POST: notifications and responses are
    /// accepted with 202; requests are answered on a new SSE stream (or
    /// with JSON).
    pub(super) async fn accept_post(
        self: Arc<Self>,
        mut messages: Vec<JsonRpcMessage>,
        batch: bool,
        headers: &Arc<RequestHeaders>,
        sender: &Sender,
        initialize: bool,
        tasks: &TaskTracker,
    ) -> Response<HttpBody> {
        if batch {
            if let Err(response) = self.check_batch(headers) {
                return response;
            }
        }
        let requests: Vec<RequestId> = messages
            .iter()
            .filter_map(|m| match m {
                JsonRpcMessage::Request(r) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        let context_headers = headers.to_headers();
        let Some(dispatcher) = self.dispatcher() else {
            return session_not_found();
        };
        if requests.is_empty() {
            // Notifications and responses only: accepted, nothing to stream.
            for message in messages {
                let context = self.context(&context_headers, sender, None);
                dispatcher.receive(message, context).await;
            }
            return plain_status(StatusCode::ACCEPTED);
        }

        let use_json = initialize || self.json_response;
        let primes = header_str(headers, &super::checks::PROTOCOL_VERSION)
            .is_some_and(|v| Revision::is_at_least(v, Revision::V2025_11_25));
        if !(use_json || batch) {
            if let Some(JsonRpcMessage::Request(request)) = messages.pop() {
                return self
                    .run_directly(
                        &dispatcher,
                        request,
                        &context_headers,
                        sender,
                        primes,
                        tasks,
                    )
                    .await;
            }
        }
        let (stream, body) = {
            let mut router = self.lock();
            if let Some(duplicate) = requests
                .iter()
                .find(|id| router.by_request.contains_key(id))
            {
                return duplicate_request(duplicate);
            }
            let (live, body) = if use_json {
                let (tx, rx) = oneshot::channel();
                (
                    Live::Json {
                        reply: Some(tx),
                        collected: Vec::new(),
                    },
                    PostBody::Json(rx),
                )
            } else {
                let (tx, rx) = mpsc::channel(self.sse_queue);
                (Live::Sse(tx), PostBody::Sse(rx))
            };
            let stream = self.new_stream(&mut router, live, false);
            if let Some(s) = router.streams.get_mut(&stream) {
                s.open_requests = requests.len();
            }
            for id in &requests {
                router.by_request.insert(id.clone(), stream);
            }
            if initialize {
                router.initialize = requests.first().cloned();
            }
            if !use_json && primes {
                self.prime(&mut router, stream);
            }
            (stream, body)
        };
        let control: Arc<dyn StreamControl> = Arc::new(StreamCloser {
            session: Arc::downgrade(&self),
            stream,
        });
        if !batch {
            // One request answered as JSON (an `initialize`, or a service
            // that answers JSON): called in the POST's task, so a refusal
            // of the rate limit is a 429, as for a request run directly.
            if let Some(JsonRpcMessage::Request(request)) = messages.pop() {
                let id = request.id.clone();
                let context = self.context(&context_headers, sender, Some(control.clone()));
                let answer = dispatcher.call(request, context, None).answer;
                // The client going away drops this future and cancels the
                // request: its stream and id must go too.
                let mut unanswered = Unanswered {
                    session: &self,
                    stream,
                    id: Some(id.clone()),
                };
                match answer.await {
                    // Its answer goes the way of what the handler sent
                    // first: collected into the JSON body.
                    Answered::Alone(message) => {
                        unanswered.id = None;
                        self.answer_late(message, id);
                    }
                    #[cfg(feature = "rate-limit")]
                    Answered::Limited(limited) => {
                        unanswered.id = None;
                        self.forget_stream(&mut self.lock(), stream, &id);
                        return super::body::too_many_requests(id, &limited);
                    }
                    Answered::Sent => unanswered.id = None,
                    // Cancelled: no answer (the guard ends its stream).
                    _ => {}
                }
                drop(unanswered);
            }
        }
        for message in messages {
            let control = matches!(message, JsonRpcMessage::Request(_)).then(|| control.clone());
            let context = self.context(&context_headers, sender, control);
            dispatcher.receive(message, context).await;
        }
        let session_id = initialize.then_some(&*self.id);
        match body {
            PostBody::Sse(rx) => sse_response(rx, session_id, self.keep_alive),
            PostBody::Json(rx) => match rx.await {
                // Every request was cancelled: nothing to answer.
                Ok(bodies) if bodies.is_empty() => no_answer(session_id),
                Ok(mut bodies) => {
                    let body = if bodies.len() == 1 {
                        bodies.remove(0)
                    } else {
                        let mut joined = Vec::from(&b"["[..]);
                        for (i, b) in bodies.iter().enumerate() {
                            if i > 0 {
                                joined.push(b',');
                            }
                            joined.extend_from_slice(b);
                        }
                        joined.push(b']');
                        Bytes::from(joined)
                    };
                    let mut response = json_response(StatusCode::OK, body);
                    set_session_header(response.headers_mut(), session_id);
                    response
                }
                Err(_) => jsonrpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::INTERNAL_ERROR,
                    "the session ended before answering",
                ),
            },
        }
    }

    /// Serves a POST of one request in the POST's task: its answer alone is
    /// one JSON body; when the handler sends something first (progress, a
    /// log message, a request) or closes the stream, the POST becomes an SSE
    /// stream and the rest of the run moves to a task of the service.
    async fn run_directly(
        self: Arc<Self>,
        dispatcher: &Dispatcher,
        request: JsonRpcRequest,
        headers: &Headers,
        sender: &Sender,
        primes: bool,
        tasks: &TaskTracker,
    ) -> Response<HttpBody> {
        let id = request.id.clone();
        let (first_tx, mut first_rx) = oneshot::channel();
        let stream = {
            let mut router = self.lock();
            if router.by_request.contains_key(&id) {
                return duplicate_request(&id);
            }
            let stream = self.new_stream(&mut router, Live::Undecided(Some(first_tx)), false);
            if let Some(s) = router.streams.get_mut(&stream) {
                s.open_requests = 1;
                s.primes = primes;
            }
            router.by_request.insert(id.clone(), stream);
            stream
        };
        let control: Arc<dyn StreamControl> = Arc::new(StreamCloser {
            session: Arc::downgrade(&self),
            stream,
        });
        let run = dispatcher.call(request, self.context(headers, sender, Some(control)), None);
        let mut answer = run.answer;
        // The client going away while the request runs drops this future
        // and the run with it: the request is cancelled, and its stream
        // and id here must go too.
        let mut unanswered = Unanswered {
            session: &self,
            stream,
            id: Some(id.clone()),
        };
        tokio::select! {
            biased;
            outcome = &mut answer => {
                unanswered.id = None;
                match outcome {
                    Answered::Alone(message) => {
                        if let Some(body) = self.answer_alone(stream, &id, &message) {
                            return json_response(StatusCode::OK, body);
                        }
                        // The stream opened meanwhile: the answer goes on it.
                        self.answer_late(message, id);
                    }
                    #[cfg(feature = "rate-limit")]
                    Answered::Limited(limited) => {
                        // It never ran, so its stream never opened.
                        self.forget_stream(&mut self.lock(), stream, &id);
                        return super::body::too_many_requests(id, &limited);
                    }
                    Answered::Cancelled => self.end_unanswered(stream, &id),
                    // Sent: the answer follows what went before it.
                    _ => {}
                }
            }
            // Outside tokio's cooperative budget: the answer, polled first, may
            // have spent it (a handler that yields only to the budget), and a
            // stream that opened would then wait for the handler to finish.
            opened = tokio::task::coop::unconstrained(&mut first_rx) => {
                // The rest of the run is the service's.
                unanswered.id = None;
                let session = self.clone();
                tasks.spawn(async move {
                    match answer.await {
                        Answered::Alone(message) => session.answer_late(message, id),
                        // No answer will come: its stream ends here.
                        Answered::Cancelled => session.end_unanswered(stream, &id),
                        _ => {}
                    }
                });
                return match opened {
                    Ok(rx) => sse_response(rx, None, self.keep_alive),
                    Err(_) => session_not_found(),
                };
            }
        }
        match first_rx.await {
            Ok(rx) => sse_response(rx, None, self.keep_alive),
            Err(_) => session_not_found(),
        }
    }

    /// The answer of a request of an undecided stream as the POST's JSON
    /// body, its stream released; `None` when the stream was opened (or
    /// the session closed) meanwhile.
    fn answer_alone(&self, stream: u64, id: &RequestId, message: &JsonRpcMessage) -> Option<Bytes> {
        let json = message.to_vec().ok()?;
        self.take_undecided(stream, id).then(|| Bytes::from(json))
    }

    /// Releases the stream of a request answered in the POST's own body,
    /// and frees its id; `false` when the stream was opened (or the session
    /// closed) meanwhile, so the answer must go on it.
    fn take_undecided(&self, stream: u64, id: &RequestId) -> bool {
        let mut router = self.lock();
        if !matches!(
            router.streams.get(&stream).map(|s| &s.live),
            Some(Live::Undecided(_))
        ) {
            return false;
        }
        self.forget_stream(&mut router, stream, id);
        true
    }

    /// Frees a request's id and releases its stream: nothing more goes on
    /// it.
    fn forget_stream(&self, router: &mut Router, stream: u64, id: &RequestId) {
        router.forget_request(id);
        router.last_active = Instant::now();
        self.release(router, stream);
    }

    /// Routes an answer that could not go out alone.
    fn answer_late(&self, message: JsonRpcMessage, id: RequestId) {
        let mut out = Outbound::new(message);
        out.related_request = Some(id);
        if self.route(out).is_err() {
            tracing::debug!(session = %self.tag(), "the session closed before an answer");
        }
    }

    /// Ends the stream of a request that was cancelled: it gets no answer.
    /// A JSON POST gets what its other requests answered (maybe nothing).
    fn end_unanswered(&self, stream: u64, id: &RequestId) {
        let mut router = self.lock();
        router.forget_request(id);
        self.open_sse(&mut router, stream);
        let Some(s) = router.streams.get_mut(&stream) else {
            return;
        };
        s.open_requests = s.open_requests.saturating_sub(1);
        if s.open_requests > 0 {
            return;
        }
        if matches!(s.live, Live::Json { .. }) {
            self.reply_json(&mut router, stream);
        } else {
            self.finish(&mut router, stream);
        }
    }

    /// Sends a JSON POST the answers collected for it, once none of its
    /// requests is open, and releases its stream: a JSON answer cannot be
    /// resumed, so nothing is kept.
    fn reply_json(&self, router: &mut Router, stream_id: u64) {
        let Some(stream) = router.streams.get_mut(&stream_id) else {
            return;
        };
        if let Live::Json { reply, collected } = &mut stream.live {
            if let Some(reply) = reply.take() {
                let _ = reply.send(std::mem::take(collected));
            }
        }
        router.last_active = Instant::now();
        self.release(router, stream_id);
    }

    /// Opens the SSE stream of an undecided POST: its receiver goes to the
    /// waiting POST, after the priming event where the version has one.
    fn open_sse(&self, router: &mut Router, stream: u64) {
        let Some(s) = router.streams.get_mut(&stream) else {
            return;
        };
        let Live::Undecided(first) = &mut s.live else {
            return;
        };
        let (tx, rx) = mpsc::channel(self.sse_queue.max(2));
        let opened = first.take().is_some_and(|first| first.send(rx).is_ok());
        // A POST that is gone can still be resumed from the store.
        s.live = if opened { Live::Sse(tx) } else { Live::None };
        if s.primes {
            self.prime(router, stream);
        }
    }

    /// Ends a POST stream whose every request is answered, keeping its
    /// events for the resumption window (dropping the sender lets the body
    /// write the last event and the end together).
    fn finish(&self, router: &mut Router, stream_id: u64) {
        let Some(stream) = router.streams.get_mut(&stream_id) else {
            return;
        };
        if stream.standalone {
            return;
        }
        stream.live = Live::None;
        // Only a server following this stream from elsewhere needs its end.
        if let (Some(_), Some(key)) = (&self.instance, &stream.key) {
            self.store.end(key);
        }
        stream.answered = Some(Instant::now());
        router.answered.insert(stream_id);
        router.answered_events += stream.events;
        router.answered_event_bytes += stream.event_bytes;
        router.last_active = Instant::now();
    }

    fn context(
        &self,
        headers: &Headers,
        sender: &Sender,
        stream: Option<Arc<dyn StreamControl>>,
    ) -> TransportContext {
        let mut context = TransportContext::with_headers(headers.clone());
        sender.fill(&mut context);
        context.session_id = Some(self.id.clone());
        context.stream = stream;
        // A session's requests are of the handshake era, whatever `_meta`
        // says: the version header decided it at the edge.
        context.envelope = Some(Ok(mcp_types::envelope::Envelope::Handshake));
        context
    }

    /// 409 when the session's GET stream is open (one at a time).
    fn standalone_conflict(router: &Router) -> Option<Response<HttpBody>> {
        let existing = router.standalone?;
        let live = router
            .streams
            .get(&existing)
            .is_some_and(|s| matches!(&s.live, Live::Sse(tx) if !tx.is_closed()));
        live.then(|| {
            jsonrpc_error(
                StatusCode::CONFLICT,
                ErrorCode::INVALID_REQUEST,
                "Conflict: this session already has a GET stream open",
            )
        })
    }

    /// Opens the session's GET stream (one at a time).
    pub(super) fn open_standalone(&self, headers: &HeaderMap) -> Response<HttpBody> {
        let mut router = self.lock();
        if let Some(conflict) = Self::standalone_conflict(&router) {
            return conflict;
        }
        let (tx, rx) = mpsc::channel(self.sse_queue);
        let stream = self.new_stream(&mut router, Live::Sse(tx), true);
        router.standalone = Some(stream);
        if header_str(headers, &super::checks::PROTOCOL_VERSION)
            .is_some_and(|v| Revision::is_at_least(v, Revision::V2025_11_25))
        {
            self.prime(&mut router, stream);
        }
        drop(router);
        sse_response(rx, None, self.keep_alive)
    }

    /// Serves here the GET stream that another server sharing the store
    /// held (it died, or the balancer sent the reconnection elsewhere), as
    /// this server's GET stream: first `replay`, what that server stored
    /// after the client's last event; then what reached this server for the
    /// GET stream meanwhile and that server had not stored (both saw the
    /// same notifications in the same order: the bus has one order);
    /// then live. `seen` is what the client saw last as the store keeps it,
    /// from where what is unsent here is matched when `replay` is empty:
    /// after that message, and after as many more as the client received
    /// beyond it that the other server never stored. Without that count, a
    /// client whose last events were lost to the store got everything
    /// unsent here again, from the first.
    pub(super) fn take_over(
        &self,
        headers: &HeaderMap,
        seen: Option<super::shared::Seen>,
        replay: Replay,
    ) -> Response<HttpBody> {
        let mut router = self.lock();
        if let Some(conflict) = Self::standalone_conflict(&router) {
            return conflict;
        }
        let replayed: Vec<Bytes> = replay
            .events
            .into_iter()
            .map(|(_, data)| data)
            .filter(|data| !data.is_empty())
            .collect();
        let unsent = std::mem::take(&mut router.unsent);
        // After the last message the other server carried that this one
        // saw too: the last replayed one found here, else the client's
        // last one the store keeps, and the events it got after it.
        let from = replayed
            .iter()
            .rev()
            .find_map(|data| unsent.iter().rposition(|u| u == data).map(|i| i + 1))
            .or_else(|| {
                let seen = seen.as_ref()?;
                let i = unsent.iter().rposition(|u| *u == seen.data)?;
                Some(i + 1 + seen.unstored)
            })
            .map_or(0, |from| from.min(unsent.len()));
        let (tx, rx) = mpsc::channel(self.sse_queue.max(replayed.len() + unsent.len() + 2));
        let stream = self.new_stream(&mut router, Live::Sse(tx), true);
        router.standalone = Some(stream);
        if header_str(headers, &super::checks::PROTOCOL_VERSION)
            .is_some_and(|v| Revision::is_at_least(v, Revision::V2025_11_25))
        {
            self.prime(&mut router, stream);
        }
        tracing::debug!(
            session = %self.tag(),
            replayed = replayed.len(),
            unsent = unsent.len() - from,
            "took over the GET stream another server held"
        );
        for json in replayed.into_iter().chain(unsent.into_iter().skip(from)) {
            self.deliver(&mut router, stream, json, false);
        }
        drop(router);
        sse_response(rx, None, self.keep_alive)
    }

    /// Replays a stream after `last_event_id`, then goes on live if the
    /// stream is still open.
    pub(super) async fn resume(&self, last_event_id: &str) -> Resumed {
        // The replay is read outside the routing lock; an event stored
        // meanwhile makes it stale, and it is read again.
        for _ in 0..RESUME_ATTEMPTS {
            let replay = match self.store.replay_after(last_event_id).await {
                Ok(Some(replay)) => replay,
                Ok(None) => return Resumed::Here(event_not_found(last_event_id)),
                Err(error) => return Resumed::Here(store_unavailable(&error)),
            };
            let mut router = self.lock();
            let Some(&stream_id) = router.by_key.get(&replay.stream) else {
                // A stream of this session on another server sharing the
                // store (its key starts with the session id).
                let ours = replay
                    .stream
                    .strip_prefix(&*self.id)
                    .is_some_and(|rest| rest.starts_with('.'));
                if self.instance.is_some() && ours {
                    let standalone = replay
                        .stream
                        .rsplit_once('.')
                        .is_some_and(|(_, n)| n.starts_with(GET_MARK));
                    return if standalone {
                        Resumed::TakeOver(replay)
                    } else {
                        Resumed::Elsewhere(replay)
                    };
                }
                return Resumed::Here(jsonrpc_error(
                    StatusCode::NOT_FOUND,
                    ErrorCode::INVALID_REQUEST,
                    "Not Found: that stream belongs to no open session",
                ));
            };
            let Some(stream) = router.streams.get_mut(&stream_id) else {
                continue;
            };
            let last = replay
                .events
                .last()
                .map_or(last_event_id, |(id, _)| id.as_str());
            let seen = crate::store::parse_event_id(last).map_or(0, |(_, seq)| seq + 1);
            if seen < stream.events as u64 {
                continue;
            }
            let (tx, rx) = mpsc::channel(self.sse_queue.max(replay.events.len() + 1));
            for (id, data) in replay.events.iter().filter(|(_, d)| !d.is_empty()) {
                let _ = tx.try_send(encode_event(Some(id), None, data));
            }
            let finished = !stream.standalone && stream.open_requests == 0;
            // A finished stream replays and ends; an open one goes on live.
            stream.live = if finished { Live::None } else { Live::Sse(tx) };
            drop(router);
            return Resumed::Here(sse_response(rx, None, self.keep_alive));
        }
        Resumed::Here(jsonrpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::INTERNAL_ERROR,
            "Service Unavailable: the stream moved on while it was replayed; resume again",
        ))
    }

    /// Routes one outbound message.
    pub(super) fn route(&self, mut outbound: Outbound) -> Result<(), TransportError> {
        if let (Some(instance), JsonRpcMessage::Request(request)) =
            (&self.instance, &mut outbound.message)
        {
            // Its answer may reach another server, which routes it here.
            request.id = tag_request_id(instance, &request.id);
        }
        let json = outbound.message.to_vec()?;
        let json = Bytes::from(json);
        let mut router = self.lock();
        if router.closed {
            return Err(TransportError::Closed);
        }
        let response_id = match &outbound.message {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = response_id {
            let Some(stream) = router.forget_request(id) else {
                tracing::debug!(%id, "no open request for this response; dropped");
                return Ok(());
            };
            if router.initialize.as_ref() == Some(id) {
                router.initialize = None;
                router.version = negotiated_version(&outbound.message);
            }
            self.deliver(&mut router, stream, json, true);
            return Ok(());
        }
        let target = outbound
            .related_request
            .as_ref()
            .and_then(|id| router.by_request.get(id).copied())
            .filter(|s| {
                router
                    .streams
                    .get(s)
                    .is_some_and(|s| !matches!(s.live, Live::Json { .. }))
            })
            .or(router.standalone);
        match target {
            Some(stream) => self.deliver(&mut router, stream, json, false),
            None if self.instance.is_some() => {
                if router.unsent.len() == MAX_UNSENT {
                    router.unsent.pop_front();
                }
                router.unsent.push_back(json);
            }
            // A request could never be answered: its sender hears so now
            // rather than at its timeout.
            None if matches!(outbound.message, JsonRpcMessage::Request(_)) => {
                return Err(TransportError::NoBackChannel);
            }
            None => {
                tracing::debug!(
                    method = outbound.message.method().unwrap_or(""),
                    "no stream to carry this notification (no GET stream open); dropped"
                );
            }
        }
        Ok(())
    }

    /// Puts one message on a stream (and in the event store).
    fn deliver(&self, router: &mut Router, stream_id: u64, json: Bytes, is_response: bool) {
        self.open_sse(router, stream_id);
        let Some(stream) = router.streams.get_mut(&stream_id) else {
            return;
        };
        if let Live::Json { collected, .. } = &mut stream.live {
            collected.push(json);
            if is_response {
                stream.open_requests = stream.open_requests.saturating_sub(1);
            }
            if stream.open_requests == 0 {
                self.reply_json(router, stream_id);
            }
            return;
        }
        let key = store_key(
            &self.id,
            self.instance.as_deref(),
            (stream_id, stream.standalone),
            &mut stream.key,
            &mut router.by_key,
        );
        let id = self.store.append(key, json.clone());
        if let Live::Sse(tx) = &stream.live {
            match tx.try_send(encode_event(Some(&id), None, &json)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(
                        session = %self.tag(),
                        queue = self.sse_queue,
                        "an SSE client fell behind; its stream is closed and it may resume \
                         (raise HttpServerConfig::sse_queue if clients are slow readers)"
                    );
                    stream.live = Live::None;
                }
                // Gone: it can resume from the store.
                Err(mpsc::error::TrySendError::Closed(_)) => stream.live = Live::None,
            }
        }
        if is_response {
            stream.open_requests = stream.open_requests.saturating_sub(1);
            if stream.open_requests == 0 {
                self.finish(router, stream_id);
            }
        }
        Self::stored(router, stream_id, json.len());
        self.enforce_budget(router);
    }
}

/// Ends the stream of a POST run directly whose future was dropped (the
/// client went away) before its request was answered; disarmed by taking
/// `id`.
struct Unanswered<'a> {
    session: &'a Session,
    stream: u64,
    id: Option<RequestId>,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.session.end_unanswered(self.stream, id);
        }
    }
}

/// Where a resumed stream is served.
pub(super) enum Resumed {
    /// By this server: the response.
    Here(Response<HttpBody>),
    /// By another server sharing the store: what it stored so far.
    Elsewhere(Replay),
    /// The GET stream of another server: what it stored after the client's
    /// last event, for [`Session::take_over`].
    TakeOver(Replay),
}

/// Marks a GET stream's number in its event store key (shared sessions).
const GET_MARK: char = 'g';

/// Messages for the GET stream a shared session keeps while another server
/// holds that stream (the latest; older ones are dropped first).
pub(super) const MAX_UNSENT: usize = 256;

/// How often a resumption reads the store again when events arrived while
/// it read.
const RESUME_ATTEMPTS: usize = 4;

fn event_not_found(last_event_id: &str) -> Response<HttpBody> {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        format!("Not Found: event `{last_event_id}` cannot be resumed"),
    )
}

/// A shared store failed: the client may retry (the backend reconnects).
pub(super) fn store_unavailable(error: &crate::Error) -> Response<HttpBody> {
    tracing::warn!(%error, "a shared store failed; the request was refused with 503");
    jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "Service Unavailable: the server's shared session store is unavailable; retry shortly",
    )
}

/// The answer to a request whose id is already running in the session.
fn duplicate_request(id: &RequestId) -> Response<HttpBody> {
    jsonrpc_error_with_id(
        StatusCode::BAD_REQUEST,
        Some(id.clone()),
        ErrorObject::invalid_request(format!(
            "request id {id} is already in flight in this session"
        )),
    )
}

/// The `protocolVersion` of an `initialize` result.
fn negotiated_version(message: &JsonRpcMessage) -> Option<Revision> {
    let JsonRpcMessage::Response(response) = message else {
        return None;
    };
    #[derive(serde::Deserialize)]
    struct Negotiated {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let negotiated: Negotiated = response.result.parse().ok()?;
    Revision::from_version(&negotiated.protocol_version)
}

/// Lets a handler close the SSE stream of its request (the client resumes
/// it with `Last-Event-ID`).
#[derive(Debug)]
struct StreamCloser {
    session: Weak<Session>,
    stream: u64,
}

impl StreamControl for StreamCloser {
    fn close_stream(&self) {
        let Some(session) = self.session.upgrade() else {
            return;
        };
        let mut router = session.lock();
        // An undecided POST opens its stream (with its priming event) to
        // close it.
        session.open_sse(&mut router, self.stream);
        if let Some(stream) = router.streams.get_mut(&self.stream) {
            if matches!(stream.live, Live::Sse(_)) {
                stream.live = Live::None;
            }
        }
    }

    fn unanswered(&self, id: &RequestId) {
        if let Some(session) = self.session.upgrade() {
            session.end_unanswered(self.stream, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_random_visible_ascii() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert!(a.len() >= 32);
        assert!(mcp_types::routing::is_session_id(&a));
    }

    fn running_stream() -> Stream {
        Stream {
            key: None,
            open_requests: 1,
            live: Live::None,
            standalone: false,
            answered: None,
            primes: false,
            events: 0,
            event_bytes: 0,
        }
    }

    /// The tables a busy session reuses from one request to the next are
    /// given back at the sweep once empty; one still in use is kept whole.
    #[test]
    fn the_sweep_gives_back_the_tables_an_idle_session_emptied() {
        let session = Session::new(
            "s".into(),
            &super::super::HttpServerConfig::new(),
            None,
            None,
        );
        {
            let mut router = session.lock();
            for n in 0..8 {
                router.streams.insert(n, running_stream());
                router
                    .by_request
                    .insert(RequestId::Number(n.try_into().expect("small")), n);
                router.by_key.insert(format!("key-{n}"), n);
            }
            router.streams.clear();
            router.by_key.clear();
            // One request still runs: its table stays as it is.
            router.by_request.retain(|_, stream| *stream == 0);
            assert!(router.streams.capacity() > 0 && router.by_key.capacity() > 0);
        }
        session.release_answered(Instant::now());
        let router = session.lock();
        assert_eq!(router.streams.capacity(), 0);
        assert_eq!(router.by_key.capacity(), 0);
        assert_eq!(router.by_request.len(), 1);
        assert!(
            router.by_request.capacity() >= 8,
            "a table in use is not shrunk"
        );
    }
}
