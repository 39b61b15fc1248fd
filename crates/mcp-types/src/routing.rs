//! The HTTP headers of MCP: which ones each era defines (what a browser
//! page must be allowed to send and read), the routable headers of the
//! stateless era (2026-07-28) with the value encoding of `Mcp-Name` and
//! `Mcp-Param-*` and the `x-mcp-header` annotations of a tool's input
//! schema that name `Mcp-Param-*` headers, and what an `Mcp-Session-Id` may
//! hold. Shared by clients (which send them) and servers (which check them).

use std::borrow::Cow;
use std::collections::HashSet;

use base64::Engine as _;
use serde_json::Value;

use crate::{JsonObject, Tool};

/// The largest integer a JavaScript peer reads exactly.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The longest `Mcp-Session-Id` accepted, in bytes.
pub const MAX_SESSION_ID: usize = 256;

/// Whether `id` may be an `Mcp-Session-Id`: the transport spec allows only
/// visible ASCII (0x21 to 0x7E); and it is not empty nor longer than
/// [`MAX_SESSION_ID`].
///
/// ```
/// use mcp_types::routing::is_session_id;
/// assert!(is_session_id("1868a90c-2d2b-4b5e-8a1c-4a0f3c1d2e3f"));
/// assert!(!is_session_id("has space"));
/// assert!(!is_session_id("tab\there"));
/// assert!(!is_session_id(""));
/// ```
pub fn is_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_SESSION_ID && id.bytes().all(|b| b.is_ascii_graphic())
}

/// The value at `path` (a chain of property names) in `arguments`.
pub fn lookup<'a>(arguments: &'a JsonObject, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = arguments.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

/// A header value for a string, integer or boolean argument; `None` for
/// `null` (no header) and anything else.
pub fn header_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_header_value(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => n
            .as_i64()
            .filter(|i| i.abs() <= MAX_SAFE_INTEGER)
            .map(|i| i.to_string()),
        _ => None,
    }
}

/// A string as a header value: as-is when it is plain visible ASCII without
/// edge whitespace; otherwise `=?base64?…?=` of its UTF-8.
pub fn encode_header_value(value: &str) -> String {
    let visible = value.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    let edge_space = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with("=?") && value.ends_with("?=");
    let plain = visible && !edge_space && !looks_encoded;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// Decodes a header value: `=?base64?…?=` must hold canonical, padded
/// base64 of UTF-8 (anything else is refused); other values are literal
/// (borrowed: most values are plain).
pub fn decode_header_value(value: &str) -> Option<Cow<'_, str>> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(Cow::Owned),
        None => Some(Cow::Borrowed(value)),
    }
}

/// Whether a decoded header value stands for `body` (strings equal, integers
/// and booleans by their value).
pub fn header_matches(header: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => header == s,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(b)) => h == b,
            _ => false,
        },
        _ => false,
    }
}

/// The `x-mcp-header` annotations of a tool's input schema as (header,
/// property path) pairs, or why they are invalid (the tool must then be
/// dropped from the client's view).
pub fn annotated_properties(tool: &Tool) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    walk(&tool.input_schema, &mut Vec::new(), &mut found, &mut seen)?;
    Ok(found)
}

