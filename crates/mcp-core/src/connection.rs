//! A [`Connection`]: the dispatcher driven by a stream transport (stdio, a
//! socket, memory): a read loop taking each message in order, a write loop
//! draining what waits to be written, and a loop handing notifications to
//! the handler in order.

use std::sync::Arc;
use std::time::Duration;

use mcp_types::JsonRpcMessage;
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::TaskTracker;

use crate::config::DispatcherConfig;
use crate::dispatch::{control, send_error, settle_other};
use crate::engine::{Queued, Registration, Runner, refusal_error};
use crate::fault::Fault;
use crate::handler::{
    Handler, IncomingNotification, IncomingRequest, NotificationContext, RequestContext,
};
use crate::peer::{Peer, Queue, Shared, Way};
use crate::span::request_span;
use crate::transport::{
    Inbound, Outbound, Transport, TransportContext, TransportReceiver, TransportSender,
};

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
        let (outbound_tx, outbound_rx) = mpsc::channel(config.outbound_queue.max(1));
        let shared = Arc::new(Shared::new(
            Way::Queue(Queue::new(outbound_tx, config.max_unwritten_bytes)),
            config.non_cancellable.clone(),
            network,
        ));
        let peer = Peer::new(shared.clone());
        let tasks = TaskTracker::new();
        let (notify_tx, notify_rx) = mpsc::channel(config.notification_queue.max(1));
        let handler = Arc::new(handler);
        let runner = Runner::new(handler.clone(), shared.clone(), &config, true);
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
    let Some(queue) = shared.queue() else {
        return;
    };
    'outer: loop {
        // What is queued is written before closing, whichever way we close.
        let message = tokio::select! {
            biased;
            message = outbound.recv() => message,
            () = shared.shutdown.cancelled() => None,
            () = queue.finish.cancelled() => None,
        };
        let Some(mut message) = message else { break };
        let mut written = 0;
        loop {
            let weight = crate::peer::weight(&message.message);
            let sent = sender.send(message).await;
            queue.wrote(weight);
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
    let Some(queue) = shared.queue() else {
        return;
    };
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
        if queue.over_budget() {
            tokio::select! {
                biased;
                () = shared.shutdown.cancelled() => break ReadEnd::Closed,
                () = queue.room_to_read() => {}
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
            other => {
                if !settle_other(&shared, runner.handler(), other).await {
                    break ReadEnd::Closed;
                }
            }
        }
    };
    drop(notifications);
    // Either way the peer cannot answer any more: fail what waits.
    shared.fail_pending();
    shared.session.end(shared.network);
    if !shared
        .closed_here
        .load(std::sync::atomic::Ordering::Acquire)
    {
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
    queue.finish.cancel();
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
                Err(refusal) => {
                    send_error(shared, Some(request.id), refusal_error(&refusal)).await;
                    return Dispatched::Continue;
                }
            };
            let cancel = runner.request_token();
            let registration =
                match Registration::new(shared, &request.id, &request.method, &cancel) {
                    Ok(registration) => registration,
                    Err(error) => {
                        send_error(shared, Some(request.id), error).await;
                        return Dispatched::Continue;
                    }
                };
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
                    call: None,
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
        JsonRpcMessage::Notification(notification) => {
            if let Some(incoming) = control(shared, notification) {
                if notifications.send((incoming, transport)).await.is_err() {
                    tracing::debug!("notification handler has stopped");
                }
            }
        }
        reply => crate::dispatch::settle_reply(shared, runner.handler(), reply),
    }
    Dispatched::Continue
}
