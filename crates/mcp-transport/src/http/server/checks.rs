//! The checks a request passes before it reaches a session or an exchange:
//! Host and Origin (DNS rebinding), the media types, the protocol version,
//! and a stateless request's envelope (the ladder itself is
//! `mcp_types::envelope`'s, read from the request parsed into its type,
//! [`mcp_types::envelope::read_parsed`], or else from its params,
//! [`mcp_types::envelope::read`]).

use std::sync::Arc;

use http::header::{ACCEPT, AsHeaderName, CONTENT_TYPE, HOST, HeaderName, ORIGIN};
use http::{HeaderMap, Response, StatusCode};
use mcp_types::envelope::{Envelope, RoutingHeaders};
use mcp_types::{
    ClientRequest, Era, ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcRequest, RawJson, Revision,
    routing,
};

use super::HttpServerConfig;
use super::body::{HttpBody, jsonrpc_error};
use crate::http::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};

pub(super) fn header_str<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

// The MCP headers as parsed names: looked up by `&str`, a name is parsed
// and checked again on every request.
/// `Mcp-Session-Id`.
pub(super) static SESSION_ID: HeaderName = HeaderName::from_static(SESSION_ID_HEADER);
/// `MCP-Protocol-Version`.
pub(super) static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
/// `Last-Event-ID`.
pub(super) static LAST_EVENT_ID: HeaderName =
    HeaderName::from_static(routing::LAST_EVENT_ID_HEADER);
/// `Mcp-Method`.
static METHOD: HeaderName = HeaderName::from_static(routing::METHOD_HEADER);
/// `Mcp-Name`.
static NAME: HeaderName = HeaderName::from_static(routing::NAME_HEADER);

/// The values of header `name` that are visible ASCII, up to two: enough
/// to tell one from a repeated header, with nothing allocated.
fn header_values<'a>(headers: &'a HeaderMap, name: &HeaderName) -> ([&'a str; 2], usize) {
    let mut values = [""; 2];
    let mut count = 0;
    for value in headers.get_all(name).iter().filter_map(|v| v.to_str().ok()) {
        values[count] = value;
        count += 1;
        if count == values.len() {
            break;
        }
    }
    (values, count)
}

/// Whether the `Accept` list takes `media`.
pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    accepts_all(headers, [media])
}

/// Whether the `Accept` list takes every one of `media`, read in one pass.
fn accepts_all<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> bool {
    let mut taken = [false; N];
    let listed = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.as_bytes().split(|&b| b == b','));
    for part in listed {
        let part = before(part, b';').trim_ascii();
        if part == b"*/*" {
            return true;
        }
        for (wanted, taken) in media.iter().zip(taken.iter_mut()) {
            *taken |= part == wanted.as_bytes();
        }
    }
    taken.iter().all(|&t| t)
}

/// `text` up to the first `stop` (all of it without one). The media and
/// host checks split a few dozen bytes on every request: a plain loop over
/// them costs a fraction of `str::split`'s searcher, which is built for
/// long haystacks.
fn before(text: &[u8], stop: u8) -> &[u8] {
    text.iter()
        .position(|&b| b == stop)
        .map_or(text, |end| &text[..end])
}

fn host_name(authority: &str) -> &str {
    // `[::1]:8080` -> `[::1]`; `localhost:80` -> `localhost`.
    let bytes = authority.as_bytes();
    if bytes.first() == Some(&b'[') {
        return bytes
            .iter()
            .position(|&b| b == b']')
            .map_or(authority, |end| &authority[..=end]);
    }
    // An ASCII `:` ends a char, so the cut is on a char boundary.
    &authority[..before(bytes, b':').len()]
}

