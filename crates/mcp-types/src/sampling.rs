//! Sampling: a server asks the client's model for a message
//! (`sampling/createMessage`; an input request in 2026-07-28).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::common::{JsonObject, Role};
use crate::content::{
    AudioContent, ImageContent, SamplingMessageContentBlock, TextContent, ToolResultContent,
    ToolUseContent,
};
use crate::dispatch;
use crate::meta::{Meta, RequestMeta, ResultMeta};
use crate::result::ResultType;
use crate::task::TaskMetadata;
use crate::tools::Tool;

/// A hint for choosing a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelHint {
    /// A model name or a substring of one (`"claude-3-5-sonnet"`, `"sonnet"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ModelHint {
    /// A hint naming `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
        }
    }
}

/// The server's preferences for the model; the client may ignore them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Hints, evaluated in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

impl ModelPreferences {
    /// No preferences.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ModelPreferences {
    with_hints(hints: Vec<ModelHint>),
    with_cost_priority(cost_priority: f64),
    with_speed_priority(speed_priority: f64),
    with_intelligence_priority(intelligence_priority: f64),
});

/// Which MCP context to attach to a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// No context (the default).
    None,
    /// Context from the requesting server (deprecated; needs `sampling.context`).
    ThisServer,
    /// Context from every server (deprecated; needs `sampling.context`).
    AllServers,
}

/// How the model may use tools in sampling (2025-11-25+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must use a tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Controls tool use in sampling (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolChoice {
    /// How tools may be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

impl ToolChoice {
    /// Tool use in `mode`.
    pub fn new(mode: ToolChoiceMode) -> Self {
        Self { mode: Some(mode) }
    }
}

/// The content of a sampling message: one block, or (2025-11-25+) an array
/// of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    Single(SamplingMessageContentBlock),
    /// Several blocks.
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl SamplingContent {
    /// The blocks, one or many.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(block) => std::slice::from_ref(block),
            SamplingContent::Multiple(blocks) => blocks,
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(items) => items
                .into_iter()
                .map(dispatch::from_value)
                .collect::<Result<_, _>>()
                .map(SamplingContent::Multiple),
            other => dispatch::from_value(other).map(SamplingContent::Single),
        }
    }
}

macro_rules! single_block_from {
    ($($ty:ty),+) => {
        $(
            impl From<$ty> for SamplingContent {
                fn from(block: $ty) -> Self {
                    SamplingContent::Single(block.into())
                }
            }
        )+
    };
}

single_block_from!(
    SamplingMessageContentBlock,
    TextContent,
    ImageContent,
    AudioContent,
    ToolUseContent,
    ToolResultContent
);

impl From<Vec<SamplingMessageContentBlock>> for SamplingContent {
    fn from(blocks: Vec<SamplingMessageContentBlock>) -> Self {
        SamplingContent::Multiple(blocks)
    }
}

/// A message to or from a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Metadata (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// `role` says `content`.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        Self {
            role,
            content: content.into(),
            meta: None,
        }
    }
    /// The user says `text`.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingMessageContentBlock::text(text))
    }
}

setters!(SamplingMessage { with_meta(meta: Meta) });

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample; the client must respect it.
    pub max_tokens: u64,
    /// Preferences for choosing the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt; the client may change or drop it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed through to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (2025-11-25+; needs `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (handshake era; absent from 2026-07-28 input requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CreateMessageRequestParams {
    /// Samples at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            max_tokens,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
        }
    }
}

setters!(CreateMessageRequestParams {
    with_model_preferences(model_preferences: ModelPreferences),
    with_system_prompt(system_prompt: String),
    with_include_context(include_context: IncludeContext),
    with_temperature(temperature: f64),
    with_stop_sequences(stop_sequences: Vec<String>),
    with_metadata(metadata: JsonObject),
    with_tools(tools: Vec<Tool>),
    with_tool_choice(tool_choice: ToolChoice),
    with_task(task: TaskMetadata),
    with_meta(meta: RequestMeta),
});

/// The client's answer to `sampling/createMessage`: the sampled message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who speaks: the model, so normally `assistant`.
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`,
    /// `toolUse`, or another string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CreateMessageResult {
    /// The assistant said `content`, sampled by `model`.
    pub fn new(content: impl Into<SamplingContent>, model: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(CreateMessageResult {
    with_stop_reason(stop_reason: String),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_is_one_block_or_an_array() {
        let single = json!({"role": "user", "content": {"type": "text", "text": "hi"}});
        let message: SamplingMessage = serde_json::from_value(single.clone()).unwrap();
        assert!(matches!(message.content, SamplingContent::Single(_)));
        assert_eq!(serde_json::to_value(&message).unwrap(), single);

        let many = json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        let message: SamplingMessage = serde_json::from_value(many.clone()).unwrap();
        assert_eq!(message.content.blocks().len(), 2);
        assert_eq!(serde_json::to_value(&message).unwrap(), many);
    }

    #[test]
    fn bad_blocks_in_an_array_report_the_tag() {
        let err = serde_json::from_value::<SamplingContent>(json!([{"type": "resource_link"}]))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown sampling content block type `resource_link`"),
            "{err}"
        );
    }

    #[test]
    fn result_defaults_to_the_assistant() {
        let result =
            CreateMessageResult::new(TextContent::new("Paris"), "m").with_stop_reason("endTurn");
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"})
        );
    }
}
