//! What a 2026-07-28 (stateless) client adds to every request: the `_meta`
//! envelope and the routable HTTP headers, including `Mcp-Param-*` from a
//! tool's `x-mcp-header` annotations.

use mcp_core::Headers;
use mcp_types::routing::{
    annotated_properties, encode_header_value, header_value, lookup, name_field,
};
use mcp_types::{
    ClientCapabilities, Implementation, JsonObject, LoggingLevel, RawJson, Revision, Tool, meta,
};
use serde_json::Value;

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
    let name = name_field(method).and_then(|field| object.get(field));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        Tool::new("t", schema.as_object().cloned().unwrap_or_default())
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
