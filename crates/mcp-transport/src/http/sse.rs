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

#[cfg(test)]
mod tests {
    use super::*;

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
