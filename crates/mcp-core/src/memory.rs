//! An in-memory transport pair: two connected ends, for tests and for
//! running a client and a server in one process without I/O.

use tokio::sync::mpsc;

use crate::error::TransportError;
use crate::transport::{
    Inbound, Outbound, Transport, TransportContext, TransportReceiver, TransportSender,
};

/// One end of an in-memory connection.
#[derive(Debug)]
pub struct MemoryTransport {
    sender: MemorySender,
    receiver: MemoryReceiver,
}

/// The sending half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemorySender {
    tx: Option<mpsc::Sender<Inbound>>,
}

/// The receiving half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemoryReceiver {
    rx: mpsc::Receiver<Inbound>,
}

impl MemoryTransport {
    /// Two connected ends; each direction queues at most `capacity` messages.
    pub fn pair(capacity: usize) -> (MemoryTransport, MemoryTransport) {
        let (a_tx, a_rx) = mpsc::channel(capacity.max(1));
        let (b_tx, b_rx) = mpsc::channel(capacity.max(1));
        (
            MemoryTransport {
                sender: MemorySender { tx: Some(a_tx) },
                receiver: MemoryReceiver { rx: b_rx },
            },
            MemoryTransport {
                sender: MemorySender { tx: Some(b_tx) },
                receiver: MemoryReceiver { rx: a_rx },
            },
        )
    }
}

impl TransportSender for MemorySender {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        let tx = self.tx.as_ref().ok_or(TransportError::Closed)?;
        let context = TransportContext::of_message(&message.message);
        tx.send(Inbound::Message(message.message, context))
            .await
            .map_err(|_| TransportError::Closed)
    }

    async fn close(&mut self) {
        self.tx = None;
    }
}

impl TransportReceiver for MemoryReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        self.rx.recv().await
    }
}

impl Transport for MemoryTransport {
    type Sender = MemorySender;
    type Receiver = MemoryReceiver;

    fn split(self) -> (MemorySender, MemoryReceiver) {
        (self.sender, self.receiver)
    }
}
