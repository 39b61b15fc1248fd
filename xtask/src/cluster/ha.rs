//! The highly available cluster of the namespace mode, each process on a
//! host of its own ([`netns`](super::netns)): a Redis primary and a
//! replica, three Redis Sentinels, three replicas of the everything-server
//! on `redis+sentinel://` and HAProxy checking their readiness. The harness
//! itself is the client host.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::netns::Network;
use super::process::{Process, first_exited};
use super::topology::{
    HealthCheck, ReplicaProgram, haproxy_config, parse_address, redis_ping, replica_name,
    write_balancer_errors, write_key,
};

/// How long each process may take to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// The service name the sentinels watch.
pub(crate) const SERVICE: &str = "mcp";
const REDIS_PORT: u16 = 6379;
const SENTINEL_PORT: u16 = 26379;
const REPLICA_PORT: u16 = 3000;
const BALANCER_PORT: u16 = 8080;
/// How long the sentinels wait before they call a silent primary down.
pub(crate) const DOWN_AFTER: Duration = Duration::from_millis(1000);

/// The hosts, by name and address.
pub(crate) const HOSTS: [(&str, Ipv4Addr); 10] = [
    ("client", Ipv4Addr::new(198, 18, 0, 1)),
    ("lb", Ipv4Addr::new(198, 18, 0, 2)),
    ("r1", Ipv4Addr::new(198, 18, 1, 1)),
    ("r2", Ipv4Addr::new(198, 18, 1, 2)),
    ("r3", Ipv4Addr::new(198, 18, 1, 3)),
    ("redis1", Ipv4Addr::new(198, 18, 2, 1)),
    ("redis2", Ipv4Addr::new(198, 18, 2, 2)),
    ("s1", Ipv4Addr::new(198, 18, 3, 1)),
    ("s2", Ipv4Addr::new(198, 18, 3, 2)),
    ("s3", Ipv4Addr::new(198, 18, 3, 3)),
];

/// The replicas' hosts.
pub(crate) const REPLICA_HOSTS: [&str; 3] = ["r1", "r2", "r3"];
/// Every Redis host: the data nodes and the sentinels.
pub(crate) const REDIS_HOSTS: [&str; 5] = ["redis1", "redis2", "s1", "s2", "s3"];

/// The addresses of `names`.
pub(crate) fn addresses(names: &[&str]) -> Vec<Ipv4Addr> {
    names
        .iter()
        .filter_map(|name| HOSTS.iter().find(|(n, _)| n == name).map(|(_, a)| *a))
        .collect()
}

fn address_of(name: &str) -> Ipv4Addr {
    addresses(&[name])
        .first()
        .copied()
        .unwrap_or(Ipv4Addr::UNSPECIFIED)
}

/// Starts `program args` inside the namespace `namespace` (`ip netns
/// exec` replaces itself with the program, so the PID is the program's).
fn spawn_in(
    namespace: &str,
    name: &str,
    program: &Path,
    args: &[String],
    log: &Path,
) -> Result<Process, String> {
    let mut all = vec![
        "netns".to_owned(),
        "exec".to_owned(),
        namespace.to_owned(),
        program.display().to_string(),
    ];
    all.extend(args.iter().cloned());
    Process::spawn(name, Path::new("ip"), &all, log)
}

/// One Redis data node.
pub(crate) struct RedisNode {
    pub(crate) host: &'static str,
    pub(crate) process: Process,
}

/// A replica of the server.
pub(crate) struct HaReplica {
    pub(crate) process: Process,
    pub(crate) address: SocketAddr,
}

/// The running cluster.
pub(crate) struct HaCluster {
    pub(crate) redis: Vec<RedisNode>,
    sentinels: Vec<Process>,
    pub(crate) replicas: Vec<HaReplica>,
    balancer: Process,
    /// HAProxy's frontend.
    pub(crate) address: SocketAddr,
    stats_socket: PathBuf,
}

