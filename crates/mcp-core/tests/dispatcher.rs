//! Behaviour of the dispatcher over the in-memory transport.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{
    CancellationToken, Connection, DispatcherConfig, Error, Handler, Inbound, IncomingNotification,
    IncomingRequest, MemoryTransport, NotificationContext, Outbound, Progress, RequestContext,
    SendOptions, Transport, TransportReceiver, TransportSender,
};
use mcp_types::{
    ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcResultResponse, RawJson, RequestId,
};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(5);

fn raw(value: Value) -> Option<RawJson> {
    Some(RawJson::from_serialize(&value).expect("serializable"))
}

/// A request's params as a `Value` (`null` when absent).
fn params_of(request: &IncomingRequest) -> Value {
    request
        .params
        .as_ref()
        .map(|p| p.parse().expect("JSON"))
        .unwrap_or(Value::Null)
}

/// A test server: `echo` answers its params after `delay_ms`; `hang` never
/// answers but hands its cancel token to the test; `progress` reports three
/// steps; notifications are forwarded to the test.
#[derive(Clone)]
struct TestHandler {
    finished: Arc<Mutex<Vec<i64>>>,
    tokens: mpsc::UnboundedSender<CancellationToken>,
    notes: mpsc::UnboundedSender<String>,
}

impl TestHandler {
    fn new() -> (
        Self,
        mpsc::UnboundedReceiver<CancellationToken>,
        mpsc::UnboundedReceiver<String>,
    ) {
        let (tokens, token_rx) = mpsc::unbounded_channel();
        let (notes, note_rx) = mpsc::unbounded_channel();
        (
            TestHandler {
                finished: Arc::default(),
                tokens,
                notes,
            },
            token_rx,
            note_rx,
        )
    }
}

impl Handler for TestHandler {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let params = params_of(&request);
        match request.method.as_str() {
            "echo" => {
                let n = params["n"].as_i64().unwrap_or(0);
                let delay = params["delay_ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                self.finished.lock().expect("lock").push(n);
                Ok(request.params.unwrap_or_else(RawJson::empty_object))
            }
            "hang" | "initialize" => {
                let _ = self.tokens.send(ctx.cancel.clone());
                std::future::pending().await
            }
            "progress" => {
                let token = request.progress_token().expect("a progress token");
                for step in 1..=3 {
                    ctx.peer
                        .notify_progress(
                            token.clone(),
                            f64::from(step),
                            Some(3.0),
                            Some(format!("step {step}")),
                        )
                        .await
                        .expect("sent");
                }
                Ok(RawJson::empty_object())
            }
            "fail" => Err(ErrorObject::invalid_params("no good")),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        _: NotificationContext,
    ) {
        let _ = self.notes.send(notification.method);
    }
}

fn connect() -> (
    Connection,
    Connection,
    TestHandler,
    mpsc::UnboundedReceiver<CancellationToken>,
    mpsc::UnboundedReceiver<String>,
) {
    let (a, b) = MemoryTransport::pair(64);
    let (handler, tokens, notes) = TestHandler::new();
    let server = Connection::start(a, handler.clone(), DispatcherConfig::default());
    let (client_handler, _, _) = TestHandler::new();
    let client = Connection::start(b, client_handler, DispatcherConfig::default());
    (client, server, handler, tokens, notes)
}

#[tokio::test(start_paused = true)]
async fn a_thousand_concurrent_requests_are_answered_out_of_order() {
    let (a, b) = MemoryTransport::pair(64);
    let (handler, _, _) = TestHandler::new();
    // All of them at once, above the default cap.
    let config = DispatcherConfig::default().with_max_concurrent_requests(1000);
    let _server = Connection::start(a, handler.clone(), config);
    let (client_handler, _, _) = TestHandler::new();
    let client = Connection::start(b, client_handler, DispatcherConfig::default());
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..1000i64 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            // Later requests finish first.
            let params = raw(json!({"n": n, "delay_ms": 1000 - n}));
            let answer = peer
                .request("echo", params, SendOptions::new())
                .await
                .expect("answered");
            let value: Value = answer.parse().expect("JSON");
            assert_eq!(value["n"], n, "each caller gets its own answer");
        });
    }
    while let Some(joined) = timeout(Duration::from_secs(60), calls.join_next())
        .await
        .expect("in time")
    {
        joined.expect("task ok");
    }
    let finished = handler.finished.lock().expect("lock").clone();
    assert_eq!(finished.len(), 1000);
    assert_eq!(finished[0], 999, "the last request was answered first");
    assert_eq!(client.peer().pending_requests(), 0);
}

