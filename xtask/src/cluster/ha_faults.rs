//! The namespace mode's scenarios, each on a fresh [`HaCluster`], each
//! with the Last-Event-ID check of [`stream_check`] under its fault (every
//! tick once, in order) and the sessions opened before the fault served
//! after it:
//!
//! 1. `redis-failover`: the Redis primary is killed (SIGKILL) under load;
//!    the sentinels promote the replica; calls fail clearly meanwhile and
//!    are served again without restarting a replica;
//! 2. `redis-latency`: 50 ms ± 10 ms and 1% loss each way between the
//!    replicas and every Redis host; the conformance suites pass through
//!    the balancer, and a call's p50/p99 is measured;
//! 3. `replica-cut-from-redis`: one replica loses Redis but not the
//!    balancer; its requests fail fast with the clear error, the
//!    balancer's readiness check takes it out, and it comes back by itself
//!    when the partition heals;
//! 4. `stream-replica-cut-off`: the replica holding a client's GET stream
//!    is cut from every host; the stream resumes on another replica.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Session;
use super::conformance;
use super::failover::{Disrupted, StreamPlan, stream_check};
use super::ha::{HaCluster, REDIS_HOSTS, REPLICA_HOSTS, addresses};
use super::load::{Load, Outcome, Phase, call};
use super::netns::Network;
use super::wire::Link;

/// The store timeout of the replicas (`RedisConfig`'s default).
const STORE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failover or a partition's healing may take to be over.
const RECOVERY: Duration = Duration::from_secs(30);
/// Calls timed for p50/p99.
const TIMED_CALLS: usize = 100;

fn replica_order(cluster: &HaCluster) -> Vec<(String, SocketAddr)> {
    cluster
        .replicas
        .iter()
        .map(|r| (r.process.name().to_owned(), r.address))
        .collect()
}

fn same_pids(cluster: &HaCluster, pids: &[u32]) -> Result<(), String> {
    if cluster.replica_pids() == pids {
        Ok(())
    } else {
        Err(format!(
            "a replica was restarted: pids {pids:?} became {:?}",
            cluster.replica_pids()
        ))
    }
}

/// Every session still served (none lost): one call each.
async fn sessions_served(sessions: &mut [Session]) -> Result<(), String> {
    for session in sessions.iter_mut() {
        match call(session).await {
            Outcome::Ok => {}
            other => return Err(format!("a session opened before the fault: {other:?}")),
        }
    }
    Ok(())
}

async fn open_sessions(address: SocketAddr, count: usize) -> Result<Vec<Session>, String> {
    let mut sessions = Vec::with_capacity(count);
    for _ in 0..count {
        sessions.push(Session::open(address, "xtask-cluster-ha").await?);
    }
    Ok(sessions)
}

/// Scenario 1.
pub(crate) async fn redis_failover(cluster: &mut HaCluster) -> Result<String, String> {
    let pids = cluster.replica_pids();
    let mut kept = open_sessions(cluster.address, 3).await?;
    // Only the sessions killed from here on can explain a load's cut call.
    let killed_before = cluster.sessions_killed();
    let load = Load::start(cluster.address, "xtask-cluster-redis-failover").await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let order = replica_order(cluster);
    let plan = StreamPlan {
        ticks: 20,
        interval_ms: 300,
        call_on_stream_replica: true,
        call_direct: true,
        // The balancer may cut it while every replica is unready.
        disruption_ends_stream: false,
    };
    let address = cluster.address;
    let mut timings = None;
    let stream = {
        let cluster = &mut *cluster;
        let load = &load;
        let timings = &mut timings;
        stream_check(address, &order, plan, move |_victim| {
            Box::pin(async move {
                let primary = cluster.primary().await?;
                let node = cluster
                    .redis
                    .iter_mut()
                    .find(|n| addresses(&[n.host]).first() == Some(&primary))
                    .ok_or_else(|| format!("no Redis node at {primary}"))?;
                load.set_phase(Phase::Down).await;
                let killed = Instant::now();
                node.process.kill().await?;
                let host = node.host;
                let promoted = loop {
                    match cluster.primary().await {
                        Ok(now) if now != primary => break killed.elapsed(),
                        _ if killed.elapsed() > RECOVERY => {
                            return Err(format!(
                                "the sentinels named no new primary within {} s",
                                RECOVERY.as_secs()
                            ));
                        }
                        _ => tokio::time::sleep(Duration::from_millis(50)).await,
                    }
                };
                load.set_phase(Phase::Back).await;
                let served = load.recovered(RECOVERY).await? + promoted;
                *timings = Some((promoted, served));
                Ok(Disrupted {
                    what: format!("killed the Redis primary ({host}, {primary})"),
                    outage: Some((killed, killed + served)),
                })
            })
        })
        .await
    };
    let killed = cluster.sessions_killed().saturating_sub(killed_before);
    let verdict = load.finish(true, killed).await;
    let stream = stream?;
    let verdict = verdict?;
    sessions_served(&mut kept).await?;
    same_pids(cluster, &pids)?;
    let (promoted, served) = timings.ok_or("the failover did not finish")?;
    Ok(format!(
        "promoted after {:.2} s, every client served again {:.2} s after the kill; {} calls \
         before, {} refused (clearly) and {} served from the kill on; the errors: {}; {stream}",
        promoted.as_secs_f64(),
        served.as_secs_f64(),
        verdict.before,
        verdict.refused,
        verdict.served_during,
        verdict.errors()
    ))
}

