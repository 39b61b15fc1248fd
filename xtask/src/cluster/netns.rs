//! Hosts for the namespace mode: one network namespace per host (`ip
//! netns`), each with one interface `eth0` on [`wire`](super::wire) and an
//! address of 198.18.0.0/16 (the range set aside for network tests, RFC
//! 2544), used inside the namespaces only: the host's own namespace gets
//! no address and no route.
//!
//! The namespaces are named `mcpx{pid}-{host}`; dropping the [`Network`]
//! deletes them (on success, an error, a panic or ctrl-c, since the
//! runtime that ran the scenarios is dropped first). Namespaces left by a
//! run that was killed outright (its pid gone) are deleted at the next
//! start.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};

use super::wire::Wire;

/// Where the namespaces' names begin.
const PREFIX: &str = "mcpx";

/// One host: its namespace and its address.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    pub(crate) name: &'static str,
    pub(crate) namespace: String,
    pub(crate) address: Ipv4Addr,
}

/// The namespaces, the wire between them, and how to tear them down.
pub(crate) struct Network {
    pub(crate) hosts: Vec<Host>,
    pub(crate) wire: Wire,
}

/// Runs `ip ARGS` (or another program), failing with its stderr.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program} (apt-get install -y iproute2): {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Whether this machine lets us make network namespaces and TUN devices;
/// `Err` says why not, for the run to fail with.
pub(crate) fn preflight() -> Result<(), String> {
    let probe = format!("{PREFIX}{}-probe", std::process::id());
    run("ip", &["netns", "add", &probe]).map_err(|e| {
        format!("network namespaces are refused on this machine (the namespace mode needs root and `ip netns`): {e}")
    })?;
    let _ = run("ip", &["netns", "del", &probe]);
    if !Path::new("/dev/net/tun").exists() {
        return Err("/dev/net/tun is missing: the namespace mode needs TUN devices".into());
    }
    Ok(())
}

/// Deletes the namespaces of earlier runs whose process is gone.
fn sweep_stale() {
    let Ok(output) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            eprintln!("deleting the namespace {name} a killed run left");
            let _ = run("ip", &["netns", "del", name]);
        }
    }
}

impl Network {
    /// Creates a namespace per `(name, address)`, each with its `eth0` on
    /// a new wire, up and addressed (a /16, so every host reaches every
    /// other one through the wire).
    pub(crate) fn create(hosts: &[(&'static str, Ipv4Addr)]) -> Result<Self, String> {
        sweep_stale();
        let pid = std::process::id();
        let hosts: Vec<Host> = hosts
            .iter()
            .map(|(name, address)| Host {
                name,
                namespace: format!("{PREFIX}{pid}-{name}"),
                address: *address,
            })
            .collect();
        let addresses: Vec<Ipv4Addr> = hosts.iter().map(|h| h.address).collect();
        // Devices are made here, in this process's namespace, and moved at
        // once: interface names there are at most 15 bytes.
        let (wire, devices) = Wire::start(&format!("mx{}t", pid % 100_000), &addresses)?;
        // From here on, dropping the network deletes what exists.
        let mut network = Self {
            hosts: Vec::new(),
            wire,
        };
        for (host, device) in hosts.into_iter().zip(devices) {
            run("ip", &["netns", "add", &host.namespace])?;
            network.hosts.push(host.clone());
            let ns = host.namespace.as_str();
            run("ip", &["link", "set", &device, "netns", ns])?;
            run("ip", &["-n", ns, "link", "set", &device, "name", "eth0"])?;
            let cidr = format!("{}/16", host.address);
            run("ip", &["-n", ns, "addr", "add", &cidr, "dev", "eth0"])?;
            run("ip", &["-n", ns, "link", "set", "eth0", "up"])?;
            run("ip", &["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(network)
    }

    /// The host called `name`.
    pub(crate) fn host(&self, name: &str) -> Result<&Host, String> {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .ok_or_else(|| format!("no host {name}"))
    }

    /// The namespace of the harness's own client side.
    pub(crate) fn enter(&self, name: &str) -> Result<(), String> {
        let host = self.host(name)?;
        let file = std::fs::File::open(format!("/run/netns/{}", host.namespace))
            .map_err(|e| format!("cannot open the namespace {}: {e}", host.namespace))?;
        nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("cannot enter the namespace {}: {e}", host.namespace))
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for host in &self.hosts {
            if let Err(e) = run("ip", &["netns", "del", &host.namespace]) {
                eprintln!("{e}");
            }
        }
    }
}
