//! Content blocks: what prompts, tool results and sampling messages are made of.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::{Annotations, Icon, JsonObject};
use crate::meta::Meta;
use crate::resources::ResourceContents;
use crate::tag::{
    AudioTag, ImageTag, ResourceLinkTag, ResourceTag, TextTag, ToolResultTag, ToolUseTag,
};

/// Text for or from a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// Always `"text"`.
    #[serde(rename = "type")]
    pub kind: TextTag,
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            kind: TextTag,
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

setters!(TextContent {
    with_annotations(annotations: Annotations),
    with_meta(meta: Meta),
});

/// An image for or from a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Always `"image"`.
    #[serde(rename = "type")]
    pub kind: ImageTag,
    /// The image bytes, base64-encoded.
    pub data: String,
    /// The image's MIME type.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            kind: ImageTag,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

setters!(ImageContent {
    with_annotations(annotations: Annotations),
    with_meta(meta: Meta),
});

/// Audio for or from a model (2025-03-26+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// Always `"audio"`.
    #[serde(rename = "type")]
    pub kind: AudioTag,
    /// The audio bytes, base64-encoded.
    pub data: String,
    /// The audio's MIME type.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            kind: AudioTag,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

setters!(AudioContent {
    with_annotations(annotations: Annotations),
    with_meta(meta: Meta),
});

/// A link to a resource the server can read, not its contents (2025-06-18+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// Always `"resource_link"`.
    #[serde(rename = "type")]
    pub kind: ResourceLinkTag,
    /// The resource's URI.
    pub uri: String,
    /// Identifier of the resource; the display fallback.
    pub name: String,
    /// Human-readable display name.
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
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link to `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            kind: ResourceLinkTag,
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

setters!(ResourceLink {
    with_title(title: String),
    with_description(description: String),
    with_mime_type(mime_type: String),
    with_size(size: u64),
    with_annotations(annotations: Annotations),
    with_icons(icons: Vec<Icon>),
    with_meta(meta: Meta),
});

/// A resource's contents embedded in a prompt or tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Always `"resource"`.
    #[serde(rename = "type")]
    pub kind: ResourceTag,
    /// The contents: text or a blob.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds these contents.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        Self {
            kind: ResourceTag,
            resource: resource.into(),
            annotations: None,
            meta: None,
        }
    }
}

setters!(EmbeddedResource {
    with_annotations(annotations: Annotations),
    with_meta(meta: Meta),
});

/// The model asks to call a tool, inside sampling (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUseContent {
    /// Always `"tool_use"`.
    #[serde(rename = "type")]
    pub kind: ToolUseTag,
    /// Identifies this call; the matching result carries it as `toolUseId`.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// Arguments, following the tool's input schema.
    pub input: JsonObject,
    /// Metadata; clients should keep it when sending the block back.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolUseContent {
    /// A call of tool `name` with `input`, identified by `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        Self {
            kind: ToolUseTag,
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
        }
    }
}

setters!(ToolUseContent { with_meta(meta: Meta) });

/// The result of a tool call, given back to the model in sampling (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// Always `"tool_result"`.
    #[serde(rename = "type")]
    pub kind: ToolResultTag,
    /// The `id` of the [`ToolUseContent`] this answers.
    pub tool_use_id: String,
    /// Unstructured result, as in a `CallToolResult`.
    pub content: Vec<ContentBlock>,
    /// Structured result, any JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata; clients should keep it when sending the block back.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolResultContent {
    /// The result `content` of the call `tool_use_id`.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        Self {
            kind: ToolResultTag,
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }
}

setters!(ToolResultContent {
    with_structured_content(structured_content: Value),
    with_is_error(is_error: bool),
    with_meta(meta: Meta),
});

/// One block of content in a prompt message or tool result, told apart by
/// `type`.
///
/// # Examples
/// ```
/// use mcp_types::ContentBlock;
/// let block: ContentBlock = serde_json::from_str(r#"{"type":"text","text":"hi"}"#)?;
/// assert_eq!(block, ContentBlock::text("hi"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `"resource_link"` (2025-06-18+).
    ResourceLink(ResourceLink),
    /// `"resource"`: embedded contents.
    Resource(EmbeddedResource),
}

tagged_union!(ContentBlock, "type", "content block", {
    "text" => Text(TextContent),
    "image" => Image(ImageContent),
    "audio" => Audio(AudioContent),
    "resource_link" => ResourceLink(ResourceLink),
    "resource" => Resource(EmbeddedResource),
});

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }
    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data, mime_type))
    }
    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }
    /// Embedded resource contents.
    pub fn resource(contents: impl Into<ResourceContents>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(contents))
    }
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(text) => Some(&text.text),
            _ => None,
        }
    }
}

/// One block of a sampling message, told apart by `type` (2025-11-25+ adds
/// tool use and tool results).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"tool_use"`.
    ToolUse(ToolUseContent),
    /// `"tool_result"`.
    ToolResult(ToolResultContent),
}

tagged_union!(SamplingMessageContentBlock, "type", "sampling content block", {
    "text" => Text(TextContent),
    "image" => Image(ImageContent),
    "audio" => Audio(AudioContent),
    "tool_use" => ToolUse(ToolUseContent),
    "tool_result" => ToolResult(ToolResultContent),
});

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingMessageContentBlock::Text(text) => Some(&text.text),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::TextResourceContents;
    use serde_json::json;

    #[test]
    fn a_variant_alone_serializes_with_its_tag() {
        assert_eq!(
            serde_json::to_value(TextContent::new("hi")).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
    }

    #[test]
    fn a_variant_alone_refuses_another_tag() {
        let err = serde_json::from_value::<TextContent>(json!({"type": "image", "text": "x"}))
            .unwrap_err();
        assert!(
            err.to_string().contains("expected `text`, found `image`"),
            "{err}"
        );
    }

    #[test]
    fn content_block_dispatches_on_type_both_ways() {
        let cases = [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
            json!({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}),
        ];
        for case in cases {
            let block: ContentBlock = serde_json::from_value(case.clone()).unwrap();
            assert_eq!(serde_json::to_value(&block).unwrap(), case);
        }
        let block = ContentBlock::resource(TextResourceContents::new("file:///a", "x"));
        assert!(matches!(block, ContentBlock::Resource(_)));
    }

    #[test]
    fn unknown_and_missing_types_get_clear_errors() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "foo"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown content block type `foo`; expected one of text, image, audio, resource_link, resource"
        );
        let err = serde_json::from_value::<ContentBlock>(json!({"text": "x"})).unwrap_err();
        assert!(err.to_string().contains("has no `type`"), "{err}");
        let err = serde_json::from_value::<ContentBlock>(json!("x")).unwrap_err();
        assert!(
            err.to_string().contains("expected a content block object"),
            "{err}"
        );
    }

    #[test]
    fn sampling_blocks_include_tool_use_and_results() {
        let case = json!({
            "type": "tool_result",
            "toolUseId": "c1",
            "content": [{"type": "text", "text": "18C"}],
            "structuredContent": [1, 2]
        });
        let block: SamplingMessageContentBlock = serde_json::from_value(case.clone()).unwrap();
        assert!(matches!(block, SamplingMessageContentBlock::ToolResult(_)));
        assert_eq!(serde_json::to_value(&block).unwrap(), case);
        assert!(serde_json::from_value::<ContentBlock>(case).is_err());
    }
}
