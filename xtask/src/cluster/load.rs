//! Load for the scenarios that take Redis away: clients calling a tool on
//! sessions they opened before, and one client opening new sessions, each
//! call classified (served, refused with a clear error, its connection
//! closed before any answer, or failed in an unclear way: a body that is
//! no error, a hang) and logged with the phase the scenario was in.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::client::Session;

/// Clients calling on their own session, plus one opening new sessions.
pub(crate) const CALLERS: usize = 3;
/// A call slower than this counts as a hang.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// What happened to one call.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    Ok,
    /// An error the server answered: HTTP status and the JSON-RPC error message.
    Clear(String),
    /// The connection closed before a response head came: what a client
    /// sees of a request in flight on a replica the balancer takes out of
    /// service (HAProxy's `on-marked-down shutdown-sessions` kills it, and
    /// answers 502 only when it still can). Allowed only as often as the
    /// balancer killed sessions ([`Load::finish`]).
    Cut(String),
    /// Anything else: a body that is no error, a hang.
    Unclear(String),
}

/// How [`send`](super::client::send) words a request whose connection
/// closed before any response head: its prefix, and what hyper says last.
const SEND_FAILED: &str = "sending a request through ";
const CLOSED_BEFORE_ANSWER: &str = ": connection closed before message completed";

/// The phases of a scenario, as the workers see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    /// Before the fault: every call must be served.
    Warm,
    /// From the fault until the scenario says it is over.
    Down,
    /// After it.
    Back,
}

type Log = Arc<Mutex<Vec<(Phase, usize, Outcome)>>>;

/// The running load.
pub(crate) struct Load {
    phase: Arc<Mutex<Phase>>,
    stop: Arc<AtomicBool>,
    log: Log,
    workers: tokio::task::JoinSet<()>,
}