/// The stream check with the client leaving its GET stream itself and
/// resuming it through the balancer, under whatever fault is on.
async fn client_resumes(
    address: SocketAddr,
    replicas: &[(String, SocketAddr)],
) -> Result<String, String> {
    let plan = StreamPlan {
        ticks: 20,
        interval_ms: 100,
        call_on_stream_replica: true,
        call_direct: true,
        disruption_ends_stream: false,
    };
    stream_check(address, replicas, plan, |_| {
        Box::pin(async { Ok("the client left its GET stream".to_owned().into()) })
    })
    .await
}

/// `TIMED_CALLS` calls on one session: p50 and p99 in ms.
async fn latency(address: SocketAddr) -> Result<(f64, f64), String> {
    let mut session = Session::open(address, "xtask-cluster-latency").await?;
    let mut times = Vec::with_capacity(TIMED_CALLS);
    for _ in 0..TIMED_CALLS {
        let started = Instant::now();
        match call(&mut session).await {
            Outcome::Ok => times.push(started.elapsed().as_secs_f64() * 1000.0),
            other => return Err(format!("a timed call failed: {other:?}")),
        }
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    Ok((at(0.50), at(0.99)))
}

/// Scenario 2.
pub(crate) async fn redis_latency(
    cluster: &mut HaCluster,
    network: &Network,
    suite: &Path,
    out: &Path,
) -> Result<String, String> {
    let (base50, base99) = latency(cluster.address).await?;
    let slow = Link {
        delay: Duration::from_millis(50),
        jitter: Duration::from_millis(10),
        loss: 0.01,
        cut: false,
    };
    network
        .wire
        .set(&addresses(&REPLICA_HOSTS), &addresses(&REDIS_HOSTS), slow)?;
    let before = network.wire.counts();
    let mut kept = open_sessions(cluster.address, 3).await?;
    let (p50, p99) = latency(cluster.address).await?;
    let mut suites = Vec::new();
    for revision in conformance::REVISIONS {
        let results = out.join(format!("conformance-{revision}"));
        suites.push(format!(
            "{revision}: {}",
            conformance::run(suite, cluster.address, revision, &results).await?
        ));
    }
    let order = replica_order(cluster);
    let stream = client_resumes(cluster.address, &order).await?;
    sessions_served(&mut kept).await?;
    let after = network.wire.counts();
    network.wire.heal();
    // The fault really was on: a call waits on Redis at least once, so its
    // median holds at least one round trip at the shortest delay the
    // jitter allows, and 1% of the packets to and from Redis were lost.
    // Without these, a wire that delayed and dropped nothing would pass.
    let shortest_round_trip = 2 * (slow.delay - slow.jitter);
    if p50 < shortest_round_trip.as_secs_f64() * 1000.0 {
        return Err(format!(
            "a call's p50 was {p50:.1} ms ({base50:.1} ms without the fault), under the \
             {} ms of one round trip to Redis on the slowed wire: the delay was not applied",
            shortest_round_trip.as_millis()
        ));
    }
    if after.lost == before.lost {
        return Err("the wire lost no packet at 1% loss: the loss was not applied".into());
    }
    if after.overflow > before.overflow {
        return Err(format!(
            "the wire dropped {} packets for lack of room: the emulated network was \
             overloaded, not just slow",
            after.overflow - before.overflow
        ));
    }
    Ok(format!(
        "a call's p50 {p50:.1} ms, p99 {p99:.1} ms ({base50:.1} / {base99:.1} ms without the \
         fault); {} of {} packets lost on purpose; {}; {stream}",
        after.lost - before.lost,
        after.delivered - before.delivered + after.lost - before.lost,
        suites.join("; ")
    ))
}

/// Scenario 3.
pub(crate) async fn replica_cut_from_redis(
    cluster: &mut HaCluster,
    network: &Network,
) -> Result<String, String> {
    let pids = cluster.replica_pids();
    let mut kept = open_sessions(cluster.address, 3).await?;
    let victim = cluster.replicas.first().ok_or("no replica")?;
    let (victim_name, victim_address) = (victim.process.name().to_owned(), victim.address);
    let victim_ip = match victim_address {
        SocketAddr::V4(a) => *a.ip(),
        SocketAddr::V6(_) => return Err("an IPv6 replica".into()),
    };
    // Straight to the replica, on a session it knows from the store.
    let mut direct = Session::open(cluster.address, "xtask-cluster-direct").await?;
    direct.address = victim_address;
    network
        .wire
        .set(&[victim_ip], &addresses(&REDIS_HOSTS), Link::CUT)?;
    let cut = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut refusals = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let outcome = call(&mut direct).await;
        let took = started.elapsed();
        slowest = slowest.max(took);
        match outcome {
            Outcome::Clear(message) if took <= STORE_TIMEOUT + Duration::from_millis(500) => {
                refusals.push(message);
            }
            other => {
                return Err(format!(
                    "a request to {victim_name} cut from Redis answered {other:?} after {:.2} s \
                     (expected a clear refusal within the {} s store timeout)",
                    took.as_secs_f64(),
                    STORE_TIMEOUT.as_secs()
                ));
            }
        }
    }
    refusals.dedup();
    cluster
        .wait_for_servers(RECOVERY, |state| {
            state
                .get(&victim_name)
                .is_some_and(|s| s.starts_with("DOWN"))
        })
        .await?;
    let taken_out = cut.elapsed();
    // Served meanwhile, and never by the replica taken out.
    let mut through = Session::open(cluster.address, "xtask-cluster-through").await?;
    for _ in 0..20 {
        let (id, request) = through.request(
            "tools/call",
            json!({"name": "test_simple_text", "arguments": {}}),
        );
        let response = through.post(&request).await?;
        let replica = response.replica.clone().unwrap_or_default();
        if replica == victim_name {
            return Err(format!("the balancer still sent a call to {victim_name}"));
        }
        response.answer(id).await?;
    }
    let order = replica_order(cluster);
    let active: Vec<(String, SocketAddr)> = order
        .iter()
        .filter(|(n, _)| *n != victim_name)
        .cloned()
        .collect();
    let stream = client_resumes(cluster.address, &active).await?;
    network.wire.heal();
    let healed = Instant::now();
    cluster
        .wait_for_servers(RECOVERY, |state| {
            state.get(&victim_name).is_some_and(|s| s == "UP")
        })
        .await?;
    let back_in = healed.elapsed();
    // It serves again: calls until one lands on it.
    let deadline = Instant::now() + RECOVERY;
    loop {
        let (id, request) = through.request(
            "tools/call",
            json!({"name": "test_simple_text", "arguments": {}}),
        );
        let response = through.post(&request).await?;
        let replica = response.replica.clone().unwrap_or_default();
        response.answer(id).await?;
        if replica == victim_name {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{victim_name} served no call after it came back"));
        }
    }
    sessions_served(&mut kept).await?;
    same_pids(cluster, &pids)?;
    Ok(format!(
        "{victim_name} refused 5 direct calls clearly ({}), the slowest in {:.2} s; the \
         balancer took it out {:.2} s after the cut and back {:.2} s after the healing; {stream}",
        refusals.join("; "),
        slowest.as_secs_f64(),
        taken_out.as_secs_f64(),
        back_in.as_secs_f64()
    ))
}

