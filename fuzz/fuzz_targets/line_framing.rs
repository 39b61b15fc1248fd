//! The stdio transport's line framing: `LineTransport` reading a peer's
//! bytes from an in-memory stream that hands them out in fuzzer-chosen
//! chunks, with a small or the default line limit; then writing each
//! message it read and reading that back. Input: `mcp_fuzz::stream_input`
//! (mode 0 the default limit, else the limit in bytes).
//!
//! Checks: no panic; what the transport yields is what a plain model of
//! the framing says (one item per non-blank line: the message, the decode
//! error, or `TooLarge` over the limit with the id its first
//! `PEEK_PREFIX` bytes hold), whatever the chunking; a message written is one line
//! that reads back as the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_core::{Inbound, Outbound, Transport, TransportReceiver, TransportSender};
use mcp_types::peek::{PEEK_PREFIX, peek};
use mcp_fuzz::{ChunkedReader, SharedWriter, block_on, chunks, stream_input};
use mcp_transport::{DEFAULT_MAX_LINE, LineTransport};
use mcp_types::{DecodeError, JsonRpcMessage, RequestId};

/// What one frame came to, comparable.
#[derive(Debug, PartialEq)]
enum Item {
    Message(JsonRpcMessage),
    Malformed(DecodeError),
    TooLarge(Option<RequestId>),
}

fuzz_target!(|data: &[u8]| {
    let (mode, cuts, stream) = stream_input(data);
    let max_line = match mode {
        0 => DEFAULT_MAX_LINE,
        small => usize::from(small),
    };
    let reader = ChunkedReader::new(chunks(cuts, stream));
    let got = block_on(read_all(LineTransport::with_max_line(
        reader,
        SharedWriter::default(),
        max_line,
    )));
    let expected = model(stream, max_line);
    assert_eq!(got.len(), expected.len(), "{got:?} vs {expected:?}");
    for (item, want) in got.iter().zip(&expected) {
        assert_eq!(item, want);
    }
    for item in &got {
        if let Item::Message(message) = item {
            write_and_read_back(message);
        }
    }
});

async fn read_all(transport: LineTransport<ChunkedReader, SharedWriter>) -> Vec<Item> {
    let (_sender, mut receiver) = transport.split();
    let mut items = Vec::new();
    while let Some(inbound) = receiver.recv().await {
        items.push(match inbound {
            Inbound::Message(message, _) => Item::Message(message),
            Inbound::Malformed(error) => Item::Malformed(error),
            Inbound::TooLarge { id, .. } => Item::TooLarge(id),
            other => panic!("a line transport yielded {other:?}"),
        });
    }
    items
}

/// The framing, plainly: lines end at `\n`; the last one may lack it.
fn model(stream: &[u8], max_line: usize) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if stream.ends_with(b"\n") || stream.is_empty() {
        lines.pop();
    }
    for line in lines {
        if line.len() > max_line {
            items.push(Item::TooLarge(
                peek(&line[..line.len().min(PEEK_PREFIX)]).id,
            ));
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        items.push(match JsonRpcMessage::from_slice(line) {
            Ok(message) => Item::Message(message),
            Err(error) => Item::Malformed(error),
        });
    }
    items
}

/// Sends `message` on a line transport and reads the written bytes back.
fn write_and_read_back(message: &JsonRpcMessage) {
    let written = SharedWriter::default();
    let transport = LineTransport::new(ChunkedReader::new(Vec::new()), written.clone());
    let (mut sender, _receiver) = transport.split();
    block_on(async {
        sender
            .send(Outbound::new(message.clone()))
            .await
            .expect("a message is written");
        sender.flush().await.expect("flushed");
    });
    let bytes = written.bytes();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(
        lines,
        1,
        "one message, {lines} lines: {}",
        String::from_utf8_lossy(&bytes)
    );
    let back = block_on(read_all(LineTransport::new(
        ChunkedReader::new(vec![&bytes[..]]),
        SharedWriter::default(),
    )));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0], Item::Message(message.clone()));
}
