//! What a JSON-RPC message is, read from its first bytes without parsing it:
//! its id and whether it is a request, a notification or a response. For a
//! message that cannot be read whole (too large, not UTF-8, not JSON, a
//! batch, a response with both `result` and `error`), so that its refusal
//! still reaches the right party: the peer's request is answered with an
//! error, and our own request that it answers is failed at once, never
//! answered back as if the peer had asked.

use crate::jsonrpc::RequestId;

/// How many leading bytes of a message a transport keeps for [`peek`] when
/// it cannot read the whole message. Peers write `id` and `method` before
/// `params` and `result` in practice, so they sit in the first few dozen
/// bytes.
pub const PEEK_PREFIX: usize = 4096;

/// What a message looked like, as far as its first bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// It has a `method` and an `id`: the peer asked something.
    Request,
    /// It has a `method` and no `id`.
    Notification,
    /// It has a `result` or an `error`: the peer answered something.
    Response,
    /// Neither was found in the bytes read.
    Unknown,
}

/// The envelope of a message as far as [`peek`] could read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peek {
    /// The top-level `id`, when it is an integer or a string and the bytes
    /// hold all of it.
    pub id: Option<RequestId>,
    /// What the message looked like.
    pub shape: Shape,
    /// The bytes are a JSON array (a batch); `id` and `shape` are those of
    /// its first member.
    pub batch: bool,
}

/// Reads the envelope of the JSON-RPC message that starts with `prefix`. A
/// pure, bounded scan: no allocation but the id, no recursion; member values
/// other than `id` are skipped without being parsed, and bytes that are not
/// UTF-8 are stepped over like any other byte inside a value. Anything the
/// prefix cuts off, or that is not JSON, ends the scan with what was found.
///
/// ```
/// use mcp_types::peek::{Shape, peek};
/// use mcp_types::RequestId;
/// let cut = br#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"text":"xx"#;
/// let seen = peek(cut);
/// assert_eq!(seen.id, Some(RequestId::Number(42)));
/// assert_eq!(seen.shape, Shape::Response);
/// let request = peek(br#"{"method":"tools/call","params":{"id":1},"id":"a"}"#);
/// assert_eq!((request.id, request.shape), (Some(RequestId::from("a")), Shape::Request));
/// ```
pub fn peek(prefix: &[u8]) -> Peek {
    let mut scan = Scanner {
        bytes: prefix,
        at: 0,
    };
    scan.whitespace();
    let batch = scan.peek() == Some(b'[');
    if batch {
        scan.at += 1;
        scan.whitespace();
    }
    let members = scan.members();
    Peek {
        shape: members.present.shape(),
        id: members.id,
        batch,
    }
}

/// The members [`Scanner::members`] saw.
#[derive(Default)]
struct Members {
    id: Option<RequestId>,
    present: Present,
}

/// Which of the members that tell a message's [`Shape`] it has: the decoder
/// fills it from a whole message, [`peek`] from as much as it could read,
/// and both read the shape from it the same way ([`Present::shape`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Present {
    /// An `id` member (whatever its value).
    pub(crate) id: bool,
    /// A `method` member.
    pub(crate) method: bool,
    /// A `result` or an `error` member.
    pub(crate) answer: bool,
    /// The object's closing brace was reached: nothing was cut off.
    pub(crate) complete: bool,
}

