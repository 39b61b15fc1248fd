//! The scale rows (issue 30): what one idle session, and one idle GET
//! stream, cost the server in memory, measured from the outside as
//! `(VmRSS with N open - VmRSS before) / N` from `/proc/<pid>/status` of a
//! fresh server child, with every session and stream held open by this
//! load generator's own keep-alive connections on 127.0.0.1.
//!
//! Each server is measured in two phases, each with a fresh process:
//!
//! - **own connections**: N 2025-11-25 sessions (`initialize` +
//!   `notifications/initialized`, nothing else), each opened on its own
//!   keep-alive connection and left idle on it; then one GET stream per
//!   session, each on another connection of its own, left open and unread.
//!   raw hyper, which has no sessions, holds N keep-alive connections that
//!   each made one call, then N GETs answered with a body that never ends.
//! - **shared connections** (MCP servers only): N sessions opened over 16
//!   keep-alive connections, so the figure is the session's own state
//!   without a connection's.
//!
//! Before "before" is read, a few sessions (or connections) have been
//! opened, called and streamed from, so lazily built state (runtime
//! threads' allocator arenas, maps' first buckets) is not charged to the
//! idle items. Each reading waits for the RSS to stop changing, and checks
//! that the server still holds the connections open.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use super::child::Server;
use super::http::Client;
use super::report::server;
use super::{Case, Kind, Programs};

/// Idle items per row in a full run, and in `--quick`.
pub(super) const FULL_COUNT: usize = 1000;
pub(super) const QUICK_COUNT: usize = 20;

/// The connections the sessions of the shared phase are opened over.
const SHARED_CONNECTIONS: usize = 16;

/// Sessions opened, called and streamed from before "before".
const WARM_UP: usize = 4;

/// What one row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Item {
    /// A session on its own keep-alive connection (raw hyper: the
    /// connection after one call).
    OwnConnection,
    /// A session opened over one of 16 shared connections.
    SharedConnection,
    /// A GET stream on its own connection (raw hyper: a response body that
    /// never ends).
    GetStream,
}

impl Item {
    fn describe(self, kind: Kind) -> &'static str {
        match (self, kind) {
            (Self::OwnConnection, Kind::HttpRaw) => "keep-alive connection after one call",
            (Self::OwnConnection, _) => "session on its own keep-alive connection",
            (Self::SharedConnection, _) => "session over 16 shared keep-alive connections",
            (Self::GetStream, Kind::HttpRaw) => "GET with a body that never ends",
            (Self::GetStream, _) => "GET stream of a session, on its own connection",
        }
    }
}

/// One measured row.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScaleRow {
    pub(super) kind: Kind,
    pub(super) item: Item,
    count: usize,
    before_kib: u64,
    after_kib: u64,
}

impl ScaleRow {
    pub(super) fn new(
        kind: Kind,
        item: Item,
        count: usize,
        before_kib: u64,
        after_kib: u64,
    ) -> Self {
        Self {
            kind,
            item,
            count,
            before_kib,
            after_kib,
        }
    }

    /// KiB of RSS per idle item.
    pub(super) fn kib_each(&self) -> f64 {
        (self.after_kib as f64 - self.before_kib as f64) / self.count.max(1) as f64
    }
}

/// `scale mcp-server: session on its own keep-alive connection`, for
/// progress, errors and `--only`.
pub(super) fn describe(kind: Kind, item: Item) -> String {
    format!("scale {}: {}", server(kind), item.describe(kind))
}

/// The servers measured: raw hyper, ours, and rmcp when it was built.
fn kinds(programs: &Programs) -> Vec<Kind> {
    let mut kinds = vec![Kind::HttpRaw, Kind::HttpSession];
    if programs.rmcp.is_some() {
        kinds.push(Kind::RmcpSession);
    }
    kinds
}

