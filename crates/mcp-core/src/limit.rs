//! Per-key rate and concurrency limits (feature `rate-limit`): how hard one
//! client may hit a server.
//!
//! A [`Limiter`] admits or refuses one request for a [`LimitKey`]: the
//! authenticated principal when there is one, else the session, else the
//! peer's address or the connection. The rate is a GCRA (leaky bucket) from
//! the `governor` crate; concurrency is a count per key, released when the
//! [`Admitted`] guard drops. It is applied in one place, the dispatcher's
//! request path ([`DispatcherConfig::with_rate_limit`](crate::DispatcherConfig::with_rate_limit)),
//! for every transport and both eras; a refusal is answered with one error
//! shape, [`Limited::to_error_object`], and the streamable HTTP server maps
//! the typed [`Limited`] of a request posted alone to 429 with
//! `Retry-After`.
//!
//! Every table is bounded: keys in the rate table are capped at
//! [`RateLimit::with_max_keys`]; when it is full even after forgetting keys
//! whose bucket is full again, new keys share one overflow bucket, so a
//! client inventing keys (forged session ids, say) is limited with the others
//! rather than growing memory or locking real clients out. A refusal is
//! logged at `warn` once per key per [`RateLimit::with_log_interval`], with
//! how many were refused since, never per request.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use mcp_types::{ErrorCode, ErrorObject};

/// How many requests a key may make, how fast, and how many at once.
///
/// The defaults beyond the rate: a burst of one period's requests, no
/// concurrency cap, 10,000 keys tracked, one log line per key per minute.
#[derive(Debug, Clone)]
pub struct RateLimit {
    quota: Quota,
    max_concurrent: Option<NonZeroU32>,
    max_keys: usize,
    log_interval: Duration,
}

impl RateLimit {
    /// At most `requests` per second per key (at least 1), with bursts of up
    /// to `requests`.
    pub fn per_second(requests: u32) -> Self {
        Self::with_quota(Quota::per_second(non_zero(requests)))
    }

    /// At most `requests` per minute per key (at least 1), with bursts of up
    /// to `requests`.
    pub fn per_minute(requests: u32) -> Self {
        Self::with_quota(Quota::per_minute(non_zero(requests)))
    }

    fn with_quota(quota: Quota) -> Self {
        Self {
            quota,
            max_concurrent: None,
            max_keys: 10_000,
            log_interval: Duration::from_secs(60),
        }
    }

    /// Lets a key send up to `burst` requests at once after a quiet spell
    /// (at least 1); the sustained rate stays as set.
    pub fn with_burst(mut self, burst: u32) -> Self {
        self.quota = self.quota.allow_burst(non_zero(burst));
        self
    }

    /// Caps the requests of one key running at the same time (at least 1).
    pub fn with_max_concurrent(mut self, requests: u32) -> Self {
        self.max_concurrent = Some(non_zero(requests));
        self
    }

    /// Caps how many keys the rate table tracks (default 10,000); beyond it,
    /// new keys share one overflow bucket.
    pub fn with_max_keys(mut self, keys: usize) -> Self {
        self.max_keys = keys.max(1);
        self
    }

    /// How often a key's refusals are logged at most (default one minute).
    pub fn with_log_interval(mut self, interval: Duration) -> Self {
        self.log_interval = interval;
        self
    }
}

fn non_zero(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN)
}

/// Whom a limit counts against.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitKey {
    /// The authenticated principal (for HTTP, the bearer token's issuer,
    /// subject and client).
    Principal(Arc<str>),
    /// A transport session (`Mcp-Session-Id`).
    Session(Arc<str>),
    /// The peer's IP address.
    Peer(IpAddr),
    /// One connection (stdio, in memory), by a number unique in the process.
    Connection(u64),
    /// New keys once the table is full: they share one bucket.
    Overflow,
}

impl LimitKey {
    /// The key for a request: its principal, else its session, else `fallback`.
    pub fn for_request(
        principal: Option<&Arc<str>>,
        session: Option<&Arc<str>>,
        fallback: LimitKey,
    ) -> LimitKey {
        match (principal, session) {
            (Some(principal), _) => LimitKey::Principal(principal.clone()),
            (None, Some(session)) => LimitKey::Session(session.clone()),
            (None, None) => fallback,
        }
    }
}

/// Shows what a log line may: a session only by its tag (the id is a
/// credential for the session).
impl fmt::Debug for LimitKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitKey::Principal(who) => write!(f, "principal {who}"),
            LimitKey::Session(id) => write!(f, "session {}", crate::session_tag(id)),
            LimitKey::Peer(ip) => write!(f, "peer {ip}"),
            LimitKey::Connection(n) => write!(f, "connection {n}"),
            LimitKey::Overflow => f.write_str("overflow bucket"),
        }
    }
}