#[tokio::test]
async fn dropping_a_request_cancels_the_handler_on_the_other_side() {
    let (client, _server, _, mut tokens, _) = connect();
    let peer = client.peer().clone();
    let call = tokio::spawn(async move { peer.request("hang", None, SendOptions::new()).await });
    let token = timeout(LIMIT, tokens.recv())
        .await
        .expect("handler started")
        .expect("token");
    call.abort();
    timeout(LIMIT, token.cancelled())
        .await
        .expect("the handler is cancelled");
    assert_eq!(client.peer().pending_requests(), 0);
}

#[tokio::test]
async fn a_cancelled_notification_stops_the_handler_and_no_response_is_sent() {
    // The server side asks, the client side cancels: the other direction.
    let (a, b) = MemoryTransport::pair(16);
    let (handler, mut tokens, _) = TestHandler::new();
    let answering = Connection::start(a, handler, DispatcherConfig::default());
    let (raw_sender, mut raw_receiver) = b.split();
    let mut raw_sender = raw_sender;
    raw_sender
        .send(Outbound::new(
            mcp_types::JsonRpcRequest::new(7, "hang", None).into(),
        ))
        .await
        .expect("sent");
    let token = timeout(LIMIT, tokens.recv())
        .await
        .expect("started")
        .expect("token");
    let cancel = mcp_types::JsonRpcNotification::new(
        "notifications/cancelled",
        raw(json!({"requestId": 7})),
    );
    raw_sender
        .send(Outbound::new(cancel.into()))
        .await
        .expect("sent");
    timeout(LIMIT, token.cancelled()).await.expect("cancelled");
    // Nothing answers request 7; the next request is answered normally.
    raw_sender
        .send(Outbound::new(
            mcp_types::JsonRpcRequest::new(8, "echo", raw(json!({"n": 8}))).into(),
        ))
        .await
        .expect("sent");
    let Some(Inbound::Message(JsonRpcMessage::Response(response), _)) =
        timeout(LIMIT, raw_receiver.recv()).await.expect("in time")
    else {
        panic!("expected the answer to request 8")
    };
    assert_eq!(response.id, RequestId::Number(8));
    drop(answering);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fails_the_call_and_cancels_it_on_the_wire() {
    let (client, _server, _, mut tokens, _) = connect();
    let err = client
        .peer()
        .request(
            "hang",
            None,
            SendOptions::new().with_timeout(Duration::from_millis(50)),
        )
        .await
        .expect_err("no answer");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("raise the timeout"), "{err}");
    let token = timeout(LIMIT, tokens.recv())
        .await
        .expect("started")
        .expect("token");
    timeout(LIMIT, token.cancelled())
        .await
        .expect("the peer was told");
}

#[tokio::test(start_paused = true)]
async fn initialize_is_never_cancelled() {
    let (client, _server, _, mut tokens, _) = connect();
    let err = client
        .peer()
        .request(
            "initialize",
            None,
            SendOptions::new().with_timeout(Duration::from_millis(50)),
        )
        .await
        .expect_err("no answer");
    assert!(matches!(err, Error::Timeout { .. }));
    let token = timeout(LIMIT, tokens.recv())
        .await
        .expect("started")
        .expect("token");
    // A later round trip proves any cancel notice would have been read by now.
    client
        .peer()
        .request("echo", raw(json!({"n": 1})), SendOptions::new())
        .await
        .expect("echo");
    assert!(!token.is_cancelled());
}