/// Measures the rows `only` leaves, `rounds` times each, with `count` idle
/// items per row; each row is the round with the median KiB per item.
pub(super) async fn run(
    programs: &Programs,
    count: usize,
    rounds: usize,
    only: Option<&str>,
) -> Result<Vec<ScaleRow>, String> {
    let wanted =
        |kind: Kind, item: Item| only.is_none_or(|text| describe(kind, item).contains(text));
    let mut measured: Vec<Vec<ScaleRow>> = Vec::new();
    let mut keep = |row: ScaleRow| {
        eprintln!(
            "{}: {} idle, {:.1} KiB each (RSS {:.1} -> {:.1} MiB)",
            describe(row.kind, row.item),
            row.count,
            row.kib_each(),
            row.before_kib as f64 / 1024.0,
            row.after_kib as f64 / 1024.0
        );
        match measured
            .iter_mut()
            .find(|r| r[0].kind == row.kind && r[0].item == row.item)
        {
            Some(rounds) => rounds.push(row),
            None => measured.push(vec![row]),
        }
    };
    for _ in 0..rounds {
        for kind in kinds(programs) {
            if wanted(kind, Item::OwnConnection) || wanted(kind, Item::GetStream) {
                let (sessions, streams) = own_connections(programs, kind, count)
                    .await
                    .map_err(|e| format!("{}: {e}", describe(kind, Item::OwnConnection)))?;
                keep(sessions);
                keep(streams);
            }
            if kind != Kind::HttpRaw && wanted(kind, Item::SharedConnection) {
                let row = shared_connections(programs, kind, count)
                    .await
                    .map_err(|e| format!("{}: {e}", describe(kind, Item::SharedConnection)))?;
                keep(row);
            }
        }
    }
    Ok(measured
        .into_iter()
        .filter(|rounds| wanted(rounds[0].kind, rounds[0].item))
        .filter_map(median)
        .collect())
}

fn median(mut rounds: Vec<ScaleRow>) -> Option<ScaleRow> {
    rounds.sort_by(|a, b| a.kib_each().total_cmp(&b.kib_each()));
    rounds.get(rounds.len() / 2).copied()
}

fn case(kind: Kind) -> Case {
    Case {
        kind,
        payload: 64,
        parallel: 1,
    }
}

/// A client as the rows of `kind` open one: raw hyper's makes one call,
/// an MCP server's opens its session and nothing else.
async fn idle_client(address: SocketAddr, kind: Kind) -> Result<Client, String> {
    let mut client = Client::open(address, case(kind)).await?;
    if kind == Kind::HttpRaw {
        client.probe().await?;
    }
    Ok(client)
}

/// A GET stream on a connection of its own, for `session` when given.
async fn stream_client(
    address: SocketAddr,
    kind: Kind,
    session: Option<&hyper::header::HeaderValue>,
) -> Result<Client, String> {
    let mut client = Client::connect(address, case(kind)).await?;
    client.open_stream(session).await?;
    Ok(client)
}

/// The first phase: `count` sessions on their own connections, then a GET
/// stream for each; returns the sessions' row and the streams' row.
async fn own_connections(
    programs: &Programs,
    kind: Kind,
    count: usize,
) -> Result<(ScaleRow, ScaleRow), String> {
    let (program, args) = programs.server(kind)?;
    let mut server = Server::spawn(&program, args)?;
    let address = server.read_address().await?;
    let mut clients = Vec::with_capacity(2 * count + 2 * WARM_UP);
    let measured = async {
        for _ in 0..WARM_UP {
            let mut client = idle_client(address, kind).await?;
            client.probe().await?;
            let stream = stream_client(address, kind, client.session()).await?;
            clients.push(client);
            clients.push(stream);
        }
        let before = settled_rss(&server).await?;
        let mut sessions = Vec::with_capacity(count);
        for _ in 0..count {
            sessions.push(idle_client(address, kind).await?);
        }
        let with_sessions = settled_rss(&server).await?;
        expect_sockets(&server, 2 * WARM_UP + count)?;
        for session in &sessions {
            clients.push(stream_client(address, kind, session.session()).await?);
        }
        clients.extend(sessions);
        let with_streams = settled_rss(&server).await?;
        expect_sockets(&server, 2 * WARM_UP + 2 * count)?;
        Ok::<_, String>((
            ScaleRow::new(kind, Item::OwnConnection, count, before, with_sessions),
            ScaleRow::new(kind, Item::GetStream, count, with_sessions, with_streams),
        ))
    }
    .await;
    finish(server, clients).await?;
    measured
}

/// The second phase: `count` sessions opened over 16 connections.
async fn shared_connections(
    programs: &Programs,
    kind: Kind,
    count: usize,
) -> Result<ScaleRow, String> {
    let (program, args) = programs.server(kind)?;
    let mut server = Server::spawn(&program, args)?;
    let address = server.read_address().await?;
    let mut clients = Vec::with_capacity(SHARED_CONNECTIONS);
    let measured = async {
        for _ in 0..SHARED_CONNECTIONS {
            let mut client = idle_client(address, kind).await?;
            client.probe().await?;
            clients.push(client);
        }
        let before = settled_rss(&server).await?;
        for index in 0..count {
            clients[index % SHARED_CONNECTIONS].new_session().await?;
        }
        let after = settled_rss(&server).await?;
        expect_sockets(&server, SHARED_CONNECTIONS)?;
        Ok::<_, String>(ScaleRow::new(
            kind,
            Item::SharedConnection,
            count,
            before,
            after,
        ))
    }
    .await;
    finish(server, clients).await?;
    measured
}

