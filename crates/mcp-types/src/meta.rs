//! The `_meta` objects carried by requests, results, notifications and most
//! other objects, their reserved keys, and the key grammar.
//!
//! [`RequestMeta`], [`ResultMeta`] and [`NotificationMeta`] read the reserved
//! keys into typed fields and keep every other key in `extra`; any other
//! object's `_meta` is a plain [`Meta`] map.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capabilities::ClientCapabilities;
use crate::common::{Implementation, JsonObject, ProgressToken};
use crate::jsonrpc::RequestId;
use crate::logging::LoggingLevel;
use crate::task::RelatedTaskMetadata;

/// A `_meta` object with no reserved keys of its own (schema `MetaObject`).
pub type Meta = JsonObject;

/// `progressToken`: asks for `notifications/progress` about this request.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// `io.modelcontextprotocol/protocolVersion`: the revision a 2026-07-28
/// request speaks (required there).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `io.modelcontextprotocol/clientInfo`: the client software making the request.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `io.modelcontextprotocol/clientCapabilities`: the client's capabilities
/// for this one request (required in 2026-07-28).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `io.modelcontextprotocol/logLevel`: the log level wanted for this request.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `io.modelcontextprotocol/serverInfo`: the server software producing a result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `io.modelcontextprotocol/subscriptionId`: the `subscriptions/listen`
/// stream a notification or result belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `io.modelcontextprotocol/related-task`: the task a message belongs to
/// (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// `traceparent`: W3C Trace Context parent.
pub const TRACEPARENT: &str = "traceparent";
/// `tracestate`: W3C Trace Context vendor state.
pub const TRACESTATE: &str = "tracestate";
/// `baggage`: W3C Baggage.
pub const BAGGAGE: &str = "baggage";

/// Unprefixed keys the specification reserves.
const RESERVED_PLAIN_KEYS: &[&str] = &[PROGRESS_TOKEN, TRACEPARENT, TRACESTATE, BAGGAGE];

/// Whether `key` follows the `_meta` key grammar.
///
/// A key is an optional prefix, a dot-separated series of labels followed by
/// `/`, then a name. A label starts with a letter, ends with a letter or
/// digit, and holds only letters, digits and hyphens. A name is empty, or
/// starts and ends with a letter or digit and holds only letters, digits,
/// `-`, `_` and `.`.
///
/// # Examples
/// ```
/// use mcp_types::meta::is_valid_meta_key;
/// assert!(is_valid_meta_key("com.example/trace-id"));
/// assert!(is_valid_meta_key("progressToken"));
/// assert!(!is_valid_meta_key("1com.example/x"));
/// assert!(!is_valid_meta_key("a/b/c"));
/// ```
pub fn is_valid_meta_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => prefix.split('.').all(is_valid_label) && is_valid_name(name),
        None => is_valid_name(key),
    }
}

/// Whether `key` is reserved for MCP: its prefix's second label is
/// `modelcontextprotocol` or `mcp` (compared ignoring ASCII case, as DNS
/// labels are), or it is one of the unprefixed reserved keys
/// ([`PROGRESS_TOKEN`], [`TRACEPARENT`], [`TRACESTATE`], [`BAGGAGE`]).
///
/// # Examples
/// ```
/// use mcp_types::meta::is_reserved_meta_key;
/// assert!(is_reserved_meta_key("io.modelcontextprotocol/protocolVersion"));
/// assert!(is_reserved_meta_key("dev.mcp/anything"));
/// assert!(!is_reserved_meta_key("com.example.mcp/x"));
/// ```
pub fn is_reserved_meta_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, _)) => prefix.split('.').nth(1).is_some_and(|label| {
            label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp")
        }),
        None => RESERVED_PLAIN_KEYS.contains(&key),
    }
}

fn is_valid_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphabetic()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        // The grammar allows an empty name.
        _ => true,
    }
}

