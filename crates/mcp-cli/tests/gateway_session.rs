//! `mcp gateway --url` in front of an HTTP upstream that loses every
//! session (issue 29: "an upstream HTTP session expired (re-established,
//! call served)"): our everything-server, a child process on a fixed port
//! of 127.0.0.1, killed mid-call and started again on the same port.
//!
//! The call in flight fails with the gateway's own error naming the
//! upstream. Then, with no downstream call to prompt it, the gateway
//! starts a new session with a handshake-era upstream (or opens a
//! stateless upstream's listen stream anew), so the resource subscription
//! a downstream client holds delivers updates again; a call is served and
//! the lists are whole. Upstreams and downstream clients in both eras.
//!
//! Needs the everything-server `cargo test --workspace` builds beside
//! `mcp` (`cargo build -p mcp-examples --example everything-server`).

use std::time::{Duration, Instant};

use mcp_client::{Client, ClientConfig, Negotiation, RequestOptions};
use mcp_types::methods::SubscriptionsListen;
use mcp_types::{ServerNotification, SubscriptionFilter, SubscriptionsListenRequestParams};
use serde_json::json;
use tokio::sync::mpsc;

use announced::{Announced, built};

mod announced;

/// The longest any one step may take.
const WAIT: Duration = Duration::from_secs(30);

/// The resources the downstream client subscribes to: `test_resource_ticks`
/// with a count of `n` updates `test://template/1/data` to
/// `test://template/{n}/data`, one by one. The first is heard before the
/// session is lost; the last of [`TICKS`] after, and only the new process
/// raises it (the call in flight, a tick a second, is stopped long before).
const FIRST: &str = "test://template/1/data";
const LAST: &str = "test://template/50/data";
const TICKS: u32 = 50;

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Our everything-server on `port` of 127.0.0.1.
async fn everything(port: u16) -> Announced {
    let port = port.to_string();
    Announced::start(
        &built("examples/everything-server"),
        &["--port", &port],
        "everything-server: ",
    )
    .await
}

/// What the downstream client hears.
#[derive(Debug)]
enum Heard {
    Updated(String),
    Acknowledged,
}

/// A client of `url` in `era`; what it hears goes to `heard`.
async fn client(url: &str, era: Negotiation, heard: mpsc::UnboundedSender<Heard>) -> Client {
    let config = ClientConfig::new("downstream", "1")
        .negotiation(era)
        .request_timeout(WAIT)
        .on_notification(move |notification| {
            let _ = match notification {
                ServerNotification::ResourceUpdated(params) => {
                    heard.send(Heard::Updated(params.uri))
                }
                ServerNotification::SubscriptionsAcknowledged(_) => heard.send(Heard::Acknowledged),
                _ => Ok(()),
            };
            std::future::ready(())
        });
    Client::connect_http(url, config)
        .await
        .unwrap_or_else(|e| panic!("a client connects to {url}: {e}"))
}

/// A client of the upstream's own, besides the gateway's session.
async fn direct(upstream: &Announced) -> Client {
    client(
        &upstream.url,
        Negotiation::Newest,
        mpsc::unbounded_channel().0,
    )
    .await
}

/// Waits for the next thing heard that `wanted` picks, within `within`.
async fn hear(
    heard: &mut mpsc::UnboundedReceiver<Heard>,
    within: Duration,
    wanted: impl Fn(&Heard) -> bool,
) -> bool {
    let waiting = async {
        while let Some(next) = heard.recv().await {
            if wanted(&next) {
                return true;
            }
        }
        false
    };
    tokio::time::timeout(within, waiting).await == Ok(true)
}

/// Raises updates up to `test://template/{count}/data` at the upstream
/// through `upstream` (a client of its own) until the downstream client
/// hears one of `uri` through the gateway: a subscription that must be
/// made anew may take a moment.
async fn updates_arrive(
    heard: &mut mpsc::UnboundedReceiver<Heard>,
    upstream: &Client,
    gateway: &Announced,
    (uri, count): (&str, u32),
) {
    let deadline = Instant::now() + WAIT;
    loop {
        let ticks = json!({"count": count, "intervalMs": 0});
        upstream
            .call_tool("test_resource_ticks", ticks)
            .await
            .expect("the upstream raises updates");
        let updated = |h: &Heard| matches!(h, Heard::Updated(u) if u == uri);
        if hear(heard, Duration::from_millis(500), updated).await {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no update of {uri} through the gateway within {WAIT:?}; its log:\n{}",
            gateway.log()
        );
    }
}

