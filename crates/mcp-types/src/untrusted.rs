//! Text a peer wrote, made safe to show a person: the one rule every
//! layer uses before a peer's text reaches a log or a terminal.
//!
//! A terminal obeys escape sequences wherever they come from, and a log is
//! often read on one: an error message, a name or a process's stderr line
//! sent by a peer could retitle the window (OSC 0), write the clipboard
//! (OSC 52), clear the screen, move the cursor over earlier lines, reorder
//! what is read (bidi overrides), or, with a newline, pass for a log
//! record of its own. [`Escaped`] shows every control character (C0, DEL,
//! C1) and every Unicode bidi control as a visible escape (`\x1b`,
//! `\x7f`, `\u{9b}`, `\u{202e}`); newlines and tabs too, unless the text
//! may span lines ([`Escaped::lines`]). A backslash is shown as it is: the
//! escapes are for reading, not for decoding.
//!
//! ```
//! use mcp_types::untrusted::Escaped;
//!
//! let hostile = "done\u{1b}]0;pwned\u{7}\r\nERROR forged";
//! assert_eq!(
//!     Escaped::one_line(hostile).to_string(),
//!     r"done\x1b]0;pwned\x07\x0d\x0aERROR forged"
//! );
//! assert_eq!(Escaped::one_line("plain").to_cow(), "plain");
//! ```

use std::borrow::Cow;
use std::fmt;

/// The most characters of a peer's name a message shows ([`Escaped::name`]).
const NAME_CHARS: usize = 200;

/// A peer's text, shown with its controls escaped (see the
/// [module](self)): built with [`one_line`](Self::one_line),
/// [`lines`](Self::lines) or [`name`](Self::name), optionally
/// [`cut`](Self::cut); written by its
/// `Display`, without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Escaped<'a> {
    text: &'a str,
    keep_lines: bool,
    max_chars: Option<usize>,
}

impl<'a> Escaped<'a> {
    /// `text` shown on one line: newlines and tabs escaped too.
    pub fn one_line(text: &'a str) -> Self {
        Self {
            text,
            keep_lines: false,
            max_chars: None,
        }
    }

    /// `text` that may span lines (a tool result, a message body):
    /// newlines and tabs kept, every other control escaped.
    pub fn lines(text: &'a str) -> Self {
        Self {
            keep_lines: true,
            ..Self::one_line(text)
        }
    }

    /// A peer's name, id, URI or revision inside a message: on one line
    /// and cut at 200 characters, for a peer can make it any length.
    pub fn name(text: &'a str) -> Self {
        Self::one_line(text).cut(NAME_CHARS)
    }

    /// Shows at most `max_chars` characters of the text (counted before
    /// escaping), then `…` where it was cut: for a name or a URI a peer
    /// can make any length.
    pub fn cut(self, max_chars: usize) -> Self {
        Self {
            max_chars: Some(max_chars),
            ..self
        }
    }

    /// The text as shown: borrowed when nothing needs escaping or cutting.
    pub fn to_cow(&self) -> Cow<'a, str> {
        let (shown, cut) = self.shown();
        if cut || shown.chars().any(|c| self.hides(c)) {
            Cow::Owned(self.to_string())
        } else {
            Cow::Borrowed(shown)
        }
    }

    /// The part of the text shown, and whether it was cut.
    fn shown(&self) -> (&'a str, bool) {
        match self
            .max_chars
            .and_then(|max| self.text.char_indices().nth(max))
        {
            Some((end, _)) => (&self.text[..end], true),
            None => (self.text, false),
        }
    }

    /// Whether `c` is shown as an escape.
    fn hides(&self, c: char) -> bool {
        match c {
            '\n' | '\t' => !self.keep_lines,
            // C0, DEL and C1 (Unicode's `Cc`).
            c if c.is_control() => true,
            c => is_bidi_control(c),
        }
    }
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shown, cut) = self.shown();
        let mut rest = shown;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| self.hides(c)) {
            f.write_str(&rest[..at])?;
            if u32::from(c) < 0x80 {
                // C0 and DEL.
                write!(f, "\\x{:02x}", u32::from(c))?;
            } else {
                write!(f, "\\u{{{:x}}}", u32::from(c))?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)?;
        if cut {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// Whether `c` is one of Unicode's bidirectional formatting characters
/// (UAX #9: marks, embeddings, overrides, isolates), which reorder how the
/// text around them is displayed.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window title (OSC 0), a clipboard write (OSC 52), a screen clear,
    /// a C1 CSI, a bidi override, DEL, a backspace and a carriage return.
    const HOSTILE: &str =
        "a\u{1b}]0;title\u{7}\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{9b}31m\u{202e}b\u{7f}\u{8}\rc";

    #[test]
    fn control_and_bidi_characters_are_escaped_visibly() {
        assert_eq!(
            Escaped::lines(HOSTILE).to_string(),
            r"a\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b[2J\u{9b}31m\u{202e}b\x7f\x08\x0dc"
        );
        for bidi in [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{2066}', '\u{2069}',
        ] {
            assert_eq!(
                Escaped::lines(&bidi.to_string()).to_string(),
                format!("\\u{{{:x}}}", u32::from(bidi))
            );
        }
        assert_eq!(Escaped::lines("\u{85}").to_string(), r"\u{85}", "NEL is C1");
    }

    #[test]
    fn newlines_and_tabs_pass_only_where_text_may_span_lines() {
        assert_eq!(Escaped::lines("a\n\tb").to_cow(), "a\n\tb");
        assert_eq!(Escaped::one_line("a\n\tb").to_cow(), r"a\x0a\x09b");
    }

    #[test]
    fn clean_text_is_borrowed_and_long_text_cut() {
        assert!(matches!(
            Escaped::one_line("é ok").to_cow(),
            Cow::Borrowed("é ok")
        ));
        assert_eq!(Escaped::one_line("héllo").cut(2).to_cow(), "hé…");
        assert_eq!(Escaped::one_line("\rbc").cut(2).to_string(), r"\x0db…");
        assert_eq!(Escaped::one_line("ab").cut(2).to_cow(), "ab");
        let long = format!("\u{1b}{}", "n".repeat(NAME_CHARS));
        assert_eq!(
            Escaped::name(&long).to_string(),
            format!(r"\x1b{}…", "n".repeat(NAME_CHARS - 1))
        );
    }
}
