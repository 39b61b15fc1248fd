//! Scenario (c): redis-server restarts (SIGTERM, then started again on the
//! same port and data) while clients keep calling through the balancer.
//! While it is down, calls that need it fail fast with a clear error (an
//! HTTP error status carrying a JSON-RPC error that says what failed), none
//! hangs and no replica dies; once it is back, every client is served
//! again, on the sessions it opened before, without restarting a replica.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::client::Session;
use super::topology::Cluster;

/// Clients calling on their own session, plus one opening new sessions.
const CALLERS: usize = 3;
/// The load before the restart, which must all succeed.
const WARM: Duration = Duration::from_secs(1);
/// How long redis-server stays down.
const DOWN: Duration = Duration::from_secs(2);
/// How long the cluster may take to serve everyone again.
const RECOVERY: Duration = Duration::from_secs(15);
/// A call slower than this counts as a hang.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// What happened to one call.
#[derive(Debug, Clone)]
enum Outcome {
    Ok,
    /// An error the server answered: HTTP status and the JSON-RPC error message.
    Clear(String),
    /// Anything else: a dropped connection, a body that is no error, a hang.
    Unclear(String),
}

/// The phases of the load, as the workers see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Warm,
    Down,
    Back,
}

type Log = Arc<Mutex<Vec<(Phase, usize, Outcome)>>>;

pub(crate) async fn run(cluster: &mut Cluster) -> Result<String, String> {
    if cluster.redis.is_none() {
        return Err("the replicas run without redis (--no-redis)".into());
    }
    let pids: Vec<u32> = cluster.replicas.iter().map(|r| r.process.pid()).collect();
    let mut sessions = Vec::new();
    for _ in 0..CALLERS {
        sessions.push(Session::open(cluster.address, "xtask-cluster-redis-restart").await?);
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
    {
        let (phase, stop, log, address) =
            (phase.clone(), stop.clone(), log.clone(), cluster.address);
        workers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let outcome = match tokio::time::timeout(
                    CALL_TIMEOUT,
                    Session::open(address, "xtask-cluster-redis-restart"),
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
                let now = *phase.lock().await;
                log.lock().await.push((now, CALLERS, outcome));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
    }

    let result = async {
        tokio::time::sleep(WARM).await;
        let redis = cluster.redis.as_mut().ok_or("no redis")?;
        *phase.lock().await = Phase::Down;
        let old_pid = redis.pid();
        redis.stop().await?;
        tokio::time::sleep(DOWN).await;
        redis.start_again().await?;
        eprintln!(
            "redis-restarted: redis-server pid {old_pid} stopped, started again as pid {}",
            redis.pid()
        );
        *phase.lock().await = Phase::Back;
        let restarted = tokio::time::Instant::now();
        // Recovered once every worker's latest call after the restart succeeded.
        loop {
            let recovered = {
                let log = log.lock().await;
                (0..=CALLERS).all(|worker| {
                    log.iter()
                        .rev()
                        .find(|(p, w, _)| *p == Phase::Back && *w == worker)
                        .is_some_and(|(_, _, o)| matches!(o, Outcome::Ok))
                })
            };
            if recovered {
                return Ok(restarted.elapsed());
            }
            if restarted.elapsed() > RECOVERY {
                return Err(format!(
                    "not every client was served again within {} s of redis-server's restart",
                    RECOVERY.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    .await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    let log = log.lock().await.clone();
    let recovered_in = result?;

    let mut problems = Vec::new();
    let count = |phase: Phase, ok: bool| {
        log.iter()
            .filter(|(p, _, o)| *p == phase && matches!(o, Outcome::Ok) == ok)
            .count()
    };
    if let Some((_, _, o)) = log
        .iter()
        .find(|(p, _, o)| *p == Phase::Warm && !matches!(o, Outcome::Ok))
    {
        problems.push(format!("a call failed before the restart: {o:?}"));
    }
    let mut clear: BTreeMap<String, usize> = BTreeMap::new();
    for (_, _, outcome) in log.iter().filter(|(p, _, _)| *p >= Phase::Down) {
        match outcome {
            Outcome::Clear(message) => *clear.entry(message.clone()).or_default() += 1,
            Outcome::Unclear(message) => problems.push(format!("an unclear failure: {message}")),
            Outcome::Ok => {}
        }
    }
    if count(Phase::Down, false) == 0 {
        problems.push(format!(
            "no call failed while redis-server was down ({} succeeded): the replicas do not \
             keep their sessions in redis",
            count(Phase::Down, true)
        ));
    }
    for (replica, pid) in cluster.replicas.iter_mut().zip(pids) {
        if !replica.process.is_running() || replica.process.pid() != pid {
            problems.push(format!(
                "{} did not survive the restart",
                replica.process.name()
            ));
        }
    }
    problems.dedup();
    if !problems.is_empty() {
        return Err(problems.join("\n  "));
    }
    let errors: Vec<String> = clear.iter().map(|(m, n)| format!("{n}x {m}")).collect();
    Ok(format!(
        "{} calls before, {} failed and {} succeeded while down, served again {:.1} s after \
         the restart; the errors: {}",
        count(Phase::Warm, true),
        count(Phase::Down, false),
        count(Phase::Down, true),
        recovered_in.as_secs_f64(),
        errors.join("; ")
    ))
}

/// One `tools/call` on the session, classified.
async fn call(session: &mut Session) -> Outcome {
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
fn classify(error: &str) -> Outcome {
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
        None => Outcome::Unclear(error.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            classify(r#"answered 500: {"result":{}}"#),
            Outcome::Unclear(_)
        ));
    }
}
