//! The JSON-RPC 2.0 envelope MCP messages travel in.
//!
//! These are the untyped, method-agnostic frames the dispatcher works with:
//! `params` and `result` stay unparsed ([`RawJson`]) until the typed layer
//! knows which type to read them into, so every message is parsed once.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error_code::ErrorCode;
use crate::peek::Shape;

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// The `"jsonrpc": "2.0"` member every JSON-RPC message carries.
///
/// Zero-sized: it serializes as `"2.0"` and refuses any other value when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        if text == JSONRPC_VERSION {
            Ok(JsonRpcVersion)
        } else {
            Err(de::Error::custom(format_args!(
                "unsupported jsonrpc version `{text}`; MCP requires \"2.0\""
            )))
        }
    }
}

impl JsonSchema for JsonRpcVersion {
    fn schema_name() -> Cow<'static, str> {
        "JsonRpcVersion".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "const": JSONRPC_VERSION })
    }
    fn inline_schema() -> bool {
        true
    }
}

/// Identifies a request: an integer or a string, never `null`, never a bool.
///
/// Two ids are the same id only if they have the same type and value; a peer
/// that answers `1` with `"1"` is handled by the dispatcher, not here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The integer this id stands for: the number itself, or a string made
    /// only of a canonical decimal integer (`"7"`, not `"07"` or `"+7"`).
    ///
    /// Some peers echo an integer id back as a string; this lets a caller
    /// match such a response to its request.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            RequestId::Number(n) => Some(*n),
            RequestId::String(s) => {
                let n: i64 = s.parse().ok()?;
                (n.to_string() == *s).then_some(n)
            }
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<i32> for RequestId {
    fn from(n: i32) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<u32> for RequestId {
    fn from(n: u32) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

struct RequestIdVisitor;

impl Visitor<'_> for RequestIdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request id (an integer or a string)")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v).map(RequestId::Number).map_err(|_| {
            E::custom(format_args!(
                "request id {v} does not fit in a 64-bit signed integer"
            ))
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RequestId, E> {
        Err(E::custom(format_args!(
            "request id {v} is not an integer; ids are integers or strings"
        )))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
        Ok(RequestId::String(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RequestId, E> {
        Err(E::custom(format_args!(
            "request id `{v}` is a bool; ids are integers or strings"
        )))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RequestId, E> {
        Err(E::custom("request id is null; ids are integers or strings"))
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RequestIdVisitor)
    }
}

impl JsonSchema for RequestId {
    fn schema_name() -> Cow<'static, str> {
        "RequestId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A uniquely identifying ID for a request in JSON-RPC.",
            "type": ["string", "integer"]
        })
    }
}

/// A JSON value kept as its original text, parsed only when its type is known.
///
/// Requests keep `params` and responses keep `result` this way, so the
/// dispatcher never builds a `serde_json::Value` it would throw away.
///
/// The text holds no line break: JSON allows one only as whitespace between
/// tokens (inside a string it is escaped), and each is kept as a space, so
/// a message encodes on one line whatever it carries (a stdio frame ends at
/// `\n`, an SSE data line at `\r` or `\n`).
#[derive(Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct RawJson(#[schemars(with = "Value")] Box<RawValue>);

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawJson::from)
    }
}

/// `raw` with each line break turned into a space: the same JSON, on one line.
fn one_line(raw: Box<RawValue>) -> Box<RawValue> {
    // One vectorized pass for both bytes: this runs on the params of every
    // message read.
    if memchr::memchr2(b'\n', b'\r', raw.get().as_bytes()).is_none() {
        return raw;
    }
    let spaced = raw.get().replace(['\n', '\r'], " ");
    // Whitespace for whitespace: still valid JSON.
    RawValue::from_string(spaced).unwrap_or(raw)
}

impl RawJson {
    /// Serializes `value` into raw JSON text.
    ///
    /// # Errors
    /// When `value`'s `Serialize` implementation fails (for example a map
    /// with non-string keys).
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(RawJson)
    }

    /// Wraps already serialized JSON text after checking that it is valid
    /// JSON (its line breaks become spaces).
    ///
    /// # Errors
    /// When `text` is not a single valid JSON value.
    pub fn from_string(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(RawJson::from)
    }

    /// The empty object `{}`.
    pub fn empty_object() -> Self {
        // `{}` is valid JSON, so this cannot fail.
        RawJson(RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!()))
    }

    /// The JSON text as received or serialized (line breaks as spaces).
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Parses the text into `T`.
    ///
    /// # Errors
    /// When the text does not match `T`; the error names the field and line.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        #[cfg(feature = "parse-count")]
        crate::parse_count::note::<T>(self.0.get());
        serde_json::from_str(self.0.get())
    }

    /// Whether the value is a JSON object (its text starts with `{`).
    pub fn is_object(&self) -> bool {
        self.0.get().trim_start().starts_with('{')
    }

    /// Whether the value is JSON `null`.
    pub fn is_null(&self) -> bool {
        self.0.get().trim() == "null"
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson(one_line(raw))
    }
}

