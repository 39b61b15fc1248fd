//! Resources: listings, templates, contents, reads and subscriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::common::{Annotations, Cursor, Icon};
use crate::dispatch;
use crate::meta::{Meta, RequestMeta, ResultMeta};
use crate::mrtr::InputResponses;
use crate::result::{CacheScope, ResultType};

/// A resource the server can read, as listed by `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Identifier of the resource; the display fallback.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size of the raw contents in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons a user interface may show (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Resource {
    /// The resource at `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

setters!(Resource {
    with_title(title: String),
    with_description(description: String),
    with_mime_type(mime_type: String),
    with_size(size: u64),
    with_annotations(annotations: Annotations),
    with_icons(icons: Vec<Icon>),
    with_meta(meta: Meta),
});

/// A family of resources whose URIs follow an RFC 6570 template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template.
    pub uri_template: String,
    /// Identifier of the template; the display fallback.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type shared by every matching resource, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons a user interface may show (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// The template `uri_template`, named `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

setters!(ResourceTemplate {
    with_title(title: String),
    with_description(description: String),
    with_mime_type(mime_type: String),
    with_annotations(annotations: Annotations),
    with_icons(icons: Vec<Icon>),
    with_meta(meta: Meta),
});

/// Params of a request about one resource (schema `ResourceRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceRequestParams {
    /// The resource's URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl ResourceRequestParams {
    /// About the resource at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(ResourceRequestParams { with_meta(meta: RequestMeta) });

/// Params of `resources/subscribe` (handshake era).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscribeRequestParams {
    /// The resource to watch.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl SubscribeRequestParams {
    /// Watches the resource at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(SubscribeRequestParams { with_meta(meta: RequestMeta) });

/// Params of `resources/unsubscribe` (handshake era).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnsubscribeRequestParams {
    /// The resource to stop watching.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl UnsubscribeRequestParams {
    /// Stops watching the resource at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(UnsubscribeRequestParams { with_meta(meta: RequestMeta) });

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceRequestParams {
    /// The resource to read.
    pub uri: String,
    /// Answers to the input requests of an earlier attempt (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The opaque state an earlier attempt returned, echoed verbatim
    /// (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl ReadResourceRequestParams {
    /// Reads the resource at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }
}

setters!(ReadResourceRequestParams {
    with_input_responses(input_responses: InputResponses),
    with_request_state(request_state: String),
    with_meta(meta: RequestMeta),
});

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents: the resource, or several sub-resources.
    pub contents: Vec<ResourceContents>,
    /// How long the client may cache this result, in milliseconds (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::ttl_ms"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached result (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::cache_scope"
    )]
    pub cache_scope: Option<CacheScope>,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ReadResourceResult {
    /// A result holding `contents`.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self {
            contents,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ReadResourceResult {
    with_ttl_ms(ttl_ms: u64),
    with_cache_scope(cache_scope: CacheScope),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourcesResult {
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long the client may cache this page, in milliseconds (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::ttl_ms"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached page (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::cache_scope"
    )]
    pub cache_scope: Option<CacheScope>,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ListResourcesResult {
    /// A last page holding `resources`.
    pub fn new(resources: Vec<Resource>) -> Self {
        Self {
            resources,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ListResourcesResult {
    with_next_cursor(next_cursor: Cursor),
    with_ttl_ms(ttl_ms: u64),
    with_cache_scope(cache_scope: CacheScope),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long the client may cache this page, in milliseconds (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::ttl_ms"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached page (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::cache_scope"
    )]
    pub cache_scope: Option<CacheScope>,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ListResourceTemplatesResult {
    /// A last page holding `resource_templates`.
    pub fn new(resource_templates: Vec<ResourceTemplate>) -> Self {
        Self {
            resource_templates,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ListResourceTemplatesResult {
    with_next_cursor(next_cursor: Cursor),
    with_ttl_ms(ttl_ms: u64),
    with_cache_scope(cache_scope: CacheScope),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

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
/// `mimeType`, `_meta`), which is [`BaseResourceContents`]; every place that
/// carries contents uses one of the two.
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

/// The members every resource contents shares: the schema's abstract
/// `ResourceContents` definition, which no message carries on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BaseResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata attached to the contents.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl BaseResourceContents {
    /// The shared members of contents at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            meta: None,
        }
    }
}
