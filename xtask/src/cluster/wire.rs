//! The network between the namespaces: one TUN device per host (moved into
//! its namespace as `eth0`), and this process switching IPv4 packets
//! between them by destination address, with faults per ordered pair of
//! hosts: a delay with jitter, random loss, or a cut (every packet
//! dropped).
//!
//! Why not veth pairs, a bridge and `tc netem`: the kernels this project's
//! CI runs on are built without netem (and without the `prio` qdisc and
//! the `gact` drop action), so `tc` can neither delay nor drop a chosen
//! flow there. The faults are the same as netem's `delay D J loss P`, made
//! here on real packets of the hosts' own TCP stacks; a packet keeps its
//! place behind the earlier packets of its pair (jitter without
//! reordering), and each pair's queue is bounded.
//!
//! The switch runs on a thread of its own (its own runtime), so the
//! harness's load cannot delay it; dropping the [`Wire`] stops it, and the
//! devices go with their namespaces.

use std::collections::{BinaryHeap, HashMap};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Packets waiting in the switch at most (like netem's `limit`); past it,
/// packets are dropped and counted.
const QUEUE_LIMIT: usize = 10_000;
/// The largest packet read from a device (its MTU is 1500).
const PACKET_MAX: usize = 2048;

/// What happens to the packets from one host to another.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Link {
    /// Added to every packet's trip.
    pub(crate) delay: Duration,
    /// The delay varies uniformly by up to this, either way.
    pub(crate) jitter: Duration,
    /// The share of packets dropped at random (0.0 to 1.0).
    pub(crate) loss: f64,
    /// Every packet dropped: a partition.
    pub(crate) cut: bool,
}

impl Link {
    /// A partition.
    pub(crate) const CUT: Self = Self {
        delay: Duration::ZERO,
        jitter: Duration::ZERO,
        loss: 0.0,
        cut: true,
    };
}

/// Packet counts since the wire started.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counts {
    pub(crate) delivered: u64,
    pub(crate) lost: u64,
    pub(crate) cut: u64,
    pub(crate) overflow: u64,
}

#[derive(Default)]
struct Rules {
    /// By (from host, to host).
    links: HashMap<(usize, usize), Link>,
    counts: Counts,
}

