//! The last lines an upstream process wrote to stderr, kept to be logged
//! when it fails: a bounded ring, each line cut to a bounded length, and
//! given back escaped (the process's text reaches a log, often a terminal).

use std::collections::VecDeque;
use std::sync::Mutex;

use mcp_types::untrusted::Escaped;

/// A bounded ring of stderr lines.
#[derive(Debug)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    max_lines: usize,
    max_bytes: usize,
}

impl StderrTail {
    /// Keeps the last `max_lines` lines, each at most `max_bytes` long.
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            lines: Mutex::new(VecDeque::with_capacity(max_lines.min(64))),
            max_lines,
            max_bytes,
        }
    }

    /// Keeps `line`, dropping the oldest past the bound.
    pub(crate) fn push(&self, mut line: String) {
        if self.max_lines == 0 {
            return;
        }
        if line.len() > self.max_bytes {
            let mut end = self.max_bytes;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push('…');
        }
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == self.max_lines {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The lines kept, oldest first, as one line of text (lines apart by
    /// an escaped newline, `\x0a`); emptied.
    ///
    /// Every control character (escape sequences, carriage returns, the
    /// newlines between lines) and bidi control is escaped, so what the
    /// process wrote can neither steer the terminal the log is read on nor
    /// pass for a log record of its own.
    pub(crate) fn take(&self) -> String {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let text = lines.drain(..).collect::<Vec<_>>().join("\n");
        drop(lines);
        Escaped::one_line(&text).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_cut_to_length() {
        let tail = StderrTail::new(2, 4);
        for line in ["one", "two", "three é"] {
            tail.push(line.into());
        }
        assert_eq!(tail.take(), r"two\x0athre…");
        assert_eq!(tail.take(), "");
    }

    #[test]
    fn control_characters_come_back_escaped() {
        let tail = StderrTail::new(4, 64);
        // A screen clear, a window title (OSC 0), a carriage return over
        // the line, a C1 CSI, a bidi override.
        tail.push("a\u{1b}[2J\u{1b}]0;t\u{7}\rb\u{9b}1m\u{202e}c".into());
        tail.push("2026-01-01 WARN forged".into());
        let text = tail.take();
        assert_eq!(
            text,
            r"a\x1b[2J\x1b]0;t\x07\x0db\u{9b}1m\u{202e}c\x0a2026-01-01 WARN forged"
        );
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }
}
