//! `mcp_types::peek::peek`, the bounded scan for the `id` and shape of a
//! message that cannot be read whole (the first bytes of an overlong stdio
//! line or body, or bytes that are not JSON), and
//! `mcp_types::json::members`, which reads an object's members raw.
//!
//! Checks: no panic; when the input is a JSON object with exactly one
//! top-level `id` member, the scan of any prefix of it finds nothing or
//! that id, never another one (a wrong id would fail someone else's call);
//! a prefix never shows a shape the whole message does not have.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_types::RequestId;
use mcp_types::peek::{Shape, peek};

fn scan_id(bytes: &[u8]) -> Option<RequestId> {
    peek(bytes).id
}

fuzz_target!(|data: &[u8]| {
    let found = scan_id(data);
    let whole = peek(data).shape;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(members) = mcp_types::json::members(text) else {
        return;
    };
    let ids: Vec<_> = members.iter().filter(|(key, _)| key == "id").collect();
    let [(_, raw)] = ids[..] else {
        return;
    };
    let id = serde_json::from_str::<RequestId>(raw.get()).ok();
    if let Some(found) = &found {
        assert_eq!(Some(found), id.as_ref(), "scan_id read another id");
    }
    let step = (data.len() / 32).max(1);
    for cut in (0..data.len()).step_by(step) {
        if let Some(early) = scan_id(&data[..cut]) {
            assert_eq!(
                Some(&early),
                id.as_ref(),
                "scan_id read another id in a prefix of {cut} bytes"
            );
            assert_eq!(Some(&early), found.as_ref(), "a longer prefix lost the id");
        }
        let shape = peek(&data[..cut]).shape;
        assert!(
            shape == Shape::Unknown || shape == whole || whole == Shape::Unknown,
            "a prefix of {cut} bytes looked like {shape:?}, the whole like {whole:?}"
        );
    }
});
