//! The gateway rows (issue 29): `mcp gateway --stdio "<echo server>"
//! --listen 127.0.0.1:PORT` called over streamable HTTP at C=16 in both
//! eras, against the same echo server called directly over its stdio with
//! 16 calls in flight, in the same run.
//!
//! Direct means stdio because that is the upstream the gateway serves: 16
//! downstream connections, each with one call at a time, put up to 16
//! calls in flight on the upstream's one pipe, so the direct row gives the
//! upstream the same load without the gateway. What the gateway adds is
//! then the difference of the two rows: an HTTP hop, the downstream
//! server, the client towards the upstream, and the id mapping between
//! them. A gateway row's CPU and peak RSS are the gateway's plus its
//! upstream child's ([`super::child::Server::cpu_time`]), so its CPU per
//! call minus the direct row's is the gateway's own.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use super::child::Server;
use super::report::{Row, describe};
use super::{Case, Kind, PEER_TIMEOUT, Programs};

/// Downstream connections of the gateway rows, and calls in flight of the
/// direct row.
pub(super) const PARALLEL: usize = 16;

/// Starts the gateway in front of the echo server on a free port of
/// 127.0.0.1, and returns once it accepts connections (it listens only
/// after its upstream has connected).
pub(super) async fn spawn(programs: &Programs) -> Result<(Server, SocketAddr), String> {
    let (program, _) = programs.server(Kind::GatewaySession)?;
    let upstream = programs.path("mcp-bench-echo-server");
    let upstream = upstream
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", upstream.display()))?;
    if upstream.contains(char::is_whitespace) {
        return Err(format!(
            "the echo server's path `{upstream}` holds a space, which `--stdio` would split; \
             build in a target directory without one"
        ));
    }
    let address = free_port()?;
    let listen = address.to_string();
    let mut server = Server::spawn(
        &program,
        &["gateway", "--stdio", upstream, "--listen", &listen],
    )?;
    let deadline = Instant::now() + PEER_TIMEOUT;
    loop {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            return Ok((server, address));
        }
        if let Some(status) = server
            .child
            .try_wait()
            .map_err(|e| format!("cannot wait for the gateway: {e}"))?
        {
            return Err(format!("the gateway exited before it listened ({status})"));
        }
        if Instant::now() >= deadline {
            // Its upstream is stopped with it, not left to init.
            let _ = server.terminate().await;
            return Err(format!(
                "the gateway did not listen on {address} in {PEER_TIMEOUT:?}"
            ));
        }
        // Not listening yet (its upstream is still starting): look again.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A port of 127.0.0.1 nobody listens on now: bound, then let go for the
/// gateway (which takes the address as a flag and prints it only on stderr).
fn free_port() -> Result<SocketAddr, String> {
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("cannot bind a port of 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map_err(|e| format!("cannot read a bound port: {e}"))
}

/// The comparison under the table: for each gateway row, its calls/s as a
/// ratio of the direct row's, the p50 it adds, and the server CPU per call
/// it adds; empty when no gateway row was measured.
pub(super) fn render(rows: &[Row]) -> String {
    let direct_case = Case {
        kind: Kind::GatewayDirect,
        payload: 64,
        parallel: PARALLEL,
    };
    let direct = rows.iter().find(|r| r.case() == direct_case);
    let mut out = String::new();
    for row in rows.iter().filter(|r| r.case().kind.is_gateway()) {
        if out.is_empty() {
            let _ = writeln!(
                out,
                "\nThrough `mcp gateway` (issue 29): each call over HTTP through the gateway \
                 to the stdio echo server, against `{}` (the same upstream called directly, \
                 with as many calls in flight), in the same run:\n",
                describe(direct_case)
            );
        }
        let line = match direct {
            Some(direct) => compare(row, direct),
            None => "the direct row was not measured".to_owned(),
        };
        let _ = writeln!(out, "- {}: {line}", describe(row.case()));
    }
    out
}

/// `calls/s 0.42x direct (4,100 vs 9,800), p50 +1.234 ms (1.500 vs
/// 0.266), server CPU +80.0 ms / 1000 calls`.
fn compare(row: &Row, direct: &Row) -> String {
    let ratio = if direct.calls_per_second() > 0.0 {
        format!("{:.2}x", row.calls_per_second() / direct.calls_per_second())
    } else {
        "-".to_owned()
    };
    format!(
        "calls/s {ratio} direct ({:.0} vs {:.0}), p50 {:+.3} ms ({:.3} vs {:.3}), \
         server CPU {:+.1} ms / 1000 calls",
        row.calls_per_second(),
        direct.calls_per_second(),
        row.p50_ms() - direct.p50_ms(),
        row.p50_ms(),
        direct.p50_ms(),
        row.cpu_ms_per_1000() - direct.cpu_ms_per_1000(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Sample;

    /// A row of `kind` at the gateway's shape: `calls` calls in one
    /// second, each taking `p50_ms`, and `cpu_ms` of server CPU.
    fn row(kind: Kind, calls: u64, p50_ms: u64, cpu_ms: u64) -> Row {
        let mut sample = Sample::default();
        for _ in 0..calls {
            sample.record(Duration::from_millis(p50_ms));
        }
        let case = Case {
            kind,
            payload: 64,
            parallel: PARALLEL,
        };
        Row::new(
            case,
            sample.finish(Duration::from_secs(1)),
            Duration::from_millis(cpu_ms),
            Duration::ZERO,
            1024,
        )
    }

    #[test]
    fn each_gateway_row_is_compared_with_the_direct_row() {
        let rows = [
            row(Kind::HttpRaw, 100, 1, 10),
            row(Kind::GatewayDirect, 100, 1, 10),
            row(Kind::GatewaySession, 40, 3, 12),
            row(Kind::GatewayStateless, 50, 2, 11),
        ];
        let text = render(&rows);
        for line in [
            "against `stdio mcp-server, direct (gateway reference) 64 B 16 in flight`",
            "- HTTP 2025-11-25 mcp gateway to stdio mcp-server 64 B C=16: calls/s 0.40x direct \
             (40 vs 100), p50 +2.000 ms (3.000 vs 1.000), server CPU +200.0 ms / 1000 calls",
            "- HTTP 2026-07-28 mcp gateway to stdio mcp-server 64 B C=16: calls/s 0.50x direct \
             (50 vs 100), p50 +1.000 ms (2.000 vs 1.000), server CPU +120.0 ms / 1000 calls",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        assert_eq!(text.matches("\n- ").count(), 2, "{text}");
    }

    #[test]
    fn without_gateway_rows_nothing_is_said() {
        assert_eq!(render(&[row(Kind::GatewayDirect, 100, 1, 10)]), "");
        let alone = render(&[row(Kind::GatewaySession, 40, 3, 12)]);
        assert!(
            alone.contains("C=16: the direct row was not measured"),
            "{alone}"
        );
    }
}