/// Scenario 4.
pub(crate) async fn stream_replica_cut_off(
    cluster: &mut HaCluster,
    network: &Network,
) -> Result<String, String> {
    let pids = cluster.replica_pids();
    let mut kept = open_sessions(cluster.address, 3).await?;
    let order = replica_order(cluster);
    let plan = StreamPlan {
        ticks: 20,
        interval_ms: 100,
        call_on_stream_replica: false,
        call_direct: false,
        disruption_ends_stream: true,
    };
    let hosts = replica_order(cluster);
    let others = |victim: std::net::Ipv4Addr| -> Vec<std::net::Ipv4Addr> {
        super::ha::HOSTS
            .iter()
            .map(|(_, a)| *a)
            .filter(|a| *a != victim)
            .collect()
    };
    let mut cut_victim = None;
    let before = network.wire.counts().cut;
    let stream = stream_check(cluster.address, &order, plan, |victim| {
        let address = hosts.iter().find(|(n, _)| *n == victim).map(|(_, a)| *a);
        let cut_victim = &mut cut_victim;
        Box::pin(async move {
            let Some(SocketAddr::V4(address)) = address else {
                return Err(format!("no replica {victim}"));
            };
            network
                .wire
                .set(&[*address.ip()], &others(*address.ip()), Link::CUT)?;
            *cut_victim = Some(victim.clone());
            Ok(format!("cut {victim} off from every host").into())
        })
    })
    .await;
    let cut = network.wire.counts().cut - before;
    network.wire.heal();
    let stream = stream?;
    let victim = cut_victim.ok_or("no replica was cut")?;
    let healed = Instant::now();
    cluster
        .wait_for_servers(RECOVERY, |state| {
            state.get(&victim).is_some_and(|s| s == "UP")
        })
        .await?;
    sessions_served(&mut kept).await?;
    same_pids(cluster, &pids)?;
    Ok(format!(
        "{stream}; {cut} packets dropped by the cut; {victim} back in the balancer {:.2} s \
         after the healing",
        healed.elapsed().as_secs_f64()
    ))
}