#[tokio::test]
async fn progress_reaches_the_callback_of_its_request() {
    let (client, _server, _, _, _) = connect();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    client
        .peer()
        .request(
            "progress",
            raw(json!({"other": true})),
            SendOptions::new().with_progress(move |p| sink.lock().expect("lock").push(p)),
        )
        .await
        .expect("answered");
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].progress, 3.0);
    assert_eq!(seen[2].total, Some(3.0));
    assert_eq!(seen[0].message.as_deref(), Some("step 1"));
}

#[tokio::test]
async fn closing_the_connection_fails_pending_requests_promptly() {
    let (client, server, _, mut tokens, _) = connect();
    let peer = client.peer().clone();
    let call = tokio::spawn(async move { peer.request("hang", None, SendOptions::new()).await });
    timeout(LIMIT, tokens.recv()).await.expect("started");
    server.shutdown().await;
    let err = timeout(LIMIT, call)
        .await
        .expect("prompt")
        .expect("joined")
        .expect_err("closed");
    assert!(matches!(err, Error::ConnectionClosed { .. }), "{err}");
    timeout(LIMIT, client.wait())
        .await
        .expect("the client side ends too");
    let err = client
        .peer()
        .request("echo", None, SendOptions::new())
        .await
        .expect_err("closed");
    assert!(matches!(err, Error::Closed));
}

#[tokio::test]
async fn errors_and_notifications_reach_their_targets() {
    let (client, _server, _, _, mut notes) = connect();
    let err = client
        .peer()
        .request("fail", None, SendOptions::new())
        .await
        .expect_err("fails");
    let Error::Remote(error) = err else {
        panic!("a remote error")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    for method in ["first", "second"] {
        client.peer().notify(method, None).await.expect("sent");
    }
    assert_eq!(
        timeout(LIMIT, notes.recv())
            .await
            .expect("in time")
            .as_deref(),
        Some("first")
    );
    assert_eq!(
        timeout(LIMIT, notes.recv())
            .await
            .expect("in time")
            .as_deref(),
        Some("second")
    );
}

#[tokio::test]
async fn a_stringified_id_matches_and_unknown_ids_are_dropped_without_harm() {
    let (a, b) = MemoryTransport::pair(16);
    let (handler, _, _) = TestHandler::new();
    let client = Connection::start(a, handler, DispatcherConfig::default());
    let (mut raw_sender, mut raw_receiver) = b.split();
    let peer = client.peer().clone();
    let call =
        tokio::spawn(async move { peer.request("anything", None, SendOptions::new()).await });
    let Some(Inbound::Message(JsonRpcMessage::Request(request), _)) =
        timeout(LIMIT, raw_receiver.recv()).await.expect("in time")
    else {
        panic!("a request")
    };
    let RequestId::Number(n) = request.id else {
        panic!("an integer id")
    };
    // An answer to nobody first: logged and dropped, the connection lives.
    let stray = JsonRpcResultResponse::new(RequestId::from("no-such-id"), RawJson::empty_object());
    raw_sender
        .send(Outbound::new(stray.into()))
        .await
        .expect("sent");
    let answer =
        JsonRpcResultResponse::new(RequestId::String(n.to_string()), RawJson::empty_object());
    raw_sender
        .send(Outbound::new(answer.into()))
        .await
        .expect("sent");
    let result = timeout(LIMIT, call)
        .await
        .expect("in time")
        .expect("joined")
        .expect("answered");
    assert_eq!(result.get(), "{}");
}

#[tokio::test]
async fn a_chosen_id_that_is_pending_is_refused() {
    let (client, _server, _, mut tokens, _) = connect();
    let peer = client.peer().clone();
    let _hanging = tokio::spawn(async move {
        peer.request("hang", None, SendOptions::new().with_id("fixed"))
            .await
    });
    timeout(LIMIT, tokens.recv()).await.expect("started");
    let err = client
        .peer()
        .request("echo", None, SendOptions::new().with_id("fixed"))
        .await
        .expect_err("duplicate");
    assert!(matches!(err, Error::DuplicateId(_)), "{err}");
}

/// What a [`Controlled`] handler reports to its test.
enum Event {
    /// Request `n` started; sending on the channel lets it finish.
    Started(i64, oneshot::Sender<()>),
    /// The future of request `n` was dropped before it finished.
    Dropped(i64),
    /// A notification arrived.
    Note(String),
}

/// A server the test steers: `block` runs until released, `ask` asks the
/// peer `echo` and answers with what came back (or the error).
#[derive(Clone)]
struct Controlled {
    events: mpsc::UnboundedSender<Event>,
}

struct DropReport {
    n: i64,
    done: bool,
    events: mpsc::UnboundedSender<Event>,
}

impl Drop for DropReport {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.events.send(Event::Dropped(self.n));
        }
    }
}

