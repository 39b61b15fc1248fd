//! One task per upstream: connect, read its lists, keep them fresh, and
//! when the connection ends (a process died, an HTTP session was lost)
//! log why with the process's last stderr lines and connect again, paced
//! by a bounded exponential backoff. Owned by the
//! [`Gateway`](crate::Gateway), which cancels and awaits it.

use std::sync::Arc;
use std::time::Instant;

use mcp_client::{Client, ClientConfig};
use mcp_core::CancellationToken;
use mcp_core::backoff::{Backoff, BackoffConfig};
use mcp_transport::http::Authorizer;
use mcp_types::LoggingLevel;

use crate::asks::Inflight;
use crate::board::Board;
use crate::config::{Limits, UpstreamConfig};
use crate::follow::follow;
use crate::stderr::StderrTail;
use crate::upstream::{ListSignals, Wiring, client_config, connect, fetch_lists};

/// What a supervisor runs.
pub(crate) struct Supervised {
    pub(crate) name: Arc<str>,
    /// Signs an HTTP upstream in.
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) upstream: UpstreamConfig,
    pub(crate) limits: Limits,
    /// The gateway's client config (its name and version).
    pub(crate) base: ClientConfig,
    /// The downstream calls in flight, to pass the upstream's asks to.
    pub(crate) inflight: Arc<Inflight>,
}

/// Supervises one upstream until `cancel`: its child process, if any, is
/// shut down and reaped before this returns.
pub(crate) async fn supervise(job: Supervised, board: Arc<Board>, cancel: CancellationToken) {
    let Supervised {
        name,
        authorizer,
        upstream,
        limits,
        base,
        inflight,
    } = job;
    let signals = Arc::new(ListSignals::default());
    let tail = Arc::new(StderrTail::new(
        limits.stderr_lines,
        limits.stderr_line_bytes,
    ));
    let emit = {
        let board = board.clone();
        Arc::new(move |event| board.emit(event))
    };
    let wiring = Wiring {
        inflight,
        signals: signals.clone(),
        acked: board.acked(&name),
        emit,
    };
    let config = client_config(&name, &upstream, &limits, base, wiring);
    let mut backoff = Backoff::new(
        BackoffConfig::new()
            .with_floor(limits.restart_backoff_min)
            .with_cap(limits.restart_backoff_max)
            .with_budget(limits.max_restarts.max(1), limits.restart_window),
    );
    loop {
        let connecting = tokio::time::timeout(
            limits.connect_timeout,
            connect(
                &name,
                &upstream,
                config.clone(),
                authorizer.clone(),
                tail.clone(),
            ),
        );
        let connected = tokio::select! {
            () = cancel.cancelled() => break,
            connected = connecting => connected,
        };
        match connected {
            Ok(Ok(client)) => {
                backoff.succeeded();
                serve(&name, client, &board, &signals, &tail, &cancel).await;
                if cancel.is_cancelled() {
                    break;
                }
            }
            Ok(Err(error)) => {
                tracing::warn!(upstream = %name, stderr = %tail.take(), "could not connect: {error}");
                board.down(&name);
            }
            Err(_) => {
                tracing::warn!(
                    upstream = %name,
                    stderr = %tail.take(),
                    timeout = ?limits.connect_timeout,
                    "could not connect in time"
                );
                board.down(&name);
            }
        }
        if !pause(&name, &mut backoff, &cancel).await {
            break;
        }
    }
    board.stopped(&name);
}

/// Serves one connection until it ends or the gateway stops; closes the
/// client (its child shut down and reaped) either way.
async fn serve(
    name: &Arc<str>,
    client: Client,
    board: &Board,
    signals: &ListSignals,
    tail: &StderrTail,
    cancel: &CancellationToken,
) {
    // A handshake-era upstream sends log messages once told a level: all
    // of them, for the downstream client's own level filters what reaches
    // it (a stateless upstream is asked per call).
    let session = client.session();
    let logs = session
        .server_capabilities()
        .is_some_and(|c| c.logging.is_some());
    if logs && !session.is_stateless() {
        if let Err(error) = session.set_logging_level(LoggingLevel::Debug).await {
            tracing::warn!(upstream = %name, "could not ask for its log messages: {error}");
        }
    }
    match fetch_lists(&client).await {
        Ok(lists) => board.connected(name, client.session().clone(), lists),
        Err(error) => {
            tracing::warn!(upstream = %name, stderr = %tail.take(), "could not read its lists: {error}");
            board.down(name);
            close(name, client).await;
            return;
        }
    }
    tracing::info!(upstream = %name, revision = %client.protocol_version(), "upstream connected");
    // A stateless upstream tells of changes only on a listen stream.
    let (session, followed) = (client.session().clone(), board.followed(name));
    let following = async move {
        if session.is_stateless() {
            follow(name, &session, followed, signals).await;
        }
        std::future::pending::<()>().await;
    };
    tokio::pin!(following);
    loop {
        tokio::select! {
            () = &mut following => {}
            () = cancel.cancelled() => break,
            () = client.closed() => {
                board.down(name);
                tracing::warn!(
                    upstream = %name,
                    stderr = %tail.take(),
                    "upstream connection ended; restarting it"
                );
                break;
            }
            () = signals.changed() => match fetch_lists(&client).await {
                Ok(lists) => board.lists_changed(name, lists),
                // The connection ending is seen on the next turn.
                Err(error) => tracing::warn!(upstream = %name, "could not read its changed lists: {error}"),
            },
        }
    }
    close(name, client).await;
}

async fn close(name: &Arc<str>, client: Client) {
    if let Err(error) = client.close().await {
        tracing::warn!(upstream = %name, "could not stop the upstream cleanly: {error}");
    }
}

/// Waits before the next attempt; `false` when the gateway stops meanwhile.
async fn pause(name: &Arc<str>, backoff: &mut Backoff, cancel: &CancellationToken) -> bool {
    let wait = loop {
        match backoff.next(Instant::now(), None) {
            Ok(wait) => break wait,
            Err(spent) => {
                tracing::warn!(
                    upstream = %name,
                    attempts = spent.attempts,
                    window = ?spent.window,
                    "restart budget spent; waiting for the window to move on"
                );
                let until = tokio::time::Instant::from_std(spent.until);
                tokio::select! {
                    () = cancel.cancelled() => return false,
                    () = tokio::time::sleep_until(until) => {}
                }
            }
        }
    };
    tokio::select! {
        () = cancel.cancelled() => false,
        () = tokio::time::sleep(wait) => true,
    }
}
