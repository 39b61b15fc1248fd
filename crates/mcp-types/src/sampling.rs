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

/// Why the tool uses and tool results of a sampling conversation do not
/// pair up (see [`check_tool_messages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolMessagesError {
    /// Message `index` holds `tool_result` blocks next to other content; a
    /// message of tool results holds nothing else.
    MixedToolResults {
        /// The message, counted from 0.
        index: usize,
    },
    /// Message `index` holds `tool_result` blocks, but the message before
    /// it made no tool use for them to answer.
    ResultsWithoutUse {
        /// The message, counted from 0.
        index: usize,
    },
    /// Message `index` does not answer exactly the tool uses of the message
    /// before it.
    Unpaired {
        /// The message, counted from 0.
        index: usize,
        /// Ids of tool uses it leaves unanswered.
        unanswered: Vec<String>,
        /// `toolUseId`s it answers that no tool use of the message before
        /// made.
        unknown: Vec<String>,
    },
}

impl std::fmt::Display for ToolMessagesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolMessagesError::MixedToolResults { index } => write!(
                f,
                "sampling message {index} mixes tool_result blocks with other content; put \
                 tool results in a message of their own"
            ),
            ToolMessagesError::ResultsWithoutUse { index } => write!(
                f,
                "sampling message {index} holds tool_result blocks, but message {} made no \
                 tool use",
                index.saturating_sub(1)
            ),
            ToolMessagesError::Unpaired {
                index,
                unanswered,
                unknown,
            } => write!(
                f,
                "sampling message {index} does not answer the tool uses of the message before \
                 it (unanswered: {unanswered:?}; answering no tool use: {unknown:?})"
            ),
        }
    }
}

impl std::error::Error for ToolMessagesError {}

/// Checks that the tool uses and tool results of a sampling conversation
/// pair up, as the spec asks (2025-11-25, "Tools in sampling"): a message
/// holding `tool_use` blocks is followed by a message made only of
/// `tool_result` blocks answering each of its ids, and no tool result
/// answers anything else. A conversation may end on a tool use (the
/// results have not been made yet). A server checks before it sends
/// `sampling/createMessage`, so a malformed conversation never reaches the
/// client's model.
///
/// # Errors
/// The first message that breaks the pairing, and how.
///
/// # Examples
/// ```
/// use mcp_types::{
///     JsonObject, Role, SamplingMessage, ToolResultContent, ToolUseContent, check_tool_messages,
/// };
///
/// let asked = SamplingMessage::new(
///     Role::Assistant,
///     ToolUseContent::new("call-1", "weather", JsonObject::new()),
/// );
/// let answered = SamplingMessage::new(Role::User, ToolResultContent::new("call-1", vec![]));
/// let stray = SamplingMessage::new(Role::User, ToolResultContent::new("call-2", vec![]));
/// assert!(check_tool_messages(&[asked.clone(), answered]).is_ok());
/// assert!(check_tool_messages(&[asked, stray]).is_err());
/// ```
pub fn check_tool_messages(messages: &[SamplingMessage]) -> Result<(), ToolMessagesError> {
    let mut uses: Vec<&str> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let blocks = message.content.blocks();
        let results: Vec<&str> = blocks
            .iter()
            .filter_map(|block| match block {
                SamplingMessageContentBlock::ToolResult(result) => {
                    Some(result.tool_use_id.as_str())
                }
                _ => None,
            })
            .collect();
        if !results.is_empty() && results.len() != blocks.len() {
            return Err(ToolMessagesError::MixedToolResults { index });
        }
        if !results.is_empty() && uses.is_empty() {
            return Err(ToolMessagesError::ResultsWithoutUse { index });
        }
        if !uses.is_empty() {
            let unanswered: Vec<String> = uses
                .iter()
                .filter(|id| !results.contains(id))
                .map(|id| (*id).to_owned())
                .collect();
            let unknown: Vec<String> = results
                .iter()
                .filter(|id| !uses.contains(id))
                .map(|id| (*id).to_owned())
                .collect();
            if !unanswered.is_empty() || !unknown.is_empty() {
                return Err(ToolMessagesError::Unpaired {
                    index,
                    unanswered,
                    unknown,
                });
            }
        }
        uses = blocks
            .iter()
            .filter_map(|block| match block {
                SamplingMessageContentBlock::ToolUse(tool_use) => Some(tool_use.id.as_str()),
                _ => None,
            })
            .collect();
    }
    Ok(())
}

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

    fn uses(ids: &[&str]) -> SamplingMessage {
        let blocks = ids
            .iter()
            .map(|id| ToolUseContent::new(*id, "t", JsonObject::new()).into())
            .collect::<Vec<SamplingMessageContentBlock>>();
        SamplingMessage::new(Role::Assistant, blocks)
    }

    fn results(ids: &[&str]) -> SamplingMessage {
        let blocks = ids
            .iter()
            .map(|id| ToolResultContent::new(*id, vec![]).into())
            .collect::<Vec<SamplingMessageContentBlock>>();
        SamplingMessage::new(Role::User, blocks)
    }

    #[test]
    fn tool_uses_and_results_must_pair_up_message_by_message() {
        let ask = SamplingMessage::user_text("weather?");
        assert_eq!(check_tool_messages(&[]), Ok(()));
        assert_eq!(check_tool_messages(&[ask.clone(), uses(&["a"])]), Ok(()));
        assert_eq!(
            check_tool_messages(&[ask.clone(), uses(&["a", "b"]), results(&["b", "a"])]),
            Ok(())
        );
        assert_eq!(
            check_tool_messages(&[ask.clone(), uses(&["a", "b"]), results(&["a"])]),
            Err(ToolMessagesError::Unpaired {
                index: 2,
                unanswered: vec!["b".into()],
                unknown: vec![],
            })
        );
        assert_eq!(
            check_tool_messages(&[ask.clone(), uses(&["a"]), ask.clone()]),
            Err(ToolMessagesError::Unpaired {
                index: 2,
                unanswered: vec!["a".into()],
                unknown: vec![],
            })
        );
        assert_eq!(
            check_tool_messages(&[ask.clone(), results(&["a"])]),
            Err(ToolMessagesError::ResultsWithoutUse { index: 1 })
        );
        let mut mixed = results(&["a"]);
        mixed.content = SamplingContent::Multiple(vec![
            ToolResultContent::new("a", vec![]).into(),
            SamplingMessageContentBlock::text("and more"),
        ]);
        assert_eq!(
            check_tool_messages(&[ask, uses(&["a"]), mixed]),
            Err(ToolMessagesError::MixedToolResults { index: 2 })
        );
    }

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