/// Host and Origin against DNS rebinding.
pub(super) fn check_origin(
    config: &HttpServerConfig,
    headers: &HeaderMap,
) -> Result<(), Response<HttpBody>> {
    let forbidden = |what: &str, value: &str| {
        tracing::warn!(
            what,
            value,
            "refused a request: not an allowed host; add it with HttpServerConfig::allow_host \
             (or allowed_origins) if this server is reached by that name"
        );
        Err(jsonrpc_error(
            StatusCode::FORBIDDEN,
            ErrorCode::INVALID_REQUEST,
            format!("{what} `{value}` is not allowed by this server"),
        ))
    };
    if let Some(hosts) = &config.allowed_hosts {
        let host = header_str(headers, HOST).unwrap_or("");
        if !hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host_name(host)))
        {
            return forbidden("Host", host);
        }
    }
    if let Some(origin) = header_str(headers, ORIGIN) {
        let allowed = match (&config.allowed_origins, &config.allowed_hosts) {
            (Some(origins), _) => origins.iter().any(|o| o.eq_ignore_ascii_case(origin)),
            (None, Some(hosts)) => origin.split_once("://").is_some_and(|(_, rest)| {
                hosts
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(host_name(rest)))
            }),
            (None, None) => true,
        };
        if !allowed {
            return forbidden("Origin", origin);
        }
    }
    Ok(())
}

/// A POST must accept both JSON and SSE and send JSON.
pub(super) fn check_post_media(headers: &HeaderMap) -> Result<(), Response<HttpBody>> {
    if !accepts_all(headers, ["application/json", "text/event-stream"]) {
        return Err(jsonrpc_error(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not Acceptable: the Accept header must list both application/json and \
             text/event-stream",
        ));
    }
    let json_content = header_str(headers, CONTENT_TYPE).is_some_and(|v| {
        before(v.as_bytes(), b';')
            .trim_ascii()
            .eq_ignore_ascii_case(b"application/json")
    });
    if !json_content {
        return Err(jsonrpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Unsupported Media Type: the Content-Type must be application/json",
        ));
    }
    Ok(())
}

/// The era a request's `MCP-Protocol-Version` header names (`None` for a
/// version this server does not know).
pub(super) fn era(headers: &HeaderMap) -> Option<Era> {
    Revision::era_of_header(header_str(headers, &PROTOCOL_VERSION))
}

/// Inside a session, the version header (when sent) must be a handshake one.
pub(super) fn check_protocol_version(headers: &HeaderMap) -> Result<(), Response<HttpBody>> {
    match header_str(headers, &PROTOCOL_VERSION) {
        None => Ok(()),
        Some(version) if Revision::from_version(version).is_some_and(|r| r.is_handshake()) => {
            Ok(())
        }
        Some(version) => Err(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version `{version}`; this endpoint \
                 speaks {}",
                Revision::HANDSHAKE.map(|r| r.as_str()).join(", ")
            ),
        )),
    }
}

