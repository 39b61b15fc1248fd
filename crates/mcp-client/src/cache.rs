//! Reuse of cacheable stateless-era results (`ttlMs`) for as long as the
//! server allows.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mcp_types::RawJson;

/// Entries kept at most; past this the soonest to expire goes first. List
/// results are few (one per method and page), so this only stops a server
/// handing out endless cursors from growing the cache without bound.
const MAX_ENTRIES: usize = 256;

/// Cacheable results by method and key, with their expiry. Pure state: the
/// caller passes `now`.
#[derive(Default)]
pub(crate) struct ResultCache {
    entries: HashMap<String, (Instant, RawJson)>,
}

impl ResultCache {
    /// The key of one page of a list method.
    pub(crate) fn key(method: &str, cursor: Option<&str>) -> String {
        format!("{method}\0{}", cursor.unwrap_or(""))
    }

    /// A result still fresh at `now`; an expired one is dropped.
    pub(crate) fn get(&mut self, key: &str, now: Instant) -> Option<RawJson> {
        match self.entries.get(key) {
            Some((expires, raw)) if *expires > now => Some(raw.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `raw` until its `ttlMs` passes (at most `max_ttl`), if it has
    /// one above zero.
    pub(crate) fn insert(&mut self, key: String, raw: &RawJson, now: Instant, max_ttl: Duration) {
        let Some(ttl) = ttl(raw) else { return };
        // A server's hint never overflows the clock nor outlives the cap.
        let Some(expires) = now.checked_add(ttl.min(max_ttl)) else {
            return;
        };
        if self.entries.len() >= MAX_ENTRIES && !self.entries.contains_key(&key) {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (expires, _))| *expires)
                .map(|(k, _)| k.clone())
            {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (expires, raw.clone()));
    }

    /// Forgets every result of the methods starting with `prefix` (after a
    /// `list_changed` notification).
    pub(crate) fn invalidate(&mut self, prefix: &str) {
        self.entries.retain(|key, _| !key.starts_with(prefix));
    }
}

/// How long a result may be reused: its `ttlMs`, if above zero (read as
/// the result types read it: a negative one is 0).
fn ttl(raw: &RawJson) -> Option<Duration> {
    let ttl = raw.parse::<mcp_types::CacheableResult>().ok()?.ttl_ms?;
    (ttl > 0).then(|| Duration::from_millis(ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn a_huge_ttl_is_capped_and_never_overflows_the_clock() {
        let mut cache = ResultCache::default();
        let now = Instant::now();
        let huge = raw(r#"{"ttlMs":18446744073709551615}"#);
        cache.insert("k".into(), &huge, now, HOUR);
        assert!(
            cache
                .get("k", now + HOUR - Duration::from_millis(1))
                .is_some()
        );
        assert!(
            cache.get("k", now + HOUR).is_none(),
            "capped at the config's hour"
        );
        // No cap at all: the clock is not overflowed (the entry is kept
        // where the clock can hold its expiry, dropped where it cannot).
        cache.insert("m".into(), &huge, now, Duration::MAX);
        let _ = cache.get("m", now);
    }

    fn raw(json: &str) -> RawJson {
        RawJson::from_string(json.into()).expect("json")
    }

    #[test]
    fn a_result_is_reused_until_its_ttl_passes() {
        let mut cache = ResultCache::default();
        let now = Instant::now();
        let key = ResultCache::key("tools/list", None);
        cache.insert(key.clone(), &raw(r#"{"tools":[],"ttlMs":1000}"#), now, HOUR);
        assert!(cache.get(&key, now + Duration::from_millis(999)).is_some());
        assert!(cache.get(&key, now + Duration::from_millis(1000)).is_none());
    }

    #[test]
    fn results_without_a_ttl_are_not_kept() {
        let mut cache = ResultCache::default();
        let now = Instant::now();
        cache.insert("k".into(), &raw(r#"{"tools":[]}"#), now, HOUR);
        cache.insert("z".into(), &raw(r#"{"tools":[],"ttlMs":0}"#), now, HOUR);
        cache.insert("n".into(), &raw(r#"{"tools":[],"ttlMs":-1}"#), now, HOUR);
        assert!(cache.get("k", now).is_none());
        assert!(cache.get("z", now).is_none());
        assert!(cache.get("n", now).is_none());
    }

    #[test]
    fn the_cache_stays_bounded() {
        let mut cache = ResultCache::default();
        let now = Instant::now();
        for i in 0..(MAX_ENTRIES + 10) {
            let ttl = 1000 + i;
            cache.insert(
                format!("k{i}"),
                &raw(&format!(r#"{{"ttlMs":{ttl}}}"#)),
                now,
                HOUR,
            );
        }
        assert_eq!(cache.entries.len(), MAX_ENTRIES);
        assert!(
            cache.get("k0", now).is_none(),
            "the soonest to expire went first"
        );
    }

    #[test]
    fn invalidation_drops_one_family() {
        let mut cache = ResultCache::default();
        let now = Instant::now();
        let entry = raw(r#"{"ttlMs":1000}"#);
        cache.insert(ResultCache::key("tools/list", None), &entry, now, HOUR);
        cache.insert(ResultCache::key("prompts/list", None), &entry, now, HOUR);
        cache.invalidate("tools/");
        assert!(
            cache
                .get(&ResultCache::key("tools/list", None), now)
                .is_none()
        );
        assert!(
            cache
                .get(&ResultCache::key("prompts/list", None), now)
                .is_some()
        );
    }
}
