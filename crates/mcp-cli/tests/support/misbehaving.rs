//! Servers that misbehave in one way each (`--mcp-test-role=misbehaving:<way>`),
//! speaking JSON-RPC over stdio by hand, as no server built with the SDK
//! could. Everything else they answer as a plain handshake-era server with
//! one tool, `call`, would. `tests/hostile.rs` drives them with the client
//! library and the CLI.
//!
//! They count what they receive that carries the id of one of the
//! client's own requests without a method (a response to the client's own
//! `tools/call`, which a client must never send) and say how many in their
//! answer to `ping` (`answeredBack`).

use std::io::{BufRead as _, Write as _};

use serde_json::{Value, json};

/// The ways a server misbehaves, as named in the role.
pub const WAYS: &[&str] = &[
    "oversized-answer",
    "not-utf8-answer",
    "array-answer",
    "null-id-error",
    "result-and-error",
    "silent",
    "exits-mid-call",
    "endless-pages",
    "cursor-loop",
    "negative-ttl",
    "notification-flood",
    "stray-then-exit",
    "discover-then-exit",
];

/// How large the oversized answer is: past the client's 32 MiB line limit.
const OVERSIZED: usize = 33 * 1024 * 1024;
/// The size of each page of the endless list.
const PAGE: usize = 1024 * 1024;

/// Serves the misbehaving `way` until stdin closes.
pub fn serve(way: &str) {
    assert!(WAYS.contains(&way), "unknown way {way}");
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // The ids of the client's requests seen so far, and how many messages
    // answered one of them back.
    let mut theirs: Vec<Value> = Vec::new();
    let mut answered_back = 0u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message["method"].as_str();
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) if theirs.contains(&id) => answered_back += 1,
            (Some("ping"), Some(id)) => {
                let answer = json!({"jsonrpc": "2.0", "id": id,
                                    "result": {"answeredBack": answered_back}});
                let _ = writeln!(out, "{answer}");
            }
            (Some(method), Some(id)) => {
                theirs.push(id.clone());
                if !answer(way, method, &message["params"], &id, &mut out) {
                    return;
                }
            }
            _ => {}
        }
        if out.flush().is_err() {
            return;
        }
    }
}

/// Answers one request; `false` to stop serving.
fn answer(
    way: &str,
    method: &str,
    params: &Value,
    id: &Value,
    out: &mut impl std::io::Write,
) -> bool {
    let send = |out: &mut dyn std::io::Write, message: Value| {
        let _ = writeln!(out, "{message}");
    };
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match (method, way) {
        ("initialize", _) => send(
            out,
            result(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": format!("misbehaving-{way}"), "version": "1"},
            })),
        ),
        ("server/discover", "negative-ttl") => send(
            out,
            result(json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": -1,
                "resultType": "complete",
            })),
        ),
        ("server/discover", "discover-then-exit") => {
            // Negotiated with, then gone: whatever is asked next must fail.
            send(
                out,
                result(json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "resultType": "complete",
                })),
            );
            let _ = out.flush();
            return false;
        }
        ("tools/list", "negative-ttl") => send(
            out,
            result(json!({
                "tools": [tool()],
                "ttlMs": -5000,
                "cacheScope": "galactic",
                "resultType": "complete",
            })),
        ),
        ("tools/list", "endless-pages") => {
            let n = params["cursor"]
                .as_str()
                .and_then(|c| c.parse::<u64>().ok())
                .unwrap_or(0);
            let padding = "x".repeat(PAGE);
            send(
                out,
                result(json!({
                    "tools": [{"name": format!("t{n}"), "description": padding,
                               "inputSchema": {"type": "object"}}],
                    "nextCursor": (n + 1).to_string(),
                })),
            );
        }
        ("tools/list", "cursor-loop") => send(
            out,
            result(json!({"tools": [tool()], "nextCursor": "again"})),
        ),
        ("tools/list", _) => send(out, result(json!({"tools": [tool()]}))),
        ("logging/setLevel", _) => send(out, result(json!({}))),
        ("tools/call", _) => return misbehave(way, id, out),
        _ => send(
            out,
            json!({"jsonrpc": "2.0", "id": id,
                   "error": {"code": -32601, "message": "method not found"}}),
        ),
    }
    true
}

fn tool() -> Value {
    json!({"name": "call", "description": "misbehaves", "inputSchema": {"type": "object"}})
}

/// Answers `tools/call` the way `way` misbehaves; `false` to stop serving.
fn misbehave(way: &str, id: &Value, out: &mut impl std::io::Write) -> bool {
    let id_text = id.to_string();
    let written = match way {
        "oversized-answer" => {
            let text = "x".repeat(OVERSIZED);
            writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
            )
        }
        "not-utf8-answer" => {
            let mut line = format!(
                r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[{{"type":"text","text":""#
            )
            .into_bytes();
            line.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
            line.extend_from_slice(b"\"}]}}\n");
            out.write_all(&line)
        }
        "array-answer" => writeln!(
            out,
            r#"[{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[]}}}}]"#
        ),
        "null-id-error" => writeln!(
            out,
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"something broke"}}}}"#
        ),
        "result-and-error" => writeln!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[]}},"error":{{"code":-32603,"message":"both"}}}}"#
        ),
        "silent" => Ok(()),
        "exits-mid-call" => return false,
        "stray-then-exit" => {
            // An answer to a request the client never sent, the real
            // answer, then the server is gone.
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":"nobody-asked","result":{{"content":[]}}}}"#
            );
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[{{"type":"text","text":"answered"}}]}}}}"#
            );
            let _ = out.flush();
            return false;
        }
        "notification-flood" => {
            for i in 0..20_000 {
                let _ = writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"flood {i}"}}}}"#
                );
            }
            writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[{{"type":"text","text":"survived"}}]}}}}"#
            )
        }
        _ => writeln!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[{{"type":"text","text":"fine"}}]}}}}"#
        ),
    };
    written.is_ok()
}
