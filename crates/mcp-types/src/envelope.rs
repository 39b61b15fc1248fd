//! The era of a request, decided once, where it enters: from the HTTP
//! headers where the transport has them, else from `params._meta`. Every
//! transport reads a request's [`Envelope`] with [`read`] and hands it down
//! in the request's context; nothing above reads `_meta` for the era again.
//!
//! A stateless (2026-07-28) request passes the validation ladder here, in
//! the spec's order: a core method of the other era is `-32601`; a `_meta`
//! without the protocol version and the client's capabilities (an object)
//! is `-32602`; headers that disagree with the body are `-32001`; a version
//! not spoken statelessly is `-32022`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::errors::UnsupportedProtocolVersionData;
use crate::json::JsonStr;
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::messages::ClientRequest;
use crate::method_table::{MessageKind, MethodInfo, Side};
use crate::revision::{Era, Revision};
use crate::{ErrorCode, meta, routing, tasks_ext};

/// What a request's envelope says of its era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// A request of a handshake-era session (no stateless version named).
    Handshake,
    /// A stateless request at this revision, its envelope checked.
    Stateless(Revision),
}

impl Envelope {
    /// The era.
    pub fn era(self) -> Era {
        match self {
            Envelope::Handshake => Era::Handshake,
            Envelope::Stateless(_) => Era::Stateless,
        }
    }
}

/// The routing headers a streamable HTTP request came with, as far as the
/// era needs them: `MCP-Protocol-Version`, and up to two values each of
/// `Mcp-Method` and `Mcp-Name` (two tell a repeated header).
#[derive(Debug, Clone, Copy, Default)]
pub struct RoutingHeaders<'a> {
    /// `MCP-Protocol-Version`, if sent.
    pub protocol_version: Option<&'a str>,
    /// The `Mcp-Method` values.
    pub methods: &'a [&'a str],
    /// The `Mcp-Name` values.
    pub names: &'a [&'a str],
}

impl Revision {
    /// The era an HTTP request's `MCP-Protocol-Version` header names: none,
    /// or a handshake revision, is the handshake era; `None` for a version
    /// this SDK does not know.
    pub fn era_of_header(version: Option<&str>) -> Option<Era> {
        match version {
            None => Some(Era::Handshake),
            Some(version) => Revision::from_version(version).map(Revision::era),
        }
    }
}

/// Reads `request`'s envelope: with `headers` (streamable HTTP), the
/// `MCP-Protocol-Version` header says the era and a stateless request must
/// agree with its headers; without (stdio, memory), `_meta` naming a
/// protocol version makes a request stateless.
///
/// A borrowed, shallow scan of the params: the version, the capabilities'
/// shape and the routed name are read, nothing is built into a tree.
///
/// # Errors
/// The refusal to answer a stateless request with (see the [module
/// docs](self) for the ladder).
///
/// ```
/// use mcp_types::envelope::{Envelope, read};
/// use mcp_types::{RawJson, Revision};
///
/// let params = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities":{}}}"#;
/// let params = RawJson::from_string(params.into()).unwrap();
/// assert_eq!(read("tools/list", Some(&params), None), Ok(Envelope::Stateless(Revision::V2026_07_28)));
/// assert_eq!(read("tools/list", None, None), Ok(Envelope::Handshake));
/// ```
pub fn read(
    method: &str,
    params: Option<&RawJson>,
    headers: Option<&RoutingHeaders<'_>>,
) -> Result<Envelope, ErrorObject> {
    if let Some(headers) = headers {
        if Revision::era_of_header(headers.protocol_version) == Some(Era::Handshake) {
            return Ok(Envelope::Handshake);
        }
    }
    let fields: Fields<'_> = match params {
        Some(params) if params.is_object() => params.parse().unwrap_or_default(),
        _ => Fields::default(),
    };
    let routed = match routing::name_field(method) {
        Some("uri") => fields.uri,
        Some("taskId") => fields.task_id,
        Some(_) => fields.name,
        None => Routed::default(),
    };
    // A repeated member the request routes by is refused, as a repeated
    // `_meta` is (by the parse failing): the typed parse refuses both, and
    // the two readings must agree. Other members may repeat: the typed
    // parse of a request without them ignores them too.
    let (meta, routed) = if routed.repeated {
        (Meta::default(), None)
    } else {
        (fields.meta.unwrap_or_default(), routed.value)
    };
    // Only HTTP routing headers are checked against the name.
    let name = headers.and_then(|_| string(routed));
    judge(
        method,
        Facts {
            named_version: meta.version.is_some(),
            version: string(meta.version),
            capabilities_ok: meta.capabilities.is_some_and(is_object),
            name,
        },
        headers,
    )
}

