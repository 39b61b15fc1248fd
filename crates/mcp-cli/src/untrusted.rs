//! Text the server wrote, made safe to print: the one place where what a
//! server sends becomes terminal output.
//!
//! A terminal obeys escape sequences wherever they come from: a server's
//! tool result, error message or log line could retitle the window (OSC 0),
//! write the clipboard (OSC 52), clear the screen, move the cursor over
//! earlier output, or reorder what the user reads (bidi overrides). So in
//! text mode every control character (C0 but the newline and tab of
//! multi-line text, DEL, C1) and every Unicode bidi control is shown as an
//! escape (`\x1b`, `\x7f`, `\u{9b}`, `\u{202e}`), never passed through.
//! This is done whether or not the stream is a terminal: output piped to a
//! file is often `cat`ed later. A backslash is printed as it is, so the
//! escapes are for reading, not for decoding: `--json` gives the exact
//! text.
//!
//! `--json` output stays exact JSON: serde_json writes C0 controls as
//! `\u001b`-style escapes, and [`json_text`] writes DEL, C1 and bidi
//! controls the same way, which decodes to the same string.

use std::borrow::Cow;
use std::fmt::Write as _;

use mcp_client::types::untrusted::{Escaped, is_bidi_control};

/// Server text that may span lines (a tool result, an error message, a log
/// message): newlines and tabs kept, every other control escaped.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    Escaped::lines(text).to_cow()
}

/// [`printable`], cut after `max_chars` characters (then `…`): server text
/// of any length shown where the length must stay bounded (a log record).
pub(crate) fn printable_cut(text: &str, max_chars: usize) -> Escaped<'_> {
    Escaped::lines(text).cut(max_chars)
}

/// Server text shown on one line (a table cell, a prompt, a choice, a
/// progress message): every control escaped, newlines and tabs included.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    Escaped::one_line(text).to_cow()
}

/// Serialized JSON with DEL, C1 and bidi controls written as `\uXXXX`
/// escapes. Outside strings JSON has none of them, and inside a string the
/// escape decodes to the same character: the document means the same.
pub(crate) fn json_text(json: String) -> String {
    if !json.chars().any(hidden_by_json) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if hidden_by_json(c) {
            // Every such character is in the Basic Multilingual Plane.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// What serde_json leaves raw in a string and a terminal may obey.
fn hidden_by_json(c: char) -> bool {
    c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || is_bidi_control(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window title (OSC 0), a clipboard write (OSC 52), a screen clear,
    /// a C1 CSI, a bidi override, DEL, a backspace and a carriage return.
    const HOSTILE: &str =
        "a\u{1b}]0;title\u{7}\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{9b}31m\u{202e}b\u{7f}\u{8}\rc";

    #[test]
    fn printed_text_has_its_controls_escaped() {
        // The rule itself is mcp-types' (`untrusted`); this is the CLI's use.
        assert_eq!(
            printable(HOSTILE),
            r"a\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b[2J\u{9b}31m\u{202e}b\x7f\x08\x0dc"
        );
    }

    #[test]
    fn newlines_and_tabs_pass_only_where_text_may_span_lines() {
        assert_eq!(printable("a\n\tb"), "a\n\tb");
        assert_eq!(one_line("a\n\tb"), r"a\x0a\x09b");
        assert!(matches!(printable("plain, é, 日本, 🦀"), Cow::Borrowed(_)));
        assert_eq!(one_line("plain, é, 日本, 🦀"), "plain, é, 日本, 🦀");
    }

    #[test]
    fn json_stays_exact_and_carries_no_raw_control() {
        let value = serde_json::json!({ "text": HOSTILE, "bidi": "\u{2067}x", "ok": "é" });
        let text = json_text(serde_json::to_string_pretty(&value).expect("serializes"));
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || is_bidi_control(c)),
            "{text}"
        );
        assert!(
            text.contains(r"\u001b]0;title\u0007"),
            "serde_json escapes C0: {text}"
        );
        assert!(text.contains(r"\u009b31m\u202eb\u007f"), "{text}");
        assert!(text.contains('é'), "other characters stay as they are");
        let back: serde_json::Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(back, value, "the same document");
    }
}
