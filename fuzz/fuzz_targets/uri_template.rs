//! The RFC 6570 URI-template matcher a server runs on the URI a client
//! reads or subscribes to (`resources/read`, `resources/subscribe`), against
//! each resource template: `UriTemplate::parse`, `match_uri`, `expand`.
//!
//! Input: byte 0 how many times the URI's tail repeats (times 64), byte 1
//! which variables the expansion defines (bit i for the i-th), then the
//! template, a newline, and the URI after the template's leading literal.
//!
//! Checks: no panic; the matcher's work stays near-linear in the URI (the
//! tail repeated up to ~1 MiB makes a superlinear matcher hit libFuzzer's
//! timeout); a template prints back as itself; a template matches its own
//! expansion with plain values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_server::UriTemplate;

fuzz_target!(|data: &[u8]| {
    let [repeat, defined, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (template, tail) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(
        UriTemplate::parse(template.as_str()).as_ref(),
        Ok(&template)
    );

    // Plain values (unreserved characters only) come back out of the URI.
    let names: Vec<&str> = template.variables().collect();
    let value = |name: &str| {
        let i = names.iter().position(|n| *n == name)?;
        (defined >> (i % 8) & 1 == 1).then(|| format!("v{i}-x.y_z~"))
    };
    let uri = template.expand(value);
    assert!(
        template.match_uri(&uri).is_some(),
        "{template} does not match its own expansion {uri}"
    );

    // A peer's URI: the tail, repeated.
    let times = usize::from(*repeat) * 64 + 1;
    let times = times.min((1 << 20) / tail.len().max(1));
    let prefix = template.as_str().split('{').next().unwrap_or("");
    let _ = template.match_uri(&format!("{prefix}{}", tail.repeat(times)));
});
