//! The gateway's log on stderr: one record per event (level, the message,
//! the fields its code set), for the events at `info` and above. Fields are
//! what the SDK logs: names and errors, never an upstream's environment or
//! header values. Messages and fields carry peer text (an upstream's error
//! message, its stderr tail), so a record is made printable like every
//! server text the CLI shows, and a record that spans lines has its later
//! lines indented: no peer text can start a line that passes for a record.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry};

use crate::untrusted::printable;

/// Writes each event of `info` or above to stderr.
struct StderrLog;

/// The message and the other fields of an event, as text.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for StderrLog {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        *metadata.level() <= Level::INFO
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        eprintln!("{}", record(*event.metadata().level(), &line));
    }
}

/// `mcp gateway: <level>: <message><fields>`, printable, each line after
/// the first indented.
fn record(level: Level, line: &Line) -> String {
    let level = level.as_str().to_ascii_lowercase();
    let text = format!(
        "mcp gateway: {level}: {}{}",
        printable(&line.message),
        printable(&line.fields)
    );
    text.replace('\n', "\n  ")
}

/// Sends this process's log to stderr (once; a second call changes nothing).
pub(crate) fn init() {
    let _ = tracing::subscriber::set_global_default(Registry::default().with(StderrLog));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_text_is_escaped_and_cannot_start_a_record() {
        let line = Line {
            message: "could not connect: \u{1b}]0;title\u{7}bad\nmcp gateway: info: forged"
                .to_owned(),
            fields: " upstream=files stderr=one\ntwo\r".to_owned(),
        };
        let text = record(Level::WARN, &line);
        assert_eq!(
            text,
            "mcp gateway: warn: could not connect: \\x1b]0;title\\x07bad\n  \
             mcp gateway: info: forged upstream=files stderr=one\n  two\\x0d"
        );
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("mcp gateway: "))
                .count(),
            1,
            "{text}"
        );
    }
}