/// The `_meta` of a request's params (schema `RequestMetaObject`; before
/// 2026-07-28 only `progressToken` was defined).
///
/// The client's info and capabilities are behind `Arc`s: every request's
/// params hold a `RequestMeta`, and most (every handshake-era request)
/// carry neither, so the params stay small to move; and a server keeps
/// them for the whole request without copying them.
// `Deserialize` is written out below: every stateless request reads one,
// and the derive's `flatten` of `extra` buffers each key and value first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct RequestMeta {
    /// Asks for `notifications/progress` carrying this token.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// The revision this request speaks (2026-07-28, required there).
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client software making the request (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Arc<Implementation>>,
    /// The client's capabilities for this request (2026-07-28, required there).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<Arc<ClientCapabilities>>,
    /// The log level wanted for this request; none means no log messages
    /// (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// The task this request belongs to (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `T` read from a JSON object only: the derived implementation of a
/// struct also takes an array of its fields in order, which the schema's
/// object types (the client's capabilities) do not allow.
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Visit(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};

        /// Sets a reserved key once (a repeated one is refused, as the
        /// derived implementation does).
        fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
            slot: &mut Option<T>,
            seen: &mut bool,
            key: &'static str,
            map: &mut A,
        ) -> Result<(), A::Error> {
            if std::mem::replace(seen, true) {
                return Err(A::Error::duplicate_field(key));
            }
            *slot = map.next_value()?;
            Ok(())
        }

        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = RequestMeta;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a request `_meta` object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
                let mut meta = RequestMeta::default();
                let mut seen = [false; 6];
                while let Some(crate::json::JsonStr(key)) = map.next_key()? {
                    match key.as_ref() {
                        PROGRESS_TOKEN => {
                            once(
                                &mut meta.progress_token,
                                &mut seen[0],
                                PROGRESS_TOKEN,
                                &mut map,
                            )?;
                        }
                        PROTOCOL_VERSION => once(
                            &mut meta.protocol_version,
                            &mut seen[1],
                            PROTOCOL_VERSION,
                            &mut map,
                        )?,
                        CLIENT_INFO => {
                            // Read as the value, then put in its `Arc`: one
                            // allocation (serde's `Arc<T>` reads a `Box<T>`
                            // and copies it into a second one).
                            let mut info = None;
                            once(&mut info, &mut seen[2], CLIENT_INFO, &mut map)?;
                            meta.client_info = info.map(Arc::<Implementation>::new);
                        }
                        CLIENT_CAPABILITIES => {
                            let mut capabilities = None;
                            once(
                                &mut capabilities,
                                &mut seen[3],
                                CLIENT_CAPABILITIES,
                                &mut map,
                            )?;
                            meta.client_capabilities =
                                capabilities.map(|ObjectOnly(c)| Arc::new(c));
                        }
                        LOG_LEVEL => once(&mut meta.log_level, &mut seen[4], LOG_LEVEL, &mut map)?,
                        RELATED_TASK => {
                            once(&mut meta.related_task, &mut seen[5], RELATED_TASK, &mut map)?;
                        }
                        _ => {
                            let value = map.next_value()?;
                            meta.extra.insert(key.into_owned(), value);
                        }
                    }
                }
                Ok(meta)
            }
        }

        deserializer.deserialize_map(Visit)
    }
}