impl From<RawJson> for Box<RawValue> {
    fn from(raw: RawJson) -> Self {
        raw.0
    }
}

/// The error object of a JSON-RPC error response (the schema's `Error`).
///
/// This is data on the wire, not a Rust error: a peer's failure to serve a
/// request. `code` is one of the [`ErrorCode`] constants or an
/// application-defined code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ErrorObject {
    /// The error type that occurred.
    pub code: ErrorCode,
    /// A short description of the error, a concise single sentence.
    pub message: String,
    /// Additional information about the error, defined by the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Sets the `data` member.
    #[must_use]
    pub fn with_data(self, data: Value) -> Self {
        Self {
            data: Some(data),
            ..self
        }
    }

    /// A `-32700` parse error.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, message)
    }

    /// A `-32600` invalid request error.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// A `-32601` method not found error naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// A `-32602` invalid params error.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// A `-32603` internal error.
    pub fn internal_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// The error for a resource that does not exist, with `data.uri`, in
    /// `era` (its code is [`ErrorCode::missing_resource`]).
    pub fn resource_not_found(uri: &str, era: crate::Era) -> Self {
        let code = ErrorCode::missing_resource(era);
        Self::new(code, format!("resource `{uri}` not found"))
            .with_data(serde_json::json!({ "uri": uri }))
    }
}

/// The message is the peer's text: shown on one line with its controls
/// escaped ([`Escaped`](crate::untrusted::Escaped)), since an error's
/// `Display` ends up in logs and terminals.
impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = crate::untrusted::Escaped::one_line(&self.message);
        write!(f, "error {}: {message}", self.code)
    }
}

/// A request that expects a response (the schema's `JSONRPCRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the response will echo.
    pub id: RequestId,
    /// The method to invoke.
    pub method: String,
    /// The method's parameters, unparsed; always a JSON object when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<RawJson>,
}

impl JsonRpcRequest {
    /// A request with the given id, method and parameters.
    pub fn new(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

/// A notification, which gets no response (the schema's `JSONRPCNotification`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct JsonRpcNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification's method.
    pub method: String,
    /// The notification's parameters, unparsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<RawJson>,
}

impl JsonRpcNotification {
    /// A notification with the given method and parameters.
    pub fn new(method: impl Into<String>, params: Option<RawJson>) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params,
        }
    }
}

/// A successful response (the schema's `JSONRPCResultResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct JsonRpcResultResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result, unparsed.
    pub result: RawJson,
}

impl JsonRpcResultResponse {
    /// A response carrying `result` for request `id`.
    pub fn new(id: RequestId, result: RawJson) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// An error response (the schema's `JSONRPCErrorResponse`; `JSONRPCError` in
/// 2024-11-05 to 2025-06-18).
///
/// `id` is `None` when the request's id could not be read (a parse error).
/// It is then left out, as the MCP schemas define it (optional, and never
/// `null`, which JSON-RPC 2.0 itself would write); a received `"id": null`
/// reads as `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers, if it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

impl JsonRpcErrorResponse {
    /// An error response for request `id` (`None` when it is unknown).
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

/// Any JSON-RPC message that can be decoded off the wire or encoded to be sent
/// (the schema's `JSONRPCMessage`).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum JsonRpcMessage {
    /// A request expecting a response.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
    /// A successful response.
    Response(JsonRpcResultResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl From<JsonRpcRequest> for JsonRpcMessage {
    fn from(m: JsonRpcRequest) -> Self {
        JsonRpcMessage::Request(m)
    }
}
impl From<JsonRpcNotification> for JsonRpcMessage {
    fn from(m: JsonRpcNotification) -> Self {
        JsonRpcMessage::Notification(m)
    }
}
impl From<JsonRpcResultResponse> for JsonRpcMessage {
    fn from(m: JsonRpcResultResponse) -> Self {
        JsonRpcMessage::Response(m)
    }
}
impl From<JsonRpcErrorResponse> for JsonRpcMessage {
    fn from(m: JsonRpcErrorResponse) -> Self {
        JsonRpcMessage::Error(m)
    }
}

/// One JSON-RPC message, or a batch of them.
///
/// Only revision 2025-03-26 allows batches (a JSON array of messages); every
/// other revision answers a batch with `-32600`. Transports that serve
/// 2025-03-26 read with [`JsonRpcPayload::from_slice`]; the rest use
/// [`JsonRpcMessage::from_slice`], which reports a batch as
/// [`DecodeErrorKind::Batch`].
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum JsonRpcPayload {
    /// A single message.
    Single(JsonRpcMessage),
    /// A batch (2025-03-26 only).
    Batch(Vec<JsonRpcMessage>),
}

/// `bytes` as JSON text, which is UTF-8 (RFC 8259 §8.1): checked whole and
/// once, so the parse reads a `str`, whose strings and raw values it takes
/// as they are (parsing bytes checks each string again, and skips the check
/// in members it ignores). Refused with the id the bytes' envelope shows.
fn as_json_text(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| {
        DecodeError::new(DecodeErrorKind::NotUtf8, None, e.to_string()).with_envelope_of(bytes)
    })
}

/// The bytes start as a JSON array (a batch), after any whitespace.
fn is_array(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

impl JsonRpcPayload {
    /// Decodes a single message or a batch.
    ///
    /// # Errors
    /// As [`JsonRpcMessage::from_slice`]; an empty batch is an invalid request,
    /// and so is any member of a batch that is not a valid message.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(bytes).map_err(|error| {
            // A batch is refused whole: the id and shape of a member (the
            // first, as the envelope's scan reads it, or the one that
            // failed) do not describe it, and its answer carries no id.
            // `JsonRpcMessage::from_slice` keeps the first member's, so a
            // peer that wraps an answer of ours in an array still fails
            // the request it answers.
            if is_array(bytes) {
                DecodeError {
                    id: None,
                    shape: Shape::Unknown,
                    ..error
                }
            } else {
                error
            }
        })
    }

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let text = as_json_text(bytes)?;
        match JsonRpcMessage::from_str(text) {
            Ok(message) => Ok(JsonRpcPayload::Single(message)),
            Err(e) if e.kind == DecodeErrorKind::Batch => {
                let members: Vec<RawJson> = serde_json::from_str(text)
                    .map_err(|e| DecodeError::new(DecodeErrorKind::Parse, None, e.to_string()))?;
                if members.is_empty() {
                    return Err(DecodeError::new(
                        DecodeErrorKind::Invalid,
                        None,
                        "a batch must not be empty",
                    ));
                }
                members
                    .iter()
                    .map(|m| JsonRpcMessage::from_str(m.get()))
                    .collect::<Result<_, _>>()
                    .map(JsonRpcPayload::Batch)
            }
            Err(e) => Err(e),
        }
    }
}

