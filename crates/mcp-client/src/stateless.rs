//! What a 2026-07-28 (stateless) client adds to every request: the `_meta`
//! envelope and the routable HTTP headers, including `Mcp-Param-*` from a
//! tool's `x-mcp-header` annotations.
//!
//! Stamping is on every request's path, so only the top level of the params
//! (and of an existing `_meta`) is parsed: every other member is passed on
//! as the text it already is, and the envelope's members are serialized
//! once per session ([`Envelope`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::Headers;
use mcp_types::method::Method as _;
use mcp_types::routing::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, encode_header_value, header_value, lookup,
    name_field, param_header,
};
use mcp_types::{
    ClientCapabilities, Implementation, JsonObject, LoggingLevel, RawJson, Revision, meta, methods,
};
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

/// The `_meta` members every stateless request carries, serialized once.
pub(crate) struct Envelope {
    revision: Revision,
    version: Box<RawValue>,
    info: Box<RawValue>,
    /// The declared capabilities, kept to add a request's own extensions.
    declared: ClientCapabilities,
    capabilities: Box<RawValue>,
}

impl Envelope {
    pub(crate) fn new(
        revision: Revision,
        info: &Implementation,
        capabilities: &ClientCapabilities,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            revision,
            version: to_raw_value(revision.as_str())?,
            info: to_raw_value(info)?,
            declared: capabilities.clone(),
            capabilities: to_raw_value(capabilities)?,
        })
    }

    /// This envelope for one request that also declares `extensions`
    /// (each over the session's own settings for the same id); `None` when
    /// the session already declares each of them so (a config claiming the
    /// tasks extension, then polling a task): this envelope serves as is.
    pub(crate) fn declaring(
        &self,
        extensions: Vec<(String, JsonObject)>,
    ) -> Result<Option<Self>, serde_json::Error> {
        let ad = self.declared.extensions.as_ref();
        if extensions.iter().all(|(id, settings)| {
            matches!(ad.and_then(|ad| ad.get(id)), Some(Value::Object(own)) if own == settings)
        }) {
            return Ok(None);
        }
        let mut declared = self.declared.clone();
        let ad = declared.extensions.get_or_insert_with(JsonObject::new);
        for (id, settings) in extensions {
            ad.insert(id, Value::Object(settings));
        }
        Ok(Some(Self {
            revision: self.revision,
            version: self.version.clone(),
            info: self.info.clone(),
            capabilities: to_raw_value(&declared)?,
            declared,
        }))
    }

    /// The revision the envelope names.
    pub(crate) fn revision(&self) -> Revision {
        self.revision
    }
}

/// A tool's `x-mcp-header` annotations: each header with the path of the
/// argument it repeats (see [`mcp_types::routing::annotated_properties`]).
pub(crate) type Routes = Arc<[(String, Vec<String>)]>;

/// One JSON object's members, parsed no deeper than the top level.
pub(crate) type Members<'a> = BTreeMap<String, &'a RawValue>;

/// Adds the stateless `_meta` envelope to `params` and returns them with
/// the headers of the request; `routes` gives the annotations of the tool
/// a `tools/call` names.
pub(crate) fn stamp(
    method: &str,
    params: Option<RawJson>,
    envelope: &Envelope,
    log_level: Option<LoggingLevel>,
    routes: impl FnOnce(&str) -> Option<Routes>,
) -> Result<(RawJson, Headers), serde_json::Error> {
    // Declared before the members that borrow them.
    let level = log_level.as_ref().map(to_raw_value).transpose()?;
    let stamped_meta;
    let mut object: Members<'_> = match &params {
        Some(raw) if raw.is_object() => raw.parse()?,
        _ => Members::new(),
    };
    // A `_meta` that is not an object is the caller's to answer for: left as is.
    let meta = match object.get("_meta") {
        Some(existing) if !is_object(existing) => None,
        Some(existing) => Some(serde_json::from_str::<Members<'_>>(existing.get())?),
        None => Some(Members::new()),
    };
    if let Some(mut meta) = meta {
        meta.insert(meta::PROTOCOL_VERSION.into(), &envelope.version);
        meta.insert(meta::CLIENT_INFO.into(), &envelope.info);
        meta.insert(meta::CLIENT_CAPABILITIES.into(), &envelope.capabilities);
        if let Some(level) = &level {
            meta.insert(meta::LOG_LEVEL.into(), level);
        }
        stamped_meta = to_raw_value(&meta)?;
        object.insert("_meta".into(), &stamped_meta);
    }
    let mut headers = Headers::new()
        .with(PROTOCOL_VERSION_HEADER, envelope.revision.as_str())
        .with(METHOD_HEADER, method);
    let name = name_field(method)
        .and_then(|field| object.get(field))
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
    if let Some(name) = &name {
        headers.append(NAME_HEADER, encode_header_value(name));
    }
    let routes = name
        .as_deref()
        .filter(|_| method == methods::CallTool::NAME)
        .and_then(routes)
        .filter(|r| !r.is_empty());
    // Arguments are parsed only for a tool with annotations to repeat.
    let arguments = routes.as_ref().and_then(|_| {
        object
            .get("arguments")
            .and_then(|raw| serde_json::from_str::<JsonObject>(raw.get()).ok())
    });
    if let (Some(routes), Some(arguments)) = (&routes, &arguments) {
        for (header, path) in routes.iter() {
            if let Some(value) = lookup(arguments, path).and_then(header_value) {
                headers.append(param_header(header), value);
            }
        }
    }
    Ok((RawJson::from_serialize(&object)?, headers))
}

