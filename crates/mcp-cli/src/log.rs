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
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry};

use crate::error::CliError;

use crate::untrusted::printable_cut;

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
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        eprintln!("{}", record(*event.metadata().level(), &line));
    }
}

/// The most characters of a record's message, and of its fields, shown:
/// an upstream's error message can be as long as the message that carried
/// it; the fields hold at most the stderr tail (20 lines of 1 KiB by
/// default) besides names.
const MAX_SHOWN_CHARS: usize = 32 * 1024;

/// `mcp gateway: <level>: <message><fields>`, printable and cut, each line
/// after the first indented.
fn record(level: Level, line: &Line) -> String {
    let level = level.as_str().to_ascii_lowercase();
    let text = format!(
        "mcp gateway: {level}: {}{}",
        printable_cut(&line.message, MAX_SHOWN_CHARS),
        printable_cut(&line.fields, MAX_SHOWN_CHARS)
    );
    text.replace('\n', "\n  ")
}

/// What [`init`] set up beside the log: OpenTelemetry export (feature
/// `otel`), flushed when dropped.
pub(crate) struct Telemetry(
    #[cfg(feature = "otel")]
    #[expect(dead_code, reason = "held: dropping it flushes the spans")]
    Option<mcp_core::otel::Telemetry>,
);

/// The environment variables that ask for OpenTelemetry export.
const OTLP_ENDPOINTS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
];

/// Sends this process's log to stderr (events at `info` and above; once,
/// a second call changes nothing), and, when `OTEL_EXPORTER_OTLP_ENDPOINT`
/// (or the traces one) is set and `mcp` is built with feature `otel`, the
/// SDK's spans and metrics over OTLP/HTTP, with trace context passed from
/// each downstream request to the upstream calls it makes.
///
/// # Errors
/// [`CliError::Connection`] when the `OTEL_*` settings cannot be used.
pub(crate) fn init() -> Result<Telemetry, CliError> {
    let stderr = StderrLog.with_filter(LevelFilter::INFO);
    let wanted = OTLP_ENDPOINTS
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    #[cfg(feature = "otel")]
    {
        use mcp_core::otel::{OtlpConfig, filter, layer, otlp_pipeline};
        let telemetry = if wanted {
            let config = OtlpConfig::from_env().with_service_name("mcp-gateway");
            Some(otlp_pipeline(config).map_err(|e| CliError::Connection {
                doing: "setting up OpenTelemetry export (the OTEL_* variables)".into(),
                source: Box::new(e),
            })?)
        } else {
            None
        };
        let otel = telemetry
            .as_ref()
            .map(|t| layer(t.tracer_provider(), t.meter_provider()).with_filter(filter()));
        let _ =
            tracing::subscriber::set_global_default(Registry::default().with(otel).with(stderr));
        Ok(Telemetry(telemetry))
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = tracing::subscriber::set_global_default(Registry::default().with(stderr));
        if wanted {
            tracing::warn!(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this mcp is built without feature \
                 `otel`: no spans are exported and no trace context is passed upstream \
                 (build it with `--features otel`)"
            );
        }
        Ok(Telemetry())
    }
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

    #[test]
    fn a_record_is_bounded_whatever_the_peer_sent() {
        let line = Line {
            message: "q".repeat(MAX_SHOWN_CHARS * 4),
            fields: format!(" stderr={}", "z".repeat(MAX_SHOWN_CHARS * 4)),
        };
        let text = record(Level::WARN, &line);
        let shown = |c: char| text.chars().filter(|&x| x == c).count();
        assert_eq!(shown('q'), MAX_SHOWN_CHARS, "the message is cut");
        assert_eq!(
            shown('z'),
            MAX_SHOWN_CHARS - " stderr=".len(),
            "the fields are cut"
        );
        assert_eq!(shown('…'), 2, "each cut is marked: {}", text.len());
        assert!(text.len() < 3 * MAX_SHOWN_CHARS, "{}", text.len());
    }
}