fn walk(
    schema: &JsonObject,
    path: &mut Vec<String>,
    found: &mut Vec<(String, Vec<String>)>,
    seen: &mut HashSet<String>,
) -> Result<(), String> {
    if let Some(header) = schema.get("x-mcp-header") {
        let Some(header) = header.as_str() else {
            return Err("`x-mcp-header` is not a string".into());
        };
        if path.is_empty() {
            return Err("`x-mcp-header` on the schema root".into());
        }
        if header.is_empty() || !header.bytes().all(is_token_byte) {
            return Err(format!(
                "`x-mcp-header` `{}` is not an HTTP token",
                crate::untrusted::Escaped::name(header)
            ));
        }
        if !seen.insert(header.to_ascii_lowercase()) {
            return Err(format!("`x-mcp-header` `{header}` appears twice"));
        }
        let kind = schema.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "`x-mcp-header` `{header}` is on a property that is not a string, integer or boolean"
            ));
        }
        found.push((header.to_owned(), path.clone()));
    }
    // Only chains of `properties` carry headers; annotations reached through
    // anything else are invalid.
    for (keyword, value) in schema {
        match keyword.as_str() {
            "properties" => {
                if let Some(properties) = value.as_object() {
                    for (name, property) in properties {
                        if let Some(property) = property.as_object() {
                            path.push(name.clone());
                            walk(property, path, found, seen)?;
                            path.pop();
                        }
                    }
                }
            }
            "x-mcp-header" | "type" => {}
            _ => {
                if contains_annotation(value) {
                    return Err(format!(
                        "`x-mcp-header` is reachable through `{keyword}`, not only `properties`"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The header that repeats a stateless request's method (lowercase, as
/// HTTP libraries normalize it).
pub const METHOD_HEADER: &str = "mcp-method";
/// The header that repeats the tool or prompt name, or the resource URI, of
/// a stateless request.
pub const NAME_HEADER: &str = "mcp-name";

/// The prefix of the headers that carry a tool's `x-mcp-header` arguments
/// (`Mcp-Param-{name}`), lowercase as HTTP libraries normalize it.
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// The header that carries a session's id (handshake era, HTTP).
pub const SESSION_ID_HEADER: &str = "mcp-session-id";
/// The header that carries the protocol revision of an HTTP request
/// (2025-06-18 and later, and every stateless request).
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// The header with which a client resumes an SSE stream (handshake era).
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// The header that carries the argument a tool's schema marks with
/// `x-mcp-header: "{name}"`: `Mcp-Param-{name}` (compare case-insensitively).
///
/// ```
/// assert_eq!(mcp_types::routing::param_header("Region"), "Mcp-Param-Region");
/// ```
pub fn param_header(name: &str) -> String {
    format!("Mcp-Param-{name}")
}

/// Whether `header` (any case) is an `Mcp-Param-*` header: the prefix and a
/// name a tool's `x-mcp-header` may declare (an HTTP token) after it.
///
/// ```
/// use mcp_types::routing::is_param_header;
/// assert!(is_param_header("mcp-param-region"));
/// assert!(is_param_header("Mcp-Param-Region"));
/// assert!(!is_param_header("Mcp-Param-"));
/// assert!(!is_param_header("mcp-paramregion"));
/// ```
pub fn is_param_header(header: &str) -> bool {
    let prefix = PARAM_HEADER_PREFIX.len();
    header
        .get(..prefix)
        .is_some_and(|p| p.eq_ignore_ascii_case(PARAM_HEADER_PREFIX))
        && header.len() > prefix
        && header.bytes().skip(prefix).all(is_token_byte)
}

/// The request headers MCP defines over HTTP in every era: the media
/// types, the bearer token of the authorization spec, the protocol version,
/// and the W3C trace context (SEP-414).
const REQUEST_HEADERS: [&str; 6] = [
    "accept",
    "content-type",
    "authorization",
    PROTOCOL_VERSION_HEADER,
    crate::meta::TRACEPARENT,
    crate::meta::TRACESTATE,
];

/// The request headers MCP defines over HTTP in `era` (lowercase; compare
/// case-insensitively), `Mcp-Param-*` aside (see [`is_param_header`]):
/// those of every era (the media types, `Authorization`,
/// `MCP-Protocol-Version`, `traceparent`, `tracestate`), then the session id
/// and `Last-Event-ID` of the handshake era or the routing headers
/// (`Mcp-Method`, `Mcp-Name`) of the stateless era. What a browser page
/// needs to be allowed to send.
pub fn request_headers(era: crate::Era) -> impl Iterator<Item = &'static str> + Clone {
    let own: &'static [&'static str] = match era {
        crate::Era::Handshake => &[SESSION_ID_HEADER, LAST_EVENT_ID_HEADER],
        crate::Era::Stateless => &[METHOD_HEADER, NAME_HEADER],
    };
    REQUEST_HEADERS.iter().chain(own).copied()
}

/// The response headers of MCP over HTTP in `era` that a client reads
/// (lowercase): the session id a handshake-era server assigns, the
/// protocol version (which servers and gateways may echo), and the bearer
/// challenge of the authorization spec (RFC 9728 discovery starts from
/// it). What a browser page must be allowed to read.
pub fn response_headers(era: crate::Era) -> &'static [&'static str] {
    match era {
        crate::Era::Handshake => &[
            SESSION_ID_HEADER,
            PROTOCOL_VERSION_HEADER,
            "www-authenticate",
        ],
        crate::Era::Stateless => &[PROTOCOL_VERSION_HEADER, "www-authenticate"],
    }
}

/// The `params` field a method's `Mcp-Name` header repeats: `name` for
/// `tools/call` and `prompts/get`, `uri` for `resources/read`, `taskId`
/// for the tasks extension's methods (SEP-2663); `None` for methods
/// without one.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        m if crate::tasks_ext::METHODS.contains(&m) => Some("taskId"),
        _ => None,
    }
}

/// Checks the `Mcp-Method` and `Mcp-Name` headers (every value each was
/// sent with) against the body's method and its named field (`None` when
/// absent or not a string). `Err` says what differs, for a `-32020` answer.
pub fn check_method_and_name(
    method: &str,
    body_name: Option<&str>,
    method_headers: &[&str],
    name_headers: &[&str],
) -> Result<(), String> {
    if method_headers.len() > 1 || name_headers.len() > 1 {
        return Err("a routing header appears more than once".into());
    }
    match method_headers.first() {
        Some(header) if *header == method => {}
        Some(header) => {
            return Err(format!(
                "the Mcp-Method header `{header}` differs from the body's `{method}`"
            ));
        }
        None => return Err("the Mcp-Method header is required".into()),
    }
    if name_field(method).is_some() {
        let header = name_headers.first().and_then(|v| decode_header_value(v));
        if header.as_deref() != body_name {
            return Err(format!(
                "the Mcp-Name header {header:?} differs from the body's {body_name:?}"
            ));
        }
    }
    Ok(())
}

fn contains_annotation(value: &Value) -> bool {
    match value {
        Value::Object(object) => object
            .iter()
            .any(|(k, v)| k == "x-mcp-header" || contains_annotation(v)),
        Value::Array(items) => items.iter().any(contains_annotation),
        _ => false,
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        Tool::new("t", schema.as_object().cloned().unwrap_or_default())
    }

    #[test]
    fn the_http_headers_are_lowercase_tokens_and_params_are_apart() {
        for era in [crate::Era::Handshake, crate::Era::Stateless] {
            let names = request_headers(era).chain(response_headers(era).iter().copied());
            for name in names {
                assert!(name.bytes().all(is_token_byte), "{name}");
                assert_eq!(name, name.to_ascii_lowercase());
                assert!(!is_param_header(name), "{name}");
            }
        }
        let has = |era, name| request_headers(era).any(|h| h == name);
        assert!(has(crate::Era::Handshake, SESSION_ID_HEADER));
        assert!(!has(crate::Era::Stateless, SESSION_ID_HEADER));
        assert!(has(crate::Era::Stateless, METHOD_HEADER));
        assert!(has(crate::Era::Stateless, PROTOCOL_VERSION_HEADER));
        assert!(is_param_header(&param_header("Region")));
        assert!(!is_param_header("Mcp-Param-bad name"));
    }

    #[test]
    fn header_values_are_encoded_when_not_plain_ascii() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(encode_header_value(""), "");
        assert_eq!(encode_header_value("日本"), "=?base64?5pel5pys?=");
        assert_eq!(encode_header_value(" edge"), "=?base64?IGVkZ2U=?=");
        assert!(encode_header_value("a\tb").starts_with("=?base64?"));
        assert!(encode_header_value("=?base64?x?=").starts_with("=?base64?"));
    }

    #[test]
    fn annotations_are_found_on_property_chains_only() {
        let ok = tool(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }}));
        let found = annotated_properties(&ok).expect("valid");
        assert!(found.contains(&("Region".into(), vec!["region".into()])));
        assert!(found.contains(&("N".into(), vec!["nested".into(), "n".into()])));
        let bad = [
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"type": "object", "properties": {"a": {"type": "array",
                "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ];
        for schema in bad {
            assert!(
                annotated_properties(&tool(schema.clone())).is_err(),
                "{schema}"
            );
        }
        // The reason, for a log, shows the peer's header escaped.
        let hostile = tool(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "X\u{1b}[2J\nforged"}}}));
        assert_eq!(
            annotated_properties(&hostile),
            Err(r"`x-mcp-header` `X\x1b[2J\x0aforged` is not an HTTP token".to_owned())
        );
    }

    #[test]
    fn method_and_name_headers_must_repeat_the_body() {
        assert!(
            check_method_and_name("tools/call", Some("echo"), &["tools/call"], &["echo"]).is_ok()
        );
        assert!(check_method_and_name("tools/list", None, &["tools/list"], &[]).is_ok());
        assert!(check_method_and_name("tools/call", Some("echo"), &[], &["echo"]).is_err());
        assert!(
            check_method_and_name("tools/call", Some("echo"), &["tools/list"], &["echo"]).is_err()
        );
        assert!(
            check_method_and_name("tools/call", Some("echo"), &["tools/call"], &["other"]).is_err()
        );
        assert!(
            check_method_and_name(
                "tools/call",
                Some("echo"),
                &["tools/call", "tools/call"],
                &["echo"]
            )
            .is_err()
        );
        assert!(
            check_method_and_name(
                "resources/read",
                Some("a b"),
                &["resources/read"],
                &["=?base64?YSBi?="]
            )
            .is_ok()
        );
    }

    #[test]
    fn decoding_is_strict_about_base64_and_literal_otherwise() {
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8?=").as_deref(),
            None,
            "padding is required"
        );
        assert_eq!(
            decode_header_value("=?base64?SGVs!!!bG8=?=").as_deref(),
            None
        );
        assert_eq!(decode_header_value("SGVsbG8=").as_deref(), Some("SGVsbG8="));
        assert!(header_matches("42", &json!(42)) && header_matches("42", &json!(42.0)));
        assert!(header_matches("true", &json!(true)) && !header_matches("True", &json!(true)));
    }
}