/// [`read`] with HTTP routing headers, from a request already parsed into
/// its type: the same answer, without reading the params again (the
/// streamable HTTP server parses a stateless request once, at the edge, and
/// reads its envelope from that).
/// `None` for a request whose routed name this does not know how to read
/// from its type (none today): read the params then.
///
/// The answer is [`read`]'s for a request parsed from an object (a derived
/// struct also takes an array of its fields, which [`read`] refuses: parse
/// only objects). The typed parse refuses what the scan refuses as
/// malformed (a non-string version or name, a repeated `_meta` or routed
/// member, capabilities that are not an object), so a request either
/// parses and is judged here, or does not and is judged by [`read`].
pub fn read_parsed(
    request: &ClientRequest,
    headers: &RoutingHeaders<'_>,
) -> Option<Result<Envelope, ErrorObject>> {
    let method = request.method();
    let name = match request {
        ClientRequest::CallTool(p) => Some(p.name.as_str()),
        ClientRequest::GetPrompt(p) => Some(p.name.as_str()),
        ClientRequest::ReadResource(p) => Some(p.uri.as_str()),
        ClientRequest::GetTask(p) | ClientRequest::CancelTask(p) => Some(p.task_id.as_str()),
        _ if routing::name_field(method).is_some() => return None,
        _ => None,
    };
    let meta = request.meta();
    let version = meta.and_then(|m| m.protocol_version.as_deref());
    let facts = Facts {
        named_version: version.is_some(),
        version: version.map(Cow::Borrowed),
        capabilities_ok: meta.is_some_and(|m| m.client_capabilities.is_some()),
        name: name.map(Cow::Borrowed),
    };
    Some(judge(method, facts, Some(headers)))
}

/// What the ladder reads of a request, however it was read.
struct Facts<'a> {
    /// Whether `_meta` names a protocol version at all (a string or not).
    named_version: bool,
    /// The protocol version `_meta` names, if a string.
    version: Option<Cow<'a, str>>,
    /// Whether `_meta` carries the client's capabilities, an object.
    capabilities_ok: bool,
    /// The body's routed name (`name`, `uri` or `taskId`), if a string.
    name: Option<Cow<'a, str>>,
}

/// The validation ladder of the [module docs](self), once for both readings.
fn judge(
    method: &str,
    facts: Facts<'_>,
    headers: Option<&RoutingHeaders<'_>>,
) -> Result<Envelope, ErrorObject> {
    if let Some(headers) = headers {
        if Revision::era_of_header(headers.protocol_version) == Some(Era::Handshake) {
            return Ok(Envelope::Handshake);
        }
    }
    if headers.is_none() && !facts.named_version {
        // Over stdio or memory, a request naming no version follows its
        // session.
        return Ok(Envelope::Handshake);
    }
    // A core method this era does not have (`initialize`, `ping`, …) is
    // -32601 whatever else is wrong with the request. A method the core
    // protocol does not define may be an extension's (SEP-2133): the
    // server that serves the request decides.
    let exists = MethodInfo::lookup(method, Revision::LATEST_STATELESS, Side::Client)
        .is_some_and(|m| m.kind == MessageKind::Request);
    // The tasks extension redefines three 2025-11-25 core methods (SEP-2663).
    let redefined = tasks_ext::METHODS.contains(&method);
    if !exists && !redefined && MethodInfo::find(method).is_some() {
        return Err(ErrorObject::method_not_found(method));
    }
    let Some(version) = facts.version.filter(|_| facts.capabilities_ok) else {
        return Err(ErrorObject::invalid_params(format!(
            "`params._meta` must carry `{}` and `{}` (an object) at this protocol version",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES
        )));
    };
    if let Some(headers) = headers {
        let mismatch = |what: String| Err(ErrorObject::new(ErrorCode::HEADER_MISMATCH, what));
        let header_version = headers.protocol_version.unwrap_or("");
        if header_version != version {
            return mismatch(format!(
                "the MCP-Protocol-Version header `{header_version}` differs from the body's \
                 `{version}`"
            ));
        }
        if let Err(what) = routing::check_method_and_name(
            method,
            facts.name.as_deref(),
            headers.methods,
            headers.names,
        ) {
            return mismatch(what);
        }
    }
    match Revision::from_version(&version).filter(|r| r.is_stateless()) {
        Some(revision) => Ok(Envelope::Stateless(revision)),
        None => Err(UnsupportedProtocolVersionData::stateless(&version)),
    }
}

