//! Logging: severity levels and `logging/setLevel`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::meta::RequestMeta;

/// Severity of a log message, as in RFC 5424 (syslog). Ordered from least
/// ([`Debug`](Self::Debug)) to most ([`Emergency`](Self::Emergency)) severe.
///
/// # Examples
/// ```
/// use mcp_types::LoggingLevel;
/// assert!(LoggingLevel::Error > LoggingLevel::Warning);
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Params of `logging/setLevel` (handshake era; 2026-07-28 sends the level
/// in each request's `_meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetLevelRequestParams {
    /// The least severe level the client wants to receive.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl SetLevelRequestParams {
    /// Asks for messages at `level` and above.
    pub fn new(level: LoggingLevel) -> Self {
        Self { level, meta: None }
    }
}

setters!(SetLevelRequestParams { with_meta(meta: RequestMeta) });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_by_severity() {
        let mut sorted = LoggingLevel::ALL;
        sorted.sort();
        assert_eq!(sorted, LoggingLevel::ALL);
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
    }

    #[test]
    fn levels_are_lowercase_on_the_wire() {
        for level in LoggingLevel::ALL {
            let text = serde_json::to_value(level).unwrap();
            assert_eq!(text, serde_json::json!(level.as_str()));
            assert_eq!(serde_json::from_value::<LoggingLevel>(text).unwrap(), level);
        }
        assert!(serde_json::from_str::<LoggingLevel>("\"fatal\"").is_err());
    }
}
