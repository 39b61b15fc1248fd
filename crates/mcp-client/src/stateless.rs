//! What a 2026-07-28 (stateless) client adds to every request: the `_meta`
//! envelope and the routable HTTP headers, including `Mcp-Param-*` from a
//! tool's `x-mcp-header` annotations.

use std::collections::HashSet;

use base64::Engine as _;
use mcp_core::Headers;
use mcp_types::{
    ClientCapabilities, Implementation, JsonObject, LoggingLevel, RawJson, Revision, Tool, meta,
};
use serde_json::Value;

/// The largest integer a JavaScript peer reads exactly.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Adds the stateless `_meta` envelope to `params` and returns the headers
/// of the request.
pub(crate) fn stamp(
    method: &str,
    params: Option<RawJson>,
    revision: Revision,
    info: &Implementation,
    capabilities: &ClientCapabilities,
    log_level: Option<LoggingLevel>,
    tool: Option<&Tool>,
) -> Result<(Option<RawJson>, Headers), serde_json::Error> {
    let mut object = match params {
        Some(raw) => match serde_json::from_str::<Value>(raw.get())? {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        },
        None => JsonObject::new(),
    };
    let envelope = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(envelope) = envelope {
        envelope.insert(
            meta::PROTOCOL_VERSION.into(),
            Value::from(revision.as_str()),
        );
        envelope.insert(meta::CLIENT_INFO.into(), serde_json::to_value(info)?);
        envelope.insert(
            meta::CLIENT_CAPABILITIES.into(),
            serde_json::to_value(capabilities)?,
        );
        if let Some(level) = log_level {
            envelope.insert(meta::LOG_LEVEL.into(), serde_json::to_value(level)?);
        }
    }
    let mut headers = Headers::new()
        .with("MCP-Protocol-Version", revision.as_str())
        .with("Mcp-Method", method);
    let name = match method {
        "tools/call" | "prompts/get" => object.get("name"),
        "resources/read" => object.get("uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.append("Mcp-Name", encode_header_value(name));
    }
    if let (Some(tool), Some(Value::Object(arguments))) = (tool, object.get("arguments")) {
        for (header, path) in annotated_properties(tool).unwrap_or_default() {
            if let Some(value) = lookup(arguments, &path).and_then(header_value) {
                headers.append(format!("Mcp-Param-{header}"), value);
            }
        }
    }
    Ok((Some(RawJson::from_serialize(&object)?), headers))
}

fn lookup<'a>(arguments: &'a JsonObject, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = arguments.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

/// A header value for a string, integer or boolean argument; `None` for
/// `null` (no header) and anything else.
fn header_value(value: &Value) -> Option<String> {
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
pub(crate) fn encode_header_value(value: &str) -> String {
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

/// The `x-mcp-header` annotations of a tool's input schema as (header,
/// property path) pairs, or why they are invalid (the tool must then be
/// dropped from the client's view).
pub(crate) fn annotated_properties(tool: &Tool) -> Result<Vec<(String, Vec<String>)>, String> {
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
            return Err(format!("`x-mcp-header` `{header}` is not an HTTP token"));
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
    }

    #[test]
    fn stamping_adds_the_envelope_and_the_routing_headers() {
        let info = Implementation::new("c", "1");
        let t = tool(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "none": {"type": "string", "x-mcp-header": "None"}
        }}));
        let params = RawJson::from_serialize(&json!({
            "name": "t", "arguments": {"region": "eu", "count": 3, "none": null}
        }))
        .expect("json");
        let (params, headers) = stamp(
            "tools/call",
            Some(params),
            Revision::V2026_07_28,
            &info,
            &ClientCapabilities::new(),
            None,
            Some(&t),
        )
        .expect("stamped");
        let params: Value = serde_json::from_str(params.expect("params").get()).expect("json");
        assert_eq!(params["_meta"][meta::PROTOCOL_VERSION], "2026-07-28");
        assert!(params["_meta"][meta::CLIENT_CAPABILITIES].is_object());
        assert_eq!(headers.get("mcp-method"), Some("tools/call"));
        assert_eq!(headers.get("mcp-name"), Some("t"));
        assert_eq!(headers.get("mcp-param-region"), Some("eu"));
        assert_eq!(headers.get("mcp-param-count"), Some("3"));
        assert_eq!(headers.get("mcp-param-none"), None, "null sends no header");
    }
}