impl Serialize for JsonRpcPayload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonRpcPayload::Single(m) => m.serialize(serializer),
            JsonRpcPayload::Batch(ms) => ms.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for JsonRpcPayload {
    /// Works with `serde_json`'s own deserializer, as [`JsonRpcMessage`] does.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawJson::deserialize(deserializer)?;
        JsonRpcPayload::from_slice(raw.get().as_bytes()).map_err(|e| de::Error::custom(e.message))
    }
}

/// Why bytes could not be decoded into a [`JsonRpcMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Not valid JSON (answer with `-32700`).
    Parse,
    /// Not UTF-8, so not JSON either (answer with `-32700`).
    NotUtf8,
    /// Valid JSON but not a valid JSON-RPC message (answer with `-32600`).
    Invalid,
    /// A response carrying both `result` and `error`: it cannot be told
    /// whether the request succeeded (answer with `-32600`).
    ResultAndError,
    /// A JSON array: a JSON-RPC batch. Only revision 2025-03-26 allows them;
    /// everywhere else this is an invalid request.
    Batch,
}

/// Bytes that are not a JSON-RPC message, with what is needed to answer them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DecodeError {
    /// What kind of failure this is.
    pub kind: DecodeErrorKind,
    /// The id of the offending message, when it could be read, so the error
    /// response can echo it (or, for a response, its request be failed).
    pub id: Option<RequestId>,
    /// What the message looked like: a request is answered with an error,
    /// a response fails the request it answers (see [`crate::peek`]).
    pub shape: Shape,
    /// A human-readable explanation.
    pub message: String,
}

impl DecodeError {
    /// A failure of `kind`, of a message of unknown shape.
    pub fn new(kind: DecodeErrorKind, id: Option<RequestId>, message: impl Into<String>) -> Self {
        Self {
            kind,
            id,
            shape: Shape::Unknown,
            message: message.into(),
        }
    }

    /// Fills in the id and shape that the bytes' envelope shows, where they
    /// are not known yet (a bounded scan of their first bytes, see
    /// [`crate::peek::peek`]).
    #[must_use]
    pub fn with_envelope_of(mut self, bytes: &[u8]) -> Self {
        if self.id.is_some() && self.shape != Shape::Unknown {
            return self;
        }
        let seen = crate::peek::peek(&bytes[..bytes.len().min(crate::peek::PEEK_PREFIX)]);
        if self.id.is_none() {
            self.id = seen.id;
        }
        if self.shape == Shape::Unknown {
            self.shape = seen.shape;
        }
        self
    }

    /// The JSON-RPC error object that answers this failure.
    pub fn to_error_object(&self) -> ErrorObject {
        match self.kind {
            DecodeErrorKind::Parse | DecodeErrorKind::NotUtf8 => {
                ErrorObject::parse_error(format!("parse error: {self}"))
            }
            DecodeErrorKind::Invalid | DecodeErrorKind::ResultAndError | DecodeErrorKind::Batch => {
                ErrorObject::invalid_request(format!("invalid request: {}", self.message))
            }
        }
    }