impl Handler for Controlled {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let params = params_of(&request);
        let n = params["n"].as_i64().unwrap_or(0);
        match request.method.as_str() {
            "block" | "barrier" => {
                let mut report = DropReport {
                    n,
                    done: false,
                    events: self.events.clone(),
                };
                let (release, released) = oneshot::channel();
                let _ = self.events.send(Event::Started(n, release));
                let _ = released.await;
                report.done = true;
                Ok(request.params.unwrap_or_else(RawJson::empty_object))
            }
            // Busy for ever without blocking the thread: each round spends
            // the task's cooperative budget, and tokio makes it yield when
            // the budget is gone, as a CPU-bound handler should.
            "spin" => {
                let _report = DropReport {
                    n,
                    done: false,
                    events: self.events.clone(),
                };
                loop {
                    tokio::task::coop::consume_budget().await;
                }
            }
            "ask" => ctx
                .peer
                .request("echo", raw(json!({"n": n})), SendOptions::new())
                .await
                .map_err(|e| e.to_error_object()),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        _: NotificationContext,
    ) {
        let _ = self.events.send(Event::Note(notification.method));
    }

    fn is_barrier(&self, method: &str) -> bool {
        method == "barrier"
    }
}

fn controlled() -> (Controlled, mpsc::UnboundedReceiver<Event>) {
    let (events, rx) = mpsc::unbounded_channel();
    (Controlled { events }, rx)
}

async fn next_event(events: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    timeout(LIMIT, events.recv())
        .await
        .expect("an event in time")
        .expect("the handler lives")
}

async fn started(events: &mut mpsc::UnboundedReceiver<Event>) -> (i64, oneshot::Sender<()>) {
    match next_event(events).await {
        Event::Started(n, release) => (n, release),
        Event::Dropped(n) => panic!("request {n} dropped, expected a start"),
        Event::Note(m) => panic!("notification {m}, expected a start"),
    }
}

/// Starts `Controlled` under `config` on one end; the test drives the other
/// end by hand.
fn controlled_server(
    config: DispatcherConfig,
) -> (
    Connection,
    mpsc::UnboundedReceiver<Event>,
    mcp_core::MemorySender,
    mcp_core::MemoryReceiver,
) {
    let (a, b) = MemoryTransport::pair(64);
    let (handler, events) = controlled();
    let server = Connection::start(a, handler, config);
    let (raw_sender, raw_receiver) = b.split();
    (server, events, raw_sender, raw_receiver)
}

async fn send_request(sender: &mut mcp_core::MemorySender, id: i64, method: &str) {
    sender
        .send(Outbound::new(
            mcp_types::JsonRpcRequest::new(id, method, raw(json!({"n": id}))).into(),
        ))
        .await
        .expect("sent");
}

async fn send_note(sender: &mut mcp_core::MemorySender, method: &str) {
    sender
        .send(Outbound::new(
            mcp_types::JsonRpcNotification::new(method, None).into(),
        ))
        .await
        .expect("sent");
}

