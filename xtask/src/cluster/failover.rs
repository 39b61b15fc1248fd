//! Scenario (b): a replica dies (SIGKILL) under a client's GET stream while
//! a long-running call of the same session runs on another replica; the
//! client resumes the stream with `Last-Event-ID` through the balancer, on
//! a surviving replica, and gets every event exactly once.
//!
//! The call runs where its POST landed, and a call's handler dies with its
//! process, so the call is placed on another replica than the stream: what
//! must survive the kill is the session and its GET stream. The call
//! (`test_resource_ticks`) raises `notifications/resources/updated` for
//! `test://template/{i}/data`, i = 1..TICKS, which reach the session's GET
//! stream wherever it is (the cross-replica bus) and are kept in the shared
//! event store, so the ticks are numbered events whose loss or repetition
//! shows.
//!
//! [`stream_check`] is that check with the disruption given: the
//! namespace mode runs it under its own faults (a Redis failover, a
//! replica partitioned away, a slow network).

use std::net::SocketAddr;
use std::time::Duration;

use hyper::StatusCode;
use serde_json::{Value, json};

use super::client::{EXCHANGE_TIMEOUT, Events, Session};
use super::topology::Cluster;

/// Updates the call raises, one every [`TICK_INTERVAL_MS`].
const TICKS: u32 = 20;
const TICK_INTERVAL_MS: u32 = 100;
/// Ticks seen on the first stream before its replica is killed.
const KILL_AFTER: u32 = 5;
/// How long reconnecting may take while the balancer notices the dead replica.
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Ticks read on the stream after a disruption that leaves it open, before
/// the client leaves it to resume elsewhere.
const AFTER_DISRUPTION: usize = 3;

/// How [`stream_check`] runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamPlan {
    /// Ticks the call raises, one every `interval_ms`. A session here
    /// subscribes to each tick's resource; keep it at 20 or fewer (see
    /// docs/deploy.md on the namespace mode).
    pub(crate) ticks: u32,
    pub(crate) interval_ms: u32,
    /// The call runs on the GET stream's replica (its ticks then reach the
    /// stream without the bus), else on another one.
    pub(crate) call_on_stream_replica: bool,
    /// The call goes straight to its replica instead of through the
    /// balancer (whose round-robin other clients' load makes unpredictable).
    pub(crate) call_direct: bool,
    /// The disruption ends the stream (its replica dies or is cut off);
    /// else the client reads a few more ticks and leaves it itself.
    pub(crate) disruption_ends_stream: bool,
}

/// What a disruption did: its description, and when the cluster could
/// store and deliver nothing (a Redis failover), if ever: ticks raised then
/// reach no client and no store, so they may be missing, and only they.
pub(crate) struct Disrupted {
    pub(crate) what: String,
    pub(crate) outage: Option<(std::time::Instant, std::time::Instant)>,
}

impl From<String> for Disrupted {
    fn from(what: String) -> Self {
        Self { what, outage: None }
    }
}

/// The disruption: given the GET stream's replica, it does its harm and
/// says what it did.
pub(crate) type Disruption<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Disrupted, String>> + Send + 'a>>;

pub(crate) async fn run(cluster: &mut Cluster) -> Result<String, String> {
    let address = cluster.address;
    let order: Vec<(String, SocketAddr)> = cluster
        .replicas
        .iter()
        .map(|r| (r.process.name().to_owned(), r.address))
        .collect();
    let plan = StreamPlan {
        ticks: TICKS,
        interval_ms: TICK_INTERVAL_MS,
        call_on_stream_replica: false,
        call_direct: false,
        disruption_ends_stream: true,
    };
    stream_check(address, &order, plan, |victim| {
        Box::pin(async move {
            let replica = cluster
                .replica_mut(&victim)
                .ok_or_else(|| format!("no replica named {victim}"))?;
            replica.process.kill().await?;
            Ok(format!("killed {victim} (pid {})", replica.process.pid()).into())
        })
    })
    .await
}