/// Kills the server first, so every connection ends at once, then closes
/// and awaits the clients.
async fn finish(server: Server, clients: Vec<Client>) -> Result<(), String> {
    let killed = server.kill().await;
    for client in clients {
        client.close().await;
    }
    killed
}

/// The server's RSS once it has stopped changing: read every 50 ms until
/// two readings agree (at most 2 s), so work still under way when the last
/// answer arrived (a session's task starting) is counted.
async fn settled_rss(server: &Server) -> Result<u64, String> {
    let mut last = server.rss_kib()?;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = server.rss_kib()?;
        if now == last {
            break;
        }
        last = now;
    }
    Ok(last)
}

/// Fails unless the server holds at least `connections` sockets (one more
/// for its listener): the idle items measured are really open.
fn expect_sockets(server: &Server, connections: usize) -> Result<(), String> {
    let open = server.open_sockets()?;
    if open > connections {
        Ok(())
    } else {
        Err(format!(
            "the server holds {open} sockets, not the {connections} connections opened and its listener: it closed some"
        ))
    }
}

/// The scale table.
pub(super) fn render(rows: &[ScaleRow], quick: bool) -> String {
    let mut out = String::new();
    let count = rows.first().map_or(0, |r| r.count);
    let _ = writeln!(
        out,
        "\nScale (issue 30): server memory per idle item, as (RSS with N open - RSS before) / N, \
         N = {count}, 2025-11-25 sessions{}.\n",
        if quick {
            " (a `--quick` smoke run: N is small, the figures mean little)"
        } else {
            ""
        }
    );
    out.push_str(
        "| idle item | server | N | RSS before MiB | RSS with N MiB | KiB each \
         | KiB each over raw hyper's |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        // What an MCP server adds to what hyper itself keeps for the same
        // connection or open response.
        let over = rows
            .iter()
            .find(|raw| raw.kind == Kind::HttpRaw && raw.item == row.item)
            .filter(|_| row.kind != Kind::HttpRaw)
            .map_or_else(
                || "-".to_owned(),
                |raw| format!("{:.1}", row.kib_each() - raw.kib_each()),
            );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {over} |",
            row.item.describe(row.kind),
            server(row.kind),
            row.count,
            row.before_kib as f64 / 1024.0,
            row.after_kib as f64 / 1024.0,
            row.kib_each(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: Kind, item: Item, before_kib: u64, after_kib: u64) -> ScaleRow {
        ScaleRow::new(kind, item, 1000, before_kib, after_kib)
    }

    #[test]
    fn an_item_costs_the_growth_over_the_count() {
        assert_eq!(
            row(Kind::HttpSession, Item::OwnConnection, 8000, 40_000).kib_each(),
            32.0
        );
        // RSS may shrink (pages returned): a negative cost, shown as measured.
        assert_eq!(
            row(Kind::HttpRaw, Item::GetStream, 9000, 8000).kib_each(),
            -1.0
        );
    }

    #[test]
    fn the_median_round_is_kept() {
        let rounds = vec![
            row(Kind::HttpSession, Item::GetStream, 0, 30_000),
            row(Kind::HttpSession, Item::GetStream, 0, 10_000),
            row(Kind::HttpSession, Item::GetStream, 0, 20_000),
        ];
        assert_eq!(median(rounds).map(|r| r.kib_each()), Some(20.0));
        assert!(median(Vec::new()).is_none());
    }

    #[test]
    fn the_table_subtracts_raw_hyper_where_it_has_the_item() {
        let rows = [
            row(Kind::HttpRaw, Item::OwnConnection, 4000, 12_000),
            row(Kind::HttpSession, Item::OwnConnection, 8000, 40_000),
            row(Kind::HttpSession, Item::SharedConnection, 8000, 24_000),
        ];
        let text = render(&rows, false);
        assert!(
            text.contains("| session on its own keep-alive connection | mcp-server | 1000 | 7.8 | 39.1 | 32.0 | 24.0 |"),
            "{text}"
        );
        assert!(text.contains("| 8.0 | - |"), "{text}");
        assert!(text.contains("| 16.0 | - |"), "{text}");
    }
}
