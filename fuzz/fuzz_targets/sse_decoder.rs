//! The client's `text/event-stream` decoder, fed a server's bytes in
//! fuzzer-chosen chunks, and the server's event encoder it must agree with.
//!
//! Checks: no panic; the events do not depend on how the stream was cut;
//! an event the encoder writes decodes to the same id and data; a JSON-RPC
//! message carried in an event decodes back to itself. Input:
//! `mcp_fuzz::stream_input` (mode 0 no limit, else the limit in bytes; the
//! cut bytes double as the encoder's event id).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{chunks, stream_input};
use mcp_transport::http::fuzzing::{SseDecoder, SseEvent, encode_sse_event};
use mcp_types::JsonRpcMessage;

fuzz_target!(|data: &[u8]| {
    let (mode, cuts, stream) = stream_input(data);
    let limit = match mode {
        0 => usize::MAX / 2,
        small => usize::from(small),
    };

    let whole = feed_all(limit, &[stream]);
    let cut = feed_all(limit, &chunks(cuts, stream));
    if let (Some(whole), Some(cut)) = (whole, cut) {
        assert_eq!(whole, cut, "the events depend on the chunking");
    }

    // What the server writes: an id of its own (no line break or NUL) and
    // a JSON message's bytes (no carriage return).
    let id = std::str::from_utf8(cuts)
        .ok()
        .filter(|id| !id.contains(['\n', '\r', '\0']));
    if !stream.contains(&b'\r') {
        let retry = Some(Duration::from_millis(stream.len() as u64));
        let event = encode_sse_event(id, retry, stream);
        let decoded = feed_all(usize::MAX / 2, &[&event]).expect("no limit");
        assert_eq!(decoded.len(), 1, "one event encoded, {decoded:?} decoded");
        assert_eq!(
            decoded[0].data.as_bytes(),
            String::from_utf8_lossy(stream).as_bytes()
        );
        assert_eq!(decoded[0].id.as_deref(), id);
        assert_eq!(decoded[0].retry, retry);
    }
    if let Ok(message) = JsonRpcMessage::from_slice(stream) {
        let bytes = message.to_vec().expect("a decoded message encodes");
        let event = encode_sse_event(None, None, &bytes);
        let decoded = feed_all(usize::MAX / 2, &[&event]).expect("no limit");
        assert_eq!(decoded.len(), 1);
        let again = JsonRpcMessage::from_slice(decoded[0].data.as_bytes())
            .expect("a message sent as an event reads back");
        assert_eq!(again, message);
    }
});

/// Every event the chunks complete; `None` when one was over the limit.
fn feed_all(limit: usize, chunks: &[&[u8]]) -> Option<Vec<SseEvent>> {
    let mut decoder = SseDecoder::new(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.feed(chunk).ok()?);
    }
    Some(events)
}
