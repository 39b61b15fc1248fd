//! What goes into and out of a tool: argument schemas and parsing, and the
//! conversion of a handler's return value into a `CallToolResult`.

use std::fmt;

use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestFormParams,
    ElicitRequestParams, ElicitRequestUrlParams, ElicitRequestedSchema, ErrorObject, InputRequest,
    InputRequests, InputRequiredResult, JsonObject, ResultOrInputRequired,
    UrlElicitationRequiredData,
};
use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::handler_error::{Classified, classify};

/// The JSON Schema of a tool's arguments, from their Rust type.
///
/// JSON Schema 2020-12 with every subschema inlined (many clients cannot
/// follow `$ref`) and no `$schema` member. MCP requires an object root
/// (`"type": "object"`); any other root is refused, so the mistake surfaces
/// when the tool is registered rather than when a client calls it.
///
/// # Errors
/// [`SchemaError`] when `T` does not describe a JSON object.
///
/// # Examples
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
/// let schema = mcp_server::input_schema_for::<Add>().unwrap();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["a", "b"]));
/// ```
pub fn input_schema_for<T: JsonSchema>() -> Result<JsonObject, SchemaError> {
    let schema = root_schema::<T>(Contract::Deserialize);
    require_object_root::<T>(schema)
}

/// The JSON Schema of a tool's structured output, from its Rust type.
///
/// # Errors
/// [`SchemaError`] when `T` does not describe a JSON object: up to 2025-11-25
/// an `outputSchema` must have an object root.
pub fn output_schema_for<T: JsonSchema>() -> Result<JsonObject, SchemaError> {
    let schema = root_schema::<T>(Contract::Serialize);
    require_object_root::<T>(schema)
}

/// The input schema of a tool that takes no arguments:
/// `{"type": "object", "additionalProperties": false}`, as the spec advises
/// (every revision requires an object schema, even for no arguments).
pub fn empty_input_schema() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), Value::from("object"));
    schema.insert("additionalProperties".into(), Value::Bool(false));
    schema
}

fn root_schema<T: JsonSchema>(contract: Contract) -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
            s.contract = contract;
        })
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

fn require_object_root<T: JsonSchema>(schema: Value) -> Result<JsonObject, SchemaError> {
    match schema {
        Value::Object(mut map) if map.get("type") == Some(&Value::from("object")) => {
            // The title schemars adds is the Rust type's name: noise for a model.
            map.remove("title");
            Ok(map)
        }
        _ => Err(SchemaError {
            type_name: T::schema_name().into_owned(),
        }),
    }
}

