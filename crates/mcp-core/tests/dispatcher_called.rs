//! A dispatcher driven by its owner ([`mcp_core::Dispatcher`]): requests
//! called and answered to their caller, messages handed in; and the bound
//! on what waits to be written on a connection.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{
    Answered, CancellationToken, Connection, Dispatcher, DispatcherConfig, Handler, Inbound,
    IncomingNotification, IncomingRequest, NotificationContext, Outbound, Outlet, RequestContext,
    SendOptions, Transport, TransportContext, TransportError, TransportReceiver, TransportSender,
};
use mcp_types::{ErrorObject, JsonRpcMessage, JsonRpcRequest, RawJson};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(5);

/// `echo` answers its params; `note` sends a notification, then answers;
/// `hang` hands its cancel token to the test and never answers; `big`
/// answers 64 KiB.
struct Server {
    tokens: mpsc::UnboundedSender<CancellationToken>,
    answered: mpsc::UnboundedSender<String>,
}

impl Handler for Server {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let _ = self.answered.send(ctx.id.to_string());
        match request.method.as_str() {
            "echo" => Ok(request.params.unwrap_or_else(RawJson::empty_object)),
            "note" => {
                ctx.peer
                    .notify("notifications/message", None)
                    .await
                    .map_err(|e| e.to_error_object())?;
                Ok(RawJson::empty_object())
            }
            "hang" => {
                let _ = self.tokens.send(ctx.cancel.clone());
                std::future::pending().await
            }
            "big" => RawJson::from_serialize(&json!({"text": "x".repeat(64 * 1024)}))
                .map_err(|e| ErrorObject::internal_error(e.to_string())),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

/// Collects what is sent to the peer: a dispatcher's outlet, or a called
/// request's own.
#[derive(Default)]
struct Collect(Mutex<Vec<JsonRpcMessage>>);

impl Outlet for Collect {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        self.0.lock().expect("lock").push(message.message);
        Ok(())
    }
}

impl Collect {
    fn taken(&self) -> Vec<JsonRpcMessage> {
        std::mem::take(&mut *self.0.lock().expect("lock"))
    }
}

struct Served {
    dispatcher: Dispatcher,
    outlet: Arc<Collect>,
    tokens: mpsc::UnboundedReceiver<CancellationToken>,
}

fn serve() -> Served {
    let (tokens_tx, tokens) = mpsc::unbounded_channel();
    let (answered, _) = mpsc::unbounded_channel();
    let server = Server {
        tokens: tokens_tx,
        answered,
    };
    let outlet = Arc::new(Collect::default());
    let dispatcher = Dispatcher::new(
        server,
        DispatcherConfig::default(),
        outlet.clone(),
        Some("tcp"),
    );
    Served {
        dispatcher,
        outlet,
        tokens,
    }
}

impl Served {
    /// Calls request `id` of `method`, with no outlet of its own.
    fn run(&self, id: i64, method: &str) -> mcp_core::Call {
        self.dispatcher
            .call(request(id, method), TransportContext::default(), None)
    }
}

fn request(id: i64, method: &str) -> JsonRpcRequest {
    let params = RawJson::from_serialize(&json!({"n": id})).expect("json");
    JsonRpcRequest::new(id, method, Some(params))
}

#[tokio::test]
async fn a_called_request_is_answered_to_its_caller() {
    let served = serve();
    let run = served.run(1, "echo");
    let answer = timeout(LIMIT, run.answer).await.expect("in time");
    let Answered::Alone(JsonRpcMessage::Response(response)) = answer else {
        panic!("expected the answer alone, got {answer:?}");
    };
    assert_eq!(response.id, 1.into());
    let result: Value = response.result.parse().expect("json");
    assert_eq!(result, json!({"n": 1}));
    assert!(
        served.outlet.taken().is_empty(),
        "nothing went to the outlet"
    );
}

#[tokio::test]
async fn an_answer_after_a_notification_follows_it_to_the_outlet() {
    let served = serve();
    let run = served.run(2, "note");
    let answer = timeout(LIMIT, run.answer).await.expect("in time");
    assert!(matches!(answer, Answered::Sent), "{answer:?}");
    let sent = served.outlet.taken();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].method(), Some("notifications/message"));
    assert!(matches!(&sent[1], JsonRpcMessage::Response(r) if r.id == 2.into()));
}

