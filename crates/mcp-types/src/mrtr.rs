//! Multi-round-trip requests (2026-07-28): instead of sending requests of its
//! own, a server answers `tools/call`, `prompts/get` or `resources/read` with
//! an [`InputRequiredResult`] listing [`InputRequests`]; the client fulfils
//! them and retries with [`InputResponses`] and the echoed `requestState`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dispatch;
use crate::elicitation::{ElicitRequestParams, ElicitResult};
use crate::meta::{RequestMeta, ResultMeta};
use crate::params::RequestParams;
use crate::result::ResultType;
use crate::roots::ListRootsResult;
use crate::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A request the server needs the client to fulfil, shaped `{method, params}`
/// without `jsonrpc` or `id`.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(tag = "method", content = "params")]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`: ask the user.
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`: ask the model.
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list`: ask for the roots; `params` is optional.
    #[serde(rename = "roots/list")]
    ListRoots(Option<RequestParams>),
}

const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => "elicitation/create",
            InputRequest::CreateMessage(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
        }
    }
    /// `roots/list` with no params.
    pub fn list_roots() -> Self {
        InputRequest::ListRoots(None)
    }

    /// The request's `_meta` (its progress token, the task it belongs to),
    /// if it carries one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        match self {
            InputRequest::Elicit(ElicitRequestParams::Form(params)) => params.meta.as_ref(),
            InputRequest::Elicit(ElicitRequestParams::Url(params)) => params.meta.as_ref(),
            InputRequest::CreateMessage(params) => params.meta.as_ref(),
            InputRequest::ListRoots(params) => params.as_ref().and_then(|p| p.meta.as_ref()),
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let has_params = !matches!(self, InputRequest::ListRoots(None));
        let mut map = serializer.serialize_map(Some(1 + usize::from(has_params)))?;
        map.serialize_entry("method", self.method())?;
        match self {
            InputRequest::Elicit(params) => map.serialize_entry("params", params)?,
            InputRequest::CreateMessage(params) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(Some(params)) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(None) => {}
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const WHAT: &str = "input request";
        let mut map = dispatch::read_object(deserializer, WHAT)?;
        let method = dispatch::tag_of::<D::Error>(&map, "method", WHAT, INPUT_METHODS)?;
        let params = map.remove("params");
        let required = |params: Option<Value>| {
            params.ok_or_else(|| {
                de::Error::custom(format_args!("`{method}` input request has no `params`"))
            })
        };
        match method.as_str() {
            "elicitation/create" => dispatch::from_value(required(params)?).map(Self::Elicit),
            "sampling/createMessage" => {
                dispatch::from_value(required(params)?).map(Self::CreateMessage)
            }
            "roots/list" => match params {
                None => Ok(Self::ListRoots(None)),
                Some(params) => dispatch::from_value(params).map(|p| Self::ListRoots(Some(p))),
            },
            other => Err(dispatch::unknown_tag(other, "method", WHAT, INPUT_METHODS)),
        }
    }
}

impl From<ElicitRequestParams> for InputRequest {
    fn from(params: ElicitRequestParams) -> Self {
        InputRequest::Elicit(params)
    }
}

impl From<CreateMessageRequestParams> for InputRequest {
    fn from(params: CreateMessageRequestParams) -> Self {
        InputRequest::CreateMessage(params)
    }
}

/// Input requests by server-chosen key; the client answers each under the
/// same key.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one [`InputRequest`], told apart by its members:
/// `roots` (roots), `action` (elicitation), or `model`/`role` (sampling).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = dispatch::read_object(deserializer, "input response")?;
        if map.contains_key("roots") {
            dispatch::from_object(map).map(Self::ListRoots)
        } else if map.contains_key("action") {
            dispatch::from_object(map).map(Self::Elicit)
        } else if map.contains_key("model") || map.contains_key("role") {
            dispatch::from_object(map).map(Self::CreateMessage)
        } else {
            Err(de::Error::custom(
                "input response has none of `roots`, `action`, `model`; expected a roots, elicitation or sampling result",
            ))
        }
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(result: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(result)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(result: ListRootsResult) -> Self {
        InputResponse::ListRoots(result)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(result: ElicitResult) -> Self {
        InputResponse::Elicit(result)
    }
}

/// Answers by the keys of the [`InputRequests`] they fulfil.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// The server needs input before it can finish (`resultType:
/// "input_required"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always [`ResultType::InputRequired`] when built here.
    pub result_type: ResultType,
    /// What the client must fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo verbatim on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl InputRequiredResult {
    /// An `input_required` result with no requests or state yet.
    pub fn new() -> Self {
        Self {
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
            meta: None,
        }
    }
    /// Adds input request `key`.
    #[must_use]
    pub fn with_input_request(
        mut self,
        key: impl Into<String>,
        request: impl Into<InputRequest>,
    ) -> Self {
        self.input_requests
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), request.into());
        self
    }
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self::new()
    }
}

