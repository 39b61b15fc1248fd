//! Readers that accept what a peer gets slightly wrong where the spec asks
//! receivers to be lenient, instead of refusing the whole message: a cache
//! hint out of range is clamped, an unknown cache scope is ignored. Each
//! kind of leniency is logged once per process at `debug`, so a peer's bug
//! shows up in the logs without flooding them.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::result::CacheScope;

/// Logs `what` once per process (per `flag`).
fn once(flag: &AtomicBool, what: &str, value: &Value) {
    if !flag.swap(true, Ordering::Relaxed) {
        tracing::debug!(%value, "{what} (logged once)");
    }
}

/// A `ttlMs` cache hint as the spec reads it: a negative value counts as 0
/// (stale at once), a fraction is rounded down, a value past `u64` is
/// `u64::MAX`, and anything that is not a number is no hint at all.
pub(crate) fn ttl_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    static CLAMPED: AtomicBool = AtomicBool::new(false);
    static IGNORED: AtomicBool = AtomicBool::new(false);
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(ttl) => Some(ttl),
            None => {
                let clamped = n.as_f64().map_or(0, |f| {
                    // `as` saturates: negatives and NaN give 0, huge values u64::MAX.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let ttl = f.floor() as u64;
                    ttl
                });
                once(
                    &CLAMPED,
                    "a ttlMs cache hint out of range was clamped",
                    &Value::Number(n),
                );
                Some(clamped)
            }
        },
        Some(other) => {
            once(
                &IGNORED,
                "a ttlMs cache hint that is not a number was ignored",
                &other,
            );
            None
        }
    })
}

/// A `cacheScope`; a value this revision does not define is read as no
/// scope (which caches no more widely than `private`).
pub(crate) fn cache_scope<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<CacheScope>, D::Error> {
    static IGNORED: AtomicBool = AtomicBool::new(false);
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(value) => match CacheScope::deserialize(&value) {
            Ok(scope) => Some(scope),
            Err(_) => {
                once(&IGNORED, "an unknown cacheScope was ignored", &value);
                None
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use crate::result::CacheScope;

    #[derive(Deserialize)]
    struct Hints {
        #[serde(default, rename = "ttlMs", deserialize_with = "super::ttl_ms")]
        ttl_ms: Option<u64>,
        #[serde(
            default,
            rename = "cacheScope",
            deserialize_with = "super::cache_scope"
        )]
        cache_scope: Option<CacheScope>,
    }

    fn read(json: &str) -> Hints {
        serde_json::from_str(json).expect("lenient")
    }

    #[test]
    fn out_of_range_ttls_are_clamped_and_odd_ones_ignored() {
        let cases = [
            (r#"{"ttlMs":-1}"#, Some(0)),
            (r#"{"ttlMs":-1e300}"#, Some(0)),
            (r#"{"ttlMs":1500.9}"#, Some(1500)),
            (r#"{"ttlMs":1e300}"#, Some(u64::MAX)),
            (r#"{"ttlMs":18446744073709551615}"#, Some(u64::MAX)),
            (r#"{"ttlMs":5000}"#, Some(5000)),
            (r#"{"ttlMs":"5000"}"#, None),
            (r#"{"ttlMs":null}"#, None),
            (r#"{}"#, None),
        ];
        for (json, ttl) in cases {
            assert_eq!(read(json).ttl_ms, ttl, "{json}");
        }
    }

    #[test]
    fn an_unknown_cache_scope_is_no_scope() {
        assert_eq!(
            read(r#"{"cacheScope":"private"}"#).cache_scope,
            Some(CacheScope::Private)
        );
        assert_eq!(read(r#"{"cacheScope":"galactic"}"#).cache_scope, None);
        assert_eq!(read(r#"{"cacheScope":7}"#).cache_scope, None);
    }
}