impl Load {
    /// Opens [`CALLERS`] sessions through `address` and starts calling.
    pub(crate) async fn start(address: SocketAddr, client: &'static str) -> Result<Self, String> {
        let mut sessions = Vec::new();
        for _ in 0..CALLERS {
            sessions.push(Session::open(address, client).await?);
        }
        let phase = Arc::new(Mutex::new(Phase::Warm));
        let stop = Arc::new(AtomicBool::new(false));
        let log: Log = Arc::default();
        let mut workers = tokio::task::JoinSet::new();
        for (worker, session) in sessions.into_iter().enumerate() {
            let (phase, stop, log) = (phase.clone(), stop.clone(), log.clone());
            workers.spawn(async move {
                let mut session = session;
                while !stop.load(Ordering::Relaxed) {
                    let outcome = call(&mut session).await;
                    let now = *phase.lock().await;
                    log.lock().await.push((now, worker, outcome));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            });
        }
        let (opener_phase, opener_stop, opener_log) = (phase.clone(), stop.clone(), log.clone());
        workers.spawn(async move {
            while !opener_stop.load(Ordering::Relaxed) {
                let outcome = match tokio::time::timeout(
                    CALL_TIMEOUT,
                    Session::open(address, client),
                )
                .await
                {
                    Ok(Ok(session)) => {
                        let _ = session.close().await;
                        Outcome::Ok
                    }
                    Ok(Err(e)) => classify(&e),
                    Err(_) => Outcome::Unclear("initialize hung".into()),
                };
                let now = *opener_phase.lock().await;
                opener_log.lock().await.push((now, CALLERS, outcome));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        Ok(Self {
            phase,
            stop,
            log,
            workers,
        })
    }

    /// Moves the load to `phase`.
    pub(crate) async fn set_phase(&self, phase: Phase) {
        *self.phase.lock().await = phase;
    }

    /// Waits until every client's latest call of [`Phase::Back`] was served.
    pub(crate) async fn recovered(&self, timeout: Duration) -> Result<Duration, String> {
        let started = tokio::time::Instant::now();
        loop {
            let recovered = {
                let log = self.log.lock().await;
                (0..=CALLERS).all(|worker| {
                    log.iter()
                        .rev()
                        .find(|(p, w, _)| *p == Phase::Back && *w == worker)
                        .is_some_and(|(_, _, o)| matches!(o, Outcome::Ok))
                })
            };
            if recovered {
                return Ok(started.elapsed());
            }
            if started.elapsed() > timeout {
                return Err(format!(
                    "not every client was served again within {} s",
                    timeout.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the clients and judges what they saw: every call before the
    /// fault served, every failure after it clear, and (when `must_fail`)
    /// at least one call refused while it lasted. A call whose connection
    /// closed before any answer ([`Outcome::Cut`]) is explained only by
    /// the balancer killing the sessions of a replica it took out:
    /// `killed_by_balancer` is how many it killed while the load ran (its
    /// log's count, from before [`Load::start`]), and more cuts than that
    /// are a failure.
    pub(crate) async fn finish(
        mut self,
        must_fail: bool,
        killed_by_balancer: usize,
    ) -> Result<Verdict, String> {
        self.stop.store(true, Ordering::Relaxed);
        while self.workers.join_next().await.is_some() {}
        let log = self.log.lock().await;
        judge(&log, must_fail, killed_by_balancer)
    }
}

/// [`Load::finish`]'s judgement of the calls `log` holds.
fn judge(
    log: &[(Phase, usize, Outcome)],
    must_fail: bool,
    killed_by_balancer: usize,
) -> Result<Verdict, String> {
    let served = |phase: Phase| {
        log.iter()
            .filter(|(p, _, o)| *p == phase && matches!(o, Outcome::Ok))
            .count()
    };
    let refused = |phase: Phase| {
        log.iter()
            .filter(|(p, _, o)| *p == phase && matches!(o, Outcome::Clear(_)))
            .count()
    };
    let mut problems = Vec::new();
    if let Some((_, _, o)) = log
        .iter()
        .find(|(p, _, o)| *p == Phase::Warm && !matches!(o, Outcome::Ok))
    {
        problems.push(format!("a call failed before the fault: {o:?}"));
    }
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    let mut cuts = Vec::new();
    for (_, _, outcome) in log.iter().filter(|(p, _, _)| *p >= Phase::Down) {
        match outcome {
            Outcome::Clear(message) => *errors.entry(message.clone()).or_default() += 1,
            Outcome::Cut(message) => cuts.push(message),
            Outcome::Unclear(message) => {
                problems.push(format!("an unclear failure: {message}"));
            }
            Outcome::Ok => {}
        }
    }
    if cuts.len() > killed_by_balancer {
        problems.push(format!(
            "{} calls had their connection closed with no answer, more than the {} \
             sessions the balancer killed as it took replicas out: {cuts:?}",
            cuts.len(),
            killed_by_balancer
        ));
    } else if !cuts.is_empty() {
        errors.insert(
            "connection closed with no answer by the balancer taking its replica out \
             (shutdown-sessions)"
                .to_owned(),
            cuts.len(),
        );
    }
    if errors.keys().any(|m| m.starts_with("404")) {
        problems.push(format!("a session was lost (404): {errors:?}"));
    }
    let verdict = Verdict {
        before: served(Phase::Warm),
        refused: refused(Phase::Down) + refused(Phase::Back),
        served_during: served(Phase::Down),
        errors,
    };
    // A cut is the balancer's doing: only a clear refusal shows that the
    // replicas keep their sessions in Redis.
    if must_fail && refused(Phase::Down) == 0 {
        problems.push(format!(
            "no call was refused during the fault ({} succeeded): the replicas do not \
             keep their sessions in redis",
            verdict.served_during
        ));
    }
    problems.dedup();
    if problems.is_empty() {
        Ok(verdict)
    } else {
        Err(problems.join("\n  "))
    }
}

/// What the clients saw.
pub(crate) struct Verdict {
    /// Calls served before the fault.
    pub(crate) before: usize,
    /// Calls refused (clearly) from the fault on.
    pub(crate) refused: usize,
    /// Calls served while the fault lasted.
    pub(crate) served_during: usize,
    /// The refusals, by message.
    pub(crate) errors: BTreeMap<String, usize>,
}

impl Verdict {
    /// `3x 503 message; ...`.
    pub(crate) fn errors(&self) -> String {
        let errors: Vec<String> = self
            .errors
            .iter()
            .map(|(m, n)| format!("{n}x {m}"))
            .collect();
        errors.join("; ")
    }
}

/// One `tools/call` on the session, classified.
pub(crate) async fn call(session: &mut Session) -> Outcome {
    let call = session.call(
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    );
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(Ok(result)) if result.get("isError") != Some(&Value::Bool(true)) => Outcome::Ok,
        Ok(Ok(result)) => Outcome::Clear(format!("tool error {result}")),
        Ok(Err(e)) => classify(&e),
        Err(_) => Outcome::Unclear(format!("a call hung for {} s", CALL_TIMEOUT.as_secs())),
    }
}

/// A failed exchange is clear when the server answered with a JSON-RPC
/// error that has a message; the message is kept, the request ids and
/// replica names are not, so equal errors count together.
pub(crate) fn classify(error: &str) -> Outcome {
    let json_start = error.find('{');
    let message = json_start
        .and_then(|at| serde_json::from_str::<Value>(&error[at..]).ok())
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .filter(|m| !m.is_empty());
    match message {
        Some(message) => {
            let status = error
                .split_whitespace()
                .find(|w| w.len() == 3 && w.chars().all(|c| c.is_ascii_digit()))
                .unwrap_or("?");
            Outcome::Clear(format!("{status} {message}"))
        }
        // Only the send's own error: the same words inside a body the
        // server sent (peer text) are no cut.
        None if error.starts_with(SEND_FAILED) && error.ends_with(CLOSED_BEFORE_ANSWER) => {
            Outcome::Cut(error.to_owned())
        }
        None => Outcome::Unclear(error.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut() -> Outcome {
        Outcome::Cut(format!(
            "{SEND_FAILED}198.18.0.2:8080{CLOSED_BEFORE_ANSWER}"
        ))
    }

    fn refused() -> Outcome {
        Outcome::Clear("503 session store unavailable".into())
    }

    #[test]
    fn cuts_pass_only_as_often_as_the_balancer_killed_sessions() {
        let log = [
            (Phase::Warm, 0, Outcome::Ok),
            (Phase::Down, 0, refused()),
            (Phase::Down, 1, cut()),
            (Phase::Back, 2, cut()),
            (Phase::Back, 0, Outcome::Ok),
        ];
        let verdict = judge(&log, true, 2).expect("two cuts, two sessions killed");
        assert_eq!(verdict.refused, 1, "the cuts are no clear refusals");
        assert_eq!(
            verdict.errors.get(
                "connection closed with no answer by the balancer taking its replica out \
             (shutdown-sessions)"
            ),
            Some(&2)
        );
        let error = judge(&log, true, 1)
            .err()
            .expect("two cuts, one session killed");
        assert!(
            error.contains("2 calls had their connection closed"),
            "{error}"
        );
        let error = judge(&log, true, 0).err().expect("no session killed");
        assert!(error.contains("more than the 0 sessions"), "{error}");
    }

    #[test]
    fn a_cut_before_the_fault_fails_whatever_the_balancer_killed() {
        let log = [(Phase::Warm, 0, cut()), (Phase::Down, 0, refused())];
        let error = judge(&log, true, 10).err().expect("a cut before the fault");
        assert!(error.contains("a call failed before the fault"), "{error}");
    }

    #[test]
    fn cuts_alone_are_no_refusal_by_the_replicas() {
        let log = [(Phase::Warm, 0, Outcome::Ok), (Phase::Down, 0, cut())];
        let error = judge(&log, true, 1).err().expect("no clear refusal");
        assert!(
            error.contains("no call was refused during the fault"),
            "{error}"
        );
        assert!(judge(&log, false, 1).is_ok());
    }

    #[test]
    fn a_json_rpc_error_is_clear_and_anything_else_is_not() {
        let clear = classify(
            r#"tools/call answered 503 Service Unavailable from r2: {"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"session store unavailable"}}"#,
        );
        assert!(
            matches!(&clear, Outcome::Clear(m) if m == "503 session store unavailable"),
            "{clear:?}"
        );
        assert!(matches!(
            classify("sending a request: connection reset"),
            Outcome::Unclear(_)
        ));
        assert!(matches!(
            classify(
                "sending a request through 198.18.0.2:8080: connection closed before message completed"
            ),
            Outcome::Cut(_)
        ));
        // The same words elsewhere (in what a server sent) are no cut.
        assert!(matches!(
            classify(
                "answered 500 with a body that is not JSON (expected value): connection closed \
                 before message completed"
            ),
            Outcome::Unclear(_)
        ));
        assert!(matches!(
            classify(
                "sending a request through 198.18.0.2:8080: connection closed before message \
                 completed (and more)"
            ),
            Outcome::Unclear(_)
        ));
        assert!(matches!(
            classify(r#"answered 500: {"result":{}}"#),
            Outcome::Unclear(_)
        ));
    }
}
