//! The `requestState` unsealer: a client hands back the state an
//! input-required result carried (2026-07-28), so the server opens bytes a
//! peer controls. `StateSealer::open_at` on arbitrary tokens, and on tokens
//! the sealer wrote then altered.
//!
//! Input: byte 0 how to alter the token (its low 2 bits what, the rest
//! where), then the state, a newline, the principal (empty for none), a
//! newline, and the tool arguments as a JSON object.
//!
//! Checks: no panic; nothing opens but what the sealer sealed, unaltered,
//! for the same binding (method, name, arguments in any key order,
//! principal), before it expires.
#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use mcp_server::fuzzing::{Binding, StateSealer};
use mcp_types::JsonObject;

fuzz_target!(|data: &[u8]| {
    let sealer = StateSealer::new(b"current secret", &[b"previous secret"]);
    let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let binding = Binding::new("tools/call", "book", None, None);

    // Whatever a client makes up does not open.
    if let Ok(token) = std::str::from_utf8(data) {
        assert!(
            sealer.open_at(&binding, token, now).is_err(),
            "a made-up token opened"
        );
    }

    let Some((&alter, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut fields = text.splitn(3, '\n');
    let state = fields.next().unwrap_or("");
    let principal = fields.next().filter(|p| !p.is_empty());
    let arguments: Option<JsonObject> = fields.next().and_then(|a| serde_json::from_str(a).ok());
    let binding = Binding::new("tools/call", "book", arguments.as_ref(), principal);
    let token = sealer.seal_at(&binding, &state, now);

    // Sealed, it opens for the same request, its arguments in any order.
    assert_eq!(sealer.open_at(&binding, &token, now).as_deref(), Ok(state));
    if let Some(arguments) = &arguments {
        let reversed: JsonObject = arguments
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let same = Binding::new("tools/call", "book", Some(&reversed), principal);
        assert_eq!(sealer.open_at(&same, &token, now).as_deref(), Ok(state));
    }
    // Not for another request or principal, nor once expired.
    let other = Binding::new("tools/call", "other", arguments.as_ref(), principal);
    assert!(sealer.open_at(&other, &token, now).is_err());
    let someone = Binding::new(
        "tools/call",
        "book",
        arguments.as_ref(),
        Some("\u{0}someone else"),
    );
    if principal != Some("\u{0}someone else") {
        assert!(sealer.open_at(&someone, &token, now).is_err());
    }
    let later = now + Duration::from_secs(24 * 60 * 60);
    assert!(sealer.open_at(&binding, &token, later).is_err());

    // Altered anywhere (a byte changed, cut or added), it does not open.
    let mut bytes = token.clone().into_bytes();
    let at = usize::from(alter >> 2) * bytes.len() / 64;
    match alter & 3 {
        0 => bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' },
        1 => bytes[at] ^= 0x20,
        2 => bytes.truncate(at),
        _ => bytes.insert(at, b'A'),
    }
    let Ok(altered) = String::from_utf8(bytes) else {
        return;
    };
    if altered != token {
        // Base64 without padding: changing only the unused low bits of the
        // last character decodes to the same bytes.
        if let Ok(opened) = sealer.open_at(&binding, &altered, now) {
            assert_eq!(opened, state);
            assert_eq!(altered.len(), token.len());
            assert_eq!(altered[..altered.len() - 1], token[..token.len() - 1]);
        }
    }
});
