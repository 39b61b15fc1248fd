//! What the server sent the test client, recorded off the wire: a transport
//! wrapper that keeps every notification as it arrives, before the
//! dispatcher sees it, so a call's notifications are recorded by the time
//! its result (which the server sent after them) is returned.

use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::{Inbound, Transport, TransportReceiver};
use mcp_types::{InputRequest, JsonRpcMessage, JsonRpcNotification};
use serde::de::DeserializeOwned;

/// The notifications and asks of one test client, in order of arrival.
#[derive(Debug, Default)]
pub(crate) struct Record {
    notifications: Mutex<Vec<JsonRpcNotification>>,
    asked: Mutex<Vec<InputRequest>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock has failed already; the
    // record is still readable.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Record {
    pub(crate) fn push_asked(&self, request: InputRequest) {
        lock(&self.asked).push(request);
    }

    pub(crate) fn take_asked(&self) -> Vec<InputRequest> {
        std::mem::take(&mut *lock(&self.asked))
    }

    pub(crate) fn take_notifications(&self) -> Vec<JsonRpcNotification> {
        std::mem::take(&mut *lock(&self.notifications))
    }

    /// Takes the notifications of `method`, parsed into `P`, leaving the others.
    ///
    /// # Panics
    /// When one does not parse as `P`: the server sent a malformed notification.
    pub(crate) fn take_params<P: DeserializeOwned>(&self, method: &str) -> Vec<P> {
        let taken: Vec<JsonRpcNotification> = {
            let mut notifications = lock(&self.notifications);
            let (taken, kept) = std::mem::take(&mut *notifications)
                .into_iter()
                .partition(|n| n.method == method);
            *notifications = kept;
            taken
        };
        taken
            .into_iter()
            .map(|n| {
                let text = n.params.as_ref().map_or("{}", |p| p.get());
                serde_json::from_str(text).unwrap_or_else(|error| {
                    panic!("the server sent a malformed `{method}` notification ({error}): {text}")
                })
            })
            .collect()
    }
}

/// A transport whose inbound notifications are recorded.
pub(crate) struct Recording<T> {
    pub(crate) inner: T,
    pub(crate) record: Arc<Record>,
}

pub(crate) struct RecordingReceiver<R> {
    inner: R,
    record: Arc<Record>,
}

impl<T: Transport> Transport for Recording<T> {
    type Sender = T::Sender;
    type Receiver = RecordingReceiver<T::Receiver>;

    fn split(self) -> (Self::Sender, Self::Receiver) {
        let (sender, receiver) = self.inner.split();
        (
            sender,
            RecordingReceiver {
                inner: receiver,
                record: self.record,
            },
        )
    }
}

impl<R: TransportReceiver> TransportReceiver for RecordingReceiver<R> {
    async fn recv(&mut self) -> Option<Inbound> {
        let inbound = self.inner.recv().await;
        if let Some(Inbound::Message(JsonRpcMessage::Notification(notification), _)) = &inbound {
            lock(&self.record.notifications).push(notification.clone());
        }
        inbound
    }
}
