//! Scenario (c): redis-server restarts (SIGTERM, then started again on the
//! same port and data) while clients keep calling through the balancer.
//! While it is down, calls that need it fail fast with a clear error (an
//! HTTP error status carrying a JSON-RPC error that says what failed), none
//! hangs and no replica dies; once it is back, every client is served
//! again, on the sessions it opened before, without restarting a replica.

use std::time::Duration;

use super::load::{Load, Phase};
use super::topology::Cluster;

/// The load before the restart, which must all succeed.
const WARM: Duration = Duration::from_secs(1);
/// How long redis-server stays down.
const DOWN: Duration = Duration::from_secs(2);
/// How long the cluster may take to serve everyone again.
const RECOVERY: Duration = Duration::from_secs(15);

pub(crate) async fn run(cluster: &mut Cluster) -> Result<String, String> {
    if cluster.redis.is_none() {
        return Err("the replicas run without redis (--no-redis)".into());
    }
    let pids: Vec<u32> = cluster.replicas.iter().map(|r| r.process.pid()).collect();
    let load = Load::start(cluster.address, "xtask-cluster-redis-restart").await?;
    let result = async {
        tokio::time::sleep(WARM).await;
        let redis = cluster.redis.as_mut().ok_or("no redis")?;
        load.set_phase(Phase::Down).await;
        let old_pid = redis.pid();
        redis.stop().await?;
        tokio::time::sleep(DOWN).await;
        redis.start_again().await?;
        eprintln!(
            "redis-restarted: redis-server pid {old_pid} stopped, started again as pid {}",
            redis.pid()
        );
        load.set_phase(Phase::Back).await;
        load.recovered(RECOVERY).await
    }
    .await;
    // No balancer in front: no connection may close unanswered.
    let verdict = load.finish(true, 0).await;
    let recovered_in = result?;
    let verdict = verdict?;
    let mut problems = Vec::new();
    for (replica, pid) in cluster.replicas.iter_mut().zip(pids) {
        if !replica.process.is_running() || replica.process.pid() != pid {
            problems.push(format!(
                "{} did not survive the restart",
                replica.process.name()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n  "));
    }
    Ok(format!(
        "{} calls before, {} failed and {} succeeded while down, served again {:.1} s after \
         the restart; the errors: {}",
        verdict.before,
        verdict.refused,
        verdict.served_during,
        recovered_in.as_secs_f64(),
        verdict.errors()
    ))
}