#[tokio::test]
async fn with_its_own_outlet_a_request_sends_there_and_its_id_is_its_own() {
    let mut served = serve();
    let own = Arc::new(Collect::default());
    // A request of the dispatcher with id 3 runs; an exchange with the same
    // id is not a duplicate of it.
    let hang = served.run(3, "hang");
    let mut hang_answer = hang.answer;
    tokio::select! {
        _ = &mut hang_answer => panic!("hang answered"),
        token = served.tokens.recv() => assert!(!token.expect("a token").is_cancelled()),
    }
    let run = served.dispatcher.call(
        request(3, "note"),
        TransportContext::default(),
        Some(own.clone()),
    );
    let answer = timeout(LIMIT, run.answer).await.expect("in time");
    assert!(matches!(answer, Answered::Sent), "{answer:?}");
    let sent = own.taken();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].method(), Some("notifications/message"));
    assert!(matches!(&sent[1], JsonRpcMessage::Response(r) if r.id == 3.into()));
    assert!(
        served.outlet.taken().is_empty(),
        "nothing went the dispatcher's way"
    );
}

#[tokio::test]
async fn dropping_a_call_cancels_its_handler_and_cancel_ends_it() {
    let mut served = serve();
    let run = served.run(4, "hang");
    let mut answer = run.answer;
    let token = tokio::select! {
        _ = &mut answer => panic!("hang answered"),
        token = served.tokens.recv() => token.expect("a token"),
    };
    drop(answer);
    assert!(token.is_cancelled());
    // The dropped call freed its id: a new request may use it.
    let again = served.run(4, "echo");
    let again = timeout(LIMIT, again.answer).await.expect("in time");
    assert!(
        matches!(&again, Answered::Alone(JsonRpcMessage::Response(r)) if r.id == 4.into()),
        "{again:?}"
    );

    let run = served.run(5, "hang");
    let mut answer = run.answer;
    tokio::select! {
        _ = &mut answer => panic!("hang answered"),
        token = served.tokens.recv() => drop(token),
    }
    run.cancel.cancel();
    let ended = timeout(LIMIT, answer).await.expect("in time");
    assert!(matches!(ended, Answered::Cancelled), "{ended:?}");
}

#[tokio::test]
async fn a_call_dropped_before_its_first_poll_is_cancelled_and_a_finished_one_is_not() {
    let served = serve();
    let run = served.run(6, "hang");
    let token = run.cancel.clone();
    drop(run.answer);
    assert!(
        token.is_cancelled(),
        "a call given up before it started is cancelled"
    );

    let run = served.run(7, "echo");
    let token = run.cancel.clone();
    let answer = timeout(LIMIT, run.answer).await.expect("in time");
    assert!(
        matches!(&answer, Answered::Alone(JsonRpcMessage::Response(r)) if r.id == 7.into()),
        "{answer:?}"
    );
    assert!(
        !token.is_cancelled(),
        "a call that finished is not cancelled"
    );
}

/// The stream a received request came on (an HTTP POST's): hears which
/// requests get no answer.
#[derive(Debug)]
struct Unanswered(mpsc::UnboundedSender<mcp_types::RequestId>);

impl mcp_core::StreamControl for Unanswered {
    fn close_stream(&self) {}

    fn unanswered(&self, id: &mcp_types::RequestId) {
        let _ = self.0.send(id.clone());
    }
}

/// A context whose stream tells `heard` of the requests it gets no answer
/// for.
fn on_stream(heard: &mpsc::UnboundedSender<mcp_types::RequestId>) -> TransportContext {
    let mut context = TransportContext::default();
    context.stream = Some(Arc::new(Unanswered(heard.clone())));
    context
}

