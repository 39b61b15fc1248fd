//! Finds a request's id in the first bytes of a message too large to read,
//! so refusing it still reaches the caller waiting for that id.

use mcp_types::RequestId;

/// How many leading bytes of an oversized message a transport keeps for
/// [`scan_id`]. Clients put `id` before `params` in practice, so it sits in
/// the first few dozen bytes.
pub const ID_SCAN_PREFIX: usize = 4096;

/// The top-level `"id"` of the JSON object that starts with `prefix`, if the
/// prefix holds all of it. A pure, bounded scan (no allocation but the id,
/// no recursion): members before `id` are skipped without being parsed, and
/// anything cut off or not an integer or string id gives `None`.
///
/// ```
/// use mcp_core::scan_id;
/// use mcp_types::RequestId;
/// let prefix = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"argu"#;
/// assert_eq!(scan_id(prefix), Some(RequestId::Number(42)));
/// assert_eq!(scan_id(br#"{"params":{"id":1},"id":"a"}"#), Some(RequestId::String("a".into())));
/// assert_eq!(scan_id(br#"{"params":{"id":1}, "id"#), None);
/// ```
pub fn scan_id(prefix: &[u8]) -> Option<RequestId> {
    let mut scan = Scanner {
        bytes: prefix,
        at: 0,
    };
    scan.whitespace();
    scan.expect(b'{')?;
    loop {
        scan.whitespace();
        let key = scan.string()?;
        scan.whitespace();
        scan.expect(b':')?;
        scan.whitespace();
        if key == b"id" {
            return scan.id();
        }
        scan.skip_value()?;
        scan.whitespace();
        // `}` ends the object without an id; anything else is not JSON.
        scan.expect(b',')?;
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

    /// Steps over one value of any kind; `None` when the prefix ends first.
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

    fn id(&mut self) -> Option<RequestId> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
                serde_json::from_slice::<String>(&self.bytes[start..self.at])
                    .ok()
                    .map(RequestId::String)
            }
            b'-' | b'0'..=b'9' => {
                while self
                    .peek()
                    .is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    self.at += 1;
                }
                // A number the prefix cuts off may have more digits.
                self.peek()?;
                // As the decoder reads an id: a JSON number that is an i64
                // (`-0` and `01` are not, though `str::parse` takes them).
                serde_json::from_slice::<serde_json::Number>(&self.bytes[start..self.at])
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
            assert_eq!(&scan_id(prefix), id, "{}", String::from_utf8_lossy(prefix));
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
            assert_eq!(scan_id(prefix), None, "{}", String::from_utf8_lossy(prefix));
            let decoded = mcp_types::JsonRpcMessage::from_slice(prefix);
            assert!(decoded.is_err_and(|e| e.id.is_none()));
        }
        assert_eq!(
            scan_id(br#"{"id":-7,"method":"x"}"#),
            Some(RequestId::Number(-7))
        );
    }
}