impl fmt::Display for LimitKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Which limit refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitKind {
    /// Too many requests per period.
    Rate,
    /// Too many requests running at once.
    Concurrency,
}

/// A refused request: which limit, and when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// The limit that refused it.
    pub kind: LimitKind,
    /// How long until the key may send again (for concurrency, a short
    /// suggestion: a slot frees when a request ends).
    pub retry_after: Duration,
}

impl Limited {
    /// [`retry_after`](Self::retry_after) in whole seconds, rounded up, at
    /// least 1: the value of an HTTP `Retry-After` header.
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0);
        secs.max(1)
    }

    /// The JSON-RPC error a refused request is answered with:
    /// [`ErrorCode::RATE_LIMITED`], `data.retryAfterSeconds` and `data.limit`
    /// (`"rate"` or `"concurrency"`).
    pub fn to_error_object(&self) -> ErrorObject {
        let (limit, message) = match self.kind {
            LimitKind::Rate => ("rate", "too many requests"),
            LimitKind::Concurrency => ("concurrency", "too many requests running at once"),
        };
        let retry = self.retry_after_secs();
        ErrorObject::new(
            ErrorCode::RATE_LIMITED,
            format!("{message} from this client; retry after {retry} s"),
        )
        .with_data(serde_json::json!({ "retryAfterSeconds": retry, "limit": limit }))
    }
}

impl fmt::Display for Limited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error_object().message)
    }
}

impl std::error::Error for Limited {}

type Buckets = RateLimiter<LimitKey, HashMapStateStore<LimitKey>, DefaultClock>;

/// Admits or refuses requests per key under one [`RateLimit`]. Cheap to
/// share (`Arc`); every method takes `&self`.
pub struct Limiter {
    config: RateLimit,
    buckets: Buckets,
    running: Arc<Mutex<HashMap<LimitKey, u32>>>,
    refusals: Mutex<HashMap<LimitKey, Refusals>>,
}

struct Refusals {
    logged_at: Instant,
    since: u64,
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("config", &self.config)
            .field("keys", &self.buckets.len())
            .finish_non_exhaustive()
    }
}

impl Limiter {
    /// A limiter enforcing `config`.
    pub fn new(config: RateLimit) -> Self {
        let buckets = RateLimiter::new(
            config.quota,
            HashMapStateStore::default(),
            DefaultClock::default(),
        );
        Self {
            config,
            buckets,
            running: Arc::default(),
            refusals: Mutex::default(),
        }
    }

    /// The settings this limiter enforces.
    pub fn config(&self) -> &RateLimit {
        &self.config
    }

    /// Admits one request of `key`, or says which limit refuses it. A
    /// refusal takes nothing from the key's allowance; an admission holds a
    /// concurrency slot until the returned guard drops.
    pub fn admit(&self, key: LimitKey) -> Result<Admitted, Limited> {
        let key = self.bounded(key);
        let admitted = self
            .take_slot(&key)
            .and_then(|slot| match self.buckets.check_key(&key) {
                Ok(()) => Ok(slot),
                Err(not_until) => {
                    let retry_after = not_until.wait_time_from(self.buckets.clock().now());
                    Err(Limited {
                        kind: LimitKind::Rate,
                        retry_after,
                    })
                }
            });
        if let Err(limited) = &admitted {
            self.note_refusal(&key, limited);
        }
        admitted
    }

    /// `key`, or the overflow bucket when the table is full of other keys.
    fn bounded(&self, key: LimitKey) -> LimitKey {
        if self.buckets.len() < self.config.max_keys {
            return key;
        }
        // Forget keys whose bucket is full again: they are as good as new.
        self.buckets.retain_recent();
        if self.buckets.len() < self.config.max_keys {
            return key;
        }
        tracing::warn!(
            keys = self.buckets.len(),
            "rate limit table full; new clients share one overflow bucket (raise \
             RateLimit::with_max_keys if this many clients are real)"
        );
        LimitKey::Overflow
    }

    fn take_slot(&self, key: &LimitKey) -> Result<Admitted, Limited> {
        let Some(max) = self.config.max_concurrent else {
            return Ok(Admitted { _slot: None });
        };
        let mut running = lock(&self.running);
        let count = running.entry(key.clone()).or_insert(0);
        if *count >= max.get() {
            return Err(Limited {
                kind: LimitKind::Concurrency,
                retry_after: Duration::from_secs(1),
            });
        }
        *count += 1;
        Ok(Admitted {
            _slot: Some(Slot {
                running: self.running.clone(),
                key: key.clone(),
            }),
        })
    }