impl HaCluster {
    /// Starts Redis (primary, replica), the sentinels, the replicas and
    /// HAProxy on `network`, their logs and files in `dir`.
    pub(crate) async fn start(
        network: &Network,
        program: &ReplicaProgram,
        dir: &Path,
    ) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let primary = address_of("redis1");
        let mut redis = Vec::new();
        for host in ["redis1", "redis2"] {
            let node = network.host(host)?;
            let data = dir.join(host);
            std::fs::create_dir_all(&data)
                .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
            let mut args: Vec<String> = [
                "--port",
                &REDIS_PORT.to_string(),
                "--bind",
                &node.address.to_string(),
                // Reached only inside the namespaces, from the test range.
                "--protected-mode",
                "no",
                "--daemonize",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                &data.display().to_string(),
                "--logfile",
                "",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
            if host != "redis1" {
                args.extend([
                    "--replicaof".to_owned(),
                    primary.to_string(),
                    REDIS_PORT.to_string(),
                ]);
            }
            let process = spawn_in(
                &node.namespace,
                host,
                Path::new("redis-server"),
                &args,
                &dir.join(format!("{host}.log")),
            )?;
            redis.push(RedisNode { host, process });
        }
        for node in &mut redis {
            let address = SocketAddr::from((address_of(node.host), REDIS_PORT));
            wait_for_ping(&mut node.process, address).await?;
        }
        let mut sentinels = Vec::new();
        for host in ["s1", "s2", "s3"] {
            let node = network.host(host)?;
            // A sentinel rewrites its configuration file: one each.
            let config = dir.join(format!("{host}.conf"));
            std::fs::write(
                &config,
                format!(
                    "port {SENTINEL_PORT}\nbind {}\nprotected-mode no\ndaemonize no\nlogfile \"\"\n\
                     sentinel monitor {SERVICE} {primary} {REDIS_PORT} 2\n\
                     sentinel down-after-milliseconds {SERVICE} {}\n\
                     sentinel failover-timeout {SERVICE} 10000\n\
                     sentinel parallel-syncs {SERVICE} 1\n",
                    node.address,
                    DOWN_AFTER.as_millis()
                ),
            )
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
            let mut process = spawn_in(
                &node.namespace,
                host,
                Path::new("redis-sentinel"),
                &[config.display().to_string()],
                &dir.join(format!("{host}.log")),
            )?;
            wait_for_ping(
                &mut process,
                SocketAddr::from((node.address, SENTINEL_PORT)),
            )
            .await?;
            sentinels.push(process);
        }
        // A failover needs sentinels that know the replica and each other
        // (they learn both from the primary, within seconds).
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        for sentinel in addresses(&["s1", "s2", "s3"]) {
            let address = SocketAddr::from((sentinel, SENTINEL_PORT));
            while !sentinel_ready(address, address_of("redis2")).await {
                if tokio::time::Instant::now() >= deadline {
                    return Err(format!(
                        "the sentinel at {address} did not learn of the Redis replica and the \
                         other sentinels within {} s",
                        READY_TIMEOUT.as_secs()
                    ));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        let key_file = write_key(dir)?;
        let sentinel_list: Vec<String> = addresses(&["s1", "s2", "s3"])
            .iter()
            .map(|a| format!("{a}:{SENTINEL_PORT}"))
            .collect();
        let url = format!("redis+sentinel://{}/{SERVICE}", sentinel_list.join(","));
        let balancer_host = network.host("lb")?;
        let mut replicas = Vec::new();
        for (index, host) in REPLICA_HOSTS.iter().enumerate() {
            let node = network.host(host)?;
            let mut args = program.args.clone();
            args.retain(|a| a != "--port" && a != "0");
            args.extend([
                "--port".to_owned(),
                REPLICA_PORT.to_string(),
                "--bind".to_owned(),
                node.address.to_string(),
                "--allowed-host".to_owned(),
                balancer_host.address.to_string(),
                "--allowed-host".to_owned(),
                node.address.to_string(),
                "--key-file".to_owned(),
                key_file.display().to_string(),
                "--redis".to_owned(),
                url.clone(),
            ]);
            let name = replica_name(index + 1);
            let log = dir.join(format!("{name}.log"));
            let mut process = spawn_in(&node.namespace, &name, &program.program, &args, &log)?;
            let address = process.wait_for_log(READY_TIMEOUT, parse_address).await?;
            replicas.push(HaReplica { process, address });
        }
        let addresses: Vec<SocketAddr> = replicas.iter().map(|r| r.address).collect();
        let address = SocketAddr::from((balancer_host.address, BALANCER_PORT));
        let stats_socket = dir.join("haproxy.sock");
        let config = dir.join("haproxy.cfg");
        write_balancer_errors(dir)?;
        let health = HealthCheck {
            path: "/readyz",
            stats_socket: &stats_socket,
            errors: dir,
        };
        std::fs::write(&config, haproxy_config(address, &addresses, Some(&health)))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let mut balancer = spawn_in(
            &balancer_host.namespace,
            "haproxy",
            Path::new("haproxy"),
            &[
                "-db".to_owned(),
                "-f".to_owned(),
                config.display().to_string(),
            ],
            &dir.join("haproxy.log"),
        )?;
        balancer.wait_for_listen(address, READY_TIMEOUT).await?;
        let mut cluster = Self {
            redis,
            sentinels,
            replicas,
            balancer,
            address,
            stats_socket,
        };
        // Every replica in service before a scenario starts.
        let up = cluster
            .wait_for_servers(READY_TIMEOUT, |state| state.values().all(|s| s == "UP"))
            .await;
        if let Err(e) = up {
            let _ = cluster.stop().await;
            return Err(e);
        }
        Ok(cluster)
    }

    /// HAProxy's view of each replica (`UP`, `DOWN`, ...), from its admin
    /// socket.
    pub(crate) async fn servers(
        &self,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        let exchange = async {
            let mut socket = tokio::net::UnixStream::connect(&self.stats_socket)
                .await
                .map_err(|e| format!("cannot reach haproxy's admin socket: {e}"))?;
            socket
                .write_all(b"show stat\n")
                .await
                .map_err(|e| e.to_string())?;
            let mut text = String::new();
            socket
                .take(1 << 20)
                .read_to_string(&mut text)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(text)
        };
        let text = tokio::time::timeout(Duration::from_secs(2), exchange)
            .await
            .map_err(|_| "haproxy's admin socket did not answer in 2 s".to_owned())??;
        Ok(server_states(&text))
    }

    /// Waits until HAProxy's view of the replicas satisfies `done`.
    pub(crate) async fn wait_for_servers(
        &self,
        timeout: Duration,
        done: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
    ) -> Result<Duration, String> {
        let started = tokio::time::Instant::now();
        loop {
            let state = self.servers().await?;
            if !state.is_empty() && done(&state) {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= timeout {
                return Err(format!(
                    "haproxy's view of the replicas stayed {state:?} for {} s",
                    timeout.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The address of the primary the sentinels name now (asked of the
    /// first sentinel that answers).
    pub(crate) async fn primary(&self) -> Result<Ipv4Addr, String> {
        let mut last = String::from("no sentinel answered");
        for sentinel in addresses(&["s1", "s2", "s3"]) {
            let address = SocketAddr::from((sentinel, SENTINEL_PORT));
            match sentinel_primary(address).await {
                Ok(primary) => return Ok(primary),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// How many sessions the balancer killed so far as it took replicas
    /// out of service (`on-marked-down shutdown-sessions`): the sum of
    /// the sessions active that HAProxy logs with each server marked down.
    pub(crate) fn sessions_killed(&self) -> usize {
        killed_at_mark_down(&self.balancer.log_text())
    }

    /// The replicas' process ids.
    pub(crate) fn replica_pids(&self) -> Vec<u32> {
        self.replicas.iter().map(|r| r.process.pid()).collect()
    }

    /// A replica or the balancer that exited by itself, with its log.
    pub(crate) fn exited(&mut self) -> Option<String> {
        let balancer = std::iter::once(&mut self.balancer);
        let replicas = self.replicas.iter_mut().map(|r| &mut r.process);
        first_exited(balancer.chain(replicas))
    }

    /// Stops every process by its PID.
    pub(crate) async fn stop(&mut self) -> Result<(), String> {
        let mut failures = Vec::new();
        let processes = std::iter::once(&mut self.balancer)
            .chain(self.replicas.iter_mut().map(|r| &mut r.process))
            .chain(self.sentinels.iter_mut())
            .chain(self.redis.iter_mut().map(|r| &mut r.process));
        for process in processes {
            if let Err(e) = process.stop().await {
                failures.push(e);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }
}

async fn wait_for_ping(process: &mut Process, address: SocketAddr) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        if redis_ping(address).await.is_ok() {
            return Ok(());
        }
        if !process.is_running() || tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "{} did not answer PING on {address}; its log ends with:\n{}",
                process.name(),
                process.log_tail()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `SENTINEL get-master-addr-by-name` of the sentinel at `address`.
async fn sentinel_primary(address: SocketAddr) -> Result<Ipv4Addr, String> {
    let command = format!("SENTINEL get-master-addr-by-name {SERVICE}");
    // `*2 $len ip $len port`: five lines.
    let text = sentinel_text(address, &command, |t| t.matches('\n').count() >= 5).await?;
    text.lines()
        .find_map(|l| l.trim().parse::<Ipv4Addr>().ok())
        .ok_or_else(|| format!("the sentinel at {address} answered {text:?}"))
}

/// Whether the sentinel at `address` knows the replica `replica` as a
/// healthy one and both other sentinels: a failover can then happen.
async fn sentinel_ready(address: SocketAddr, replica: Ipv4Addr) -> bool {
    let replicas = sentinel_text(address, &format!("SENTINEL replicas {SERVICE}"), |t| {
        // The field's value (a length line, then the value) has arrived.
        t.split("master-link-status")
            .nth(1)
            .is_some_and(|rest| rest.matches('\n').count() >= 3)
    })
    .await
    .unwrap_or_default();
    // The values alone, without RESP's length and count lines.
    let lines: Vec<&str> = replicas
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('$') && !l.starts_with('*'))
        .collect();
    let known = lines.contains(&replica.to_string().as_str())
        && lines.windows(2).any(|w| w[0] == "flags" && w[1] == "slave")
        && lines
            .windows(2)
            .any(|w| w[0] == "master-link-status" && w[1] == "ok");
    let sentinels = sentinel_text(address, &format!("SENTINEL sentinels {SERVICE}"), |t| {
        t.matches("runid").count() >= 2
    })
    .await
    .unwrap_or_default();
    known && sentinels.matches("runid").count() >= 2
}

/// The raw answer of the sentinel at `address` to `command`, read until
/// `complete` says it is all there (bounded: 1 s, 64 KiB).
async fn sentinel_text(
    address: SocketAddr,
    command: &str,
    complete: impl Fn(&str) -> bool,
) -> Result<String, String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| e.to_string())?;
        stream
            .write_all(format!("{command}\r\n").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
            answer.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            if n == 0 || answer.len() > 64 * 1024 || complete(&text) {
                return Ok(text);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(1), exchange)
        .await
        .map_err(|_| format!("the sentinel at {address} did not answer `{command}` in 1 s"))?
}

/// The status of each server of the `replicas` backend in HAProxy's
/// `show stat` CSV.
fn server_states(csv: &str) -> std::collections::BTreeMap<String, String> {
    let mut lines = csv.lines();
    let Some(header) = lines.next() else {
        return Default::default();
    };
    let columns: Vec<&str> = header.trim_start_matches("# ").split(',').collect();
    let column = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(proxy), Some(server), Some(status)) =
        (column("pxname"), column("svname"), column("status"))
    else {
        return Default::default();
    };
    lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let name = *fields.get(server)?;
            if fields.get(proxy) != Some(&"replicas") || name == "BACKEND" {
                return None;
            }
            Some((name.to_owned(), (*fields.get(status)?).to_owned()))
        })
        .collect()
}

/// The sessions HAProxy says were active on each server it marked down
/// (`Server replicas/r2 is DOWN, reason: ... 1 active and 0 backup servers
/// left. 4 sessions active, 0 requeued, ...`), summed.
fn killed_at_mark_down(log: &str) -> usize {
    log.lines()
        .filter(|line| line.contains(" is DOWN"))
        .filter_map(|line| {
            let before = &line[..line.find(" sessions active")?];
            before.rsplit(' ').next()?.parse::<usize>().ok()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_killed_are_read_from_each_mark_down() {
        let log = "[WARNING]  (8193) : Server replicas/r1 is DOWN, reason: Layer7 wrong status, \
            code: 503, check duration: 0ms. 2 active and 0 backup servers left. 0 sessions \
            active, 0 requeued, 0 remaining in queue.
[WARNING]  (8193) : Server replicas/r2 is DOWN, reason: Layer7 wrong status, code: 503, \
            check duration: 0ms. 1 active and 0 backup servers left. 1 sessions active, 0 \
            requeued, 0 remaining in queue.
[WARNING]  (8193) : Server replicas/r3 is DOWN, reason: Layer7 wrong status, code: 503, \
            check duration: 12ms. 0 active and 0 backup servers left. 4 sessions active, 0 \
            requeued, 0 remaining in queue.
[ALERT]    (8193) : backend 'replicas' has no server available!
[WARNING]  (8193) : Server replicas/r3 is UP, reason: Layer7 check passed, code: 200, \
            check duration: 1ms. 1 active and 0 backup servers online. 0 sessions requeued, \
            0 total in queue.";
        assert_eq!(killed_at_mark_down(log), 5);
        assert_eq!(killed_at_mark_down(""), 0);
    }

    #[test]
    fn haproxy_stat_lines_give_each_replica_its_status() {
        let csv = "# pxname,svname,qcur,status,weight\n\
                   mcp,FRONTEND,,OPEN,\n\
                   replicas,r1,0,UP,1\n\
                   replicas,r2,0,DOWN,1\n\
                   replicas,BACKEND,0,UP,2\n";
        let states = server_states(csv);
        assert_eq!(states.len(), 2);
        assert_eq!(states["r1"], "UP");
        assert_eq!(states["r2"], "DOWN");
    }

    #[test]
    fn every_named_host_has_an_address_in_the_test_range() {
        for name in REPLICA_HOSTS.iter().chain(REDIS_HOSTS.iter()) {
            let address = address_of(name);
            assert_eq!(address.octets()[..2], [198, 18], "{name}");
        }
        assert_eq!(addresses(&REDIS_HOSTS).len(), REDIS_HOSTS.len());
    }
}