/// The members of the params the envelope reads, borrowed: `_meta` (a
/// repeated one fails the parse) and the three a request may be routed by,
/// each noting whether it repeated; every other member is skipped, repeated
/// or not.
#[derive(Default)]
struct Fields<'a> {
    meta: Option<Meta<'a>>,
    name: Routed<'a>,
    uri: Routed<'a>,
    task_id: Routed<'a>,
}

/// A member a request may be routed by, and whether it appeared twice.
#[derive(Default)]
struct Routed<'a> {
    value: Option<&'a RawValue>,
    repeated: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("request params, an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut fields = Fields::default();
                while let Some(JsonStr(key)) = map.next_key()? {
                    let slot = match key.as_ref() {
                        "_meta" => {
                            if fields.meta.replace(map.next_value()?).is_some() {
                                return Err(serde::de::Error::duplicate_field("_meta"));
                            }
                            continue;
                        }
                        "name" => &mut fields.name,
                        "uri" => &mut fields.uri,
                        "taskId" => &mut fields.task_id,
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    slot.repeated |= slot.value.replace(map.next_value()?).is_some();
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// `_meta`'s two keys of the envelope ([`meta::PROTOCOL_VERSION`] and
/// [`meta::CLIENT_CAPABILITIES`]), read from an object only (a derived
/// struct would take an array too).
#[derive(Default)]
struct Meta<'a> {
    version: Option<&'a RawValue>,
    capabilities: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Meta<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Meta<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a `_meta` object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut meta = Meta::default();
                while let Some(JsonStr(key)) = map.next_key()? {
                    let slot = match key.as_ref() {
                        meta::PROTOCOL_VERSION => &mut meta.version,
                        meta::CLIENT_CAPABILITIES => &mut meta.capabilities,
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    // A repeated key is refused, as a derived struct does.
                    if slot.replace(map.next_value()?).is_some() {
                        return Err(serde::de::Error::custom("a repeated `_meta` key"));
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A JSON string's value, borrowed unless it holds escapes; `None` for any
/// other JSON.
fn string(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    serde_json::from_str::<JsonStr<'_>>(raw?.get())
        .ok()
        .map(|s| s.0)
}

/// Whether a value is a JSON object.
fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::{Envelope, Era, ErrorCode, ErrorObject, Revision, RoutingHeaders};
    use crate::RawJson;

    /// A request's method and params, as `read` takes them.
    struct Request(&'static str, RawJson);

    fn request(method: &'static str, params: &str) -> Request {
        Request(method, RawJson::from_string(params.into()).expect("json"))
    }

    fn read(
        request: &Request,
        headers: Option<&RoutingHeaders<'_>>,
    ) -> Result<Envelope, ErrorObject> {
        super::read(request.0, Some(&request.1), headers)
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn code(result: Result<Envelope, ErrorObject>) -> ErrorCode {
        result.expect_err("refused").code
    }

    #[test]
    fn without_headers_the_meta_says_the_era() {
        assert_eq!(
            read(&request("tools/list", &format!("{{{META}}}")), None),
            Ok(Envelope::Stateless(Revision::V2026_07_28))
        );
        assert_eq!(
            read(
                &request("tools/list", r#"{"_meta":{"progressToken":1}}"#),
                None
            ),
            Ok(Envelope::Handshake)
        );
        let no_caps = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        assert_eq!(
            code(read(&request("tools/list", no_caps), None)),
            ErrorCode::INVALID_PARAMS
        );
        let old = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}"#;
        assert_eq!(
            code(read(&request("tools/list", old), None)),
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        );
        assert_eq!(
            code(read(&request("ping", &format!("{{{META}}}")), None)),
            ErrorCode::METHOD_NOT_FOUND,
            "ping is not a stateless method"
        );
    }

    #[test]
    fn with_headers_the_header_says_the_era_and_the_body_must_agree() {
        let session = RoutingHeaders::default();
        assert_eq!(
            read(
                &request("tools/list", &format!("{{{META}}}")),
                Some(&session)
            ),
            Ok(Envelope::Handshake),
            "no version header: a session's request"
        );
        let call = request("tools/call", &format!(r#"{{"name":"echo",{META}}}"#));
        let agreeing = RoutingHeaders {
            protocol_version: Some("2026-07-28"),
            methods: &["tools/call"],
            names: &["echo"],
        };
        assert_eq!(
            read(&call, Some(&agreeing)),
            Ok(Envelope::Stateless(Revision::V2026_07_28))
        );
        let wrong_name = RoutingHeaders {
            names: &["other"],
            ..agreeing
        };
        assert_eq!(
            code(read(&call, Some(&wrong_name))),
            ErrorCode::HEADER_MISMATCH
        );
        let wrong_version = RoutingHeaders {
            protocol_version: Some("2099-01-01"),
            ..agreeing
        };
        assert_eq!(
            code(read(&call, Some(&wrong_version))),
            ErrorCode::HEADER_MISMATCH,
            "a header naming one version and the body another is a mismatch"
        );
        let no_meta = request("tools/call", r#"{"name":"echo"}"#);
        assert_eq!(
            code(read(&no_meta, Some(&agreeing))),
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn the_version_header_names_an_era_or_none() {
        assert_eq!(Revision::era_of_header(None), Some(Era::Handshake));
        assert_eq!(
            Revision::era_of_header(Some("2025-06-18")),
            Some(Era::Handshake)
        );
        assert_eq!(
            Revision::era_of_header(Some("2026-07-28")),
            Some(Era::Stateless)
        );
        assert_eq!(Revision::era_of_header(Some("1999-01-01")), None);
    }

    /// The typed reading answers every request it can read exactly as the
    /// scan does; a request whose typed parse fails is left to the scan.
    #[test]
    fn the_typed_reading_agrees_with_the_scan() {
        use crate::ClientRequest;
        let caps = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
        let v = |version: &str| format!(r#""io.modelcontextprotocol/protocolVersion":{version}"#);
        let now = v(r#""2026-07-28""#);
        let cases: Vec<(&str, String)> = vec![
            (
                "tools/call",
                format!(r#"{{"name":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"other","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"e\u0063ho","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"echo","_meta":{{{now}}}}}"#),
            ),
            (
                "tools/call",
                format!(
                    r#"{{"name":"echo","_meta":{{{now},"io.modelcontextprotocol/clientCapabilities":null}}}}"#
                ),
            ),
            (
                "tools/call",
                format!(
                    r#"{{"name":"echo","_meta":{{{now},"io.modelcontextprotocol/clientCapabilities":[]}}}}"#
                ),
            ),
            (
                "tools/call",
                format!(
                    r#"{{"name":"echo","_meta":{{{},{caps}}}}}"#,
                    v(r#""2025-11-25""#)
                ),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"echo","_meta":{{{},{caps}}}}}"#, v("7")),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"echo","_meta":{{{now},{caps},{now}}}}}"#),
            ),
            ("tools/call", r#"{"name":"echo"}"#.to_owned()),
            ("tools/list", format!(r#"{{"_meta":{{{now},{caps}}}}}"#)),
            ("ping", format!(r#"{{"_meta":{{{now},{caps}}}}}"#)),
            (
                "prompts/get",
                format!(r#"{{"name":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "resources/read",
                format!(r#"{{"uri":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "resources/read",
                format!(r#"{{"uri":"file:///x","_meta":{{{now},{caps}}}}}"#),
            ),
            // Repeated members: the routed one and `_meta` are refused by
            // both readings, others ignored by both.
            (
                "tools/call",
                format!(r#"{{"name":"echo","name":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"echo","_meta":{{{now},{caps}}},"_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/call",
                format!(r#"{{"name":"echo","uri":1,"uri":2,"_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tools/list",
                format!(r#"{{"name":"a","name":"b","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tasks/get",
                format!(r#"{{"taskId":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tasks/get",
                format!(r#"{{"taskId":"other","_meta":{{{now},{caps}}}}}"#),
            ),
            (
                "tasks/cancel",
                format!(r#"{{"taskId":"echo","taskId":"echo","_meta":{{{now},{caps}}}}}"#),
            ),
        ];
        let headers = |method: &'static str| RoutingHeaders {
            protocol_version: Some("2026-07-28"),
            methods: match method {
                "tools/call" => &["tools/call"],
                "tools/list" => &["tools/list"],
                "ping" => &["ping"],
                "prompts/get" => &["prompts/get"],
                "tasks/get" => &["tasks/get"],
                "tasks/cancel" => &["tasks/cancel"],
                _ => &["resources/read"],
            },
            names: &["echo"],
        };
        let mut typed = 0;
        for (method, params) in &cases {
            let request = request(method, params);
            let headers = headers(method);
            let scanned = read(&request, Some(&headers));
            match ClientRequest::parse_any_revision(method, Some(&request.1)) {
                Ok(parsed) => {
                    let read_typed = super::read_parsed(&parsed, &headers);
                    assert_eq!(read_typed, Some(scanned), "{method} {params}");
                    typed += 1;
                }
                Err(_) => assert!(scanned.is_err(), "{method} {params}: {scanned:?}"),
            }
        }
        assert!(typed >= 15, "most cases parse: {typed}");
    }
}