    /// The id an error answer to these bytes carries: the message's own,
    /// when it could be read and the message was not known to be an answer
    /// (the id of a response names a request of the receiver's, which an
    /// error must not seem to answer); else none (`null`). A message of
    /// [`Shape::Unknown`] is answered as a request, as the dispatcher
    /// answers one when no request of its own waits on that id.
    pub fn answer_id(&self) -> Option<&RequestId> {
        match self.shape {
            Shape::Response => None,
            _ => self.id.as_ref(),
        }
    }

    /// The complete error response that answers this failure, with
    /// [`DecodeError::answer_id`] as its id.
    pub fn to_response(&self) -> JsonRpcErrorResponse {
        JsonRpcErrorResponse::new(self.answer_id().cloned(), self.to_error_object())
    }
}

/// The message may quote the peer's bytes (serde names an unknown field
/// or variant as it came): shown escaped, as [`ErrorObject`]'s.
impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = crate::untrusted::Escaped::one_line(&self.message);
        match self.kind {
            DecodeErrorKind::Parse => write!(f, "not valid JSON: {message}"),
            DecodeErrorKind::NotUtf8 => write!(f, "not UTF-8: {message}"),
            DecodeErrorKind::Invalid => write!(f, "not a valid JSON-RPC message: {message}"),
            DecodeErrorKind::ResultAndError => write!(f, "an ambiguous response: {message}"),
            DecodeErrorKind::Batch => write!(f, "not a single message: {message}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl JsonRpcMessage {
    /// Decodes one message from JSON bytes, parsing the envelope once and
    /// keeping `params`/`result` raw.
    ///
    /// # Errors
    /// A [`DecodeError`] that says whether to answer `-32700` or `-32600`, and
    /// carries the request id when one could be read.
    ///
    /// # Examples
    /// ```
    /// use mcp_types::{JsonRpcMessage, RequestId};
    /// let msg = JsonRpcMessage::from_slice(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
    /// let JsonRpcMessage::Request(request) = msg else { panic!("a request") };
    /// assert_eq!(request.id, RequestId::Number(7));
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_str(as_json_text(bytes)?)
    }

    fn decode(text: &str) -> Result<Self, DecodeError> {
        let parse_failure =
            |e: serde_json::Error| DecodeError::new(DecodeErrorKind::Parse, None, e.to_string());
        if is_array(text.as_bytes()) {
            // Still check that it is JSON at all, so garbage gets -32700.
            return match serde_json::from_str::<IgnoredAny>(text) {
                Ok(_) => Err(DecodeError::new(
                    DecodeErrorKind::Batch,
                    None,
                    "a JSON array (a batch) where one message was expected; batches are not \
                     supported at this protocol revision",
                )),
                Err(e) => Err(parse_failure(e)),
            };
        }
        let fields: Fields = match serde_json::from_str(text) {
            Ok(fields) => fields,
            Err(e) => {
                // A syntax error is a parse error; valid JSON of the wrong shape
                // (a number, a string, a non-object) is an invalid request.
                return Err(match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        parse_failure(e)
                    }
                    _ => DecodeError::new(DecodeErrorKind::Invalid, None, e.to_string()),
                });
            }
        };
        fields.classify()
    }

    /// Decodes one message from a JSON string. See [`JsonRpcMessage::from_slice`].
    ///
    /// # Errors
    /// As [`JsonRpcMessage::from_slice`].
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str) -> Result<Self, DecodeError> {
        Self::decode(text).map_err(|error| error.with_envelope_of(text.as_bytes()))
    }

    /// Encodes the message as compact JSON (no embedded newlines).
    ///
    /// # Errors
    /// Never for messages built from this crate's types; the `Result` covers
    /// custom `Serialize` implementations inside raw values.
    pub fn to_vec(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::with_capacity(self.encoded_len_bound());
        serde_json::to_writer(&mut out, self)?;
        Ok(out)
    }

    /// At least the length of the message encoded, plus a byte (a framing
    /// newline): reserving it up front lets a message be written without
    /// the buffer regrowing, each regrowth a copy of everything written so
    /// far. The raw params or result, most of a large message, count
    /// exactly; the rest is bounded.
    pub fn encoded_len_bound(&self) -> usize {
        /// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` and a newline,
        /// without the variable parts.
        const ENVELOPE: usize = 64;
        /// The longest escape of one byte (`\u001f`).
        const ESCAPE: usize = 6;
        let id = |id: Option<&RequestId>| match id {
            Some(RequestId::String(s)) => s.len() * ESCAPE + 2,
            _ => 20,
        };
        ENVELOPE
            + match self {
                JsonRpcMessage::Request(r) => {
                    id(Some(&r.id))
                        + r.method.len() * ESCAPE
                        + r.params.as_ref().map_or(0, |p| p.get().len())
                }
                JsonRpcMessage::Notification(n) => {
                    n.method.len() * ESCAPE + n.params.as_ref().map_or(0, |p| p.get().len())
                }
                JsonRpcMessage::Response(r) => id(Some(&r.id)) + r.result.get().len(),
                JsonRpcMessage::Error(e) => {
                    id(e.id.as_ref())
                        + 64
                        + e.error.message.len() * ESCAPE
                        + e.error.data.as_ref().map_or(0, value_len_bound)
                }
            }
    }

    /// The request id this message carries, if any.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            JsonRpcMessage::Request(r) => Some(&r.id),
            JsonRpcMessage::Notification(_) => None,
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            JsonRpcMessage::Request(r) => Some(&r.method),
            JsonRpcMessage::Notification(n) => Some(&n.method),
            _ => None,
        }
    }
}

