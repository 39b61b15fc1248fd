//! One task per upstream: connect, read its lists, keep them fresh, and
//! when the connection ends (a process died, an HTTP session could not be
//! started anew) log why with the process's last stderr lines and connect
//! again, paced by a bounded exponential backoff. An HTTP session the
//! server forgot (it restarted, or ended the session) is started anew at
//! once, not at the next call: subscriptions made again, lists read again.
//! Owned by the [`Gateway`](crate::Gateway), which cancels and awaits it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientConfig, ClientSession, RequestOptions};
use mcp_core::CancellationToken;
use mcp_core::backoff::Backoff;
use mcp_transport::http::Authorizer;
use mcp_types::LoggingLevel;
use tokio::sync::Notify;

use crate::asks::Inflight;
use crate::board::Board;
use crate::config::{Limits, UpstreamConfig};
use crate::follow::follow;
use crate::naming::shown;
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
    let lost = board.lost(&name);
    let wiring = Wiring {
        inflight,
        signals: signals.clone(),
        lost: lost.clone(),
        acked: board.acked(&name),
        emit,
    };
    let config = client_config(&name, &upstream, &limits, base, wiring);
    let mut backoff = Backoff::new(limits.restarts());
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
                let watch = Watch {
                    board: &board,
                    signals: &signals,
                    lost: &lost,
                    tail: &tail,
                    limits: &limits,
                };
                serve(&name, client, watch, &cancel).await;
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

/// What a supervisor watches while it serves a connection.
struct Watch<'a> {
    board: &'a Board,
    signals: &'a ListSignals,
    /// Woken when the HTTP session is found lost.
    lost: &'a Notify,
    tail: &'a StderrTail,
    limits: &'a Limits,
}

/// Serves one connection until it ends or the gateway stops; closes the
/// client (its child shut down and reaped) either way.
async fn serve(name: &Arc<str>, client: Client, watch: Watch<'_>, cancel: &CancellationToken) {
    let Watch {
        board,
        signals,
        lost,
        tail,
        limits,
    } = watch;
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
    if !client.session().is_stateless() {
        tokio::select! {
            () = cancel.cancelled() => {}
            () = resubscribe(name, client.session(), board) => {}
        }
    }
    // A list read that failed (the upstream went away meanwhile) is tried
    // again, paced, until one succeeds: a stateless upstream back before
    // its next change would otherwise keep its old lists.
    let mut relist = Backoff::new(limits.restarts());
    let mut relist_at = None;
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
            () = lost.notified() => {
                if let Err(error) = revive(&client, limits.connect_timeout, cancel).await {
                    board.down(name);
                    tracing::warn!(upstream = %name, "could not start a new session: {error}; connecting anew");
                    break;
                }
            }
            () = sleep_until(relist_at), if relist_at.is_some() => {
                relist_at = None;
                signals.mark();
            }
            () = signals.changed() => match fetch_lists(&client).await {
                Ok(lists) => {
                    relist.succeeded();
                    board.lists_changed(name, lists);
                }
                // The connection ending is seen on the next turn.
                Err(error) => {
                    let wait = next_wait(&mut relist);
                    tracing::warn!(upstream = %name, "could not read its changed lists: {error}; trying again in {wait:?}");
                    relist_at = Some(tokio::time::Instant::now() + wait);
                }
            },
        }
    }
    close(name, client).await;
}

/// Subscribes a new session of `name` to the resources subscribed to
/// through the gateway (the old session's subscriptions went with it).
async fn resubscribe(name: &Arc<str>, session: &ClientSession, board: &Board) {
    let uris = board.followed(name).borrow().clone();
    for uri in uris {
        if let Err(error) = session.subscribe_resource(&uri).await {
            tracing::warn!(upstream = %name, uri = %shown(&uri), "could not subscribe again: {error}");
        }
    }
}

/// Starts a new session with an HTTP upstream that forgot the old one:
/// a ping is the request on which the client starts it (subscriptions
/// and log level made again; its `Restarted` event has the lists read
/// again), within `timeout`.
///
/// # Errors
/// Why no new session could be started (a timeout included).
async fn revive(
    client: &Client,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let ping = client.send_ping_with(RequestOptions::new().with_timeout(timeout));
    let answered = tokio::select! {
        () = cancel.cancelled() => return Ok(()),
        answered = tokio::time::timeout(timeout, ping) => answered,
    };
    match answered {
        Ok(Ok(())) => Ok(()),
        // The server answered: the session goes on.
        Ok(Err(error)) if error.remote().is_some() => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {timeout:?}")),
    }
}

/// Sleeps until `at` (never, for `None`).
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The wait before the next attempt of `backoff`: until its window moves
/// on, when its budget is spent.
fn next_wait(backoff: &mut Backoff) -> Duration {
    backoff
        .next(Instant::now(), None)
        .unwrap_or_else(|spent| spent.until.saturating_duration_since(Instant::now()))
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
