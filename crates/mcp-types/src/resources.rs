//! Resources: listings, templates, contents, reads and subscriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::dispatch;
use crate::meta::Meta;

/// The text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The text; only for resources that are text.
    pub text: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// The text of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            text: text.into(),
            mime_type: None,
            meta: None,
        }
    }
}

setters!(TextResourceContents {
    with_mime_type(mime_type: String),
    with_meta(meta: Meta),
});

/// The binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The bytes, base64-encoded.
    pub blob: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// The base64 bytes of `uri`.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            blob: blob.into(),
            mime_type: None,
            meta: None,
        }
    }
}

setters!(BlobResourceContents {
    with_mime_type(mime_type: String),
    with_meta(meta: Meta),
});

/// The contents of a resource: text or a blob, told apart by which of `text`
/// and `blob` is present.
///
/// The schema's `ResourceContents` is the base both share (`uri`,
/// `mimeType`, `_meta`); every place that carries contents uses one of the two.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Contents with `text`.
    Text(TextResourceContents),
    /// Contents with a base64 `blob`.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(text) => &text.uri,
            ResourceContents::Blob(blob) => &blob.uri,
        }
    }
    /// The resource's MIME type, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(text) => text.mime_type.as_deref(),
            ResourceContents::Blob(blob) => blob.mime_type.as_deref(),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = dispatch::read_object(deserializer, "resource contents")?;
        if map.contains_key("text") {
            dispatch::from_object(map).map(ResourceContents::Text)
        } else if map.contains_key("blob") {
            dispatch::from_object(map).map(ResourceContents::Blob)
        } else {
            Err(serde::de::Error::custom(
                "resource contents have neither `text` nor `blob`",
            ))
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(value: TextResourceContents) -> Self {
        ResourceContents::Text(value)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(value: BlobResourceContents) -> Self {
        ResourceContents::Blob(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contents_dispatch_on_text_or_blob() {
        let text = json!({"uri": "file:///a", "text": "x", "mimeType": "text/plain"});
        let blob = json!({"uri": "file:///b", "blob": "AA=="});
        let parsed: ResourceContents = serde_json::from_value(text.clone()).unwrap();
        assert!(matches!(parsed, ResourceContents::Text(_)));
        assert_eq!(parsed.mime_type(), Some("text/plain"));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), text);
        let parsed: ResourceContents = serde_json::from_value(blob.clone()).unwrap();
        assert!(matches!(parsed, ResourceContents::Blob(_)));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), blob);
        let err = serde_json::from_value::<ResourceContents>(json!({"uri": "x"})).unwrap_err();
        assert!(
            err.to_string().contains("neither `text` nor `blob`"),
            "{err}"
        );
    }
}