impl Present {
    /// What a message with these members is.
    pub(crate) fn shape(self) -> Shape {
        if self.answer && self.method {
            // Both a request's and an answer's members: neither, whichever
            // came first (a prefix may have seen only one of them).
            Shape::Unknown
        } else if self.answer {
            Shape::Response
        } else if self.method && self.id {
            Shape::Request
        } else if self.method && self.complete {
            Shape::Notification
        } else {
            Shape::Unknown
        }
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// The top-level members of the object at the cursor, as far as the
    /// bytes go.
    fn members(&mut self) -> Members {
        let mut seen = Members::default();
        let _ = self.read_members(&mut seen);
        seen
    }

    fn read_members(&mut self, seen: &mut Members) -> Option<()> {
        self.expect(b'{')?;
        self.whitespace();
        if self.peek()? == b'}' {
            seen.present.complete = true;
            return Some(());
        }
        loop {
            self.whitespace();
            let key = self.string()?;
            self.whitespace();
            self.expect(b':')?;
            self.whitespace();
            match key {
                b"id" => {
                    seen.present.id = true;
                    seen.id = self.id();
                    // A cut-off or odd id still ends as a value.
                    self.skip_value()?;
                }
                b"method" => {
                    seen.present.method = true;
                    self.skip_value()?;
                }
                b"result" | b"error" => {
                    seen.present.answer = true;
                    self.skip_value()?;
                }
                _ => self.skip_value()?,
            }
            self.whitespace();
            match self.next()? {
                b',' => {}
                b'}' => {
                    seen.present.complete = true;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string's raw contents, between its quotes (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(&self.bytes[start..self.at - 1]),
                _ => {}
            }
        }
    }

    /// Steps over one value of any kind, up to the `,` or closing bracket
    /// after it; `None` when the bytes end first.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' | b'}' | b']' if depth == 0 => return Some(()),
                _ => self.at += 1,
            }
            if depth == 0 && matches!(self.peek()?, b',' | b'}' | b']') {
                return Some(());
            }
        }
    }

    /// The id at the cursor, without moving it; `None` for anything but a
    /// whole integer or string.
    fn id(&self) -> Option<RequestId> {
        let mut probe = Scanner {
            bytes: self.bytes,
            at: self.at,
        };
        let start = probe.at;
        match probe.peek()? {
            b'"' => {
                probe.string()?;
                serde_json::from_slice::<String>(&self.bytes[start..probe.at])
                    .ok()
                    .map(RequestId::String)
            }
            b'-' | b'0'..=b'9' => {
                while probe
                    .peek()
                    .is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    probe.at += 1;
                }
                // A number the bytes cut off may have more digits.
                probe.peek()?;
                // As the decoder reads an id: a JSON number that is an i64
                // (`-0` and `01` are not, though `str::parse` takes them).
                serde_json::from_slice::<serde_json::Number>(&self.bytes[start..probe.at])
                    .ok()?
                    .as_i64()
                    .map(RequestId::Number)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(prefix: &[u8]) -> Option<RequestId> {
        peek(prefix).id
    }

    #[test]
    fn finds_the_top_level_id_only() {
        let cases: &[(&[u8], Option<RequestId>)] = &[
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#,
                Some(RequestId::Number(7)),
            ),
            (
                br#" { "id" : -3 , "method":"x"}"#,
                Some(RequestId::Number(-3)),
            ),
            (
                br#"{"id":"a\"b","method":"x"}"#,
                Some(RequestId::String("a\"b".into())),
            ),
            (
                br#"{"method":"x","params":{"id":1,"s":"}\""},"id":9}"#,
                Some(RequestId::Number(9)),
            ),
            (
                br#"{"params":[1,{"id":2}],"id":"z"}"#,
                Some(RequestId::String("z".into())),
            ),
            (br#"{"method":"x","params":{"text":"xxxx"#, None),
            (br#"{"id":12"#, None),
            (br#"{"id":"ab"#, None),
            (br#"{"id":1.5,"method":"x"}"#, None),
            (br#"{"id":null,"method":"x"}"#, None),
            (br#"{"id":true,"method":"x"}"#, None),
            (br#"{"method":"x"}"#, None),
            (br#"["id",1]"#, None),
            (b"", None),
        ];
        for (prefix, id) in cases {
            assert_eq!(&id_of(prefix), id, "{}", String::from_utf8_lossy(prefix));
        }
    }

    #[test]
    fn tells_requests_notifications_and_responses_apart() {
        let cases: &[(&[u8], Shape)] = &[
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                Shape::Request,
            ),
            (br#"{"method":"ping","id":1"#, Shape::Request),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
                Shape::Notification,
            ),
            // Cut off before an id could follow: not known to be a notification.
            (
                br#"{"jsonrpc":"2.0","method":"x","params":{"a"#,
                Shape::Unknown,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"result":{"x"#, Shape::Response),
            (br#"{"id":1,"result":{},"error":{}}"#, Shape::Response),
            (br#"{"id":null,"error":{"code":1}}"#, Shape::Response),
            // Found by the `peek` fuzz target: its prefix looked like a
            // request, the whole like a response.
            (
                br#"{"jsonrpc":"2.0","id":4,"method":{},"error":{"":"oth"}}"#,
                Shape::Unknown,
            ),
            (br#"{"jsonrpc":"2.0","id":1"#, Shape::Unknown),
            (b"not json", Shape::Unknown),
            (br#"{}"#, Shape::Unknown),
        ];
        for (prefix, shape) in cases {
            assert_eq!(
                peek(prefix).shape,
                *shape,
                "{}",
                String::from_utf8_lossy(prefix)
            );
        }
    }

    /// Found by the `scan_id` fuzz target: `-0` read as id 0, which the
    /// decoder refuses as an id, so a refusal could fail request 0.
    #[test]
    fn a_number_the_decoder_refuses_as_an_id_is_no_id() {
        for prefix in [
            &br#"{"id":-0,"method":"x"}"#[..],
            br#"{"id":01,"method":"x"}"#,
        ] {
            assert_eq!(id_of(prefix), None, "{}", String::from_utf8_lossy(prefix));
            let decoded = crate::JsonRpcMessage::from_slice(prefix);
            assert!(decoded.is_err_and(|e| e.id.is_none()));
        }
        assert_eq!(
            id_of(br#"{"id":-7,"method":"x"}"#),
            Some(RequestId::Number(-7))
        );
    }

    #[test]
    fn a_batch_is_read_as_its_first_member() {
        let seen = peek(br#" [{"jsonrpc":"2.0","id":3,"result":{}},{"id":4,"result":{}}]"#);
        assert!(seen.batch);
        assert_eq!(seen.id, Some(RequestId::Number(3)));
        assert_eq!(seen.shape, Shape::Response);
        assert!(!peek(br#"{"id":3,"result":{}}"#).batch);
    }

    #[test]
    fn bytes_that_are_not_utf8_inside_a_value_are_stepped_over() {
        let mut bytes = br#"{"jsonrpc":"2.0","id":5,"result":{"text":""#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe, 0xc3]);
        bytes.extend_from_slice(br#""}}"#);
        let seen = peek(&bytes);
        assert_eq!(seen.id, Some(RequestId::Number(5)));
        assert_eq!(seen.shape, Shape::Response);
        // An id that is not UTF-8 is no id.
        assert_eq!(id_of(b"{\"id\":\"\xff\",\"result\":1}"), None);
    }
}