impl Serialize for JsonRpcMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonRpcMessage::Request(m) => m.serialize(serializer),
            JsonRpcMessage::Notification(m) => m.serialize(serializer),
            JsonRpcMessage::Response(m) => m.serialize(serializer),
            JsonRpcMessage::Error(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    /// Works with `serde_json`'s own deserializer (`from_str`, `from_slice`,
    /// `from_reader`); raw values cannot be read back out of a `Value`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = Fields::deserialize(deserializer)?;
        fields.classify().map_err(|e| de::Error::custom(e.message))
    }
}

/// What an id member held, kept apart so a bad id can be reported precisely.
enum IdField {
    Null,
    Valid(RequestId),
    Invalid(String),
}

/// Every member a JSON-RPC message may carry, read in one pass.
#[derive(Default)]
struct Fields {
    jsonrpc: Option<Cow<'static, str>>,
    id: Option<IdField>,
    method: Option<String>,
    params: Option<RawJson>,
    result: Option<RawJson>,
    error: Option<RawJson>,
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Fields;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields = Fields::default();
        // Member names are borrowed from the input: copying them would cost
        // every message four allocations.
        while let Some(crate::json::JsonStr(key)) = map.next_key()? {
            match key.as_ref() {
                "jsonrpc" => fields.jsonrpc = Some(map.next_value::<Version>()?.0),
                "id" => {
                    let raw: Value = map.next_value()?;
                    fields.id = Some(match raw {
                        Value::Null => IdField::Null,
                        Value::String(s) => IdField::Valid(RequestId::String(s)),
                        Value::Number(n) => match n.as_i64() {
                            Some(i) => IdField::Valid(RequestId::Number(i)),
                            None => IdField::Invalid(format!("id {n} is not a 64-bit integer")),
                        },
                        Value::Bool(b) => IdField::Invalid(format!(
                            "id `{b}` is a bool; ids are integers or strings"
                        )),
                        other => {
                            IdField::Invalid(format!("id `{other}` is not an integer or a string"))
                        }
                    });
                }
                "method" => fields.method = Some(map.next_value()?),
                "params" => fields.params = Some(map.next_value()?),
                "result" => fields.result = Some(map.next_value()?),
                "error" => fields.error = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
}

/// The `jsonrpc` member as the message's refusal would name it: its text
/// when it is a string (`2.0` itself allocated for no message), else the
/// JSON it holds. Read in one pass (an untagged enum would first copy the
/// value into serde's buffer).
struct Version(Cow<'static, str>);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(VersionVisitor)
    }
}

struct VersionVisitor;

impl VersionVisitor {
    fn json<E>(value: impl Into<Value>) -> Result<Version, E> {
        Ok(Version(Cow::Owned(value.into().to_string())))
    }
}

impl<'de> Visitor<'de> for VersionVisitor {
    type Value = Version;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Version, E> {
        Ok(Version(if text == JSONRPC_VERSION {
            Cow::Borrowed(JSONRPC_VERSION)
        } else {
            Cow::Owned(text.to_owned())
        }))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Version, E> {
        Self::json(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Version, E> {
        Self::json(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Version, E> {
        Self::json(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Version, E> {
        Self::json(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Version, E> {
        Self::json(Value::Null)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Version, A::Error> {
        Self::json(Value::deserialize(de::value::SeqAccessDeserializer::new(
            seq,
        ))?)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Version, A::Error> {
        Self::json(Value::deserialize(de::value::MapAccessDeserializer::new(
            map,
        ))?)
    }
}

impl Fields {
    fn classify(self) -> Result<JsonRpcMessage, DecodeError> {
        // What the message meant to be, so its refusal goes the right way:
        // told as `peek` tells it from a prefix, so a message refused whole
        // goes the way it would have gone cut short.
        let shape = crate::peek::Present {
            id: self.id.is_some(),
            method: self.method.is_some(),
            answer: self.result.is_some() || self.error.is_some(),
            complete: true,
        }
        .shape();
        let (id, id_problem) = match self.id {
            None => (None, None),
            Some(IdField::Null) => (
                None,
                Some("id is null; ids are integers or strings".to_owned()),
            ),
            Some(IdField::Valid(id)) => (Some(id), None),
            Some(IdField::Invalid(why)) => (None, Some(why)),
        };
        let invalid = |id: Option<RequestId>, message: String| DecodeError {
            kind: DecodeErrorKind::Invalid,
            id,
            shape,
            message,
        };
        match self.jsonrpc.as_deref() {
            Some(JSONRPC_VERSION) => {}
            Some(other) => {
                // Named cut short: a peer can make it as long as its body.
                let other = crate::untrusted::Escaped::name(other);
                return Err(invalid(
                    id,
                    format!("`jsonrpc` is `{other}`; MCP requires \"2.0\""),
                ));
            }
            None => return Err(invalid(id, "`jsonrpc` member is missing".into())),
        }
        let params = match self.params {
            Some(p) if p.is_null() => None,
            Some(p) if !p.is_object() => {
                return Err(invalid(id, "`params` must be an object".into()));
            }
            other => other,
        };
        if let Some(method) = self.method {
            if self.result.is_some() || self.error.is_some() {
                return Err(invalid(
                    id,
                    "a message with `method` must not carry `result` or `error`".into(),
                ));
            }
            return match (id, id_problem) {
                (Some(id), _) => Ok(JsonRpcMessage::Request(JsonRpcRequest {
                    jsonrpc: JsonRpcVersion,
                    id,
                    method,
                    params,
                })),
                (None, Some(problem)) => Err(invalid(None, problem)),
                (None, None) => Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                    jsonrpc: JsonRpcVersion,
                    method,
                    params,
                })),
            };
        }
        match (self.result, self.error) {
            (Some(_), Some(_)) => Err(DecodeError {
                kind: DecodeErrorKind::ResultAndError,
                ..invalid(
                    id,
                    "a response must carry exactly one of `result` and `error`".into(),
                )
            }),
            (Some(result), None) => match id {
                Some(id) => Ok(JsonRpcMessage::Response(JsonRpcResultResponse {
                    jsonrpc: JsonRpcVersion,
                    id,
                    result,
                })),
                None => Err(invalid(
                    None,
                    id_problem.unwrap_or_else(|| "a result response must carry an `id`".into()),
                )),
            },
            (None, Some(error)) => {
                let error: ErrorObject = error.parse().map_err(|e| {
                    invalid(
                        id.clone(),
                        format!("`error` is not a JSON-RPC error object: {e}"),
                    )
                })?;
                Ok(JsonRpcMessage::Error(JsonRpcErrorResponse {
                    jsonrpc: JsonRpcVersion,
                    id,
                    error,
                }))
            }
            (None, None) => Err(invalid(
                id,
                "the message has neither `method` nor `result` nor `error`".into(),
            )),
        }
    }
}

/// At least the length of `value` encoded compactly: every string byte
/// counted at its longest escape, every number at the longest a finite
/// `f64` or 64-bit integer prints. An error's `data` is the one part of a
/// message held as a parsed [`Value`] rather than raw text.
fn value_len_bound(value: &Value) -> usize {
    /// `-1.7976931348623157e308`, `-9223372036854775808` and a margin.
    const NUMBER: usize = 32;
    /// The longest escape of one byte (`\u001f`).
    const ESCAPE: usize = 6;
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => NUMBER,
        Value::String(s) => s.len() * ESCAPE + 2,
        Value::Array(items) => 2 + items.iter().map(|v| value_len_bound(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() * ESCAPE + 4 + value_len_bound(v))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_displayed_with_its_peer_written_message_escaped() {
        let error = ErrorObject::internal_error("failed\r\n2026-01-01 ERROR forged\u{1b}[2J");
        let shown = error.to_string();
        assert_eq!(
            shown,
            r"error -32603: failed\x0d\x0a2026-01-01 ERROR forged\x1b[2J"
        );
        assert_eq!(
            error.message, "failed\r\n2026-01-01 ERROR forged\u{1b}[2J",
            "kept exact"
        );
    }

    /// Found by the `jsonrpc_message` fuzz target: an error's `data` (a long
    /// key here) and a message full of escapes once went uncounted.
    #[test]
    fn encoded_len_bound_covers_error_data_and_escapes() {
        let key = "8".repeat(200);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32601,"message":"\u0001\u0001\u0001","data":{{"{key}":["x",1.5e300,null,{{"a":true}}]}}}}}}"#
        );
        let message = JsonRpcMessage::from_slice(line.as_bytes()).unwrap();
        let encoded = message.to_vec().unwrap();
        assert!(encoded.len() < message.encoded_len_bound());
    }

    fn decode(text: &str) -> Result<JsonRpcMessage, DecodeError> {
        JsonRpcMessage::from_str(text)
    }

    /// A refused message's shape says where its refusal goes (an answer to
    /// the peer's request, or a failure of ours); the decoder tells it as
    /// `peek` does, so a message refused whole goes where it would have
    /// gone cut short.
    #[test]
    fn a_refused_message_has_the_shape_peek_sees_in_it() {
        let cases: [(&str, Shape); 6] = [
            (r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, Shape::Request),
            (r#"{"jsonrpc":"1.0","method":"x"}"#, Shape::Notification),
            (r#"{"id":"a","result":{}}"#, Shape::Response),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
                Shape::Response,
            ),
            // Found by the `peek` fuzz target: a request's and an answer's
            // members at once are neither.
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"x","error":{"code":1,"message":""}}"#,
                Shape::Unknown,
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, Shape::Unknown),
        ];
        for (text, shape) in cases {
            let error = decode(text).expect_err(text);
            assert_eq!(error.shape, shape, "{text}");
            assert_eq!(crate::peek::peek(text.as_bytes()).shape, shape, "{text}");
        }
    }

    /// An error answer carries the id of a request it refuses, never the id
    /// of an answer (which names a request of the receiver's own), and a
    /// batch refused whole for one member answers with none.
    #[test]
    fn a_refusal_is_answered_with_the_id_of_a_request_only() {
        let cases: [(&str, Option<RequestId>); 5] = [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"x","params":"#,
                Some(RequestId::Number(7)),
            ),
            (
                r#"{"jsonrpc":"1.0","id":"a","method":"x"}"#,
                Some(RequestId::String("a".into())),
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, Some(RequestId::Number(1))),
            (
                r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
                None,
            ),
            // A notification shows no id, so its answer has none.
            (r#"{"jsonrpc":"1.0","method":"x"}"#, None),
        ];
        for (text, id) in cases {
            let error = decode(text).expect_err(text);
            assert_eq!(error.answer_id(), id.as_ref(), "{text}");
            assert_eq!(error.to_response().id, id, "{text}");
        }
        // A batch: one bad member, cut short, not UTF-8.
        let mut not_utf8 = br#" [{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":""#.to_vec();
        not_utf8.extend_from_slice(&[0xff, b'"', b'}', b'}', b']']);
        let batches: [(&[u8], DecodeErrorKind); 3] = [
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"1.0","id":2,"method":"x"}]"#,
                DecodeErrorKind::Invalid,
            ),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"x"},"#,
                DecodeErrorKind::Parse,
            ),
            (&not_utf8, DecodeErrorKind::NotUtf8),
        ];
        for (bytes, kind) in batches {
            let error = JsonRpcPayload::from_slice(bytes).expect_err("a bad batch");
            assert_eq!(error.kind, kind, "{error}");
            assert_eq!(error.answer_id(), None, "{error}");
        }
        // Read as one message, a batch still shows its first member, so
        // an answer of ours wrapped in an array fails the request.
        let wrapped = JsonRpcMessage::from_slice(br#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#)
            .expect_err("a batch");
        assert_eq!(
            (wrapped.id, wrapped.shape),
            (Some(RequestId::Number(3)), Shape::Response)
        );
    }

