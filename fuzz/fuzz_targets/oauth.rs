//! The OAuth client's readers of what a protected resource and an
//! authorization server send: the `WWW-Authenticate` challenge, the
//! protected resource metadata (with its `resource` check), the
//! authorization server metadata, and the token endpoint's answer.
//!
//! Input: byte 0 which reader (0 the challenge, 1 resource metadata, 2
//! server metadata, 3 a token answer), byte 1 which MCP server URL, bytes
//! 2 and 3 the HTTP status (big-endian), then the header or body.
//!
//! Checks: no panic; a resource the check accepts is on the server's
//! origin and a whole-segment prefix of its path; a token answer read as a
//! success came with a 2xx status and an access token.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_client::auth::fuzzing::{
    parse_challenge, read_resource_metadata, read_server_metadata, read_token_answer,
};
use url::Url;

const SERVERS: &[&str] = &[
    "https://mcp.example.com/mcp",
    "https://mcp.example.com/",
    "http://127.0.0.1:8080/a/b/",
];

fuzz_target!(|data: &[u8]| {
    let [which, server, status_high, status_low, body @ ..] = data else {
        return;
    };
    let server = SERVERS[usize::from(*server) % SERVERS.len()];
    let status = u16::from_be_bytes([*status_high, *status_low]);
    match which % 4 {
        0 => {
            if let Ok(header) = std::str::from_utf8(body) {
                let _ = parse_challenge(header);
            }
        }
        1 => {
            if read_resource_metadata(body, server).is_err() {
                return;
            }
            // Members the reader ignores are skipped unchecked (serde_json
            // does not validate their UTF-8), so a Value may not parse.
            let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            if let Some(resource) = value["resource"].as_str() {
                let resource = Url::parse(resource).expect("an accepted resource parses");
                let server = Url::parse(server).expect("a server URL");
                assert_eq!(resource.origin(), server.origin());
                let path = resource.path().trim_end_matches('/');
                let rest = server.path().strip_prefix(path).expect("a prefix");
                assert!(rest.is_empty() || rest.starts_with('/'));
            }
        }
        2 => {
            let _ = read_server_metadata(body);
        }
        _ => {
            if let Ok(answer) = read_token_answer(status, body) {
                assert!((200..300).contains(&status));
                assert!(answer.access.is_some());
            }
        }
    }
});
