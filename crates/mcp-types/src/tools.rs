//! Tools: definitions, `tools/list` and `tools/call`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::{Cursor, Icon, JsonObject};
use crate::content::ContentBlock;
use crate::meta::{Meta, RequestMeta, ResultMeta};
use crate::mrtr::InputResponses;
use crate::result::{CacheScope, ResultType};
use crate::task::TaskMetadata;

/// A tool the server offers, as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Name the client calls the tool by; the display fallback.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, written for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the `arguments` object (`"type": "object"`), kept
    /// whole so no keyword is lost.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` in the tool's results (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Task support (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons a user interface may show (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// The longest tool name the spec recommends (2025-11-25+).
    pub const MAX_NAME_LEN: usize = 128;

    /// Whether `name` follows the spec's tool-name rule (2025-11-25+: 1 to
    /// 128 characters of `A-Z a-z 0-9 _ - .`). A SHOULD, not a MUST: a peer
    /// may still send other names, and they are read; a program choosing
    /// names (a gateway prefixing them) keeps to it.
    pub fn is_valid_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= Self::MAX_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    }

    /// A tool named `name` taking arguments described by `input_schema`.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            icons: None,
            meta: None,
        }
    }

    /// A tool that takes no arguments (`{"type": "object"}`).
    pub fn without_arguments(name: impl Into<String>) -> Self {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), Value::from("object"));
        Self::new(name, schema)
    }
}

setters!(Tool {
    with_title(title: String),
    with_description(description: String),
    with_output_schema(output_schema: JsonObject),
    with_annotations(annotations: ToolAnnotations),
    with_execution(execution: ToolExecution),
    with_icons(icons: Vec<Icon>),
    with_meta(meta: Meta),
});

/// Hints about a tool's behaviour (2025-03-26+). Untrusted unless the server is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite (default true; meaningful when not
    /// read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ToolAnnotations {
    with_title(title: String),
    with_read_only_hint(read_only_hint: bool),
    with_destructive_hint(destructive_hint: bool),
    with_idempotent_hint(idempotent_hint: bool),
    with_open_world_hint(open_world_hint: bool),
});

/// Whether a tool may run as a task (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never as a task (the default).
    Forbidden,
    /// With or without a task.
    Optional,
    /// Only as a task.
    Required,
}

/// Execution properties of a tool (2025-11-25 only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether the tool may run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

impl ToolExecution {
    /// No execution properties.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ToolExecution { with_task_support(task_support: TaskSupport) });

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// The tool to call.
    pub name: String,
    /// Arguments, following the tool's input schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Asks for the call to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
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

impl CallToolRequestParams {
    /// A call of `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: None,
            task: None,
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }
}

setters!(CallToolRequestParams {
    with_arguments(arguments: JsonObject),
    with_task(task: TaskMetadata),
    with_input_responses(input_responses: InputResponses),
    with_request_state(request_state: String),
    with_meta(meta: RequestMeta),
});

/// The result of `tools/call`. A failed tool sets `is_error` and explains in
/// `content`, so the model can read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result following the tool's output schema: an object up to
    /// 2025-11-25, any JSON in 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed (absent means false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CallToolResult {
    /// A successful result made of `content`.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: None,
            result_type: None,
            meta: None,
        }
    }
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }
    /// A failed call explained by one text block (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        Self::text(text).with_is_error(true)
    }

    /// The structured result read as `T` (the type the tool's output schema
    /// describes).
    ///
    /// # Errors
    /// When the result has no structured content, or it does not fit `T`.
    ///
    /// # Examples
    /// ```
    /// use mcp_types::CallToolResult;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Weather { celsius: f64 }
    ///
    /// let result = CallToolResult::text("21.5 °C")
    ///     .with_structured_content(serde_json::json!({"celsius": 21.5}));
    /// assert_eq!(result.structured_as::<Weather>()?.celsius, 21.5);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn structured_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.structured_content {
            Some(structured) => T::deserialize(structured),
            None => Err(serde::de::Error::custom(
                "the tool result has no structured content (the tool declares no output schema, \
                 or failed: see `is_error` and `content`)",
            )),
        }
    }
}

setters!(CallToolResult {
    with_structured_content(structured_content: Value),
    with_is_error(is_error: bool),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// The tools on this page.
    pub tools: Vec<Tool>,
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

impl ListToolsResult {
    /// A last page holding `tools`.
    pub fn new(tools: Vec<Tool>) -> Self {
        Self {
            tools,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ListToolsResult {
    with_next_cursor(next_cursor: Cursor),
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
    fn tool_names_follow_the_spec_rule() {
        let longest = "a".repeat(Tool::MAX_NAME_LEN);
        for good in ["get_weather", "DATA.export-v2", "x", longest.as_str()] {
            assert!(Tool::is_valid_name(good), "{good}");
        }
        let too_long = "a".repeat(Tool::MAX_NAME_LEN + 1);
        for bad in [
            "",
            "with space",
            "a/b",
            "a,b",
            "caf\u{e9}",
            "a\nb",
            too_long.as_str(),
        ] {
            assert!(!Tool::is_valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn input_schema_keeps_every_keyword() {
        let input = json!({
            "name": "t",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                "x-custom": true
            }
        });
        let tool: Tool = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&tool).unwrap(), input);
    }

    #[test]
    fn structured_content_may_be_any_json() {
        let input =
            json!({"content": [], "structuredContent": [1, "two"], "resultType": "complete"});
        let result: CallToolResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&result).unwrap(), input);
    }

    #[test]
    fn error_results_carry_is_error() {
        assert_eq!(
            serde_json::to_value(CallToolResult::error("boom")).unwrap(),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
        );
    }
}
