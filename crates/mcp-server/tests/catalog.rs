//! The run-time catalog (`Server::catalog`) while clients are connected:
//! tools added, replaced and removed are seen by handshake-era sessions
//! (`notifications/tools/list_changed`, then the new list) and by
//! 2026-07-28 clients (a `subscriptions/listen` notification); the new tool
//! answers, the removed one is an unknown tool; a name another group holds
//! is refused; a cursor into a list that changed is refused; the
//! subscription hooks hear of subscriptions in both eras and the updates
//! reach the subscriber (a handshake session's end unsubscribes what it
//! followed); `Context::ask` passes on a raw ask in both eras.
//! In memory and over streamable HTTP on 127.0.0.1, driven by our client.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, Negotiation, RequestOptions};
use mcp_server::types::{
    ErrorCode, InputRequest, InputResponse, JsonObject, ListRootsResult, Root, methods,
};
use mcp_server::{
    Args, Catalog, Context, Error, Registrations, Resource, Server, ServerSession, Tool,
    ToolDefinition, ToolError,
};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{
    Revision, ServerNotification, SubscriptionFilter, SubscriptionsListenRequestParams,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);
const DOC: &str = "memo://doc";

/// A tool named `name` whose answer is `answer`, its schema given as an
/// upstream server would give it.
fn fixed(name: &str, answer: &'static str) -> ToolDefinition {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    ToolDefinition::raw(
        Tool::new(name, schema),
        move |Args(_): Args<JsonObject>| async move { answer },
    )
}