#[tokio::test]
async fn received_messages_are_served_and_answered_through_the_outlet() {
    let mut served = serve();
    let (heard, mut unanswered) = mpsc::unbounded_channel();
    // A request handed in runs in a task of the dispatcher's; its answer
    // goes to the outlet.
    served
        .dispatcher
        .receive(
            JsonRpcMessage::Request(request(8, "hang")),
            on_stream(&heard),
        )
        .await;
    let token = timeout(LIMIT, served.tokens.recv())
        .await
        .expect("in time")
        .expect("a token");
    // Its cancellation, handed in, reaches it.
    let cancel = mcp_types::JsonRpcNotification::new(
        "notifications/cancelled",
        Some(RawJson::from_serialize(&json!({"requestId": 8})).expect("json")),
    );
    served
        .dispatcher
        .receive(
            JsonRpcMessage::Notification(cancel),
            TransportContext::default(),
        )
        .await;
    assert!(token.is_cancelled());
    // It gets no answer, and the stream it came on hears so.
    let id = timeout(LIMIT, unanswered.recv())
        .await
        .expect("in time")
        .expect("the stream hears of it");
    assert_eq!(id, 8.into());
    assert!(served.outlet.taken().is_empty(), "nothing went out for it");
    served
        .dispatcher
        .receive(
            JsonRpcMessage::Request(request(9, "echo")),
            on_stream(&heard),
        )
        .await;
    // A request of ours, answered by a message handed in.
    let peer = served.dispatcher.peer();
    let asking = tokio::spawn(async move {
        peer.request(
            "ping",
            None,
            mcp_core::SendOptions::new().with_timeout(LIMIT),
        )
        .await
    });
    let ping = timeout(LIMIT, async {
        loop {
            let found = served
                .outlet
                .0
                .lock()
                .expect("lock")
                .iter()
                .find_map(|m| match m {
                    JsonRpcMessage::Request(r) if r.method == "ping" => Some(r.id.clone()),
                    _ => None,
                });
            if let Some(id) = found {
                return id;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the ping went out");
    served
        .dispatcher
        .receive(
            JsonRpcMessage::Response(mcp_types::JsonRpcResultResponse::new(
                ping,
                RawJson::empty_object(),
            )),
            TransportContext::default(),
        )
        .await;
    timeout(LIMIT, asking)
        .await
        .expect("in time")
        .expect("no panic")
        .expect("answered");
    let sent = served.outlet.taken();
    assert!(
        sent.iter()
            .any(|m| matches!(m, JsonRpcMessage::Response(r) if r.id == 9.into())),
        "{sent:?}"
    );
    // Closing ends the dispatcher and what it runs.
    served.dispatcher.close();
    timeout(LIMIT, served.dispatcher.closed())
        .await
        .expect("closed in time");
    // The answered request's stream heard nothing.
    assert!(
        unanswered.try_recv().is_err(),
        "an answered request is not unanswered"
    );
}

/// A transport whose writes wait for the test, and whose reads come from a
/// channel the test fills.
struct Gated {
    gate: Arc<tokio::sync::Semaphore>,
    inbound: mpsc::Receiver<Inbound>,
    written: mpsc::UnboundedSender<JsonRpcMessage>,
}

struct GatedSender {
    gate: Arc<tokio::sync::Semaphore>,
    written: mpsc::UnboundedSender<JsonRpcMessage>,
}

struct GatedReceiver(mpsc::Receiver<Inbound>);

impl TransportSender for GatedSender {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        let permit = self
            .gate
            .acquire()
            .await
            .map_err(|_| TransportError::Closed)?;
        permit.forget();
        let _ = self.written.send(message.message);
        Ok(())
    }

    async fn close(&mut self) {}
}

impl TransportReceiver for GatedReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        self.0.recv().await
    }
}

impl Transport for Gated {
    type Sender = GatedSender;
    type Receiver = GatedReceiver;

    fn split(self) -> (GatedSender, GatedReceiver) {
        (
            GatedSender {
                gate: self.gate,
                written: self.written,
            },
            GatedReceiver(self.inbound),
        )
    }
}

#[tokio::test(flavor = "current_thread")]
async fn reading_pauses_while_answers_wait_to_be_written() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (inbound_tx, inbound) = mpsc::channel(16);
    let (written_tx, mut written) = mpsc::unbounded_channel();
    let (tokens, _tokens) = mpsc::unbounded_channel();
    let (answered_tx, mut answered) = mpsc::unbounded_channel();
    let _connection = Connection::start(
        Gated {
            gate: gate.clone(),
            inbound,
            written: written_tx,
        },
        Server {
            tokens,
            answered: answered_tx,
        },
        DispatcherConfig::default().with_max_unwritten_bytes(1024),
    );
    let send = |id: i64| {
        Inbound::Message(
            JsonRpcMessage::Request(request(id, "big")),
            TransportContext::default(),
        )
    };
    inbound_tx.send(send(1)).await.expect("sent");
    let first = timeout(LIMIT, answered.recv()).await.expect("in time");
    assert_eq!(first.as_deref(), Some("1"));
    // The 64 KiB answer waits for the closed gate; the next request stays
    // unread however often the connection's tasks run.
    inbound_tx.send(send(2)).await.expect("sent");
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(answered.try_recv().is_err(), "request 2 was taken in");
    // Once the answer is written, reading goes on.
    gate.add_permits(2);
    let second = timeout(LIMIT, answered.recv()).await.expect("in time");
    assert_eq!(second.as_deref(), Some("2"));
    for id in [1, 2] {
        let message = timeout(LIMIT, written.recv()).await.expect("in time");
        assert!(
            matches!(message, Some(JsonRpcMessage::Response(r)) if r.id == id.into()),
            "answer {id} written"
        );
    }
}

