//! Small shared types: JSON aliases, identities, icons, annotations, roles,
//! cursors and progress tokens.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// Any JSON value (schema `JSONValue`).
pub type JsonValue = Value;
/// A JSON array of any values (schema `JSONArray`).
pub type JsonArray = Vec<Value>;
/// A JSON object with any members (schema `JSONObject`), also used for open
/// objects such as tool arguments and capability values.
pub type JsonObject = Map<String, Value>;

/// An opaque pagination position handed out by the server (schema `Cursor`).
pub type Cursor = String;

/// The sender or recipient of a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The human user (or the client acting for them).
    User,
    /// The model.
    Assistant,
}

/// Ties `notifications/progress` to the request that asked for them: an
/// integer or a string, never a bool or `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Number(n) => write!(f, "{n}"),
            ProgressToken::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<i32> for ProgressToken {
    fn from(n: i32) -> Self {
        ProgressToken::Number(n.into())
    }
}

impl From<u32> for ProgressToken {
    fn from(n: u32) -> Self {
        ProgressToken::Number(n.into())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl Serialize for ProgressToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ProgressToken::Number(n) => serializer.serialize_i64(*n),
            ProgressToken::String(s) => serializer.serialize_str(s),
        }
    }
}

struct ProgressTokenVisitor;

impl Visitor<'_> for ProgressTokenVisitor {
    type Value = ProgressToken;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a progress token (an integer or a string)")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProgressToken, E> {
        Ok(ProgressToken::Number(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProgressToken, E> {
        i64::try_from(v).map(ProgressToken::Number).map_err(|_| {
            E::custom(format_args!(
                "progress token {v} does not fit in a 64-bit signed integer"
            ))
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ProgressToken, E> {
        Err(E::custom(format_args!(
            "progress token {v} is not an integer; tokens are integers or strings"
        )))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ProgressToken, E> {
        Ok(ProgressToken::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<ProgressToken, E> {
        Ok(ProgressToken::String(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ProgressToken, E> {
        Err(E::custom(format_args!(
            "progress token `{v}` is a bool; tokens are integers or strings"
        )))
    }
    fn visit_unit<E: de::Error>(self) -> Result<ProgressToken, E> {
        Err(E::custom(
            "progress token is null; tokens are integers or strings",
        ))
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ProgressTokenVisitor)
    }
}

impl JsonSchema for ProgressToken {
    fn schema_name() -> Cow<'static, str> {
        "ProgressToken".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A progress token, used to associate progress notifications with the original request.",
            "type": ["string", "integer"]
        })
    }
}

/// The theme an [`Icon`] is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// Drawn for a light background.
    Light,
    /// Drawn for a dark background.
    Dark,
}

/// An icon a user interface may show (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// Where the icon is: an `http(s)` URL or a `data:` URI.
    pub src: String,
    /// MIME type, when the source's own is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon suits, as `WxH` strings or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src` with no hints.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

setters!(Icon {
    with_mime_type(mime_type: String),
    with_sizes(sizes: Vec<String>),
    with_theme(theme: IconTheme),
});

/// The `icons` member shared by named things (schema `Icons`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icons {
    /// Icons a user interface may show, in any sizes and themes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Icons {
    /// No icons.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(Icons { with_icons(icons: Vec<Icon>) });

/// A programmatic name and an optional display title (schema `BaseMetadata`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BaseMetadata {
    /// Identifier for programs; the display fallback when `title` is absent.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl BaseMetadata {
    /// A name with no title.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
        }
    }
}

setters!(BaseMetadata { with_title(title: String) });

/// Names and describes an MCP client or server implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Identifier of the implementation.
    pub name: String,
    /// Version of the implementation.
    pub version: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons a user interface may show (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The implementation's website (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version only.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

setters!(Implementation {
    with_title(title: String),
    with_description(description: String),
    with_icons(icons: Vec<Icon>),
    with_website_url(website_url: String),
});

/// Hints for the client on how to use or show an object (2025-03-26+; the
/// 2024-11-05 `Annotated` base held the same `audience` and `priority`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the object is meant for: the user, the model, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the underlying data last changed, as ISO 8601 (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No annotations.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(Annotations {
    with_audience(audience: Vec<Role>),
    with_priority(priority: f64),
    with_last_modified(last_modified: String),
});

/// The 2024-11-05 `Annotated` base: an object that may carry [`Annotations`]
/// (then only `audience` and `priority`). Later revisions put the
/// `annotations` member on each type directly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Annotated {
    /// The annotations, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

impl Annotated {
    /// Wraps `annotations`.
    pub fn new(annotations: Option<Annotations>) -> Self {
        Self { annotations }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_token_accepts_integers_and_strings() {
        let token: ProgressToken = serde_json::from_str("7").unwrap();
        assert_eq!(token, ProgressToken::Number(7));
        let token: ProgressToken = serde_json::from_str("\"abc\"").unwrap();
        assert_eq!(token, ProgressToken::from("abc"));
        assert_eq!(serde_json::to_string(&ProgressToken::from(7)).unwrap(), "7");
    }

    #[test]
    fn progress_token_rejects_bools_floats_and_null_clearly() {
        let err = serde_json::from_str::<ProgressToken>("true").unwrap_err();
        assert!(err.to_string().contains("is a bool"), "{err}");
        let err = serde_json::from_str::<ProgressToken>("1.5").unwrap_err();
        assert!(err.to_string().contains("not an integer"), "{err}");
        let err = serde_json::from_str::<ProgressToken>("null").unwrap_err();
        assert!(err.to_string().contains("null"), "{err}");
    }

    #[test]
    fn implementation_omits_absent_fields() {
        let info = Implementation::new("srv", "1.0").with_title("Server");
        assert_eq!(
            serde_json::to_value(&info).unwrap(),
            serde_json::json!({"name": "srv", "version": "1.0", "title": "Server"})
        );
    }
}