/// A GET stream with ticks on it, `disrupt`ed once [`KILL_AFTER`] ticks
/// arrived, then resumed through the balancer with `Last-Event-ID`: every
/// tick must arrive once, in order. `replicas` are the balancer's
/// replicas in its round-robin order, with their own addresses.
pub(crate) async fn stream_check<'a>(
    address: SocketAddr,
    replicas: &[(String, SocketAddr)],
    plan: StreamPlan,
    disrupt: impl FnOnce(String) -> Disruption<'a>,
) -> Result<String, String> {
    let ticks = plan.ticks;
    let mut session = Session::open(address, "xtask-cluster-failover").await?;
    for i in 1..=ticks {
        session
            .call(
                "resources/subscribe",
                json!({"uri": format!("test://template/{i}/data")}),
            )
            .await?;
    }
    let stream = session.listen(None).await?;
    if stream.status != StatusCode::OK {
        return Err(format!("the GET stream answered {}", stream.status));
    }
    let victim = stream
        .replica
        .clone()
        .ok_or("the balancer did not name the replica of the GET stream")?;
    let mut stream = stream.into_events();

    // Round-robin is per request: ping until the next request goes to
    // the replica wanted for the call, then start it.
    let wanted = |name: &str| (name == victim) == plan.call_on_stream_replica;
    let order: Vec<&String> = replicas.iter().map(|(name, _)| name).collect();
    let direct = replicas
        .iter()
        .find(|(name, _)| wanted(name))
        .map(|(_, a)| *a);
    for _ in 0..order.len() {
        if plan.call_direct {
            break;
        }
        let (_, ping) = session.request("ping", json!({}));
        let answered = session.post(&ping).await?.replica.unwrap_or_default();
        let next = order
            .iter()
            .position(|name| **name == answered)
            .map(|i| order[(i + 1) % order.len()]);
        if next.is_some_and(|next| wanted(next)) {
            break;
        }
    }
    let (call_id, call) = session.request(
        "tools/call",
        json!({
            "name": "test_resource_ticks",
            "arguments": {"count": ticks, "intervalMs": plan.interval_ms},
            "_meta": {"progressToken": "ticks"}
        }),
    );
    let call_started = std::time::Instant::now();
    let call = if plan.call_direct {
        let through = session.address;
        session.address = direct.ok_or("no replica to call straight")?;
        let call = session.post(&call).await;
        session.address = through;
        call?
    } else {
        session.post(&call).await?
    };
    let call_replica = match (plan.call_direct, direct) {
        (true, Some(address)) => replicas
            .iter()
            .find(|(_, a)| *a == address)
            .map(|(name, _)| name.clone())
            .unwrap_or_default(),
        _ => call.replica.clone().unwrap_or_default(),
    };
    if !wanted(&call_replica) {
        return Err(format!(
            "the balancer put the call on {call_replica} (the GET stream is on {victim}); \
             round-robin is expected to rotate (see haproxy.cfg)"
        ));
    }
    let call = tokio::spawn(call.answer(call_id));

    let mut seen = Vec::new();
    let mut last_id = None;
    while seen.len() < KILL_AFTER as usize {
        let next = stream.next(EXCHANGE_TIMEOUT).await.map_err(|e| {
            format!(
                "{e} on the GET stream on {victim} (ticks so far: {}; last event {last_id:?}; the call on {call_replica})",
                describe(&seen)
            )
        })?;
        match next {
            Some(event) => record(&event, &mut seen, &mut last_id)?,
            None => return Err(format!("the GET stream on {victim} ended before the kill")),
        }
    }
    let Disrupted {
        what: disrupted,
        outage,
    } = disrupt(victim.clone()).await?;
    if plan.disruption_ends_stream {
        // What the replica had written is still in the socket: read it out.
        while let Some(event) = stream.next(EXCHANGE_TIMEOUT).await? {
            record(&event, &mut seen, &mut last_id)?;
        }
    } else {
        let until = seen.len() + AFTER_DISRUPTION;
        while seen.len() < until.min(ticks as usize) {
            match stream.next(EXCHANGE_TIMEOUT).await? {
                Some(event) => record(&event, &mut seen, &mut last_id)?,
                // The balancer cut it (its replica was not ready for a
                // while): it is resumed like one the client left.
                None => break,
            }
        }
        // The client leaves: the connection closes.
        drop(stream);
    }
    let before_kill = seen.len();
    let last = last_id
        .clone()
        .ok_or("no event of the GET stream carried an id")?;

    let (mut resumed, resumed_on) = reconnect(&session, &last).await?;
    if resumed_on == victim && plan.disruption_ends_stream {
        return Err(format!(
            "the resumed stream was served by {victim}, which was {disrupted}"
        ));
    }
    while seen.last().copied().unwrap_or(0) < ticks {
        match resumed.next(EXCHANGE_TIMEOUT).await {
            Ok(Some(event)) => record(&event, &mut seen, &mut last_id)?,
            Ok(None) => break,
            Err(e) => {
                return Err(format!(
                    "{e} on the resumed stream (on {resumed_on}) after ticks {}",
                    describe(&seen)
                ));
            }
        }
    }
    // Ticks raised while nothing could carry them (within a tick of the
    // outage) may be missing; nothing may come twice or out of order.
    let interval = Duration::from_millis(u64::from(plan.interval_ms));
    let raised = |tick: u32| call_started + interval * tick;
    let may_miss = |tick: u32| {
        outage.is_some_and(|(from, to)| {
            raised(tick) + interval >= from && raised(tick) <= to + interval
        })
    };
    let in_order = seen.windows(2).all(|w| w[0] < w[1]);
    let missing: Vec<u32> = (1..=ticks).filter(|t| !seen.contains(t)).collect();
    if !in_order || missing.iter().any(|t| !may_miss(*t)) {
        return Err(format!(
            "the ticks arrived as {} ({before_kill} before the resumption; {disrupted}), \
             not 1..={ticks} each once",
            describe(&seen)
        ));
    }
    let lost = if missing.is_empty() {
        String::new()
    } else {
        format!(
            " ({} raised while Redis had no primary reached no one: {})",
            missing.len(),
            describe(&missing)
        )
    };
    let (answer, notifications) = tokio::time::timeout(EXCHANGE_TIMEOUT, call)
        .await
        .map_err(|_| "the call did not finish in time".to_owned())?
        .map_err(|e| format!("the call's task failed: {e}"))??;
    if answer.pointer("/result/isError") == Some(&Value::Bool(true))
        || answer.get("result").is_none()
    {
        return Err(format!("the call on {call_replica} failed: {answer}"));
    }
    let progress = notifications
        .iter()
        .filter(|n| n.get("method").and_then(Value::as_str) == Some("notifications/progress"))
        .count();
    if progress != ticks as usize {
        return Err(format!(
            "the call on {call_replica} sent {progress} progress notifications, not {ticks}"
        ));
    }
    session.close().await?;
    Ok(format!(
        "{disrupted} ({victim} held the GET stream); the stream resumed on {resumed_on} \
         after {before_kill} of {ticks} ticks with the rest, each once{lost}; the call on \
         {call_replica} completed"
    ))
}

