//! A hostile stdio server (`--mcp-test-role=hostile-stdio`): it speaks
//! JSON-RPC by hand, in the handshake era, so that every piece of text it
//! sends, names included, carries escape sequences no server built with the
//! SDK would be allowed to register. What the CLI prints of it is checked
//! in `tests/cli.rs`.
//!
//! Tools: `result` (a text result), `error` (a JSON-RPC error with `data`),
//! `log` (two log messages, then a result), `progress` (a progress report
//! with a message, then a result), `ask` (a form elicitation, then a
//! result).

use std::io::{BufRead as _, Write as _};

use serde_json::{Value, json};

/// Text that would take over a terminal printed raw: a window title
/// (OSC 0), a clipboard write (OSC 52), a screen clear, a C1 CSI (`\u{9b}`),
/// a right-to-left override, DEL, a backspace and a carriage return.
pub const HOSTILE: &str = "hostile\u{1b}]0;pwned title\u{7}\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\u{9b}31mred\u{202e}fdp.exe\u{7f}\u{8}\rover";

/// How the escaped text reads, piece by piece, in text mode.
pub const ESCAPED: &[&str] = &[
    r"\x1b]0;pwned title\x07",
    r"\x1b]52;c;cm0gLXJmIH4=\x07",
    r"\x1b[2J",
    r"\u{9b}31mred",
    r"\u{202e}fdp.exe",
    r"\x7f\x08\x0dover",
];

/// Characters that must never reach the CLI's output raw in text mode:
/// controls other than newline and tab (C0, DEL, C1) and bidi controls.
pub fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// Serves until stdin closes.
pub fn serve() {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    while let Some(Ok(line)) = lines.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // Notifications and answers to our own requests need no answer.
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let id = id.clone();
        let answer = match method {
            "initialize" => Ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "logging": {}},
                "serverInfo": {"name": HOSTILE, "version": "1"},
                "instructions": HOSTILE,
            })),
            "ping" | "logging/setLevel" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": [
                {"name": HOSTILE, "description": HOSTILE, "inputSchema": {"type": "object"}},
                {"name": "result", "description": "a text result", "inputSchema": {"type": "object"}},
            ]})),
            "resources/list" => Ok(json!({"resources": [
                {"uri": format!("file:///{HOSTILE}"), "name": HOSTILE, "description": HOSTILE,
                 "mimeType": HOSTILE},
            ]})),
            "prompts/list" => Ok(json!({"prompts": [
                {"name": HOSTILE, "description": HOSTILE,
                 "arguments": [{"name": HOSTILE, "required": true}]},
            ]})),
            "tools/call" => call(&message["params"], &mut lines),
            _ => Err(json!({"code": -32601, "message": "method not found"})),
        };
        match answer {
            Ok(result) => send(&json!({"jsonrpc": "2.0", "id": id, "result": result})),
            Err(error) => send(&json!({"jsonrpc": "2.0", "id": id, "error": error})),
        }
    }
}

fn call(
    params: &Value,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
) -> Result<Value, Value> {
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    match params["name"].as_str() {
        Some("result") => Ok(text(&format!("{HOSTILE}\nsecond line\tafter a tab"))),
        Some("error") => Err(json!({
            "code": -32602,
            "message": HOSTILE,
            "data": {"detail": HOSTILE},
        })),
        Some("log") => {
            notify(
                "notifications/message",
                json!({"level": "error", "logger": HOSTILE, "data": HOSTILE}),
            );
            notify(
                "notifications/message",
                json!({"level": "error", "data": {"detail": HOSTILE}}),
            );
            Ok(text("logged"))
        }
        Some("progress") => {
            let token = params["_meta"]["progressToken"].clone();
            notify(
                "notifications/progress",
                json!({"progressToken": token, "progress": 1, "total": 2, "message": HOSTILE}),
            );
            Ok(text("done"))
        }
        Some("ask") => {
            send(&json!({
                "jsonrpc": "2.0",
                "id": "hostile-ask",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": HOSTILE,
                    "requestedSchema": {"type": "object", "properties": {
                        "answer": {"type": "string", "title": HOSTILE, "description": HOSTILE},
                    }},
                },
            }));
            // The client's answer comes before anything else it sends: the
            // call waits on it.
            for line in lines.by_ref() {
                let Ok(line) = line else { break };
                let answer: Value = serde_json::from_str(&line).unwrap_or_default();
                if answer["id"] == "hostile-ask" {
                    let action = answer["result"]["action"].as_str().unwrap_or("none");
                    return Ok(text(&format!("asked: {action}")));
                }
            }
            Err(json!({"code": -32603, "message": "the client went away"}))
        }
        _ => Err(json!({"code": -32602, "message": "no such tool"})),
    }
}

fn notify(method: &str, params: Value) {
    send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
}

fn send(message: &Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{message}");
    let _ = stdout.flush();
}