/// The running switch.
pub(crate) struct Wire {
    rules: Arc<Mutex<Rules>>,
    addresses: Vec<Ipv4Addr>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Wire {
    /// Creates one TUN device per address, named `{prefix}{index}` (moved
    /// into its namespace by the caller), and starts switching between them.
    pub(crate) fn start(
        prefix: &str,
        addresses: &[Ipv4Addr],
    ) -> Result<(Self, Vec<String>), String> {
        let names: Vec<String> = (0..addresses.len())
            .map(|i| format!("{prefix}{i}"))
            .collect();
        let rules = Arc::new(Mutex::new(Rules::default()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel();
        let thread_names = names.clone();
        let thread_rules = rules.clone();
        let thread_addresses = addresses.to_vec();
        let thread = std::thread::Builder::new()
            .name("cluster-wire".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("cannot start the wire's runtime: {e}")));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let mut devices = Vec::new();
                    for name in &thread_names {
                        match tokio_tun::Tun::builder().name(name).build() {
                            Ok(mut tun) if !tun.is_empty() => devices.push(Arc::new(tun.remove(0))),
                            Ok(_) => {
                                let _ = ready_tx.send(Err(format!("no TUN device {name}")));
                                return;
                            }
                            Err(e) => {
                                let _ = ready_tx.send(Err(format!(
                                    "cannot create the TUN device {name} (/dev/net/tun): {e}"
                                )));
                                return;
                            }
                        }
                    }
                    let _ = ready_tx.send(Ok(()));
                    tokio::select! {
                        () = switch(devices, thread_addresses, thread_rules) => {}
                        _ = stop_rx => {}
                    }
                });
            })
            .map_err(|e| format!("cannot start the wire's thread: {e}"))?;
        let ready = ready_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| "the wire did not start within 10 s".to_owned())?;
        let wire = Self {
            rules,
            addresses: addresses.to_vec(),
            stop: Some(stop_tx),
            thread: Some(thread),
        };
        ready?;
        Ok((wire, names))
    }

    fn index(&self, address: Ipv4Addr) -> Result<usize, String> {
        self.addresses
            .iter()
            .position(|a| *a == address)
            .ok_or_else(|| format!("{address} is no host on the wire"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets `link` on the packets from each of `from` to each of `to`, and
    /// back (both directions).
    pub(crate) fn set(&self, from: &[Ipv4Addr], to: &[Ipv4Addr], link: Link) -> Result<(), String> {
        let mut pairs = Vec::new();
        for a in from {
            for b in to {
                let (a, b) = (self.index(*a)?, self.index(*b)?);
                pairs.push((a, b));
                pairs.push((b, a));
            }
        }
        let mut rules = self.lock();
        for pair in pairs {
            if link == Link::default() {
                rules.links.remove(&pair);
            } else {
                rules.links.insert(pair, link);
            }
        }
        Ok(())
    }

    /// Removes every fault.
    pub(crate) fn heal(&self) {
        self.lock().links.clear();
    }

    /// What the wire did so far.
    pub(crate) fn counts(&self) -> Counts {
        self.lock().counts
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One packet on its way.
struct Queued {
    due: Instant,
    /// Arrival order, to keep equal due times in order.
    seq: u64,
    to: usize,
    packet: Vec<u8>,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.seq) == (other.due, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.due, other.seq).cmp(&(self.due, self.seq))
    }
}

/// Reads every device, and delivers each packet to the device of its
/// destination when its link lets it, until dropped.
async fn switch(
    devices: Vec<Arc<tokio_tun::Tun>>,
    addresses: Vec<Ipv4Addr>,
    rules: Arc<Mutex<Rules>>,
) {
    let (tx, mut rx) = mpsc::channel::<(usize, Vec<u8>)>(QUEUE_LIMIT);
    let mut readers = tokio::task::JoinSet::new();
    for (from, device) in devices.iter().enumerate() {
        let (device, tx, rules) = (device.clone(), tx.clone(), rules.clone());
        readers.spawn(async move {
            let mut buffer = vec![0u8; PACKET_MAX];
            while let Ok(n) = device.recv(&mut buffer).await {
                if tx.try_send((from, buffer[..n].to_vec())).is_err() {
                    rules
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .counts
                        .overflow += 1;
                }
            }
        });
    }
    drop(tx);
    let mut random = Random::seeded();
    let mut heap: BinaryHeap<Queued> = BinaryHeap::new();
    // The latest due time per pair: a packet never overtakes its pair's
    // earlier ones.
    let mut last_due: HashMap<(usize, usize), Instant> = HashMap::new();
    let mut seq = 0u64;
    loop {
        let next = heap.peek().map(|q| q.due);
        tokio::select! {
            got = rx.recv() => {
                let Some((from, packet)) = got else { return };
                let Some(to) = destination(&packet, &addresses) else { continue };
                let link = {
                    let rules = rules.lock().unwrap_or_else(|p| p.into_inner());
                    rules.links.get(&(from, to)).copied().unwrap_or_default()
                };
                let dropped = if link.cut {
                    Some(true)
                } else if link.loss > 0.0 && random.unit() < link.loss {
                    Some(false)
                } else {
                    None
                };
                if let Some(cut) = dropped {
                    let mut rules = rules.lock().unwrap_or_else(|p| p.into_inner());
                    if cut { rules.counts.cut += 1 } else { rules.counts.lost += 1 }
                    continue;
                }
                let spread = link.jitter.as_secs_f64() * (2.0 * random.unit() - 1.0);
                let trip = Duration::from_secs_f64((link.delay.as_secs_f64() + spread).max(0.0));
                let now = Instant::now();
                let after = last_due.get(&(from, to)).copied().unwrap_or(now);
                let due = (now + trip).max(after);
                last_due.insert((from, to), due);
                if heap.len() >= QUEUE_LIMIT {
                    rules.lock().unwrap_or_else(|p| p.into_inner()).counts.overflow += 1;
                    continue;
                }
                seq += 1;
                heap.push(Queued { due, seq, to, packet });
            }
            () = sleep_until(next) => {}
        }
        let now = Instant::now();
        let mut delivered = 0u64;
        while heap.peek().is_some_and(|q| q.due <= now) {
            let Some(queued) = heap.pop() else { break };
            // A full device queue drops the packet, as a full NIC would.
            if devices[queued.to].try_send(&queued.packet).is_ok() {
                delivered += 1;
            }
        }
        if delivered > 0 {
            rules
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .counts
                .delivered += delivered;
        }
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// The host an IPv4 packet is for; anything else (IPv6 router
/// solicitations, packets for no host) is dropped.
fn destination(packet: &[u8], addresses: &[Ipv4Addr]) -> Option<usize> {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let to = Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]);
    addresses.iter().position(|a| *a == to)
}

/// xorshift64*: random enough to pick lost packets, seeded from the clock.
struct Random(u64);

impl Random {
    fn seeded() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        Self(nanos ^ u64::from(std::process::id()) | 1)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_routed_by_their_ipv4_destination() {
        let hosts = [Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1)];
        let mut packet = vec![0u8; 40];
        packet[0] = 0x45;
        packet[16..20].copy_from_slice(&[198, 18, 1, 1]);
        assert_eq!(destination(&packet, &hosts), Some(1));
        packet[19] = 9;
        assert_eq!(destination(&packet, &hosts), None, "no such host");
        packet[0] = 0x60;
        assert_eq!(destination(&packet, &hosts), None, "IPv6");
        assert_eq!(destination(&packet[..10], &hosts), None, "too short");
    }

    #[test]
    fn the_random_source_is_uniform_enough_for_one_percent_loss() {
        let mut random = Random::seeded();
        let lost = (0..100_000).filter(|_| random.unit() < 0.01).count();
        assert!((700..1300).contains(&lost), "{lost} of 100000");
    }

    #[test]
    fn the_earliest_packet_is_on_top() {
        let now = Instant::now();
        let mut heap = BinaryHeap::new();
        for (seq, ms) in [(1, 30), (2, 10), (3, 20)] {
            heap.push(Queued {
                due: now + Duration::from_millis(ms),
                seq,
                to: 0,
                packet: Vec::new(),
            });
        }
        let order: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|q| q.seq)).collect();
        assert_eq!(order, [2, 3, 1]);
    }
}
