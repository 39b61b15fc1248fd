//! What several fuzz targets share: an in-memory byte stream that hands its
//! bytes out in the chunks the fuzzer chose, a writer whose bytes can be
//! read back, and one single-threaded runtime to drive them.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use libfuzzer_sys::arbitrary::Unstructured;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The framing of the stream targets' inputs, easy to write seeds in:
/// byte 0 a mode for the target, byte 1 the length `n` of the cut bytes
/// that follow (how [`chunks`] cuts the stream), then the stream itself.
/// `\0\0` followed by a stream is that stream in one piece.
pub fn stream_input(data: &[u8]) -> (u8, &[u8], &[u8]) {
    let mode = data.first().copied().unwrap_or(0);
    let cut_len = usize::from(data.get(1).copied().unwrap_or(0));
    let rest = data.get(2..).unwrap_or(&[]);
    let (cuts, stream) = rest.split_at(cut_len.min(rest.len()));
    (mode, cuts, stream)
}

/// Splits `bytes` into chunks whose lengths are drawn from `cuts` (each at
/// least one byte), so a decoder sees every boundary a network could cut.
pub fn chunks<'a>(cuts: &[u8], bytes: &'a [u8]) -> Vec<&'a [u8]> {
    let u = &mut Unstructured::new(cuts);
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let len = u.int_in_range(1..=rest.len().min(64)).unwrap_or(rest.len());
        // Now and then the whole rest at once, as a fast sender would.
        let len = if u.ratio(1, 8).unwrap_or(true) {
            rest.len()
        } else {
            len
        };
        let (chunk, tail) = rest.split_at(len);
        out.push(chunk);
        rest = tail;
    }
    out
}

/// A reader that returns its chunks one per read (never more than the
/// caller's buffer takes), then the end of the stream.
pub struct ChunkedReader {
    chunks: std::collections::VecDeque<Vec<u8>>,
}

impl ChunkedReader {
    /// A reader of `chunks`, in order.
    pub fn new(chunks: Vec<&[u8]>) -> Self {
        Self {
            chunks: chunks.into_iter().map(<[u8]>::to_vec).collect(),
        }
    }
}

impl AsyncRead for ChunkedReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(chunk) = self.chunks.front_mut() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                self.chunks.pop_front();
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// A writer that keeps what it is given, readable through a clone.
#[derive(Clone, Default)]
pub struct SharedWriter(pub Arc<Mutex<Vec<u8>>>);

impl SharedWriter {
    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

impl AsyncWrite for SharedWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.0.lock() {
            Ok(mut bytes) => bytes.extend_from_slice(buf),
            Err(_) => return Poll::Ready(Err(io::Error::other("poisoned"))),
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
}

/// Runs `future` to completion on this thread's runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    RUNTIME.with(|runtime| runtime.block_on(future))
}