/// Opens the GET stream again with `Last-Event-ID`, retrying while the
/// balancer still sends requests to the dead replica (502/503).
async fn reconnect(session: &Session, last: &str) -> Result<(Events, String), String> {
    let deadline = tokio::time::Instant::now() + RECONNECT_TIMEOUT;
    loop {
        let attempt = session.listen(Some(last)).await;
        let failure = match attempt {
            Ok(response) if response.status == StatusCode::OK => {
                let replica = response.replica.clone().unwrap_or_default();
                return Ok((response.into_events(), replica));
            }
            Ok(response) => {
                let status = response.status;
                let replica = response.replica.clone().unwrap_or_default();
                let body = response.text().await.unwrap_or_default();
                format!("resuming answered {status} from {replica:?}: {body}")
            }
            Err(e) => e,
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "could not resume the GET stream after {last} within {} s: {failure}",
                RECONNECT_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Notes a tick (`notifications/resources/updated` for
/// `test://template/{i}/data`) and the event id; other events are ignored.
fn record(
    event: &super::client::Event,
    seen: &mut Vec<u32>,
    last_id: &mut Option<String>,
) -> Result<(), String> {
    if let Some(id) = &event.id {
        *last_id = Some(id.clone());
    }
    if event.data.is_empty() {
        return Ok(());
    }
    let message: Value = serde_json::from_str(&event.data)
        .map_err(|e| format!("a GET stream event is not JSON ({e}): {}", event.data))?;
    if message.get("method").and_then(Value::as_str) != Some("notifications/resources/updated") {
        return Ok(());
    }
    let tick = message
        .pointer("/params/uri")
        .and_then(Value::as_str)
        .and_then(|uri| uri.strip_prefix("test://template/"))
        .and_then(|rest| rest.strip_suffix("/data"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("an update for an unexpected resource: {message}"))?;
    seen.push(tick);
    Ok(())
}

/// `1..=7, 7, 9..=20`: runs of consecutive ticks.
fn describe(ticks: &[u32]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut start = 0;
    for i in 1..=ticks.len() {
        if i == ticks.len() || ticks[i] != ticks[i - 1] + 1 {
            if i - 1 == start {
                runs.push(ticks[start].to_string());
            } else {
                runs.push(format!("{}..={}", ticks[start], ticks[i - 1]));
            }
            start = i;
        }
    }
    if runs.is_empty() {
        "none".to_owned()
    } else {
        runs.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_described_as_runs() {
        assert_eq!(describe(&[]), "none");
        assert_eq!(describe(&[1, 2, 3]), "1..=3");
        assert_eq!(describe(&[1, 2, 2, 3, 5]), "1..=2, 2..=3, 5");
    }

    #[test]
    fn only_tick_updates_are_recorded() {
        let mut seen = Vec::new();
        let mut last = None;
        let tick = super::super::client::Event {
            id: Some("g_3".into()),
            data: r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://template/4/data"}}"#.into(),
        };
        let other = super::super::client::Event {
            id: Some("g_4".into()),
            data: r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into(),
        };
        record(&tick, &mut seen, &mut last).expect("a tick");
        record(&other, &mut seen, &mut last).expect("ignored");
        assert_eq!(seen, vec![4]);
        assert_eq!(last.as_deref(), Some("g_4"));
    }
}
