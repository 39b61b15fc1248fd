//! Zero-sized tags: the fixed strings that tell union variants apart on the
//! wire (`"type": "text"`, `"mode": "url"`, ...).
//!
//! Each variant struct carries its tag as a field, so it serializes with the
//! tag even on its own, and refuses input whose tag differs.

wire_tag!(
    /// `"type": "text"` of a [`TextContent`](crate::TextContent).
    TextTag = "text"
);
wire_tag!(
    /// `"type": "image"` of an [`ImageContent`](crate::ImageContent).
    ImageTag = "image"
);
wire_tag!(
    /// `"type": "audio"` of an [`AudioContent`](crate::AudioContent).
    AudioTag = "audio"
);
wire_tag!(
    /// `"type": "resource_link"` of a [`ResourceLink`](crate::ResourceLink).
    ResourceLinkTag = "resource_link"
);
wire_tag!(
    /// `"type": "resource"` of an [`EmbeddedResource`](crate::EmbeddedResource).
    ResourceTag = "resource"
);
wire_tag!(
    /// `"type": "tool_use"` of a [`ToolUseContent`](crate::ToolUseContent).
    ToolUseTag = "tool_use"
);
wire_tag!(
    /// `"type": "tool_result"` of a [`ToolResultContent`](crate::ToolResultContent).
    ToolResultTag = "tool_result"
);
wire_tag!(
    /// `"type": "ref/prompt"` of a [`PromptReference`](crate::PromptReference).
    PromptRefTag = "ref/prompt"
);
wire_tag!(
    /// `"type": "ref/resource"` of a
    /// [`ResourceTemplateReference`](crate::ResourceTemplateReference).
    ResourceRefTag = "ref/resource"
);
wire_tag!(
    /// `"mode": "form"` of an [`ElicitRequestFormParams`](crate::ElicitRequestFormParams).
    FormModeTag = "form"
);
wire_tag!(
    /// `"mode": "url"` of an [`ElicitRequestUrlParams`](crate::ElicitRequestUrlParams).
    UrlModeTag = "url"
);
wire_tag!(
    /// `"type": "string"` of string-valued form field schemas.
    StringTypeTag = "string"
);
wire_tag!(
    /// `"type": "boolean"` of a [`BooleanSchema`](crate::BooleanSchema).
    BooleanTypeTag = "boolean"
);
wire_tag!(
    /// `"type": "array"` of multi-select enum schemas.
    ArrayTypeTag = "array"
);
wire_tag!(
    /// `"type": "object"` of an elicitation's requested schema.
    ObjectTypeTag = "object"
);
