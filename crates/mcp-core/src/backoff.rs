//! How long to wait before trying again, for every reconnect and retry loop
//! (an SSE stream resumed, a session restarted, a child process respawned):
//! exponential with jitter from a floor no peer can lower, up to a cap, and
//! never more than a budget of attempts in any window of time. A plain state
//! machine: the caller passes `now` and sleeps itself.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The limits of a [`Backoff`], each with its documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackoffConfig {
    /// The shortest wait before a retry, whatever the peer asks for (an SSE
    /// `retry: 0` included). Default 250 ms.
    pub floor: Duration,
    /// The longest wait. Default 30 s.
    pub cap: Duration,
    /// At most this many attempts in any [`window`](Self::window); past it
    /// the loop waits for the window to move on. Default 10.
    pub max_attempts: u32,
    /// The span [`max_attempts`](Self::max_attempts) counts over. Default
    /// 60 s.
    pub window: Duration,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            floor: Duration::from_millis(250),
            cap: Duration::from_secs(30),
            max_attempts: 10,
            window: Duration::from_secs(60),
        }
    }
}

impl BackoffConfig {
    /// The defaults (250 ms floor, 30 s cap, 10 attempts a minute).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`floor`](Self::floor).
    #[must_use]
    pub fn with_floor(self, floor: Duration) -> Self {
        Self { floor, ..self }
    }

    /// Sets [`cap`](Self::cap).
    #[must_use]
    pub fn with_cap(self, cap: Duration) -> Self {
        Self { cap, ..self }
    }

    /// Sets [`max_attempts`](Self::max_attempts) per [`window`](Self::window).
    #[must_use]
    pub fn with_budget(self, max_attempts: u32, window: Duration) -> Self {
        Self {
            max_attempts,
            window,
            ..self
        }
    }
}

/// The attempts of a [`Backoff`] are spent for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    /// How many attempts the window allows.
    pub attempts: u32,
    /// The window they count over.
    pub window: Duration,
    /// When the oldest attempt leaves the window, and one more is allowed.
    pub until: Instant,
}

/// One retry loop's backoff: see the [module docs](self).
///
/// ```
/// use std::time::{Duration, Instant};
/// use mcp_core::backoff::{Backoff, BackoffConfig};
/// let config = BackoffConfig::new().with_budget(3, Duration::from_secs(60));
/// let mut backoff = Backoff::new(config);
/// let now = Instant::now();
/// // A peer asking for no wait at all still gets the floor.
/// let first = backoff.next(now, Some(Duration::ZERO)).expect("allowed");
/// assert!(first >= config.floor);
/// backoff.next(now, None).expect("allowed");
/// backoff.next(now, None).expect("allowed");
/// assert!(backoff.next(now, None).is_err(), "three attempts a minute");
/// ```
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    /// Failures in a row since the last success.
    failures: u32,
    /// When each attempt within the window was allowed.
    attempts: VecDeque<Instant>,
    /// The jitter's state (xorshift: spreading retries needs no more).
    seed: u64,
}

impl Backoff {
    /// A loop with no failures yet.
    pub fn new(config: BackoffConfig) -> Self {
        use std::hash::{BuildHasher, Hasher};
        // A random start per loop, so many clients do not retry in step.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(std::ptr::from_ref(&config) as usize);
        Self {
            config,
            failures: 0,
            attempts: VecDeque::new(),
            seed: hasher.finish() | 1,
        }
    }

    /// The settings.
    pub fn config(&self) -> &BackoffConfig {
        &self.config
    }