setters!(InputRequiredResult {
    with_input_requests(input_requests: InputRequests),
    with_request_state(request_state: String),
    with_meta(meta: ResultMeta),
});

/// Params fields of a retried request (schema `InputResponseRequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputResponseRequestParams {
    /// Answers to the previous attempt's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous attempt's `requestState`, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl InputResponseRequestParams {
    /// No responses, no state.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(InputResponseRequestParams {
    with_input_responses(input_responses: InputResponses),
    with_request_state(request_state: String),
    with_meta(meta: RequestMeta),
});

/// The answer to an MRTR-capable request: the final result, or a request for
/// input. Read as [`InputRequired`](Self::InputRequired) exactly when
/// `resultType` is `"input_required"`.
///
/// # Examples
/// ```
/// use mcp_types::{CallToolResult, ResultOrInputRequired};
/// let answer: ResultOrInputRequired<CallToolResult> =
///     serde_json::from_str(r#"{"resultType":"input_required","requestState":"s"}"#)?;
/// assert!(matches!(answer, ResultOrInputRequired::InputRequired(_)));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
// `R` is a whole result too; boxing either side would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum ResultOrInputRequired<R> {
    /// The final result.
    Complete(R),
    /// Input is needed first.
    InputRequired(InputRequiredResult),
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for ResultOrInputRequired<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let input_required = value
            .get("resultType")
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == "input_required");
        if input_required {
            dispatch::from_value(value).map(Self::InputRequired)
        } else {
            dispatch::from_value(value).map(Self::Complete)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::CallToolResult;
    use serde_json::json;

    #[test]
    fn input_requests_dispatch_on_method_both_ways() {
        let cases = [
            json!({"method": "roots/list"}),
            json!({"method": "roots/list", "params": {}}),
            json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}),
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}}),
        ];
        for case in cases {
            let request: InputRequest = serde_json::from_value(case.clone()).unwrap();
            assert_eq!(serde_json::to_value(&request).unwrap(), case);
        }
        let err =
            serde_json::from_value::<InputRequest>(json!({"method": "tools/call"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown input request method `tools/call`; expected one of elicitation/create, sampling/createMessage, roots/list"
        );
        let err =
            serde_json::from_value::<InputRequest>(json!({"method": "sampling/createMessage"}))
                .unwrap_err();
        assert!(err.to_string().contains("has no `params`"), "{err}");
    }

    #[test]
    fn input_responses_are_told_apart_by_their_members() {
        let roots = json!({"roots": [{"uri": "file:///a"}]});
        let elicit = json!({"action": "decline"});
        let sample =
            json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"});
        assert!(matches!(
            serde_json::from_value(roots.clone()).unwrap(),
            InputResponse::ListRoots(_)
        ));
        assert!(matches!(
            serde_json::from_value(elicit.clone()).unwrap(),
            InputResponse::Elicit(_)
        ));
        assert!(matches!(
            serde_json::from_value(sample.clone()).unwrap(),
            InputResponse::CreateMessage(_)
        ));
        for case in [roots, elicit, sample] {
            let response: InputResponse = serde_json::from_value(case.clone()).unwrap();
            assert_eq!(serde_json::to_value(&response).unwrap(), case);
        }
        assert!(serde_json::from_value::<InputResponse>(json!({"x": 1})).is_err());
    }

    #[test]
    fn result_or_input_required_reads_result_type() {
        let complete = json!({"content": [], "resultType": "complete"});
        let answer: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(complete.clone()).unwrap();
        assert!(matches!(answer, ResultOrInputRequired::Complete(_)));
        assert_eq!(serde_json::to_value(&answer).unwrap(), complete);

        let legacy = json!({"content": []});
        let answer: ResultOrInputRequired<CallToolResult> = serde_json::from_value(legacy).unwrap();
        assert!(matches!(answer, ResultOrInputRequired::Complete(_)));

        let needed = InputRequiredResult::new()
            .with_input_request("roots", InputRequest::list_roots())
            .with_request_state("s");
        let value = serde_json::to_value(&needed).unwrap();
        assert_eq!(
            value,
            json!({"resultType": "input_required", "inputRequests": {"roots": {"method": "roots/list"}}, "requestState": "s"})
        );
        let answer: ResultOrInputRequired<CallToolResult> = serde_json::from_value(value).unwrap();
        assert_eq!(answer, ResultOrInputRequired::InputRequired(needed));
    }
}
