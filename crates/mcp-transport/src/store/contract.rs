//! The contract every store backend must pass: one async function per seam,
//! given two handles on the same backend (two processes' views of one
//! Redis, or two clones of one in-memory store). A backend's tests call
//! them; each panics with what broke.
//!
//! ```no_run
//! # async fn f() {
//! use std::sync::Arc;
//! use mcp_transport::store::{InMemoryEventStore, contract};
//! let store = Arc::new(InMemoryEventStore::new(8));
//! contract::event_store(store.clone(), store, 8).await;
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_tasks::contract::unique;
use mcp_types::{ClientCapabilities, Implementation, InitializeRequestParams, SessionRecord};

use super::{EventStore, MessageBus, SessionStore, parse_event_id};

/// How long any one step may take.
const STEP: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(STEP, future).await {
        Ok(output) => output,
        Err(_) => panic!("{what} took longer than {STEP:?}"),
    }
}

/// Replays through `store`, failing the suite on a backend error.
async fn replay(store: &dyn EventStore, id: &str) -> Option<super::Replay> {
    within("replay_after", store.replay_after(id))
        .await
        .unwrap_or_else(|e| panic!("replay_after({id}) failed: {e}"))
}

/// The [`EventStore`] contract. `a` and `b` are two handles on one
/// backend; the backend keeps at most `max_events` events per stream (at
/// least 2, at most 64).
///
/// - every event after a `Last-Event-ID` comes back once, in order, with
///   the ids `append` returned, through either handle;
/// - an empty (priming) event is kept like any other;
/// - `end` is reported by a replay; `forget` makes the stream unknown;
/// - an id older than what is kept, or unknown, or malformed, is `None`
///   (resuming would lose events), never a replay with a gap.
pub async fn event_store(a: Arc<dyn EventStore>, b: Arc<dyn EventStore>, max_events: usize) {
    assert!((2..=64).contains(&max_events), "max_events out of range");
    let stream = unique("stream");
    let priming = a.append(&stream, Bytes::new());
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(a.append(&stream, Bytes::from(format!("{{\"n\":{n}}}"))));
    }
    let mut all = vec![priming.clone()];
    all.extend(ids.iter().cloned());
    let distinct: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "event ids must be unique: {all:?}"
    );

    // The writer's own handle sees its writes; then the other one does.
    let mine = replay(a.as_ref(), &priming)
        .await
        .expect("own stream known");
    let other = replay(b.as_ref(), &priming)
        .await
        .expect("another handle knows the stream");
    for found in [&mine, &other] {
        assert_eq!(found.stream, stream);
        assert!(!found.ended, "not ended yet");
        let got: Vec<_> = found.events.iter().map(|(id, _)| id.clone()).collect();
        assert_eq!(got, ids, "every event after the id, once, in order");
        assert_eq!(found.events[2].1, Bytes::from_static(b"{\"n\":2}"));
    }
    let after_middle = replay(b.as_ref(), &ids[0]).await.expect("known");
    assert_eq!(after_middle.events.len(), 2, "only what followed");
    let after_last = replay(b.as_ref(), &ids[2]).await.expect("known");
    assert!(after_last.events.is_empty(), "nothing after the last event");

    // The end is part of the stream.
    let last = a.append(&stream, Bytes::from_static(b"{\"last\":true}"));
    a.end(&stream);
    let _ = replay(a.as_ref(), &ids[2]).await;
    let ended = replay(b.as_ref(), &ids[2]).await.expect("known");
    assert!(ended.ended, "a replay after end says the stream ended");
    assert_eq!(ended.events.len(), 1);
    assert_eq!(ended.events[0].0, last);

    // Unknown and malformed ids.
    assert!(
        replay(b.as_ref(), &format!("{}_0", unique("nope")))
            .await
            .is_none()
    );
    assert!(replay(b.as_ref(), "no-sequence-number").await.is_none());

    // Bounded: the oldest go, and resuming from before them is refused.
    let bounded = unique("bounded");
    let first = a.append(&bounded, Bytes::from_static(b"{}"));
    let mut later = Vec::new();
    for _ in 0..(3 * max_events) {
        later.push(a.append(&bounded, Bytes::from_static(b"{}")));
    }
    assert!(
        replay(a.as_ref(), &first).await.is_none(),
        "an id older than what is kept must not replay with a gap"
    );
    let recent = &later[later.len() - 2];
    let tail = replay(b.as_ref(), recent).await.expect("recent ids resume");
    assert_eq!(tail.events.len(), 1);
    // A peer's id past any sequence number (its successor overflows).
    let (known, _) = parse_event_id(recent).expect("the store's own id");
    assert!(
        replay(b.as_ref(), &format!("{known}_{}", u64::MAX))
            .await
            .is_none(),
        "an id no store reaches is unknown"
    );

    // Forgotten streams are gone for everyone.
    a.forget(&stream);
    let _ = replay(a.as_ref(), &priming).await;
    assert!(replay(b.as_ref(), &priming).await.is_none(), "forgotten");
}