    /// How many attempts failed in a row.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Counts a failure and allows one more attempt at `now`: the wait
    /// before it, from the larger of the floor and the peer's `hint`,
    /// doubled for each failure in a row, capped, and jittered over its
    /// upper half, but never shorter than the floor or the hint (a peer's
    /// SSE `retry` is a MUST). [`Exhausted`] when the window's attempts are
    /// spent; nothing is counted then.
    ///
    /// # Errors
    /// [`Exhausted`] with when the next attempt will be allowed.
    pub fn next(&mut self, now: Instant, hint: Option<Duration>) -> Result<Duration, Exhausted> {
        let window = self.config.window;
        while self
            .attempts
            .front()
            .is_some_and(|first| now.saturating_duration_since(*first) >= window)
        {
            self.attempts.pop_front();
        }
        let budget = self.config.max_attempts.max(1);
        if self.attempts.len() >= budget as usize {
            let oldest = self.attempts.front().copied().unwrap_or(now);
            return Err(Exhausted {
                attempts: budget,
                window,
                until: oldest.checked_add(window).unwrap_or(now),
            });
        }
        self.attempts.push_back(now);
        let floor = self.config.floor;
        let base = hint.map_or(floor, |hint| hint.max(floor));
        let doubled = base.saturating_mul(1 << self.failures.min(16));
        self.failures = self.failures.saturating_add(1);
        let wait = doubled.min(self.config.cap.max(base));
        Ok(self.jitter(wait).max(base))
    }

    /// Notes a success: the next failure starts from the floor again (the
    /// window's count stays).
    pub fn succeeded(&mut self) {
        self.failures = 0;
    }

    /// A wait between half of `wait` and all of it.
    fn jitter(&mut self, wait: Duration) -> Duration {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let half = wait / 2;
        let spread = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let extra = if spread == 0 { 0 } else { self.seed % spread };
        half + Duration::from_nanos(extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> BackoffConfig {
        BackoffConfig::new()
            .with_floor(Duration::from_millis(100))
            .with_cap(Duration::from_secs(2))
            .with_budget(100, Duration::from_secs(60))
    }

    #[test]
    fn a_peer_cannot_lower_the_floor_and_waits_double_up_to_the_cap() {
        let mut backoff = Backoff::new(config());
        let now = Instant::now();
        let mut upper = Duration::from_millis(100);
        for _ in 0..10 {
            let wait = backoff.next(now, Some(Duration::ZERO)).expect("budget");
            assert!(
                wait >= Duration::from_millis(100),
                "{wait:?} under the floor"
            );
            assert!(
                wait >= upper / 2 && wait <= upper,
                "{wait:?} outside {upper:?}"
            );
            upper = (upper * 2).min(Duration::from_secs(2));
        }
        assert_eq!(backoff.failures(), 10);
    }

    #[test]
    fn a_longer_hint_is_respected_and_success_starts_over() {
        let mut backoff = Backoff::new(config());
        let now = Instant::now();
        let wait = backoff
            .next(now, Some(Duration::from_secs(1)))
            .expect("budget");
        assert!(wait >= Duration::from_millis(500) && wait <= Duration::from_secs(1));
        backoff.next(now, None).expect("budget");
        backoff.succeeded();
        let wait = backoff.next(now, None).expect("budget");
        assert!(wait <= Duration::from_millis(100));
    }

    #[test]
    fn the_window_bounds_attempts_however_short_the_waits() {
        let config = config().with_budget(3, Duration::from_secs(10));
        let mut backoff = Backoff::new(config);
        let start = Instant::now();
        for i in 0..3 {
            backoff
                .next(start + Duration::from_secs(i), None)
                .expect("within budget");
        }
        let spent = backoff
            .next(start + Duration::from_secs(3), None)
            .expect_err("spent");
        assert_eq!(spent.attempts, 3);
        assert_eq!(spent.until, start + Duration::from_secs(10));
        // Refusals are not counted; the window moves on.
        assert!(backoff.next(start + Duration::from_secs(9), None).is_err());
        backoff
            .next(start + Duration::from_secs(10), None)
            .expect("the first attempt left the window");
    }

    #[test]
    fn huge_hints_and_counts_do_not_overflow() {
        let mut backoff = Backoff::new(config().with_budget(u32::MAX, Duration::MAX));
        let now = Instant::now();
        for _ in 0..100 {
            // A hint past the cap is still a hint the peer may insist on.
            let wait = backoff.next(now, Some(Duration::MAX)).expect("budget");
            assert_eq!(wait, Duration::MAX);
            let wait = backoff.next(now, None).expect("budget");
            assert!(wait <= Duration::from_secs(2));
        }
    }
}