/// An outlet that refuses every message, saying `why`.
struct Refuse(fn() -> TransportError);

impl Outlet for Refuse {
    fn send(&self, _: Outbound) -> Result<(), TransportError> {
        Err((self.0)())
    }
}

#[tokio::test]
async fn an_outlet_that_cannot_carry_a_message_says_why_to_its_sender() {
    let (tokens, _) = mpsc::unbounded_channel();
    let (answered, _) = mpsc::unbounded_channel();
    let refusing = Dispatcher::new(
        Server { tokens, answered },
        DispatcherConfig::default(),
        Arc::new(Refuse(|| TransportError::NoBackChannel)),
        Some("tcp"),
    );
    let peer = refusing.peer();
    let refused = timeout(LIMIT, peer.request("roots/list", None, SendOptions::new()))
        .await
        .expect("refused at once, not at a timeout");
    match refused {
        Err(mcp_core::Error::Transport {
            method,
            source: TransportError::NoBackChannel,
        }) => assert_eq!(method, "roots/list"),
        other => panic!("expected the outlet's reason, got {other:?}"),
    }
    match peer.notify("notifications/message", None).await {
        Err(mcp_core::Error::Transport {
            method,
            source: TransportError::NoBackChannel,
        }) => assert_eq!(method, "notifications/message"),
        other => panic!("expected the outlet's reason, got {other:?}"),
    }
    // The refused request is not left waiting for an answer: its id can be
    // chosen again.
    let again = peer
        .request("roots/list", None, SendOptions::new().with_id(1))
        .await;
    assert!(
        matches!(again, Err(mcp_core::Error::Transport { .. })),
        "{again:?}"
    );

    // An outlet whose connection is gone is a closed connection.
    let (tokens, _) = mpsc::unbounded_channel();
    let (answered, _) = mpsc::unbounded_channel();
    let closed = Dispatcher::new(
        Server { tokens, answered },
        DispatcherConfig::default(),
        Arc::new(Refuse(|| TransportError::Closed)),
        Some("tcp"),
    );
    let refused = closed
        .peer()
        .request("roots/list", None, SendOptions::new())
        .await;
    assert!(
        matches!(refused, Err(mcp_core::Error::Closed)),
        "{refused:?}"
    );
    let refused = closed.peer().notify("notifications/message", None).await;
    assert!(
        matches!(refused, Err(mcp_core::Error::Closed)),
        "{refused:?}"
    );
}