fn record(version: &str) -> SessionRecord {
    let client = InitializeRequestParams::new(
        version,
        ClientCapabilities::default(),
        Implementation::new("contract-client", "1.0.0"),
    );
    let mut record = SessionRecord::new(version, client);
    record.log_level = Some(mcp_types::LoggingLevel::Warning);
    record.subscriptions = vec!["file:///a".into(), "file:///b".into()];
    record
}

/// The [`SessionStore`] contract, on two handles of one backend:
/// what one saves the other loads unchanged; `touch` and `load` renew the
/// time to live; a session unused past it is gone; `delete` ends it for
/// both; unknown ids are `None`/`false`, never an error.
pub async fn session_store(a: Arc<dyn SessionStore>, b: Arc<dyn SessionStore>) {
    let long = Duration::from_secs(60);
    let id = unique("session");
    assert_eq!(within("load", b.load(&id, long)).await.expect("load"), None);
    assert!(!within("touch", b.touch(&id, long)).await.expect("touch"));
    assert!(!within("delete", b.delete(&id)).await.expect("delete"));

    let saved = record("2025-11-25");
    within("save", a.save(&id, &saved, long))
        .await
        .expect("save");
    let loaded = within("load", b.load(&id, long)).await.expect("load");
    assert_eq!(
        loaded.as_ref(),
        Some(&saved),
        "the other handle loads it unchanged"
    );
    assert!(within("touch", b.touch(&id, long)).await.expect("touch"));

    // A later save replaces the record.
    let mut changed = saved.clone();
    changed.subscriptions.clear();
    changed.log_level = Some(mcp_types::LoggingLevel::Debug);
    within("save", b.save(&id, &changed, long))
        .await
        .expect("save");
    let loaded = within("load", a.load(&id, long)).await.expect("load");
    assert_eq!(loaded, Some(changed));

    // Expiry, and renewal: `kept` is saved short-lived and renewed, `gone`
    // is not; once `gone` has expired, `kept` must still be there.
    let short = Duration::from_millis(150);
    let kept = unique("kept");
    let gone = unique("gone");
    within("save", a.save(&kept, &saved, short))
        .await
        .expect("save");
    within("save", a.save(&gone, &saved, short))
        .await
        .expect("save");
    assert!(within("touch", b.touch(&kept, long)).await.expect("touch"));
    within("expiry", async {
        // Each look renews, so look less often than the time to live.
        loop {
            tokio::time::sleep(short + Duration::from_millis(50)).await;
            if b.load(&gone, short).await.expect("load").is_none() {
                break;
            }
        }
    })
    .await;
    assert!(
        within("touch", a.touch(&kept, long)).await.expect("touch"),
        "a renewed session outlives its first time to live"
    );

    // Delete ends it for both handles.
    assert!(within("delete", b.delete(&id)).await.expect("delete"));
    assert_eq!(within("load", a.load(&id, long)).await.expect("load"), None);
    assert!(!within("touch", a.touch(&id, long)).await.expect("touch"));
    let _ = within("delete", a.delete(&kept)).await;
}

/// The [`MessageBus`] contract, on two handles of one backend: what one
/// publishes on a topic reaches every subscriber of that topic on either
/// handle, once each, in order; nothing of another topic does.
pub async fn message_bus(a: Arc<dyn MessageBus>, b: Arc<dyn MessageBus>) {
    let topic = unique("topic");
    let other = unique("other");
    let mut first = within("subscribe", b.subscribe(&topic))
        .await
        .expect("subscribe");
    let mut second = within("subscribe", a.subscribe(&topic))
        .await
        .expect("subscribe");
    let mut elsewhere = within("subscribe", b.subscribe(&other))
        .await
        .expect("subscribe");
    for n in 0..3u8 {
        within("publish", a.publish(&topic, Bytes::from(vec![n])))
            .await
            .expect("publish");
    }
    within("publish", b.publish(&other, Bytes::from_static(b"other")))
        .await
        .expect("publish");
    within("publish", a.publish(&topic, Bytes::from_static(b"end")))
        .await
        .expect("publish");
    for receiver in [&mut first, &mut second] {
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(within("receive", receiver.recv()).await.expect("receive"));
        }
        assert_eq!(
            got,
            vec![
                Bytes::from_static(&[0]),
                Bytes::from_static(&[1]),
                Bytes::from_static(&[2]),
                Bytes::from_static(b"end"),
            ],
            "each message once, in order, and none of another topic"
        );
    }
    let got = within("receive", elsewhere.recv()).await.expect("receive");
    assert_eq!(got, Bytes::from_static(b"other"));
}