impl RequestMeta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets an extra (non-reserved) key.
    #[must_use]
    pub fn with_extra(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

setters!(RequestMeta {
    with_progress_token(progress_token: ProgressToken),
    with_protocol_version(protocol_version: String),
    with_client_info(client_info: Arc<Implementation>),
    with_client_capabilities(client_capabilities: Arc<ClientCapabilities>),
    with_log_level(log_level: LoggingLevel),
    with_related_task(related_task: RelatedTaskMetadata),
});

/// The `_meta` of a result (schema `ResultMetaObject`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ResultMeta {
    /// The server software producing the result (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// The `subscriptions/listen` stream this result closes (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// The task this result belongs to (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ResultMeta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets an extra (non-reserved) key.
    #[must_use]
    pub fn with_extra(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

setters!(ResultMeta {
    with_server_info(server_info: Implementation),
    with_subscription_id(subscription_id: RequestId),
    with_related_task(related_task: RelatedTaskMetadata),
});

/// The `_meta` of a notification's params (schema `NotificationMetaObject`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct NotificationMeta {
    /// The `subscriptions/listen` stream the notification was delivered on
    /// (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// The task this notification belongs to (2025-11-25).
    #[serde(
        rename = "io.modelcontextprotocol/related-task",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_task: Option<RelatedTaskMetadata>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl NotificationMeta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets an extra (non-reserved) key.
    #[must_use]
    pub fn with_extra(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

setters!(NotificationMeta {
    with_subscription_id(subscription_id: RequestId),
    with_related_task(related_task: RelatedTaskMetadata),
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_meta_reads_reserved_keys_typed_and_keeps_the_rest() {
        let meta: RequestMeta = serde_json::from_value(json!({
            "progressToken": 7,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
            "io.modelcontextprotocol/logLevel": "debug",
            "io.modelcontextprotocol/related-task": {"taskId": "t"},
            "com.example/k\\ey": [1],
            "traceparent": "00-x",
        }))
        .expect("a request _meta");
        assert_eq!(meta.progress_token, Some(ProgressToken::Number(7)));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(
            meta.client_info.as_ref().map(|i| i.name.as_str()),
            Some("c")
        );
        assert!(
            meta.client_capabilities
                .as_ref()
                .is_some_and(|c| c.roots.is_some())
        );
        assert_eq!(meta.log_level, Some(LoggingLevel::Debug));
        assert_eq!(
            meta.related_task.as_ref().map(|t| t.task_id.as_str()),
            Some("t")
        );
        assert_eq!(meta.extra.len(), 2);
        assert_eq!(meta.extra["com.example/k\\ey"], json!([1]));
        // What it reads back is what it wrote.
        let again: RequestMeta =
            serde_json::from_value(serde_json::to_value(&meta).expect("json")).expect("parse");
        assert_eq!(again, meta);
        // `null` is absent; a repeated reserved key, a wrong type or a
        // non-object is refused.
        let null: RequestMeta =
            serde_json::from_str(r#"{"io.modelcontextprotocol/logLevel":null}"#).expect("null");
        assert_eq!(null, RequestMeta::default());
        for bad in [
            r#"{"progressToken":1,"progressToken":2}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":3}"#,
            r#"[1]"#,
        ] {
            assert!(serde_json::from_str::<RequestMeta>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn valid_keys_follow_the_grammar() {
        for key in [
            "progressToken",
            "x",
            "a1",
            "my_key.v2",
            "io.modelcontextprotocol/protocolVersion",
            "com.example/trace-id",
            "com.example-corp.api/a_b.c-d",
            "com.example/",
            "",
        ] {
            assert!(is_valid_meta_key(key), "{key:?} should be valid");
        }
    }

    #[test]
    fn invalid_keys_are_refused() {
        for key in [
            "_private",
            "trailing-",
            "has space",
            "1com.example/x",
            "com.example-/x",
            "com..example/x",
            "/x",
            "com.example/-x",
            "com.example/x_",
            "a/b/c",
            "com.ex_ample/x",
            "café",
        ] {
            assert!(!is_valid_meta_key(key), "{key:?} should be invalid");
        }
    }

    #[test]
    fn reserved_prefixes_are_those_whose_second_label_is_mcp() {
        assert!(is_reserved_meta_key("io.modelcontextprotocol/x"));
        assert!(is_reserved_meta_key("dev.mcp/x"));
        assert!(is_reserved_meta_key("org.modelcontextprotocol.api/x"));
        assert!(is_reserved_meta_key("com.mcp.tools/x"));
        assert!(!is_reserved_meta_key("com.example.mcp/x"));
        assert!(!is_reserved_meta_key("mcp/x"));
        assert!(!is_reserved_meta_key("com.example/x"));
        assert!(is_reserved_meta_key(PROGRESS_TOKEN));
        assert!(is_reserved_meta_key(TRACEPARENT));
        assert!(is_reserved_meta_key(BAGGAGE));
        assert!(!is_reserved_meta_key("myKey"));
    }

    #[test]
    fn request_meta_reads_reserved_keys_and_keeps_the_rest() {
        let input = json!({
            "progressToken": 3,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "warning",
            "com.example/x": [1, 2]
        });
        let meta: RequestMeta = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(meta.progress_token, Some(ProgressToken::Number(3)));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
        assert_eq!(meta.extra.get("com.example/x"), Some(&json!([1, 2])));
        assert_eq!(serde_json::to_value(&meta).unwrap(), input);
    }

    #[test]
    fn reserved_key_constants_match_the_field_names() {
        let meta = RequestMeta::new()
            .with_progress_token(1)
            .with_protocol_version("v")
            .with_client_info(Implementation::new("c", "1"))
            .with_client_capabilities(ClientCapabilities::new())
            .with_log_level(LoggingLevel::Info)
            .with_related_task(RelatedTaskMetadata::new("t"));
        let value = serde_json::to_value(&meta).unwrap();
        for key in [
            PROGRESS_TOKEN,
            PROTOCOL_VERSION,
            CLIENT_INFO,
            CLIENT_CAPABILITIES,
            LOG_LEVEL,
            RELATED_TASK,
        ] {
            assert!(value.get(key).is_some(), "missing {key}");
        }
        let result = ResultMeta::new()
            .with_server_info(Implementation::new("s", "1"))
            .with_subscription_id(RequestId::from(1));
        let value = serde_json::to_value(&result).unwrap();
        assert!(value.get(SERVER_INFO).is_some());
        assert!(value.get(SUBSCRIPTION_ID).is_some());
    }
}