async fn next_message(receiver: &mut mcp_core::MemoryReceiver) -> JsonRpcMessage {
    match timeout(LIMIT, receiver.recv()).await.expect("in time") {
        Some(Inbound::Message(message, _)) => message,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The next message, which must be an error with `code` answering request
/// `id`; its error object, for the test to look into.
async fn next_error(
    receiver: &mut mcp_core::MemoryReceiver,
    id: i64,
    code: ErrorCode,
) -> ErrorObject {
    let JsonRpcMessage::Error(error) = next_message(receiver).await else {
        panic!("an error answering request {id}")
    };
    assert_eq!(error.id, Some(RequestId::Number(id)));
    assert_eq!(error.error.code, code);
    error.error
}

#[tokio::test]
async fn with_a_cap_of_two_the_third_request_waits_for_a_free_slot() {
    let config = DispatcherConfig::default().with_max_concurrent_requests(2);
    let (_server, mut events, mut sender, mut receiver) = controlled_server(config);
    for id in 1..=3 {
        send_request(&mut sender, id, "block").await;
    }
    // Notifications are read in order after the requests: once this one is
    // seen, the third request has been read and placed.
    send_note(&mut sender, "marker").await;
    let (first, release_first) = started(&mut events).await;
    let (second, _release_second) = started(&mut events).await;
    assert_eq!((first, second), (1, 2));
    match next_event(&mut events).await {
        Event::Note(m) => assert_eq!(m, "marker"),
        _ => panic!("the third request started while two ran"),
    }
    assert!(
        events.try_recv().is_err(),
        "the third request has not started"
    );
    release_first.send(()).expect("released");
    let JsonRpcMessage::Response(answer) = next_message(&mut receiver).await else {
        panic!("an answer")
    };
    assert_eq!(answer.id, RequestId::Number(1));
    let (third, _release_third) = started(&mut events).await;
    assert_eq!(third, 3, "the third starts when a slot frees");
}

#[tokio::test]
async fn a_handler_waiting_on_the_peer_gets_its_answer_while_requests_queue() {
    let (a, b) = MemoryTransport::pair(64);
    let (handler, mut events) = controlled();
    let config = DispatcherConfig::default().with_max_concurrent_requests(1);
    let _server = Connection::start(a, handler, config);
    let (client_handler, _, _) = TestHandler::new();
    let client = Connection::start(b, client_handler, DispatcherConfig::default());
    let peer = client.peer().clone();
    // `ask` holds the only slot and waits for the client's answer, while
    // three more requests queue behind it.
    let ask = tokio::spawn(async move {
        peer.request("ask", raw(json!({"n": 7})), SendOptions::new())
            .await
    });
    let mut blocked = Vec::new();
    for n in 0..3 {
        let peer = client.peer().clone();
        blocked.push(tokio::spawn(async move {
            peer.request("block", raw(json!({"n": n})), SendOptions::new())
                .await
        }));
    }
    let answer = timeout(LIMIT, ask)
        .await
        .expect("the read loop kept reading answers")
        .expect("joined")
        .expect("answered");
    let value: Value = answer.parse().expect("JSON");
    assert_eq!(value["n"], 7);
    let (n, release) = started(&mut events).await;
    assert_eq!(n, 0, "the queue is served in order");
    release.send(()).expect("released");
}

#[tokio::test(start_paused = true)]
async fn a_handler_over_the_request_timeout_is_cancelled_and_its_caller_told() {
    let config = DispatcherConfig::default().with_request_timeout(Duration::from_secs(1));
    let (_server, mut events, mut sender, mut receiver) = controlled_server(config);
    send_request(&mut sender, 1, "block").await;
    let (_, _release) = started(&mut events).await;
    let error = next_error(&mut receiver, 1, ErrorCode::REQUEST_TIMEOUT).await;
    assert!(error.message.contains("`block`"), "{}", error.message);
    assert!(matches!(next_event(&mut events).await, Event::Dropped(1)));
}

/// A peer's request whose id is the id of one of its requests still
/// running is refused (-32600) and the running one is unharmed; once that
/// one is answered, its id may be used again.
#[tokio::test]
async fn an_id_in_use_is_refused_until_its_request_is_answered() {
    let (_server, mut events, mut sender, mut receiver) =
        controlled_server(DispatcherConfig::default());
    send_request(&mut sender, 1, "block").await;
    let (_, release) = started(&mut events).await;
    send_request(&mut sender, 1, "block").await;
    let refused = next_error(&mut receiver, 1, ErrorCode::INVALID_REQUEST).await;
    assert!(
        refused.message.contains("already in use"),
        "{}",
        refused.message
    );
    release.send(()).expect("the first still runs");
    let JsonRpcMessage::Response(answer) = next_message(&mut receiver).await else {
        panic!("the first request answered")
    };
    assert_eq!(answer.id, RequestId::Number(1));
    // Answered, its id is free again.
    send_request(&mut sender, 1, "block").await;
    let (n, release) = started(&mut events).await;
    assert_eq!(n, 1);
    release.send(()).expect("runs");
    let JsonRpcMessage::Response(again) = next_message(&mut receiver).await else {
        panic!("the reused id answered")
    };
    assert_eq!(again.id, RequestId::Number(1));
}

/// The request timeout must hold for a handler that never waits on
/// anything but tokio's cooperative budget: such a handler leaves the
/// budget spent whenever it yields, and a deadline polled only after it
/// (a `select!` biased towards the handler) would never fire.
#[tokio::test]
async fn a_handler_spending_its_budget_still_times_out() {
    let config = DispatcherConfig::default().with_request_timeout(Duration::from_millis(50));
    let (_server, mut events, mut sender, mut receiver) = controlled_server(config);
    send_request(&mut sender, 1, "spin").await;
    next_error(&mut receiver, 1, ErrorCode::REQUEST_TIMEOUT).await;
    assert!(matches!(next_event(&mut events).await, Event::Dropped(1)));
}

#[tokio::test]
async fn closing_cancels_and_awaits_every_running_and_queued_request() {
    let config = DispatcherConfig::default().with_max_concurrent_requests(2);
    let (server, mut events, mut sender, _receiver) = controlled_server(config);
    for id in 1..=3 {
        send_request(&mut sender, id, "block").await;
    }
    let _first = started(&mut events).await;
    let _second = started(&mut events).await;
    timeout(LIMIT, server.shutdown()).await.expect("prompt");
    // Both running handlers were dropped before shutdown returned, and the
    // queued one never started.
    let mut dropped = Vec::new();
    while let Ok(event) = events.try_recv() {
        match event {
            Event::Dropped(n) => dropped.push(n),
            Event::Started(n, _) => panic!("request {n} started during shutdown"),
            Event::Note(_) => {}
        }
    }
    dropped.sort_unstable();
    assert_eq!(dropped, [1, 2]);
}

#[tokio::test(start_paused = true)]
async fn after_the_peer_finishes_sending_every_request_is_still_answered() {
    let (a, b) = MemoryTransport::pair(16);
    let (handler, _, _) = TestHandler::new();
    let config = DispatcherConfig::default().with_max_concurrent_requests(8);
    let server = Connection::start(a, handler, config);
    let (mut sender, mut receiver) = b.split();
    let reader = tokio::spawn(async move {
        let mut ids = Vec::new();
        while let Some(inbound) = receiver.recv().await {
            if let Inbound::Message(JsonRpcMessage::Response(r), _) = inbound {
                ids.push(r.id);
            }
        }
        ids
    });
    for n in 0..200i64 {
        let params = raw(json!({"n": n, "delay_ms": 200 - n}));
        sender
            .send(Outbound::new(
                mcp_types::JsonRpcRequest::new(n, "echo", params).into(),
            ))
            .await
            .expect("sent");
    }
    // The peer's last word: its sending side closes, as stdin reaching its end.
    sender.close().await;
    let ids = timeout(LIMIT * 10, reader)
        .await
        .expect("the server closes after answering")
        .expect("joined");
    assert_eq!(ids.len(), 200, "every request was answered");
    timeout(LIMIT, server.wait())
        .await
        .expect("the server ended");
}

#[tokio::test]
async fn when_the_peer_finishes_sending_our_own_requests_fail_at_once() {
    let (_server, _events, mut sender, mut receiver) =
        controlled_server(DispatcherConfig::default());
    send_request(&mut sender, 1, "ask").await;
    let JsonRpcMessage::Request(asked) = next_message(&mut receiver).await else {
        panic!("the server asks back")
    };
    assert_eq!(asked.method, "echo");
    // Close without answering: the server's question can never be answered,
    // so its handler learns at once, and its own answer still goes out.
    sender.close().await;
    let JsonRpcMessage::Error(error) = next_message(&mut receiver).await else {
        panic!("an error answer")
    };
    assert_eq!(error.id, Some(RequestId::Number(1)));
    assert_eq!(error.error.code, ErrorCode::CONNECTION_CLOSED);
    assert!(
        timeout(LIMIT, receiver.recv())
            .await
            .expect("closed")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn requests_still_running_after_the_eof_grace_are_cancelled() {
    let config = DispatcherConfig::default().with_eof_grace(Duration::from_secs(3));
    let (server, mut events, mut sender, mut receiver) = controlled_server(config);
    send_request(&mut sender, 1, "block").await;
    let (_, _release) = started(&mut events).await;
    sender.close().await;
    timeout(LIMIT, server.wait())
        .await
        .expect("the grace is bounded");
    assert!(matches!(next_event(&mut events).await, Event::Dropped(1)));
    assert!(
        timeout(LIMIT, receiver.recv())
            .await
            .expect("closed")
            .is_none(),
        "a cancelled request is not answered"
    );
}

#[tokio::test]
async fn a_peer_that_is_gone_cancels_running_requests_at_once() {
    // The default ten-second grace would outlast LIMIT: cancelling at once
    // is what lets this finish.
    let (server, mut events, mut sender, receiver) = controlled_server(DispatcherConfig::default());
    send_request(&mut sender, 1, "block").await;
    let (_, _release) = started(&mut events).await;
    // The peer stops reading; the next write (the question `ask` sends it)
    // fails, while its sending side is still open.
    drop(receiver);
    send_request(&mut sender, 2, "ask").await;
    timeout(LIMIT, server.wait())
        .await
        .expect("the connection ends at the failed write");
    let mut dropped = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::Dropped(n) = event {
            dropped.push(n);
        }
    }
    assert!(dropped.contains(&1), "the running request was cancelled");
}

#[tokio::test]
async fn what_follows_a_barrier_waits_for_its_answer_while_answers_still_flow() {
    let (server, mut events, mut sender, mut receiver) =
        controlled_server(DispatcherConfig::default());
    send_request(&mut sender, 1, "barrier").await;
    let (n, release) = started(&mut events).await;
    assert_eq!(n, 1);
    send_request(&mut sender, 2, "block").await;
    send_note(&mut sender, "notifications/after").await;

    // A request of the server's own, answered by the test: its answer is
    // read after request 2 and the notification, and goes through.
    let peer = server.peer().clone();
    let asking = tokio::spawn(async move {
        peer.request("ping", None, SendOptions::new().with_timeout(LIMIT))
            .await
    });
    let JsonRpcMessage::Request(ping) = next_message(&mut receiver).await else {
        panic!("the server's request");
    };
    sender
        .send(Outbound::new(
            JsonRpcResultResponse::new(ping.id, RawJson::empty_object()).into(),
        ))
        .await
        .expect("sent");
    timeout(LIMIT, asking)
        .await
        .expect("answered in time")
        .expect("no panic")
        .expect("the answer went through the barrier");
    assert!(
        matches!(events.try_recv(), Err(mpsc::error::TryRecvError::Empty)),
        "nothing after the barrier was taken up before its answer"
    );

    let _ = release.send(());
    let JsonRpcMessage::Response(first) = next_message(&mut receiver).await else {
        panic!("the barrier's answer");
    };
    assert_eq!(first.id, RequestId::Number(1));
    let (n, release_two) = started(&mut events).await;
    assert_eq!(n, 2, "then the request held behind it");
    match next_event(&mut events).await {
        Event::Note(method) => assert_eq!(method, "notifications/after"),
        _ => panic!("then the notification"),
    }
    let _ = release_two.send(());
    server.shutdown().await;
}
