//! The streamable HTTP server's checks on a request before it reaches a
//! session or an exchange: Host and Origin against DNS rebinding, the
//! media types, the protocol version header, and the stateless (2026-07-28)
//! validation ladder of the body's `_meta` against the headers.
//!
//! Input, like an HTTP request: byte 0 picks the server's allowed hosts
//! and origins, then `name: value` header lines, an empty line, the body.
//!
//! Checks: no panic; the verdicts agree with each other (a POST whose media
//! pass accepts SSE; the era is a handshake one exactly when the version
//! header passes in a session); a request the ladder accepts names a
//! stateless revision in both its header and its `_meta`, the same one.
#![no_main]

use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use mcp_transport::http::HttpServerConfig;
use mcp_transport::http::fuzzing::{check_headers, read_envelope};
use mcp_types::envelope::Envelope;
use mcp_types::{JsonRpcMessage, Revision};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let config = match mode % 3 {
        0 => HttpServerConfig::new(),
        1 => HttpServerConfig::new().allowed_hosts(["localhost", "127.0.0.1", "[::1]"]),
        _ => HttpServerConfig::new()
            .allowed_hosts(["localhost"])
            .allowed_origins(["http://localhost:3000"]),
    };
    let end = rest
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or(rest.len());
    let mut headers = HeaderMap::new();
    for line in rest[..end].split(|&b| b == b'\n') {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let value = &line[colon + 1..];
        let value = value.strip_prefix(b" ").unwrap_or(value);
        // What hyper would pass on: a valid name, a value without CR, LF or NUL.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(value),
        ) {
            headers.append(name, value);
        }
    }
    let body = rest.get(end + 2..).unwrap_or(&[]);

    let verdicts = check_headers(&config, &headers);
    if verdicts.post_media_ok {
        assert!(verdicts.accepts_sse, "{verdicts:?}");
    }
    assert_eq!(
        verdicts.era == "handshake",
        verdicts.protocol_version_ok,
        "{verdicts:?}"
    );

    let Ok(JsonRpcMessage::Request(request)) = JsonRpcMessage::from_slice(body) else {
        return;
    };
    let envelope = read_envelope(&request, &headers);
    if envelope == Ok(Envelope::Handshake) {
        assert_eq!(verdicts.era, "handshake", "{verdicts:?}");
    }
    if let Ok(Envelope::Stateless(_)) = envelope {
        let header = headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .expect("an accepted request names its version in the header");
        let revision = Revision::from_version(header).expect("a known revision");
        assert!(revision.is_stateless(), "{header} accepted as stateless");
        let params: serde_json::Value = request
            .params
            .as_ref()
            .expect("params")
            .parse()
            .expect("params are JSON");
        assert_eq!(
            params["_meta"][mcp_types::meta::PROTOCOL_VERSION].as_str(),
            Some(header),
            "the body's version differs from the header's"
        );
        assert_eq!(verdicts.era, "stateless");
    }
});
