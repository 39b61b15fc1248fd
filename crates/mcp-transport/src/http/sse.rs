//! Server-sent events framing (WHATWG `text/event-stream`).

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

/// One event: optional `id` and `retry` fields, then `data`, one `data:`
/// line per line of `data`.
pub(crate) fn encode_event(id: Option<&str>, retry: Option<Duration>, data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(data.len() + 48);
    if let Some(id) = id {
        out.put_slice(b"id: ");
        out.put_slice(id.as_bytes());
        out.put_u8(b'\n');
    }
    if let Some(retry) = retry {
        out.put_slice(format!("retry: {}\n", retry.as_millis()).as_bytes());
    }
    if data.is_empty() {
        out.put_slice(b"data: \n");
    } else {
        out.put_slice(b"event: message\n");
        for line in data.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            out.put_slice(b"data: ");
            out.put_slice(line);
            out.put_u8(b'\n');
        }
    }
    out.put_u8(b'\n');
    out.freeze()
}

/// One decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    /// The `event` field (`message` when absent).
    pub(crate) event: Option<String>,
    /// The data lines joined with `\n`.
    pub(crate) data: String,
    /// The `id` field, if this event set one.
    pub(crate) id: Option<String>,
    /// The `retry` field, if this event set one.
    pub(crate) retry: Option<Duration>,
}

/// An event larger than the decoder's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    pub(crate) limit: usize,
}

/// An incremental `text/event-stream` decoder (WHATWG), with a size limit
/// on each event so that a peer cannot make it buffer without end.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
    pending: SseEvent,
    has_data: bool,
    limit: usize,
    /// After a `\r`, a following `\n` belongs to the same line ending.
    skip_lf: bool,
}

impl SseDecoder {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            buffer: Vec::new(),
            pending: SseEvent::default(),
            has_data: false,
            limit,
            skip_lf: false,
        }
    }

    /// Feeds bytes; returns the events they complete.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut events = Vec::new();
        while !bytes.is_empty() {
            if self.skip_lf {
                self.skip_lf = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.buffer.extend_from_slice(&bytes[..end]);
                    self.skip_lf = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    let line = std::mem::take(&mut self.buffer);
                    if let Some(event) = self.line(&line) {
                        events.push(event);
                    }
                }
                None => {
                    self.buffer.extend_from_slice(bytes);
                    bytes = &[];
                }
            }
            if self.buffer.len() + self.pending.data.len() > self.limit {
                self.buffer.clear();
                self.pending = SseEvent::default();
                self.has_data = false;
                return Err(EventTooLarge { limit: self.limit });
            }
        }
        Ok(events)
    }

    fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            // Dispatch: an event with no data still carries id/retry.
            let event = std::mem::take(&mut self.pending);
            let had_data = std::mem::replace(&mut self.has_data, false);
            return (had_data || event.id.is_some() || event.retry.is_some()).then_some(event);
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.has_data {
                    self.pending.data.push('\n');
                }
                self.pending.data.push_str(&value);
                self.has_data = true;
            }
            b"id" if !value.contains('\0') => self.pending.id = Some(value.into_owned()),
            b"event" => self.pending.event = Some(value.into_owned()),
            b"retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.pending.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_split_chunks_and_every_line_ending() {
        let mut decoder = SseDecoder::new(1024);
        let mut events = decoder.feed(b"id: 1\nretry: 50").expect("ok");
        assert!(events.is_empty());
        events.extend(
            decoder
                .feed(b"0\r\ndata: a\rdata:b\n\n: comment\n")
                .expect("ok"),
        );
        events.extend(
            decoder
                .feed(b"event: endpoint\ndata: /messages\n\n")
                .expect("ok"),
        );
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[0].retry, Some(Duration::from_millis(500)));
        assert_eq!(events[0].data, "a\nb");
        assert_eq!(events[1].event.as_deref(), Some("endpoint"));
        assert_eq!(events[1].data, "/messages");
    }

    #[test]
    fn a_priming_event_without_data_still_reports_its_id() {
        let mut decoder = SseDecoder::new(1024);
        let events = decoder
            .feed(b"id: e-1\nretry: 500\ndata: \n\n")
            .expect("ok");
        assert_eq!(events[0].id.as_deref(), Some("e-1"));
        assert_eq!(events[0].data, "");
        let events = decoder.feed(b"id: e-2\n\n").expect("ok");
        assert_eq!(events[0].id.as_deref(), Some("e-2"));
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let mut decoder = SseDecoder::new(16);
        let error = decoder.feed(&[b'x'; 64]).expect_err("too large");
        assert_eq!(error.limit, 16);
        let events = decoder.feed(b"\ndata: ok\n\n").expect("recovers");
        assert_eq!(events[0].data, "ok");
    }

    #[test]
    fn encoded_events_decode_back() {
        let mut decoder = SseDecoder::new(1024);
        let bytes = encode_event(Some("s_1"), None, b"{\"a\":1}");
        let events = decoder.feed(&bytes).expect("ok");
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[0].id.as_deref(), Some("s_1"));
    }

    #[test]
    fn events_carry_id_retry_and_one_data_line_per_line() {
        let event = encode_event(Some("s1_3"), Some(Duration::from_millis(500)), b"{\"a\":1}");
        assert_eq!(
            &event[..],
            b"id: s1_3\nretry: 500\nevent: message\ndata: {\"a\":1}\n\n"
        );
        let multi = encode_event(None, None, b"a\nb");
        assert_eq!(&multi[..], b"event: message\ndata: a\ndata: b\n\n");
        let priming = encode_event(Some("s1_0"), None, b"");
        assert_eq!(&priming[..], b"id: s1_0\ndata: \n\n");
    }
}
