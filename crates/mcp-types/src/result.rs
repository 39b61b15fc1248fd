//! Fields every result shares: `resultType` and `_meta` (2026-07-28), the
//! pagination cursor, and caching hints.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::common::{Cursor, JsonObject};
use crate::meta::ResultMeta;

/// What kind of result an object is, so the client knows how to read it
/// (2026-07-28). An open set: extensions add values (e.g. `"task"`), which
/// are kept verbatim in [`ResultType::Other`].
///
/// A result without `resultType` (from an older server) counts as
/// [`ResultType::Complete`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the final result.
    #[default]
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`](crate::InputRequiredResult);
    /// answer its input requests and retry.
    InputRequired,
    /// Any other value, kept as sent.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(other) => other,
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for ResultType {
    fn from(text: &str) -> Self {
        match text {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            other => ResultType::Other(other.to_owned()),
        }
    }
}

impl From<String> for ResultType {
    fn from(text: String) -> Self {
        match text.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            _ => ResultType::Other(text),
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ResultType::from)
    }
}

impl JsonSchema for ResultType {
    fn schema_name() -> Cow<'static, str> {
        "ResultType".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Indicates the type of a result: \"complete\", \"input_required\", or an extension's value.",
            "type": "string"
        })
    }
}

/// Who may reuse a cached result (2026-07-28), like HTTP `Cache-Control`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// No user-specific data: any cache may share it across authorizations.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// A result with nothing to say, also the schema's generic `Result`: an open
/// object whose unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl EmptyResult {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(EmptyResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// Fields of a paginated list result (schema `PaginatedResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaginatedResult {
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl PaginatedResult {
    /// A last page with no metadata.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(PaginatedResult {
    with_next_cursor(next_cursor: Cursor),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// Fields of a result the client may cache (schema `CacheableResult`,
/// 2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CacheableResult {
    /// How long, in milliseconds, the client may reuse the result; 0 means
    /// stale at once.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::ttl_ms"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached result.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::cache_scope"
    )]
    pub cache_scope: Option<CacheScope>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CacheableResult {
    /// No caching hints.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(CacheableResult {
    with_ttl_ms(ttl_ms: u64),
    with_cache_scope(cache_scope: CacheScope),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_type_round_trips_known_and_unknown_values() {
        for (text, expected) in [
            ("complete", ResultType::Complete),
            ("input_required", ResultType::InputRequired),
            ("task", ResultType::Other("task".into())),
        ] {
            let parsed: ResultType = serde_json::from_value(json!(text)).unwrap();
            assert_eq!(parsed, expected);
            assert_eq!(serde_json::to_value(&parsed).unwrap(), json!(text));
        }
        assert!(serde_json::from_value::<ResultType>(json!(1)).is_err());
    }

    #[test]
    fn empty_result_keeps_unknown_members_and_adds_nothing() {
        let input = json!({"resultType": "complete", "x-extra": {"a": 1}});
        let result: EmptyResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(result.result_type, Some(ResultType::Complete));
        assert_eq!(serde_json::to_value(&result).unwrap(), input);
        assert_eq!(serde_json::to_value(EmptyResult::new()).unwrap(), json!({}));
    }

    #[test]
    fn cache_scope_is_lowercase() {
        assert_eq!(
            serde_json::to_value(CacheScope::Private).unwrap(),
            json!("private")
        );
    }
}
