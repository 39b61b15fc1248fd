//! Behaviour of the dispatcher over the in-memory transport.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{
    CancellationToken, Connection, DispatcherConfig, Error, Handler, Inbound, IncomingNotification,
    IncomingRequest, MemoryTransport, NotificationContext, Outbound, Progress, RequestContext,
    RequestOptions, Transport, TransportReceiver, TransportSender,
};
use mcp_types::{
    ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcResultResponse, RawJson, RequestId,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(5);

fn raw(value: Value) -> Option<RawJson> {
    Some(RawJson::from_serialize(&value).expect("serializable"))
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
        let params: Value = request
            .params
            .as_ref()
            .map(|p| p.parse().expect("JSON"))
            .unwrap_or(Value::Null);
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
    let (client, _server, handler, _, _) = connect();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..1000i64 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            // Later requests finish first.
            let params = raw(json!({"n": n, "delay_ms": 1000 - n}));
            let answer = peer
                .request("echo", params, RequestOptions::new())
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
    let call = tokio::spawn(async move { peer.request("hang", None, RequestOptions::new()).await });
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
            RequestOptions::new().with_timeout(Duration::from_millis(50)),
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
            RequestOptions::new().with_timeout(Duration::from_millis(50)),
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
        .request("echo", raw(json!({"n": 1})), RequestOptions::new())
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
            RequestOptions::new().with_progress(move |p| sink.lock().expect("lock").push(p)),
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
    let call = tokio::spawn(async move { peer.request("hang", None, RequestOptions::new()).await });
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
        .request("echo", None, RequestOptions::new())
        .await
        .expect_err("closed");
    assert!(matches!(err, Error::Closed));
}

#[tokio::test]
async fn errors_and_notifications_reach_their_targets() {
    let (client, _server, _, _, mut notes) = connect();
    let err = client
        .peer()
        .request("fail", None, RequestOptions::new())
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
        tokio::spawn(async move { peer.request("anything", None, RequestOptions::new()).await });
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
        peer.request("hang", None, RequestOptions::new().with_id("fixed"))
            .await
    });
    timeout(LIMIT, tokens.recv()).await.expect("started");
    let err = client
        .peer()
        .request("echo", None, RequestOptions::new().with_id("fixed"))
        .await
        .expect_err("duplicate");
    assert!(matches!(err, Error::DuplicateId(_)), "{err}");
}