    fn note_refusal(&self, key: &LimitKey, limited: &Limited) {
        let now = Instant::now();
        let interval = self.config.log_interval;
        let mut refusals = lock(&self.refusals);
        if refusals.len() >= self.config.max_keys && !refusals.contains_key(key) {
            refusals.retain(|_, r| now.duration_since(r.logged_at) < interval);
            if refusals.len() >= self.config.max_keys {
                return;
            }
        }
        let entry = refusals.entry(key.clone()).or_insert(Refusals {
            logged_at: now.checked_sub(interval).unwrap_or(now),
            since: 0,
        });
        entry.since += 1;
        if entry.since == 1 || now.duration_since(entry.logged_at) >= interval {
            tracing::warn!(
                key = %key,
                limit = ?limited.kind,
                refused = entry.since,
                retry_after_secs = limited.retry_after_secs(),
                "refused requests over the rate limit (logged once per key per interval; \
                 raise the RateLimit if these clients are legitimate)"
            );
            entry.logged_at = now;
            entry.since = 0;
        }
    }
}

/// An admitted request; dropping it frees its concurrency slot.
#[must_use = "the concurrency slot is freed when this drops"]
#[derive(Debug)]
pub struct Admitted {
    /// Held only for its `Drop`.
    _slot: Option<Slot>,
}

impl Admitted {
    /// Whether this admission holds a concurrency slot (the limit caps
    /// concurrency), so it must live as long as the request runs.
    pub fn holds_slot(&self) -> bool {
        self._slot.is_some()
    }
}

#[derive(Debug)]
struct Slot {
    running: Arc<Mutex<HashMap<LimitKey, u32>>>,
    key: LimitKey,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = lock(&self.running);
        if let Some(count) = running.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                running.remove(&self.key);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A number for each connection of this process, for [`LimitKey::Connection`].
pub fn next_connection_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> LimitKey {
        LimitKey::Peer(IpAddr::from([127, 0, 0, n]))
    }

    #[test]
    fn a_key_over_its_rate_is_refused_and_others_are_not() {
        let limiter = Limiter::new(RateLimit::per_minute(2));
        assert!(limiter.admit(key(1)).is_ok());
        assert!(limiter.admit(key(1)).is_ok());
        let refused = limiter.admit(key(1)).expect_err("third in a minute");
        assert_eq!(refused.kind, LimitKind::Rate);
        assert!(refused.retry_after_secs() >= 1 && refused.retry_after_secs() <= 30);
        assert!(
            limiter.admit(key(2)).is_ok(),
            "another key has its own bucket"
        );
    }

    #[test]
    fn concurrency_is_counted_until_the_guard_drops() {
        let limiter = Limiter::new(RateLimit::per_second(1000).with_max_concurrent(2));
        let a = limiter.admit(key(1)).expect("first");
        let _b = limiter.admit(key(1)).expect("second");
        let refused = limiter.admit(key(1)).expect_err("third at once");
        assert_eq!(refused.kind, LimitKind::Concurrency);
        assert!(limiter.admit(key(2)).is_ok());
        drop(a);
        assert!(limiter.admit(key(1)).is_ok(), "a slot freed");
        assert!(
            lock(&limiter.running).get(&key(2)).is_none(),
            "released keys are forgotten"
        );
    }

    #[test]
    fn a_full_table_puts_new_keys_in_one_overflow_bucket() {
        let limiter = Limiter::new(RateLimit::per_minute(1).with_max_keys(2));
        assert!(limiter.admit(key(1)).is_ok());
        assert!(limiter.admit(key(2)).is_ok());
        // Keys 1 and 2 are still recent: 3 and 4 share the overflow bucket.
        assert!(limiter.admit(key(3)).is_ok());
        assert!(limiter.admit(key(4)).is_err());
        assert!(limiter.buckets.len() <= 3);
    }

    #[test]
    fn the_error_says_when_to_retry() {
        let limited = Limited {
            kind: LimitKind::Rate,
            retry_after: Duration::from_millis(1500),
        };
        assert_eq!(limited.retry_after_secs(), 2);
        let error = limited.to_error_object();
        assert_eq!(error.code, ErrorCode::RATE_LIMITED);
        let data = error.data.expect("data");
        assert_eq!(data["retryAfterSeconds"], 2);
        assert_eq!(data["limit"], "rate");
    }

    #[test]
    fn a_session_key_shows_only_its_tag() {
        let shown = LimitKey::Session("0123456789abcdef".into()).to_string();
        assert_eq!(shown, "session 01234567");
    }
}
