//! Printing: aligned tables and plain text for people, JSON for scripts;
//! results on stdout, everything else (log messages, notices, progress) on
//! stderr. Colours only where the stream is a terminal. Every method here
//! takes text that may come from the server and makes it printable
//! ([`crate::untrusted`]) before it reaches a stream.

use std::io::{IsTerminal as _, Write as _};
use std::sync::{Arc, Mutex};

use console::{Style, measure_text_width};
use indicatif::ProgressBar;
use mcp_client::types::LoggingMessageNotificationParams;
use serde::Serialize;

use crate::untrusted::{json_text, one_line, printable};

/// Where and how results and messages go.
#[derive(Clone)]
pub(crate) struct Output {
    json: bool,
    /// The progress bar on screen, if any: stderr lines are printed above it.
    bar: Arc<Mutex<Option<ProgressBar>>>,
}

impl Output {
    /// JSON on stdout when `json`, else text.
    pub(crate) fn new(json: bool) -> Self {
        Self {
            json,
            bar: Arc::default(),
        }
    }

    /// Whether results are printed as JSON.
    pub(crate) fn is_json(&self) -> bool {
        self.json
    }

    /// One JSON document on stdout (pretty), or one line of NDJSON when
    /// `compact`; exact, with every control character escaped.
    pub(crate) fn json(&self, value: &impl Serialize, compact: bool) -> std::io::Result<()> {
        let text = if compact {
            serde_json::to_string(value)
        } else {
            serde_json::to_string_pretty(value)
        }
        .map(json_text)
        .map_err(std::io::Error::other)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{text}")?;
        stdout.flush()
    }

    /// Text on stdout (it may span lines), then a newline.
    pub(crate) fn line(&self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", printable(text))?;
        stdout.flush()
    }

    /// Rows under a header, each column as wide as its widest cell; the
    /// last column is not padded. A cell is shown on one line.
    pub(crate) fn table(&self, header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|row| row.iter().map(|cell| one_line(cell).into_owned()).collect())
            .collect();
        let mut widths: Vec<usize> = header.iter().map(|h| measure_text_width(h)).collect();
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(measure_text_width(cell));
            }
        }
        let bold = Style::new().bold();
        let mut stdout = std::io::stdout().lock();
        let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
        write_row(&mut stdout, &header, &widths, Some(&bold))?;
        for row in &rows {
            write_row(&mut stdout, row, &widths, None)?;
        }
        stdout.flush()
    }

    /// A notice for the user on stderr (never a result).
    pub(crate) fn notice(&self, text: &str) {
        self.write_stderr(
            &Style::new()
                .for_stderr()
                .yellow()
                .apply_to(printable(text))
                .to_string(),
        );
    }

    /// A server log message on stderr: `[level] logger: data`.
    pub(crate) fn log_message(&self, message: &LoggingMessageNotificationParams) {
        let data = match &message.data {
            serde_json::Value::String(text) => printable(text).into_owned(),
            other => printable(&json_text(other.to_string())).into_owned(),
        };
        let level = format!("[{}]", message.level.as_str());
        let level = Style::new().for_stderr().cyan().apply_to(level);
        let line = match &message.logger {
            Some(logger) => format!("{level} {}: {data}", one_line(logger)),
            None => format!("{level} {data}"),
        };
        self.write_stderr(&line);
    }

    /// Text on stderr (it may span lines), above the progress bar if one is
    /// shown.
    pub(crate) fn to_stderr(&self, text: &str) {
        self.write_stderr(&printable(text));
    }

    /// A line made printable (and perhaps styled) by the caller, on stderr
    /// above the progress bar if one is shown.
    fn write_stderr(&self, line: &str) {
        let bar = self.bar.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Shows progress of the running call: a bar on a terminal, else a line
    /// per report on stderr.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let message = message.map(one_line);
        let mut slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        if !std::io::stderr().is_terminal() {
            drop(slot);
            let of = total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!("progress: {progress}{of}{message}");
            return;
        }
        let bar = slot.get_or_insert_with(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar
        });
        // The protocol's progress is a float; the bar counts whole steps.
        if let Some(total) = total {
            bar.set_length(total.max(0.0) as u64);
        }
        bar.set_position(progress.max(0.0) as u64);
        if let Some(message) = message {
            bar.set_message(message.into_owned());
        }
    }

    /// Removes the progress bar, if one was shown.
    pub(crate) fn end_progress(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}

fn write_row(
    out: &mut impl std::io::Write,
    cells: &[String],
    widths: &[usize],
    style: Option<&Style>,
) -> std::io::Result<()> {
    let last = cells.len().saturating_sub(1);
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let shown = match style {
            Some(style) => style.apply_to(cell).to_string(),
            None => cell.clone(),
        };
        line.push_str(&shown);
        if i < last {
            let pad = widths[i].saturating_sub(measure_text_width(cell)) + 2;
            line.push_str(&" ".repeat(pad));
        }
    }
    writeln!(out, "{}", line.trim_end())
}

/// The first line of `text`, for a table cell.
pub(crate) fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().next())
        .unwrap_or_default()
        .to_owned()
}