/// The HTTP status of a stateless error answer (SPEC-MAP §3.1).
pub(super) fn status_for(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::INVALID_PARAMS
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The HTTP status of a stateless JSON answer.
pub(super) fn stateless_status(answer: &JsonRpcMessage) -> StatusCode {
    match answer {
        JsonRpcMessage::Error(e) => status_for(e.error.code),
        _ => StatusCode::OK,
    }
}

/// A stateless POST's request read at the edge with its routing headers:
/// its revision, or the refusal; with it the request parsed into its type,
/// for the handler (the envelope is read from that parse,
/// [`mcp_types::envelope::read_parsed`], so the params are read once). A
/// request that does not parse (an extension's method, params that do not
/// fit) has its envelope read from the params
/// ([`mcp_types::envelope::read`]) and goes down unparsed.
pub(super) fn read_envelope(
    request: &JsonRpcRequest,
    headers: &HeaderMap,
) -> Result<(Envelope, Option<Arc<ClientRequest>>), ErrorObject> {
    with_routing(headers, |routing| {
        // Parsed only where it can be used: the header names a stateless
        // revision (any other version is refused by the ladder, the scan's
        // work as cheap as before), and the params are an object (a
        // struct's derived parse also takes an array of its fields, which
        // the scan refuses).
        let params = request.params.as_ref();
        let stateless = Revision::era_of_header(routing.protocol_version) == Some(Era::Stateless);
        let parsed = (stateless && params.is_some_and(RawJson::is_object))
            .then(|| ClientRequest::parse_any_revision(&request.method, params).ok())
            .flatten();
        let envelope = match &parsed {
            Some(typed) => mcp_types::envelope::read_parsed(typed, routing),
            None => None,
        };
        let envelope = envelope
            .unwrap_or_else(|| mcp_types::envelope::read(&request.method, params, Some(routing)));
        envelope.map(|envelope| (envelope, parsed.map(Arc::new)))
    })
}

/// [`read_envelope`] by the scan alone, for the fuzz target's check that
/// the two readings agree.
#[cfg(feature = "fuzzing")]
pub(super) fn scan_envelope(
    request: &JsonRpcRequest,
    headers: &HeaderMap,
) -> Result<Envelope, ErrorObject> {
    with_routing(headers, |routing| {
        mcp_types::envelope::read(&request.method, request.params.as_ref(), Some(routing))
    })
}

/// The routing headers of a POST, as the envelope reads them.
fn with_routing<R>(headers: &HeaderMap, read: impl FnOnce(&RoutingHeaders<'_>) -> R) -> R {
    let (methods, method_count) = header_values(headers, &METHOD);
    let (names, name_count) = header_values(headers, &NAME);
    read(&RoutingHeaders {
        protocol_version: header_str(headers, &PROTOCOL_VERSION),
        methods: &methods[..method_count],
        names: &names[..name_count],
    })
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn host_names_drop_the_port() {
        assert_eq!(host_name("localhost:3000"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "[::1]");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("[::1"), "[::1");
        assert_eq!(host_name("localhost:"), "localhost");
        assert_eq!(host_name(""), "");
    }

    #[test]
    fn a_post_must_send_json_and_accept_both_media() {
        let post = |accept: &[&'static str], content_type: &'static str| {
            let mut headers = HeaderMap::new();
            for value in accept {
                headers.append(ACCEPT, HeaderValue::from_static(value));
            }
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            check_post_media(&headers).map_err(|r| r.status())
        };
        let both = ["application/json, text/event-stream"];
        assert_eq!(post(&both, "application/json"), Ok(()));
        assert_eq!(post(&both, "Application/JSON ; charset=utf-8"), Ok(()));
        assert_eq!(post(&both, "\tapplication/json\t"), Ok(()));
        // The two media in two headers, with parameters and spaces.
        let split = ["\ttext/event-stream ;q=1", " application/json;q=0.5 "];
        assert_eq!(post(&split, "application/json"), Ok(()));
        assert_eq!(post(&["*/*"], "application/json"), Ok(()));
        assert_eq!(
            post(&["application/json"], "application/json"),
            Err(StatusCode::NOT_ACCEPTABLE)
        );
        assert_eq!(
            post(
                &["application/jsonx, text/event-stream"],
                "application/json"
            ),
            Err(StatusCode::NOT_ACCEPTABLE)
        );
        assert_eq!(
            post(&both, "application/json-seq"),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            post(&both, "text/plain"),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
    }

    #[test]
    fn an_allowed_host_is_added_beside_the_defaults() {
        let host = |name: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(http::header::HOST, HeaderValue::from_static(name));
            headers
        };
        let config = HttpServerConfig::new().allow_host("mcp.example");
        assert!(check_origin(&config, &host("mcp.example:8080")).is_ok());
        assert!(check_origin(&config, &host("localhost:3000")).is_ok());
        assert!(check_origin(&config, &host("evil.example")).is_err());
        // After allow_any_host, allow_host narrows nothing.
        let any = HttpServerConfig::new()
            .allow_any_host()
            .allow_host("mcp.example");
        assert!(check_origin(&any, &host("evil.example")).is_ok());
    }

    #[test]
    fn accept_lists_are_read_with_parameters_and_wildcards() {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json;q=0.9, text/event-stream"),
        );
        assert!(accepts(&headers, "application/json"));
        assert!(accepts(&headers, "text/event-stream"));
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
        assert!(accepts(&headers, "text/event-stream"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/html"));
        assert!(!accepts(&headers, "application/json"));
    }
}
