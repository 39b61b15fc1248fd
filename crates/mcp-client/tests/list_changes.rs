//! `Server::list_changes` reaches handshake-era sessions (2025-11-25) too,
//! over the in-memory transport and over streamable HTTP on 127.0.0.1:
//! list changes when the server advertises `listChanged`, resource updates
//! to subscribers only, and the connection owns the tasks it runs.

use std::time::Duration;

use mcp_client::{Client, ClientConfig, Negotiation};
use mcp_server::{Server, ServerSession};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{Resource, Revision, ServerNotification};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const A: &str = "file:///a";
const B: &str = "file:///b";

fn server(list_changed: bool) -> Server {
    let read = || async { "text" };
    Server::builder("changes", "1")
        .list_changed(list_changed)
        .tool("noop", "Does nothing", || async move { "ok" })
        .resource(Resource::new(A, "a"), read)
        .resource(Resource::new(B, "b"), read)
        .build()
        .expect("server")
}

/// A handshake-era client whose notifications arrive on the returned channel.
fn config() -> (ClientConfig, mpsc::UnboundedReceiver<String>) {
    recording(
        ClientConfig::new("changes-client", "1")
            .protocol_version(Revision::V2025_11_25)
            .negotiation(Negotiation::HandshakeOnly),
    )
}

/// `config`, with its notifications sent to the returned channel as
/// `"updated <uri>"` for resource updates and the method otherwise.
fn recording(config: ClientConfig) -> (ClientConfig, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let config = config.on_notification(move |notification| {
        let seen = match &notification {
            ServerNotification::ResourceUpdated(p) => format!("updated {}", p.uri),
            other => other.method().to_owned(),
        };
        let _ = tx.send(seen);
        async {}
    });
    (config, rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a notification within 10 s")
        .expect("the client is still connected")
}

async fn in_memory(server: &Server) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (config, rx) = config();
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    assert_eq!(client.protocol_version(), Revision::V2025_11_25);
    (client, rx)
}