/// A type whose JSON Schema is not an object, used where MCP requires one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The Rust type's schema name.
    pub type_name: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` does not describe a JSON object; tool and prompt arguments and structured \
             output (`Json<T>`, an object up to 2025-11-25) must be objects, so use a struct \
             with named fields (a list goes in a field: `struct Items {{ items: Vec<Item> }}`)",
            self.type_name
        )
    }
}

impl std::error::Error for SchemaError {}

/// Why a tool call failed.
///
/// Most failures are for the model to read ([`ToolError::new`], and any
/// `std::error::Error` through `?`): the call answers with a
/// `CallToolResult` whose `isError` is true and whose text is the message.
/// A few are protocol errors the client itself must act on
/// ([`ToolError::protocol`], [`ToolError::url_elicitation_required`]): the
/// call answers with that JSON-RPC error instead.
///
/// Like `anyhow::Error`, this type does not implement `std::error::Error`,
/// so that every error type converts into it with `?`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    kind: ToolErrorKind,
}

#[derive(Debug, Clone, PartialEq)]
enum ToolErrorKind {
    Model(String),
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool error with a message written for the model.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            kind: ToolErrorKind::Model(message.into()),
        }
    }

    /// Answer the call with this JSON-RPC error rather than an `isError` result.
    pub fn protocol(error: ErrorObject) -> Self {
        Self {
            kind: ToolErrorKind::Protocol(error),
        }
    }

    /// The `-32042` error: the client must complete these URL elicitations
    /// (for example an OAuth sign-in) before the call can succeed.
    pub fn url_elicitation_required(
        message: impl Into<String>,
        elicitations: Vec<ElicitRequestUrlParams>,
    ) -> Self {
        Self::protocol(UrlElicitationRequiredData::new(elicitations).into_error(message))
    }

    /// The message.
    pub fn message(&self) -> &str {
        match &self.kind {
            ToolErrorKind::Model(message) => message,
            ToolErrorKind::Protocol(error) => &error.message,
        }
    }

    /// The JSON-RPC error, when this is a protocol error.
    pub fn as_protocol(&self) -> Option<&ErrorObject> {
        match &self.kind {
            ToolErrorKind::Protocol(error) => Some(error),
            ToolErrorKind::Model(_) => None,
        }
    }

    /// The call's answer: an `isError` result, or the protocol error.
    pub fn into_answer(self) -> Result<CallToolResult, ErrorObject> {
        match self.kind {
            ToolErrorKind::Model(message) => Ok(CallToolResult::error(message)),
            ToolErrorKind::Protocol(error) => Err(error),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(error: E) -> Self {
        match classify(error) {
            Classified::Protocol(error) => ToolError::protocol(error),
            Classified::Message(message) => ToolError::new(message),
        }
    }
}

/// Reads a tool's `arguments` into its parameter type.
///
/// Absent arguments read as an empty object, so a type whose fields are all
/// optional accepts a call without arguments.
///
/// # Errors
/// A [`ToolError`] naming the JSON path of the first offending argument, as
/// SEP-1303 wants argument errors reported to the model.
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: Option<&JsonObject>,
) -> Result<T, ToolError> {
    let empty = JsonObject::new();
    let object = arguments.unwrap_or(&empty);
    // Deserializing from a borrowed map reads it in place; strings are copied.
    read_arguments(object.into_deserializer())
}

fn read_arguments<'de, T: Deserialize<'de>, D: Deserializer<'de, Error = serde_json::Error>>(
    arguments: D,
) -> Result<T, ToolError> {
    let result: Result<T, _> = serde_path_to_error::deserialize(arguments);
    result.map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            ToolError::new(format!("invalid arguments: {}", e.inner()))
        } else {
            ToolError::new(format!("invalid argument `{path}`: {}", e.inner()))
        }
    })
}

/// Structured output: serialized into `structuredContent`, and as JSON text
/// into `content` for clients that do not read structured results.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// Converts what a tool handler returns into the call's answer.
///
/// Implemented for text (`String`, `&str`), content blocks, a ready
/// `CallToolResult`, [`Json<T>`] for structured output, `()`, an
/// [`InputRequired`] or [`Answer`], and `Result<T, E>` of those with any
/// error `E` that converts into a [`ToolError`] (so `?` works on any error).
pub trait IntoToolResult {
    /// The answer: a result (possibly with `isError`), or a protocol error.
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject>;

    /// The answer where the protocol allows asking for input first
    /// (2026-07-28): a final result, an [`InputRequired`], or a protocol error.
    fn into_tool_answer(self) -> Result<ResultOrInputRequired<CallToolResult>, ErrorObject>
    where
        Self: Sized,
    {
        self.into_tool_result().map(ResultOrInputRequired::Complete)
    }

    /// The `outputSchema` this return type implies, if it is structured.
    ///
    /// # Errors
    /// [`SchemaError`] when the structured output cannot be an object,
    /// which `build()` refuses.
    fn output_schema() -> Result<Option<JsonObject>, SchemaError> {
        Ok(None)
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(vec![]))
    }
}

/// `structuredContent` must be a JSON object up to 2025-11-25 (any value
/// only from 2026-07-28), and a server serves every era the same tools: a
/// type whose schema says it is something else (a list, a number, a
/// string) is refused at `build()`, and a value that turns out not to be
/// an object (a `serde_json::Value` holding a list, say) is answered as an
/// `isError` result saying so. To return a list, wrap it in a struct with
/// a named field.
impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        match serde_json::to_value(&self.0) {
            Ok(value @ Value::Object(_)) => {
                let text = value.to_string();
                Ok(CallToolResult::text(text).with_structured_content(value))
            }
            Ok(_) => Ok(CallToolResult::error(format!(
                "the tool's structured result is not a JSON object, which structuredContent \
                 must be; the server should wrap `{}` in a struct",
                T::schema_name()
            ))),
            Err(e) => Ok(CallToolResult::error(format!(
                "the tool's result could not be serialized: {e}"
            ))),
        }
    }

    fn output_schema() -> Result<Option<JsonObject>, SchemaError> {
        let schema = root_schema::<T>(Contract::Serialize);
        match schema.get("type") {
            // An object, or a schema that names no type (any value, a
            // `oneOf`): checked per value, declared only when an object.
            Some(Value::String(t)) if t == "object" => require_object_root::<T>(schema).map(Some),
            None => Ok(None),
            Some(_) => Err(SchemaError {
                type_name: T::schema_name().into_owned(),
            }),
        }
    }
}

impl<T: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => error.into().into_answer(),
        }
    }

    fn into_tool_answer(self) -> Result<ResultOrInputRequired<CallToolResult>, ErrorObject> {
        match self {
            Ok(value) => value.into_tool_answer(),
            Err(error) => error
                .into()
                .into_answer()
                .map(ResultOrInputRequired::Complete),
        }
    }

    fn output_schema() -> Result<Option<JsonObject>, SchemaError> {
        T::output_schema()
    }
}

/// Input the server needs before a request can finish, asked of the client
/// inside the result (Multi Round-Trip Requests, 2026-07-28).
///
/// Return it from a tool (or in a [`Answer`]); the client answers each
/// request by its key and calls again with `inputResponses`, which the
/// handler reads with [`Context::input_response`](crate::Context::input_response).
/// State given with [`state`](Self::state) comes back through
/// [`Context::request_state`](crate::Context::request_state), sealed with
/// the server's key on the way (encrypted, expiring, bound to this call's
/// arguments and principal) so that a client can neither read nor alter it,
/// nor replay it on another call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputRequired {
    pub(crate) requests: InputRequests,
    pub(crate) state: Option<String>,
}

impl InputRequired {
    /// Nothing asked yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the client for `request` under `key`.
    #[must_use]
    pub fn ask(mut self, key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        self.requests.insert(key.into(), request.into());
        self
    }

    /// Asks the user to fill in a form.
    #[must_use]
    pub fn elicit_form(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: ElicitRequestedSchema,
    ) -> Self {
        let params = ElicitRequestParams::Form(ElicitRequestFormParams::new(
            message.into(),
            requested_schema,
        ));
        self.ask(key, InputRequest::Elicit(params))
    }

    /// Asks the client's model.
    #[must_use]
    pub fn create_message(
        self,
        key: impl Into<String>,
        params: CreateMessageRequestParams,
    ) -> Self {
        self.ask(key, InputRequest::CreateMessage(params))
    }

    /// Asks for the client's roots.
    #[must_use]
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.ask(key, InputRequest::list_roots())
    }

    /// State to get back on the retry (sealed: the client cannot change it).
    #[must_use]
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The wire result; its state is sealed later by the runner, which
    /// knows the key and the request.
    pub(crate) fn into_result(self) -> InputRequiredResult {
        let mut result = InputRequiredResult::new();
        if !self.requests.is_empty() {
            result.input_requests = Some(self.requests);
        }
        result.request_state = self.state;
        result
    }
}

impl IntoToolResult for InputRequired {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Err(ErrorObject::internal_error(
            "the tool asked for input, which this protocol revision cannot carry in a result",
        ))
    }

    fn into_tool_answer(self) -> Result<ResultOrInputRequired<CallToolResult>, ErrorObject> {
        Ok(ResultOrInputRequired::InputRequired(self.into_result()))
    }
}

/// A tool's or prompt's answer that is either final or a request for input.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    /// The final result.
    Complete(T),
    /// Input needed first.
    InputRequired(InputRequired),
}

impl<T: IntoToolResult> IntoToolResult for Answer<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Answer::Complete(value) => value.into_tool_result(),
            Answer::InputRequired(input) => input.into_tool_result(),
        }
    }

    fn into_tool_answer(self) -> Result<ResultOrInputRequired<CallToolResult>, ErrorObject> {
        match self {
            Answer::Complete(value) => value.into_tool_answer(),
            Answer::InputRequired(input) => input.into_tool_answer(),
        }
    }

    fn output_schema() -> Result<Option<JsonObject>, SchemaError> {
        T::output_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::ErrorCode;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
    struct Weather {
        /// City to look up.
        city: String,
        days: Option<u8>,
        unit: Unit,
    }

    #[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Unit {
        Celsius,
        Fahrenheit,
    }

    #[test]
    fn the_input_schema_is_an_inlined_object_schema_without_meta_schema() {
        let schema = input_schema_for::<Weather>().expect("object");
        assert_eq!(schema["type"], "object");
        assert!(!schema.contains_key("$schema"));
        assert!(
            !schema.contains_key("$defs"),
            "subschemas are inlined: {schema:?}"
        );
        assert_eq!(
            schema["properties"]["city"]["description"],
            "City to look up."
        );
        assert_eq!(
            schema["properties"]["unit"]["enum"],
            json!(["celsius", "fahrenheit"])
        );
        assert_eq!(schema["required"], json!(["city", "unit"]));
    }

    #[test]
    fn a_non_object_type_is_refused_with_advice() {
        let err = input_schema_for::<Vec<u8>>().expect_err("an array is no object");
        assert!(
            err.to_string().contains("struct with named fields"),
            "{err}"
        );
    }

    #[test]
    fn bad_arguments_name_the_offending_path() {
        let args = json!({"city": "Oslo", "unit": "kelvin"});
        let err = parse_arguments::<Weather>(args.as_object()).expect_err("kelvin is no unit");
        assert!(err.message().contains("`unit`"), "{err}");
        let args = json!({"city": 7, "unit": "celsius"});
        let err = parse_arguments::<Weather>(args.as_object()).expect_err("city is a string");
        assert!(err.message().contains("`city`"), "{err}");
        let err = parse_arguments::<Weather>(None).expect_err("city is required");
        assert!(err.message().contains("city"), "{err}");
    }

    #[test]
    fn good_arguments_parse() {
        let args = json!({"city": "Oslo", "unit": "celsius", "days": 3});
        let parsed: Weather = parse_arguments(args.as_object()).expect("valid");
        assert_eq!(parsed.days, Some(3));
    }

    #[test]
    fn structured_output_also_travels_as_text() {
        let result = Json(json!({"temperature": 21}))
            .into_tool_result()
            .expect("a result");
        assert_eq!(result.structured_content, Some(json!({"temperature": 21})));
        assert_eq!(
            result.content,
            vec![ContentBlock::text(r#"{"temperature":21}"#)]
        );
        assert_eq!(result.is_error, None);
    }

    #[test]
    fn an_error_result_is_readable_by_the_model() {
        let result: Result<String, ToolError> = Err(ToolError::new("the city is unknown"));
        let result = result
            .into_tool_result()
            .expect("a result, not a protocol error");
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.content,
            vec![ContentBlock::text("the city is unknown")]
        );
    }

    #[test]
    fn a_url_elicitation_requirement_is_a_protocol_error() {
        let result: Result<String, ToolError> = Err(ToolError::url_elicitation_required(
            "sign in first",
            vec![ElicitRequestUrlParams::new(
                "Sign in",
                "https://example.com/auth",
            )],
        ));
        let error = result.into_tool_result().expect_err("a protocol error");
        assert_eq!(error.code, ErrorCode::URL_ELICITATION_REQUIRED);
    }

    #[test]
    fn any_std_error_converts_into_a_model_readable_error() {
        fn parse(text: &str) -> Result<i64, ToolError> {
            Ok(text.parse::<i64>()?)
        }
        let error = parse("x").expect_err("not a number");
        assert!(error.as_protocol().is_none());
        assert_eq!(error.message(), "invalid digit found in string");
    }

    #[test]
    fn structured_return_types_declare_an_output_schema() {
        #[derive(Serialize, JsonSchema)]
        struct Sum {
            total: i64,
        }
        let schema = <Result<Json<Sum>, ToolError>>::output_schema()
            .expect("an object")
            .expect("a schema");
        assert_eq!(schema["type"], "object");
        assert_eq!(String::output_schema(), Ok(None));
    }

    #[test]
    fn a_structured_list_is_refused_and_a_list_value_is_an_error_result() {
        #[derive(Serialize, JsonSchema)]
        struct Item {
            name: String,
        }
        let refused = <Json<Vec<Item>>>::output_schema().expect_err("a list is no object");
        assert!(refused.to_string().contains("struct Items"), "{refused}");
        assert!(<Json<u32>>::output_schema().is_err());
        // Any value: declared nothing, checked per value.
        assert_eq!(<Json<Value>>::output_schema(), Ok(None));
        let result = Json(json!([1, 2])).into_tool_result().expect("a result");
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
    }
}