/// Registrations of one tool each.
fn tools(list: &[(&str, &'static str)]) -> Registrations {
    let mut registrations = Registrations::new();
    for &(name, answer) in list {
        registrations.register(fixed(name, answer));
    }
    registrations
}

/// What the subscription hooks were told, as `"+uri"` and `"-uri"`.
type Heard = mpsc::UnboundedReceiver<String>;

/// An empty dynamic server whose hooks report to the returned channel, with
/// a `roots` tool that passes a raw `roots/list` ask on with `Context::ask`.
fn server() -> (Server, Heard) {
    let (tx, heard) = mpsc::unbounded_channel();
    let untx = tx.clone();
    let server = Server::builder("catalog", "1")
        .dynamic()
        .page_size(1)
        .on_subscribe(move |uri: String, _: ServerSession| {
            let _ = tx.send(format!("+{uri}"));
            async {}
        })
        .on_unsubscribe(move |uri: String, _: ServerSession| {
            let _ = untx.send(format!("-{uri}"));
            async {}
        })
        .build()
        .expect("server");
    let mut own = Registrations::new();
    own.tool("roots", "Asks for the client's roots", roots);
    server.catalog().add(own).expect("added");
    (server, heard)
}

/// Asks the client for its roots through the raw ask, as a gateway passes
/// on an upstream's request.
async fn roots(cx: Context) -> Result<String, ToolError> {
    match cx.ask(InputRequest::list_roots()).await? {
        InputResponse::ListRoots(ListRootsResult { roots, .. }) => Ok(roots
            .iter()
            .map(|r| r.uri.clone())
            .collect::<Vec<_>>()
            .join(",")),
        other => Err(ToolError::new(format!("not roots: {other:?}"))),
    }
}

/// A client of `revision`'s era that answers roots, its notifications sent
/// to the returned channel (as their method, or `"updated <uri>"`).
fn config(negotiation: Negotiation) -> (ClientConfig, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let config = ClientConfig::new("catalog-client", "1")
        .negotiation(negotiation)
        .on_list_roots(|_| async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
        .on_notification(move |notification| {
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
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("a message within 10 s")
        .expect("the sender is still there")
}

/// The names of every tool the client lists now.
async fn names(client: &Client) -> Vec<String> {
    let tools = tokio::time::timeout(WAIT, client.list_all_tools())
        .await
        .expect("in time")
        .expect("listed");
    tools.into_iter().map(|t| t.name).collect()
}

/// The text `name` answers.
async fn call(client: &Client, name: &str) -> String {
    let result = tokio::time::timeout(WAIT, client.call_tool(name, ()))
        .await
        .expect("in time")
        .expect("called");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result
        .content
        .iter()
        .find_map(|b| b.as_text())
        .unwrap_or_default()
        .to_owned()
}

/// The protocol error calling `name` gets.
async fn refused(client: &Client, name: &str) -> String {
    let error = tokio::time::timeout(WAIT, client.call_tool(name, ()))
        .await
        .expect("in time")
        .expect_err("an unknown tool");
    let text = error.to_string();
    assert!(text.contains(&format!("unknown tool `{name}`")), "{text}");
    text
}

/// The changes both eras' tests make, checked through `client` (whose
/// notifications arrive on `seen`, the list changes as their method).
async fn change_while_connected(catalog: &Catalog, client: &Client, seen: &mut Heard) {
    assert_eq!(names(client).await, ["roots"]);
    catalog
        .replace_group("up", tools(&[("alpha", "a1"), ("beta", "b1")]))
        .expect("added");
    assert_eq!(next(seen).await, "notifications/tools/list_changed");
    assert_eq!(names(client).await, ["roots", "alpha", "beta"]);
    assert_eq!(call(client, "alpha").await, "a1");

    // Replaced: alpha answers anew, beta is gone, gamma is new.
    catalog
        .replace_group("up", tools(&[("alpha", "a2"), ("gamma", "g2")]))
        .expect("replaced");
    assert_eq!(next(seen).await, "notifications/tools/list_changed");
    assert_eq!(names(client).await, ["roots", "alpha", "gamma"]);
    assert_eq!(call(client, "alpha").await, "a2");
    assert_eq!(call(client, "gamma").await, "g2");
    refused(client, "beta").await;

    // A name another group holds is refused whole, naming the holder.
    let taken = catalog
        .replace_group("other", tools(&[("delta", "d"), ("alpha", "x")]))
        .expect_err("alpha is taken");
    assert!(
        matches!(&taken, Error::Registration { .. }) && taken.to_string().contains("group `up`"),
        "{taken}"
    );
    assert!(!catalog.groups().contains(&"other".to_owned()));
    // The same again: nothing changes, nobody is told (nor of the refusal
    // above). The next thing the client hears is of the prompt added.
    catalog
        .replace_group("up", tools(&[("alpha", "a2"), ("gamma", "g2")]))
        .expect("the same");
    let mut prompt = Registrations::new();
    prompt.prompt("hello", "Says hello", || async { "Say hello." });
    catalog.add(prompt).expect("a prompt");
    assert_eq!(next(seen).await, "notifications/prompts/list_changed");
    assert!(catalog.remove_group("up"));
    assert_eq!(next(seen).await, "notifications/tools/list_changed");
    assert_eq!(names(client).await, ["roots"]);
    refused(client, "alpha").await;

    // The raw ask passes on a roots request in the client's era.
    assert_eq!(call(client, "roots").await, "file:///work");
}

#[tokio::test]
async fn a_handshake_session_sees_tools_added_replaced_and_removed() {
    let (server, _) = server();
    let (config, mut seen) = config(Negotiation::HandshakeOnly);
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    // Advertised though the server was built empty.
    let capabilities = client
        .session()
        .server_capabilities()
        .expect("capabilities");
    assert_eq!(capabilities.tools.expect("tools").list_changed, Some(true));
    assert_eq!(
        capabilities.resources.expect("resources").list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.prompts.expect("prompts").list_changed,
        Some(true)
    );
    change_while_connected(&server.catalog(), &client, &mut seen).await;
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_cursor_into_a_list_that_changed_is_refused_and_listing_again_works() {
    let (server, _) = server();
    let catalog = server.catalog();
    catalog
        .replace_group("up", tools(&[("alpha", "a"), ("beta", "b")]))
        .expect("added");
    let (config, _seen) = config(Negotiation::HandshakeOnly);
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    // One tool a page.
    let first = client.list_tools(None).await.expect("first page");
    assert_eq!(first.tools.len(), 1);
    let cursor = first.next_cursor.expect("more pages");
    let second = client
        .list_tools(Some(cursor.clone()))
        .await
        .expect("second page");
    assert_eq!(second.tools[0].name, "alpha");
    catalog.remove_group("up");
    let error = client
        .list_tools(Some(cursor))
        .await
        .expect_err("a stale cursor");
    let remote = error.remote().expect("the server's error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    assert!(remote.message.contains("stale"), "{}", remote.message);
    assert_eq!(names(&client).await, ["roots"]);
    client.close().await.expect("closed");
}

#[tokio::test]
async fn the_subscription_hooks_hear_a_handshake_session_and_updates_reach_it() {
    let (server, mut heard) = server();
    let (config, mut seen) = config(Negotiation::HandshakeOnly);
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    // Not there yet: refused, and the hook is not told.
    client
        .subscribe_resource(DOC)
        .await
        .expect_err("no such resource");
    let mut doc = Registrations::new();
    doc.resource(Resource::new(DOC, "doc"), || async { "text" });
    server.catalog().replace_group("docs", doc).expect("added");
    assert_eq!(
        next(&mut seen).await,
        "notifications/resources/list_changed"
    );
    client.subscribe_resource(DOC).await.expect("subscribed");
    // Awaited before the subscription was answered: there already.
    assert_eq!(heard.try_recv().ok().as_deref(), Some("+memo://doc"));
    server.list_changes().resource_updated(DOC);
    assert_eq!(next(&mut seen).await, format!("updated {DOC}"));
    client
        .unsubscribe_resource(DOC)
        .await
        .expect("unsubscribed");
    assert_eq!(heard.try_recv().ok().as_deref(), Some("-memo://doc"));
    // Subscribed twice, told once; the session's end ends it.
    client.subscribe_resource(DOC).await.expect("subscribed");
    client
        .subscribe_resource(DOC)
        .await
        .expect("subscribed again");
    assert_eq!(heard.try_recv().ok().as_deref(), Some("+memo://doc"));
    assert!(heard.try_recv().is_err(), "told once");
    client.close().await.expect("closed");
    assert_eq!(next(&mut heard).await, "-memo://doc");
}

#[tokio::test]
async fn a_client_follows_no_more_resources_than_the_server_allows() {
    let server = Server::builder("bounded", "1")
        .max_subscriptions(1)
        .resource_template(
            mcp_server::ResourceTemplate::new("memo://{name}", "memo"),
            || async { "text" },
        )
        .build()
        .expect("server");
    // Handshake era: a second resource is refused, the first stays.
    let (handshake, _seen) = config(Negotiation::HandshakeOnly);
    let client = Client::connect(server.in_memory(), handshake)
        .await
        .expect("connected");
    client
        .subscribe_resource("memo://a")
        .await
        .expect("the first");
    let error = client
        .subscribe_resource("memo://b")
        .await
        .expect_err("one too many");
    let remote = error.remote().expect("the server's error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    assert!(
        remote.message.contains("follows 1 resources"),
        "{}",
        remote.message
    );
    client
        .subscribe_resource("memo://a")
        .await
        .expect("the one it follows, again");
    client
        .unsubscribe_resource("memo://a")
        .await
        .expect("ended");
    client
        .subscribe_resource("memo://b")
        .await
        .expect("room again");
    client.close().await.expect("closed");
    // 2026-07-28: a listen stream naming more is refused before it opens.
    let running = http(&server).await;
    let (stateless, _seen) = config(Negotiation::StatelessOnly);
    let client = Client::connect_http(&running.url, stateless)
        .await
        .expect("connected");
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec!["memo://a".to_owned(), "memo://b".to_owned()]);
    let error = tokio::time::timeout(
        WAIT,
        client.session().request::<methods::SubscriptionsListen>(
            &SubscriptionsListenRequestParams::new(filter),
            RequestOptions::new(),
        ),
    )
    .await
    .expect("answered")
    .expect_err("two resources");
    let remote = error.remote().expect("the server's error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    assert!(remote.message.contains("more than 1"), "{}", remote.message);
    client.close().await.expect("closed");
    running.stop().await;
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

impl Http {
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(WAIT, self.served)
            .await
            .expect("the server stops")
            .expect("joined")
            .expect("served");
    }
}

#[tokio::test]
async fn a_handshake_client_over_http_sees_the_catalog_change() {
    let (server, _) = server();
    let running = http(&server).await;
    let (config, mut seen) = config(Negotiation::HandshakeOnly);
    let client = Client::connect_http(&running.url, config)
        .await
        .expect("connected");
    assert_eq!(client.protocol_version(), Revision::V2025_11_25);
    // The GET stream that carries the session's notifications is open once
    // a ping is answered.
    client.send_ping().await.expect("ping");
    change_while_connected(&server.catalog(), &client, &mut seen).await;
    client.close().await.expect("closed");
    running.stop().await;
}

#[tokio::test]
async fn a_stateless_client_over_http_hears_of_changes_on_its_listen_stream() {
    let (server, mut heard) = server();
    let mut doc = Registrations::new();
    doc.resource(Resource::new(DOC, "doc"), || async { "text" });
    server.catalog().replace_group("docs", doc).expect("added");
    let running = http(&server).await;
    let (config, mut seen) = config(Negotiation::StatelessOnly);
    let client = Arc::new(
        Client::connect_http(&running.url, config)
            .await
            .expect("connected"),
    );
    assert_eq!(client.protocol_version(), Revision::V2026_07_28);
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    // Named twice, beside a URI that names nothing: the hooks hear of the
    // resource once, and never of the other.
    filter.resource_subscriptions = Some(vec![
        DOC.to_owned(),
        "memo://nothing".to_owned(),
        DOC.to_owned(),
    ]);
    let listening = {
        let client = client.clone();
        let params = SubscriptionsListenRequestParams::new(filter);
        tokio::spawn(async move {
            client
                .session()
                .request::<methods::SubscriptionsListen>(
                    &params,
                    RequestOptions::new().with_timeout(Duration::from_secs(60)),
                )
                .await
        })
    };
    assert_eq!(
        next(&mut seen).await,
        "notifications/subscriptions/acknowledged"
    );
    // Told before the stream was acknowledged.
    assert_eq!(heard.try_recv().ok().as_deref(), Some("+memo://doc"));
    assert!(heard.try_recv().is_err(), "told once, of DOC only");
    server.list_changes().resource_updated(DOC);
    assert_eq!(next(&mut seen).await, format!("updated {DOC}"));
    change_while_connected(&server.catalog(), &client, &mut seen).await;
    // The stream ends with the request: the hook hears the end.
    listening.abort();
    assert_eq!(next(&mut heard).await, "-memo://doc");
    running.stop().await;
    assert!(heard.try_recv().is_err(), "the end told once, of DOC only");
}