    /// Found by the `jsonrpc_message` and `sse_decoder` fuzz targets: raw
    /// params kept their line breaks, so a message read from a pretty-printed
    /// body encoded on several lines, breaking a stdio frame or an SSE event.
    #[test]
    fn raw_json_holds_no_line_break_so_a_message_encodes_on_one_line() {
        let message =
            decode("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\r\n \"a\":\n[1,\r2], \"s\":\"l\\n\"}}")
                .expect("a request");
        let bytes = message.to_vec().expect("encodes");
        assert!(!bytes.contains(&b'\n') && !bytes.contains(&b'\r'));
        assert_eq!(
            decode(std::str::from_utf8(&bytes).expect("UTF-8")),
            Ok(message)
        );
        let raw = RawJson::from_string("[1,\n2]".into()).expect("JSON");
        assert_eq!(raw.get(), "[1, 2]");
        let boxed = RawValue::from_string("{\r\n}".into()).expect("JSON");
        assert_eq!(RawJson::from(boxed).get(), "{  }");
    }

    #[test]
    fn a_request_keeps_its_params_raw() {
        let msg =
            decode(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#)
                .expect("valid request");
        let JsonRpcMessage::Request(req) = msg else {
            panic!("expected a request")
        };
        assert_eq!(req.id, RequestId::from("a"));
        assert_eq!(req.params.expect("params").get(), r#"{"name":"x"}"#);
    }

    #[test]
    fn a_message_without_id_is_a_notification() {
        let msg =
            decode(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).expect("valid");
        assert!(matches!(msg, JsonRpcMessage::Notification(_)));
    }

    #[test]
    fn garbage_is_a_parse_error_and_a_wrong_shape_is_invalid() {
        assert_eq!(
            decode("{not json").unwrap_err().kind,
            DecodeErrorKind::Parse
        );
        assert_eq!(decode("42").unwrap_err().kind, DecodeErrorKind::Invalid);
        assert_eq!(
            decode(r#"{"jsonrpc":"2.0"}"#).unwrap_err().kind,
            DecodeErrorKind::Invalid
        );
    }

    /// JSON text is UTF-8 throughout: bytes that are not are refused
    /// wherever they are, in a member the message does not use too, and in
    /// a batch; the refusal keeps the id it could read.
    #[test]
    fn bytes_that_are_not_utf8_are_refused_wherever_they_are() {
        for bytes in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x\":\"\xff\"}"[..],
            &b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xc3(\"}"[..],
            &b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}"[..],
        ] {
            let err = JsonRpcMessage::from_slice(bytes).unwrap_err();
            assert_eq!(err.kind, DecodeErrorKind::NotUtf8, "{err}");
            assert_eq!(err.id, Some(RequestId::Number(3)), "{err}");
            assert_eq!(err.to_error_object().code, ErrorCode::PARSE_ERROR);
        }
        let batch = b"[{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"y\":\"\xff\"}]";
        let err = JsonRpcPayload::from_slice(batch).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::NotUtf8, "{err}");
    }

    #[test]
    fn a_bool_id_is_rejected_with_a_reason() {
        let err = decode(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Invalid);
        assert!(err.message.contains("bool"), "{}", err.message);
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn an_invalid_request_keeps_its_id_for_the_answer() {
        let err = decode(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.id, Some(RequestId::Number(9)));
    }

    #[test]
    fn a_wrong_version_is_named_whatever_its_json() {
        for (json, named) in [
            (r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#, "`1.0`"),
            (
                r#"{"jsonrpc":"2\u002e0x","id":9,"method":"ping"}"#,
                "`2.0x`",
            ),
            (r#"{"jsonrpc":2,"id":9,"method":"ping"}"#, "`2`"),
            (r#"{"jsonrpc":null,"id":9,"method":"ping"}"#, "`null`"),
            (r#"{"jsonrpc":true,"id":9,"method":"ping"}"#, "`true`"),
            (r#"{"jsonrpc":2.5,"id":9,"method":"ping"}"#, "`2.5`"),
            (r#"{"jsonrpc":-2,"id":9,"method":"ping"}"#, "`-2`"),
            (
                r#"{"jsonrpc":["2.0"],"id":9,"method":"ping"}"#,
                r#"`["2.0"]`"#,
            ),
            (
                r#"{"jsonrpc":{"v":"2.0"},"id":9,"method":"ping"}"#,
                r#"`{"v":"2.0"}`"#,
            ),
        ] {
            let err = decode(json).unwrap_err();
            assert_eq!(err.kind, DecodeErrorKind::Invalid, "{json}");
            assert!(err.message.contains(named), "{json}: {}", err.message);
        }
        // A peer's version is named cut short, however long it is.
        let long = format!(
            r#"{{"jsonrpc":"{}","id":9,"method":"ping"}}"#,
            "9".repeat(100_000)
        );
        let err = decode(&long).unwrap_err();
        assert!(err.message.len() < 400, "{} bytes", err.message.len());
        assert!(err.message.contains(&"9".repeat(200)), "{}", err.message);
        // An escaped "2.0" is still 2.0, and the envelope's names may be escaped.
        assert!(decode(r#"{"jsonrpc":"2\u002e0","id":9,"method":"ping"}"#).is_ok());
        assert!(decode(r#"{"\u006asonrpc":"2.0","id":9,"method":"ping"}"#).is_ok());
    }

    #[test]
    fn a_batch_is_recognised() {
        let err = decode(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Batch);
    }

    #[test]
    fn an_error_response_without_id_leaves_it_out_and_reads_null_as_none() {
        let msg = JsonRpcMessage::Error(JsonRpcErrorResponse::new(
            None,
            ErrorObject::parse_error("bad"),
        ));
        let text = String::from_utf8(msg.to_vec().expect("encodes")).expect("utf8");
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}}"#
        );
        assert_eq!(decode(&text).expect("decodes"), msg);
    }

    #[test]
    fn a_stringified_integer_id_reads_as_that_integer() {
        assert_eq!(RequestId::from("17").as_integer(), Some(17));
        assert_eq!(RequestId::from("017").as_integer(), None);
        assert_eq!(RequestId::from(17).as_integer(), Some(17));
    }

    #[test]
    fn a_batch_payload_reads_every_member() {
        let payload = JsonRpcPayload::from_slice(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]"#,
        )
        .expect("a valid batch");
        let JsonRpcPayload::Batch(members) = payload else {
            panic!("a batch")
        };
        assert_eq!(members.len(), 2);
        assert_eq!(
            JsonRpcPayload::from_slice(b"[]").expect_err("empty").kind,
            DecodeErrorKind::Invalid
        );
    }

    #[test]
    fn params_must_be_an_object() {
        let err = decode(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Invalid);
        let ok =
            decode(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#).expect("null params");
        let JsonRpcMessage::Request(req) = ok else {
            panic!("request")
        };
        assert!(req.params.is_none());
    }
}