struct Http {
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn http(server: &Server) -> Http {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = server.clone();
    let served = tokio::spawn(async move {
        server
            .serve_http(listener, HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await
    });
    Http { url, stop, served }
}

async fn http_client(url: &str) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (config, rx) = config();
    let client = Client::connect_http(url, config).await.expect("connected");
    assert_eq!(client.protocol_version(), Revision::V2025_11_25);
    // The client opens its GET stream (where the session's notifications
    // go) before it sends anything after `initialized`: once a ping is
    // answered, the stream is open.
    client.send_ping().await.expect("ping");
    (client, rx)
}

/// Two sessions, each subscribed as the updates test needs: `all` to A and
/// B; `only_b` to A, then unsubscribed from it, and to B.
async fn subscribe(all: &Client, only_b: &Client) {
    all.subscribe_resource(A).await.expect("subscribed");
    all.subscribe_resource(B).await.expect("subscribed");
    only_b.subscribe_resource(A).await.expect("subscribed");
    only_b.unsubscribe_resource(A).await.expect("unsubscribed");
    only_b.subscribe_resource(B).await.expect("subscribed");
}

/// The server announces; each session hears what it asked for, in order:
/// an update of A reaches `only_b` not at all, so B's is the first it sees.
async fn announce_and_check(
    server: &Server,
    all: &mut mpsc::UnboundedReceiver<String>,
    only_b: &mut mpsc::UnboundedReceiver<String>,
) {
    let changes = server.list_changes();
    changes.tools_changed();
    changes.resources_changed();
    changes.resource_updated(A);
    changes.resource_updated(B);
    for rx in [&mut *all, &mut *only_b] {
        assert_eq!(next(rx).await, "notifications/tools/list_changed");
        assert_eq!(next(rx).await, "notifications/resources/list_changed");
    }
    assert_eq!(next(all).await, format!("updated {A}"));
    assert_eq!(next(all).await, format!("updated {B}"));
    assert_eq!(
        next(only_b).await,
        format!("updated {B}"),
        "the session that unsubscribed from A hears only B"
    );
}

#[tokio::test]
async fn list_changes_reach_handshake_sessions_in_memory() {
    let server = server(true);
    let (all, mut all_rx) = in_memory(&server).await;
    let (only_b, mut only_b_rx) = in_memory(&server).await;
    subscribe(&all, &only_b).await;
    announce_and_check(&server, &mut all_rx, &mut only_b_rx).await;
    all.close().await.expect("closed");
    only_b.close().await.expect("closed");
}

#[tokio::test]
async fn list_changes_reach_handshake_sessions_over_http() {
    let server = server(true);
    let running = http(&server).await;
    let (all, mut all_rx) = http_client(&running.url).await;
    let (only_b, mut only_b_rx) = http_client(&running.url).await;
    subscribe(&all, &only_b).await;
    announce_and_check(&server, &mut all_rx, &mut only_b_rx).await;
    all.close().await.expect("closed");
    only_b.close().await.expect("closed");
    let _ = running.stop.send(());
    tokio::time::timeout(Duration::from_secs(10), running.served)
        .await
        .expect("the server stops")
        .expect("joined")
        .expect("served");
}

#[tokio::test]
async fn a_server_without_list_changed_sends_no_list_changes() {
    let server = server(false);
    let (client, mut rx) = in_memory(&server).await;
    let tools = client
        .initialize_result()
        .expect("handshake")
        .capabilities
        .tools
        .clone();
    assert_eq!(tools.expect("tools").list_changed, None);
    client.subscribe_resource(B).await.expect("subscribed");
    let changes = server.list_changes();
    changes.tools_changed();
    changes.prompts_changed();
    changes.resources_changed();
    // Updates do not depend on `listChanged`: the first thing the client
    // hears is this one, so none of the list changes above was sent.
    changes.resource_updated(B);
    assert_eq!(next(&mut rx).await, format!("updated {B}"));
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_session_that_sent_initialize_twice_hears_each_change_once() {
    let server = server(true);
    let (client, mut rx) = in_memory(&server).await;
    client
        .session()
        .initialize()
        .await
        .expect("initialized again");
    client.subscribe_resource(B).await.expect("subscribed");
    let changes = server.list_changes();
    changes.tools_changed();
    changes.resource_updated(B);
    assert_eq!(next(&mut rx).await, "notifications/tools/list_changed");
    assert_eq!(
        next(&mut rx).await,
        format!("updated {B}"),
        "no second copy of the tools change"
    );
    client.close().await.expect("closed");
}

/// Signals when dropped: the callback's future was cancelled.
struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn a_roots_callback_still_running_is_cancelled_with_its_connection() {
    let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
    let (dropped_tx, dropped) = tokio::sync::oneshot::channel::<()>();
    let hooks = std::sync::Mutex::new(Some((started_tx, dropped_tx)));
    let server = Server::builder("roots", "1")
        .tool("noop", "Does nothing", || async move { "ok" })
        .on_roots_list_changed(move |_session: ServerSession| {
            let hooks = hooks.lock().expect("lock").take();
            async move {
                let Some((started, dropped)) = hooks else {
                    return;
                };
                let _guard = Dropped(Some(dropped));
                let _ = started.send(());
                // Never ends by itself: only the connection can stop it.
                std::future::pending::<()>().await;
            }
        })
        .build()
        .expect("server");
    let config = ClientConfig::new("roots-client", "1")
        .protocol_version(Revision::V2025_11_25)
        .on_list_roots(|_| async move { Ok(mcp_types::ListRootsResult::new(Vec::new())) });
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    client.send_roots_list_changed().await.expect("notified");
    tokio::time::timeout(Duration::from_secs(10), started)
        .await
        .expect("the callback starts")
        .expect("started");
    // Closing the in-memory client shuts the server's connection down and
    // waits for it; the callback goes with it.
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("the connection closes")
        .expect("closed");
    tokio::time::timeout(Duration::from_secs(10), dropped)
        .await
        .expect("the callback was cancelled with its connection")
        .expect("dropped");
}

#[tokio::test]
async fn a_session_that_fell_behind_is_told_everything_may_have_changed() {
    let server = server(true);
    let (client, mut rx) = in_memory(&server).await;
    client.subscribe_resource(B).await.expect("subscribed");
    // This test's runtime has one thread and nothing here yields, so the
    // session's forwarder reads none of these before the broadcast, which
    // keeps 64, overflows: it lags. None of them is for this session.
    let changes = server.list_changes();
    for _ in 0..200 {
        changes.resource_updated(A);
    }
    // What it lost, it cannot name: it tells its client every advertised
    // list and every subscribed resource may have changed, once.
    assert_eq!(next(&mut rx).await, "notifications/tools/list_changed");
    assert_eq!(next(&mut rx).await, "notifications/resources/list_changed");
    assert_eq!(next(&mut rx).await, format!("updated {B}"));
    // And goes on with what comes next.
    changes.resource_updated(B);
    assert_eq!(next(&mut rx).await, format!("updated {B}"));
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_listen_stream_that_fell_behind_is_told_what_it_asked_for_may_have_changed() {
    use mcp_types::{SubscriptionFilter, SubscriptionsListenRequestParams, methods};
    let server = server(true);
    let (config, mut rx) =
        recording(ClientConfig::new("listen-client", "1").negotiation(Negotiation::StatelessOnly));
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    assert!(client.is_stateless());
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.resource_subscriptions = Some(vec![B.to_owned()]);
    let params = SubscriptionsListenRequestParams::new(filter);
    let listening = client
        .session()
        .request::<methods::SubscriptionsListen>(&params, mcp_client::RequestOptions::new());
    let checks = async {
        assert_eq!(
            next(&mut rx).await,
            "notifications/subscriptions/acknowledged"
        );
        // One thread, no yield: the stream reads none of these before the
        // broadcast overflows.
        let changes = server.list_changes();
        for _ in 0..200 {
            changes.resource_updated(A);
        }
        // Only what it asked for: tools and B (not prompts or resources).
        assert_eq!(next(&mut rx).await, "notifications/tools/list_changed");
        assert_eq!(next(&mut rx).await, format!("updated {B}"));
    };
    tokio::select! {
        ended = listening => panic!("the listen request ended early: {ended:?}"),
        () = checks => {}
    }
    client.close().await.expect("closed");
}