fn is_object(raw: &RawValue) -> bool {
    raw.get().trim_start().starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::Tool;
    use mcp_types::routing::annotated_properties;
    use serde_json::{Value, json};

    fn routes(schema: Value) -> Routes {
        let tool = Tool::new("t", schema.as_object().cloned().unwrap_or_default());
        annotated_properties(&tool)
            .expect("valid annotations")
            .into()
    }

    fn envelope() -> Envelope {
        Envelope::new(
            Revision::V2026_07_28,
            &Implementation::new("c", "1"),
            &ClientCapabilities::new(),
        )
        .expect("envelope")
    }

    #[test]
    fn stamping_adds_the_envelope_and_the_routing_headers() {
        let routes = routes(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "none": {"type": "string", "x-mcp-header": "None"}
        }}));
        let params = RawJson::from_serialize(&json!({
            "name": "t", "arguments": {"region": "eu", "count": 3, "none": null}
        }))
        .expect("json");
        let (params, headers) = stamp("tools/call", Some(params), &envelope(), None, |name| {
            (name == "t").then(|| routes.clone())
        })
        .expect("stamped");
        let params: Value = params.parse().expect("json");
        assert_eq!(params["_meta"][meta::PROTOCOL_VERSION], "2026-07-28");
        assert!(params["_meta"][meta::CLIENT_CAPABILITIES].is_object());
        assert_eq!(params["_meta"][meta::CLIENT_INFO]["name"], "c");
        assert_eq!(params["arguments"]["count"], 3);
        assert_eq!(headers.get("mcp-method"), Some("tools/call"));
        assert_eq!(headers.get("mcp-name"), Some("t"));
        assert_eq!(headers.get("mcp-param-region"), Some("eu"));
        assert_eq!(headers.get("mcp-param-count"), Some("3"));
        assert_eq!(headers.get("mcp-param-none"), None, "null sends no header");
    }

    #[test]
    fn stamping_keeps_the_callers_meta_and_overrides_only_the_envelope() {
        let params = RawJson::from_serialize(&json!({
            "uri": "file:///a",
            "_meta": {"progressToken": 7, "com.example/x": {"deep": [1, 2]},
                      (meta::PROTOCOL_VERSION): "2025-11-25"}
        }))
        .expect("json");
        let (params, headers) = stamp(
            "resources/read",
            Some(params),
            &envelope(),
            Some(LoggingLevel::Warning),
            |_| panic!("only tools/call has routes"),
        )
        .expect("stamped");
        let params: Value = params.parse().expect("json");
        assert_eq!(params["uri"], "file:///a");
        assert_eq!(params["_meta"]["progressToken"], 7);
        assert_eq!(params["_meta"]["com.example/x"], json!({"deep": [1, 2]}));
        assert_eq!(params["_meta"][meta::PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(params["_meta"][meta::LOG_LEVEL], "warning");
        assert_eq!(headers.get("mcp-name"), Some("file:///a"));
    }

    #[test]
    fn stamping_absent_params_sends_only_the_envelope() {
        let (params, headers) =
            stamp("tools/list", None, &envelope(), None, |_| None).expect("stamped");
        let params: Value = params.parse().expect("json");
        assert_eq!(params.as_object().map(JsonObject::len), Some(1));
        assert_eq!(params["_meta"][meta::PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(headers.get("mcp-name"), None);
    }

    #[test]
    fn a_request_declaring_an_extension_adds_it_to_the_sessions_capabilities() {
        let mut capabilities = ClientCapabilities::new();
        let mut ad = JsonObject::new();
        ad.insert("com.example/kept".into(), json!({"a": 1}));
        ad.insert("com.example/over".into(), json!({"old": true}));
        capabilities.extensions = Some(ad);
        let session = Envelope::new(
            Revision::V2026_07_28,
            &Implementation::new("c", "1"),
            &capabilities,
        )
        .expect("envelope");
        let settings = json!({"new": true})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let once = session
            .declaring(vec![
                ("com.example/over".into(), settings),
                ("io.modelcontextprotocol/tasks".into(), JsonObject::new()),
            ])
            .expect("envelope")
            .expect("an envelope of its own");
        let (params, _) = stamp("tools/list", None, &once, None, |_| None).expect("stamped");
        let params: Value = params.parse().expect("json");
        assert_eq!(
            params["_meta"][meta::CLIENT_CAPABILITIES]["extensions"],
            json!({"com.example/kept": {"a": 1}, "com.example/over": {"new": true},
                   "io.modelcontextprotocol/tasks": {}})
        );
        // The session's own envelope is unchanged.
        let (params, _) = stamp("tools/list", None, &session, None, |_| None).expect("stamped");
        let params: Value = params.parse().expect("json");
        assert_eq!(
            params["_meta"][meta::CLIENT_CAPABILITIES]["extensions"],
            json!({"com.example/kept": {"a": 1}, "com.example/over": {"old": true}})
        );
        // What the session declares already needs no envelope of its own;
        // other settings for it do.
        let same = json!({"a": 1}).as_object().cloned().unwrap_or_default();
        assert!(
            session
                .declaring(vec![("com.example/kept".into(), same)])
                .expect("envelope")
                .is_none()
        );
        assert!(
            session
                .declaring(vec![("com.example/kept".into(), JsonObject::new())])
                .expect("envelope")
                .is_some()
        );
    }
}
