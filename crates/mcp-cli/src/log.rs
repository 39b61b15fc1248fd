//! The gateway's log on stderr: one line per event (level, the fields its
//! code set, the message), for the events at `info` and above. Fields are
//! what the SDK logs: names and errors, never an upstream's environment or
//! header values.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry};

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
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        eprintln!(
            "mcp gateway: {level}: {}{}",
            crate::untrusted::printable(&line.message),
            crate::untrusted::printable(&line.fields)
        );
    }
}

/// Sends this process's log to stderr (once; a second call changes nothing).
pub(crate) fn init() {
    let _ = tracing::subscriber::set_global_default(Registry::default().with(StderrLog));
}
