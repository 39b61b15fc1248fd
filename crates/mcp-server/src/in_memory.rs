//! A server in this process, reached over an in-memory transport: for
//! tests, and for hosts that embed their own tools. Any client connects to
//! it like to any transport, so a client crate needs no dependency on this
//! one.

use mcp_core::{
    MemoryReceiver, MemorySender, MemoryTransport, Outbound, Transport, TransportError,
    TransportSender,
};

use crate::{Server, ServerConnection};

/// Messages queued each way between an in-process server and its client.
const QUEUE: usize = 256;

/// The client's end of a connection to a server running in this process
/// (see [`Server::in_memory`]). Closing its sending half (what a client's
/// `close` does) shuts the server's connection down and waits for it.
pub struct InMemoryTransport {
    transport: MemoryTransport,
    server: ServerConnection,
}

/// The sending half of an [`InMemoryTransport`]: it owns the server's
/// connection.
pub struct InMemorySender {
    sender: MemorySender,
    server: Option<ServerConnection>,
}

impl Server {
    /// Serves one client in this process and returns the client's end: hand
    /// it to any client (`mcp_client::Client::connect(server.in_memory(), config)`).
    ///
    /// Must be called within a tokio runtime.
    pub fn in_memory(&self) -> InMemoryTransport {
        let (client, server) = MemoryTransport::pair(QUEUE);
        InMemoryTransport {
            transport: client,
            server: self.serve(server),
        }
    }
}

impl std::fmt::Debug for InMemoryTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTransport").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for InMemorySender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemorySender")
            .field("server_running", &self.server.is_some())
            .finish_non_exhaustive()
    }
}

impl Transport for InMemoryTransport {
    type Sender = InMemorySender;
    type Receiver = MemoryReceiver;

    fn split(self) -> (InMemorySender, MemoryReceiver) {
        let (sender, receiver) = self.transport.split();
        (
            InMemorySender {
                sender,
                server: Some(self.server),
            },
            receiver,
        )
    }
}

impl TransportSender for InMemorySender {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        self.sender.send(message).await
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        self.sender.flush().await
    }

    async fn close(&mut self) {
        self.sender.close().await;
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }
}
