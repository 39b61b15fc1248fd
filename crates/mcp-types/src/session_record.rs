//! What a handshake-era session keeps between requests, as plain data, so
//! that a shared session store can hand it to another server process.

use serde::{Deserialize, Serialize};

use crate::{InitializeRequestParams, LoggingLevel};

/// One handshake-era session's state: what the client declared in
/// `initialize`, the revision the server answered, and what the client set
/// since (its log level, its resource subscriptions).
///
/// A server writes it to its session store when the state changes, and a
/// server process that gets a request for a session it does not hold
/// restores the session from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionRecord {
    /// The protocol version the server answered `initialize` with.
    pub protocol_version: String,
    /// The client's `initialize` params (its info and capabilities).
    pub client: InitializeRequestParams,
    /// The level set with `logging/setLevel`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// The resource URIs subscribed to with `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<String>,
}

impl SessionRecord {
    /// A record of a session just initialized at `protocol_version`.
    pub fn new(protocol_version: impl Into<String>, client: InitializeRequestParams) -> Self {
        Self {
            protocol_version: protocol_version.into(),
            client,
            log_level: None,
            subscriptions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientCapabilities, Implementation};

    #[test]
    fn a_record_round_trips_through_json() {
        let client = InitializeRequestParams::new(
            "2025-11-25",
            ClientCapabilities::default(),
            Implementation::new("c", "1"),
        );
        let mut record = SessionRecord::new("2025-11-25", client);
        record.log_level = Some(LoggingLevel::Debug);
        record.subscriptions.push("file:///a".into());
        let json = serde_json::to_string(&record).expect("serializes");
        assert!(json.contains("\"logLevel\":\"debug\""), "{json}");
        let back: SessionRecord = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, record);
    }
}
