//! Newline-delimited JSON over any byte stream: one compact JSON-RPC message
//! per line, with a maximum line length enforced while reading.

use mcp_core::{
    Inbound, Outbound, Transport, TransportContext, TransportError, TransportReceiver,
    TransportSender,
};
use mcp_types::JsonRpcMessage;
use mcp_types::peek::{PEEK_PREFIX, peek};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

/// The default longest line accepted: 32 MiB, so a 16 MiB message passes.
pub const DEFAULT_MAX_LINE: usize = 32 * 1024 * 1024;

/// A transport over a reader and a writer of newline-delimited JSON, such as
/// a child's stdout and stdin, this process's stdin and stdout, or a socket.
#[derive(Debug)]
pub struct LineTransport<R, W> {
    receiver: LineReceiver<R>,
    sender: LineSender<W>,
}

/// The reading half of a [`LineTransport`].
#[derive(Debug)]
pub struct LineReceiver<R> {
    reader: BufReader<R>,
    /// The line read so far; while `discarding`, only its first
    /// [`PEEK_PREFIX`] bytes, where its id and shape are looked for.
    line: Vec<u8>,
    discarding: bool,
    max_line: usize,
}

/// The writing half of a [`LineTransport`].
#[derive(Debug)]
pub struct LineSender<W> {
    writer: Option<BufWriter<W>>,
    buffer: Vec<u8>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading lines of at most [`DEFAULT_MAX_LINE`] bytes.
    pub fn new(reader: R, writer: W) -> Self {
        Self::with_max_line(reader, writer, DEFAULT_MAX_LINE)
    }

    /// A transport reading lines of at most `max_line` bytes; a longer line
    /// is skipped unread and reported as [`Inbound::TooLarge`], with its id
    /// when the line's first bytes hold it.
    pub fn with_max_line(reader: R, writer: W, max_line: usize) -> Self {
        Self {
            receiver: LineReceiver {
                reader: BufReader::with_capacity(64 * 1024, reader),
                line: Vec::new(),
                discarding: false,
                max_line,
            },
            sender: LineSender {
                writer: Some(BufWriter::with_capacity(64 * 1024, writer)),
                buffer: Vec::new(),
            },
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> LineReceiver<R> {
    /// The refusal of the overlong line just skipped.
    fn too_large(&mut self) -> Inbound {
        let seen = peek(&self.line);
        self.discarding = false;
        self.line.clear();
        Inbound::TooLarge {
            limit: self.max_line,
            id: seen.id,
            shape: seen.shape,
        }
    }

    fn frame(&mut self) -> Option<Inbound> {
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let inbound = match JsonRpcMessage::from_slice(&line) {
            Ok(message) => {
                let context = TransportContext::of_message(&message);
                Inbound::Message(message, context)
            }
            Err(error) => Inbound::Malformed(error),
        };
        // Keep the allocation for the next line unless it was huge.
        if line.capacity() <= 1 << 20 {
            line.clear();
            self.line = line;
        }
        Some(inbound)
    }
}

/// Starts skipping an overlong line: keeps at most its first
/// [`PEEK_PREFIX`] bytes and lets the large buffer go.
fn start_skipping(line: &mut Vec<u8>) {
    let mut prefix = Vec::with_capacity(PEEK_PREFIX);
    prefix.extend_from_slice(&line[..line.len().min(PEEK_PREFIX)]);
    *line = prefix;
}

/// While skipping, tops the kept prefix up to [`PEEK_PREFIX`] bytes from
/// `more`, so the id found is the same however the peer's bytes were cut
/// into reads.
fn keep_prefix(line: &mut Vec<u8>, more: &[u8]) {
    let wanted = PEEK_PREFIX.saturating_sub(line.len()).min(more.len());
    line.extend_from_slice(&more[..wanted]);
}

impl<R: AsyncRead + Unpin + Send + 'static> TransportReceiver for LineReceiver<R> {
    async fn recv(&mut self) -> Option<Inbound> {
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(bytes) => bytes,
                Err(error) => {
                    tracing::debug!(%error, "reading failed; treating it as the end of the stream");
                    return None;
                }
            };
            if available.is_empty() {
                // End of stream: a last line without its newline still counts.
                if self.discarding {
                    return Some(self.too_large());
                }
                if self.line.is_empty() {
                    return None;
                }
                match self.frame() {
                    Some(inbound) => return Some(inbound),
                    None => return None,
                }
            }
            match available.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    if !self.discarding && self.line.len() + end > self.max_line {
                        start_skipping(&mut self.line);
                        self.discarding = true;
                    }
                    if self.discarding {
                        keep_prefix(&mut self.line, &available[..end]);
                    } else {
                        self.line.extend_from_slice(&available[..end]);
                    }
                    self.reader.consume(end + 1);
                    if self.discarding {
                        return Some(self.too_large());
                    }
                    if let Some(inbound) = self.frame() {
                        return Some(inbound);
                    }
                }
                None => {
                    let len = available.len();
                    if !self.discarding && self.line.len() + len > self.max_line {
                        // Skip the rest of this line without buffering it.
                        start_skipping(&mut self.line);
                        self.discarding = true;
                    }
                    if self.discarding {
                        keep_prefix(&mut self.line, available);
                    } else {
                        self.line.extend_from_slice(available);
                    }
                    self.reader.consume(len);
                }
            }
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> TransportSender for LineSender<W> {
    async fn send(&mut self, message: Outbound) -> Result<(), TransportError> {
        let writer = self.writer.as_mut().ok_or(TransportError::Closed)?;
        self.buffer.clear();
        // The newline fits in the bound's slack.
        self.buffer.reserve(message.message.encoded_len_bound());
        // Compact JSON never holds a raw newline, so one message is one line.
        serde_json::to_writer(&mut self.buffer, &message.message)?;
        self.buffer.push(b'\n');
        writer.write_all(&self.buffer).await?;
        if self.buffer.capacity() > 1 << 20 {
            self.buffer = Vec::new();
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        let writer = self.writer.as_mut().ok_or(TransportError::Closed)?;
        writer.flush().await?;
        Ok(())
    }

    async fn close(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            if let Err(error) = writer.shutdown().await {
                tracing::debug!(%error, "closing the stream failed");
            }
        }
    }
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Sender = LineSender<W>;
    type Receiver = LineReceiver<R>;

    fn network_transport(&self) -> Option<&'static str> {
        Some("pipe")
    }

    fn split(self) -> (LineSender<W>, LineReceiver<R>) {
        (self.sender, self.receiver)
    }
}