fn text(result: &mcp_types::CallToolResult) -> String {
    let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    texts.join("\n")
}

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.list_all_tools().await.expect("the gateway's tools");
    let mut names: Vec<String> = tools.into_iter().map(|tool| tool.name).collect();
    names.sort_unstable();
    names
}

/// Everything the brief of issue 29 asks of a lost upstream session, the
/// gateway speaking `upstream_era` to the upstream (`--era`), the client
/// speaking `downstream` to the gateway.
async fn a_lost_session_is_made_whole(upstream_era: &str, downstream: Negotiation) {
    let port = free_port();
    let mut upstream = everything(port).await;
    let gateway = Announced::gateway(&["--url", &upstream.url, "--era", upstream_era]).await;
    let (tell, mut heard) = mpsc::unbounded_channel();
    let client = client(&gateway.url, downstream, tell).await;
    let tools = tool_names(&client).await;
    assert!(tools.contains(&"test_simple_text".to_owned()), "{tools:?}");

    // Subscribed through the gateway: resources/subscribe from a
    // handshake-era client, a listen stream from a stateless one.
    let listening = if matches!(downstream, Negotiation::HandshakeOnly) {
        for uri in [FIRST, LAST] {
            client.subscribe_resource(uri).await.expect("subscribed");
        }
        None
    } else {
        let mut filter = SubscriptionFilter::new();
        filter.resource_subscriptions = Some(vec![FIRST.to_owned(), LAST.to_owned()]);
        let params = SubscriptionsListenRequestParams::new(filter);
        let session = client.session().clone();
        let listen = tokio::spawn(async move {
            let options = RequestOptions::new().with_timeout(Duration::from_secs(3600));
            session
                .request::<SubscriptionsListen>(&params, options)
                .await
        });
        let acknowledged = hear(&mut heard, WAIT, |h| matches!(h, Heard::Acknowledged)).await;
        assert!(acknowledged, "the gateway acknowledges the listen stream");
        Some(listen)
    };
    let mut raising = direct(&upstream).await;
    updates_arrive(&mut heard, &raising, &gateway, (FIRST, 1)).await;

    // A call in flight when the upstream dies (once it reported progress).
    let (progressed, mut progress) = mpsc::unbounded_channel();
    let options = RequestOptions::new().with_progress(move |_| {
        let _ = progressed.send(());
    });
    let caller = client.clone();
    let call = tokio::spawn(async move {
        let ticks = json!({"count": TICKS, "intervalMs": 1000});
        caller
            .call_tool_with("test_resource_ticks", ticks, options)
            .await
    });
    let in_flight = tokio::time::timeout(WAIT, progress.recv()).await;
    assert!(
        matches!(in_flight, Ok(Some(()))),
        "the call reports progress"
    );
    raising.close().await.expect("closed");
    upstream.stop().await;
    let lost = tokio::time::timeout(WAIT, call)
        .await
        .expect("the call ends")
        .expect("joined");
    // The gateway's own error, told to the model, naming the upstream:
    // not a JSON-RPC error made up as if the upstream sent it.
    let lost = lost.expect("a tool error is a result");
    assert_eq!(lost.is_error, Some(true), "{lost:?}");
    assert!(text(&lost).starts_with("upstream `server`"), "{lost:?}");

    // The upstream again, on the same port: every session is gone.
    upstream = everything(port).await;
    raising = direct(&upstream).await;
    // No call through the gateway first: it makes itself whole.
    updates_arrive(&mut heard, &raising, &gateway, (LAST, TICKS)).await;
    let served = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("served");
    assert_eq!(
        text(&served),
        "This is a simple text response for testing.",
        "{served:?}\n{}",
        gateway.log()
    );
    assert_eq!(tool_names(&client).await, tools);

    if let Some(listen) = listening {
        listen.abort();
    }
    raising.close().await.expect("closed");
    client.close().await.expect("closed");
    gateway.stop().await;
    upstream.stop().await;
}

#[tokio::test]
async fn a_handshake_upstream_loses_its_session_under_a_handshake_client() {
    a_lost_session_is_made_whole("handshake", Negotiation::HandshakeOnly).await;
}

#[tokio::test]
async fn a_handshake_upstream_loses_its_session_under_a_stateless_client() {
    a_lost_session_is_made_whole("handshake", Negotiation::StatelessOnly).await;
}

#[tokio::test]
async fn a_stateless_upstream_restarts_under_a_handshake_client() {
    a_lost_session_is_made_whole("stateless", Negotiation::HandshakeOnly).await;
}

#[tokio::test]
async fn a_stateless_upstream_restarts_under_a_stateless_client() {
    a_lost_session_is_made_whole("stateless", Negotiation::StatelessOnly).await;
}
