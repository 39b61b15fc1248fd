//! The last lines an upstream process wrote to stderr, kept to be logged
//! when it fails: a bounded ring, each line cut to a bounded length.

use std::collections::VecDeque;
use std::sync::Mutex;

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

    /// The lines kept, oldest first, as one block of text; emptied.
    pub(crate) fn take(&self) -> String {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let text = lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        lines.clear();
        text
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
        assert_eq!(tail.take(), "two\nthre…");
        assert_eq!(tail.take(), "");
    }
}
