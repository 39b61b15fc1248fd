//! The gateway over real upstreams: the demo server as a child process
//! (stdio, with its `crash` tool) and a notes server on 127.0.0.1
//! (streamable HTTP), both offering `echo`. Merged without collisions,
//! each called, sampling and elicitation answered, progress and
//! cancellation forwarded, the upstreams' log messages passed to the
//! client of the call at its level, a resource update routed, the child
//! killed mid-call and served again after its restart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientConfig, HttpClientConfig, Negotiation, RequestOptions};
use mcp_gateway::{
    EraPreference, Error, Gateway, GatewayConfig, GatewayEvent, Limits, Phase, UpstreamConfig,
    UpstreamTransport,
};
use mcp_server::{Args, Catalog, Context, Server, Tool, ToolDefinition, ToolError};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{
    CreateMessageResult, ElicitRequestParams, ElicitRequestedSchema, ElicitResult, ElicitValue,
    ErrorCode, ErrorObject, JsonObject, LoggingLevel, PrimitiveSchemaDefinition, Resource,
    ResourceContents, SamplingMessageContentBlock, ServerNotification, StringSchema,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc, oneshot};

mod served;

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-demo-server");
const WAIT: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// The protocol error the notes server's `refuse` answers with.
fn refusal() -> ErrorObject {
    ErrorObject::new(ErrorCode(-32001), "notes refuses").with_data(json!({"why": "a test"}))
}

/// The notes server on a free port of 127.0.0.1 until the sender is
/// dropped (see [`notes_server`]).
async fn notes_over_http(cancelled: Arc<Notify>) -> (String, Catalog, oneshot::Sender<()>) {
    let server = notes_server(cancelled);
    let catalog = server.catalog();
    let (url, stop) = served::serve_http(server).await;
    (url, catalog, stop)
}

/// The notes server: `echo`, `touch` (announces `notes://today` updated)
/// and `wait` (runs until cancelled, then wakes `cancelled`), `log` (a
/// debug and a critical message), `refuse` (answers [`refusal`]).
fn notes_server(cancelled: Arc<Notify>) -> Server {
    Server::builder("notes", "1.0.0")
        .dynamic()
        .tool(
            "echo",
            "Echoes, the notes way",
            |Args(args): Args<Text>| async move { format!("notes: {}", args.text) },
        )
        .tool("touch", "Updates today's note", |cx: Context| async move {
            if let Some(changes) = cx.session().list_changes() {
                changes.resource_updated("notes://today");
            }
            "touched"
        })
        .tool(
            "credentials",
            "Says what Authorization header the call came with",
            |cx: Context| async move {
                let header = cx.transport().headers.get("authorization");
                header.unwrap_or("none").to_owned()
            },
        )
        .tool(
            "confirm",
            "Asks the user to confirm `text`; says what they answered",
            |Args(args): Args<Text>, cx: Context| async move {
                let schema = ElicitRequestedSchema::new().with_property(
                    "name",
                    PrimitiveSchemaDefinition::String(StringSchema::new()),
                );
                let answer = cx.elicit_form(&args.text, schema).await?;
                let name = answer.content.as_ref().and_then(|c| c.get("name"));
                Ok::<_, ToolError>(match name {
                    Some(ElicitValue::String(name)) => name.clone(),
                    _ => "no answer".to_owned(),
                })
            },
        )
        .tool(
            "log",
            "Logs at debug and critical",
            |cx: Context| async move {
                cx.log(LoggingLevel::Debug, "notes debug").await?;
                cx.log(LoggingLevel::Critical, "notes critical").await?;
                Ok::<_, ToolError>("logged")
            },
        )
        .tool("refuse", "Refuses with a protocol error", || async {
            Err::<String, _>(ToolError::protocol(refusal()))
        })
        .tool("wait", "Waits until cancelled", move |cx: Context| {
            let cancelled = cancelled.clone();
            async move {
                let watcher = cx.clone();
                tokio::spawn(async move {
                    watcher.cancelled().await;
                    cancelled.notify_one();
                });
                std::future::pending::<()>().await;
                "never"
            }
        })
        .resource(Resource::new("notes://today", "today"), || async {
            "a note"
        })
        .build()
        .expect("server")
}

/// The log messages a client heard, by level and data.
type Heard = Arc<Mutex<Vec<(LoggingLevel, Value)>>>;

/// The downstream client, in `era`, answering what the upstreams ask;
/// the resource updates it hears go to `updates`, its log messages to
/// `logs`.
async fn downstream_client(
    url: &str,
    era: Negotiation,
    updates: mpsc::UnboundedSender<String>,
    logs: Heard,
) -> Client {
    let config = ClientConfig::new("downstream", "1")
        .negotiation(era)
        .request_timeout(WAIT)
        .on_sampling(|_, _| async {
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text("Paris"),
                "test-model",
            ))
        })
        .on_elicitation(|_, _| async {
            let mut content = std::collections::BTreeMap::new();
            content.insert("name".to_owned(), ElicitValue::String("Ada".into()));
            Ok(ElicitResult::accept(content))
        })
        .on_notification(move |notification| {
            match notification {
                ServerNotification::ResourceUpdated(params) => {
                    let _ = updates.send(params.uri);
                }
                ServerNotification::LoggingMessage(params) => {
                    logs.lock().expect("lock").push((params.level, params.data));
                }
                _ => {}
            }
            std::future::ready(())
        });
    // A credential of the client's own: the gateway keeps it.
    let http = HttpClientConfig::new()
        .header("Authorization", "Bearer the-clients-own")
        .expect("a header");
    Client::connect_http_with(url, http, config)
        .await
        .expect("downstream connects")
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

/// The text `tool` answers `arguments` with (a call that fails fails the
/// test).
async fn says(client: &Client, tool: &str, arguments: Value) -> String {
    let result = client.call_tool(tool, arguments).await;
    text(&result.unwrap_or_else(|error| panic!("{tool}: {error}")))
}

/// The gateway over the demo server and the notes server, both spoken to
/// in `era`; what tells of a cancelled `wait`, the notes server's catalog.
async fn gateway(era: EraPreference) -> (Gateway, Arc<Notify>, Catalog, oneshot::Sender<()>) {
    let cancelled = Arc::new(Notify::new());
    let (url, catalog, stop) = notes_over_http(cancelled.clone()).await;
    let limits =
        Limits::new().with_restart_backoff(Duration::from_millis(50), Duration::from_secs(1));
    let config = GatewayConfig::new()
        .with_limits(limits)
        .upstream(
            "demo",
            UpstreamConfig::new(UpstreamTransport::stdio(DEMO, ["--with-crash-tool"]))
                .with_era(era),
        )
        .expect("demo")
        .upstream(
            "notes",
            UpstreamConfig::new(UpstreamTransport::Http {
                url,
                headers: [("Authorization".to_owned(), "Bearer for-notes".to_owned())].into(),
            })
            .with_era(era),
        )
        .expect("notes");
    let gateway = Gateway::builder(config).start().expect("started");
    tokio::time::timeout(WAIT, gateway.ready())
        .await
        .expect("both upstreams connect");
    (gateway, cancelled, catalog, stop)
}

/// The gateway's server on a free port of 127.0.0.1; its URL.
async fn serve(gateway: &Arc<Gateway>) -> (String, oneshot::Sender<()>) {
    let server = gateway
        .server(Server::builder("gateway", "1.0.0"))
        .expect("the gateway's server");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let gateway = gateway.clone();
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        let _ = gateway
            .serve_http(&server, listener, HttpServerConfig::new(), shutdown)
            .await;
    });
    (format!("http://{addr}/mcp"), stop)
}

/// The status code of `GET path` at `addr`.
async fn probe(addr: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connected");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    (status, answer)
}

/// Everything a downstream client in `downstream` does through the
/// gateway, its upstreams spoken to in `upstream`.
async fn through_the_gateway(upstream: EraPreference, downstream: Negotiation) {
    let (gateway, cancelled, notes_catalog, _stop_notes) = gateway(upstream).await;
    let gateway = Arc::new(gateway);
    let (url, _stop_gateway) = serve(&gateway).await;
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    assert_eq!(probe(addr, "/readyz").await.0, 200);
    let (updates, mut updated) = mpsc::unbounded_channel();
    let logs = Heard::default();
    let client = downstream_client(&url, downstream, updates, logs.clone()).await;

    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for name in ["demo_echo", "notes_echo", "demo_crash", "notes_wait"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(
        gateway.catalog().dropped.is_empty(),
        "{:?}",
        gateway.catalog().dropped
    );
    let prompts = client.list_all_prompts().await.expect("prompts");
    assert_eq!(prompts[0].name, "demo_review");

    let hi = json!({"text": "hi"});
    assert_eq!(says(&client, "demo_echo", hi.clone()).await, "hi");
    assert_eq!(says(&client, "notes_echo", hi).await, "notes: hi");
    let structured = client
        .call_tool("demo_add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(structured.structured_content, Some(json!({"sum": 5})));
    let failed = client
        .call_tool("demo_fail", ())
        .await
        .expect("a tool error is a result");
    assert_eq!(failed.is_error, Some(true));
    // The upstream's own protocol error reaches the client as it sent it.
    let refused = client.call_tool("notes_refuse", ()).await;
    let remote = refused.as_ref().err().and_then(|e| e.remote());
    assert_eq!(remote, Some(&refusal()), "{refused:?}");

    // The notes upstream gets its configured credential, never the
    // client's.
    let credentials = says(&client, "notes_credentials", json!({})).await;
    assert_eq!(credentials, "Bearer for-notes");

    // The upstream's asks reach the downstream client, and back.
    let question = json!({"prompt": "Capital of France?"});
    assert_eq!(says(&client, "demo_sample", question).await, "Paris");
    assert_eq!(says(&client, "demo_ask_name", json!({})).await, "hi Ada");

    // Progress flows back.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let progress = {
        let seen = seen.clone();
        RequestOptions::new().with_progress(move |p| seen.lock().expect("lock").push(p.progress))
    };
    client
        .call_tool_with("demo_progress", json!({"steps": 3}), progress)
        .await
        .expect("progress");
    assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0]);

    // Log messages reach the client of the call at its level, and none
    // below it: the demo's over stdio (the one call in flight to it), the
    // notes server's on the call's own stream. They come before the
    // answer, on the call's stream.
    let at_error = if matches!(downstream, Negotiation::HandshakeOnly) {
        client
            .set_logging_level(LoggingLevel::Error)
            .await
            .expect("logging/setLevel");
        RequestOptions::new()
    } else {
        RequestOptions::new().with_log_level(LoggingLevel::Error)
    };
    for tool in ["demo_log", "notes_log"] {
        let logged = client
            .call_tool_with(tool, JsonObject::new(), at_error.clone())
            .await
            .expect("log");
        assert_eq!(text(&logged), "logged");
    }
    assert_eq!(
        *logs.lock().expect("lock"),
        [
            (LoggingLevel::Error, json!("error message")),
            (LoggingLevel::Critical, json!("notes critical")),
        ],
        "only the messages at the client's level or above, each once"
    );
    // A call that asks for none hears none (stateless era).
    if !matches!(downstream, Negotiation::HandshakeOnly) {
        logs.lock().expect("lock").clear();
        client.call_tool("notes_log", ()).await.expect("log");
        assert_eq!(*logs.lock().expect("lock"), []);
    }

    // A call the client gives up on is cancelled upstream.
    let waiting = client.call_tool("notes_wait", ());
    let gave_up = tokio::time::timeout(Duration::from_millis(300), waiting).await;
    assert!(gave_up.is_err(), "the wait tool never answers");
    tokio::time::timeout(WAIT, cancelled.notified())
        .await
        .expect("the upstream saw the cancellation");

    // Prompts and resources route to their owners.
    let prompt = client
        .get_prompt(
            "demo_review",
            [("code".to_owned(), "fn main() {}".to_owned())].into(),
        )
        .await
        .expect("prompt");
    let said: Vec<_> = prompt
        .messages
        .iter()
        .map(|m| m.content.as_text())
        .collect();
    assert_eq!(said, [Some("Review this code: fn main() {}")]);
    let note = client.read_resource("notes://today").await.expect("note");
    assert!(
        matches!(&note.contents[..], [ResourceContents::Text(t)] if t.text == "a note"),
        "{note:?}"
    );
    let profile = client
        .read_resource("users://7/profile")
        .await
        .expect("profile by template");
    assert!(
        matches!(&profile.contents[..], [c] if c.uri() == "users://7/profile"),
        "{profile:?}"
    );
    let unknown = client.call_tool("nobody_echo", ()).await;
    let code = unknown
        .as_ref()
        .err()
        .and_then(|e| e.remote())
        .map(|e| e.code);
    assert_eq!(code, Some(ErrorCode::INVALID_PARAMS), "{unknown:?}");

    // A subscription is made upstream (resources/subscribe, or the
    // stateless upstream's listen stream) and its update routed back
    // (handshake-era clients subscribe with resources/subscribe).
    if matches!(downstream, Negotiation::HandshakeOnly) {
        client
            .subscribe_resource("notes://today")
            .await
            .expect("subscribed");
        client.call_tool("notes_touch", ()).await.expect("touched");
        let uri = tokio::time::timeout(WAIT, updated.recv())
            .await
            .expect("an update")
            .expect("open");
        assert_eq!(uri, "notes://today");
    }

    // A tool the notes server gains while serving reaches the client.
    let mut events = gateway.events();
    notes_catalog
        .add_tool(ToolDefinition::new(
            Tool::new("extra", JsonObject::new()),
            || async { "extra" },
        ))
        .expect("added");
    tokio::time::timeout(WAIT, async {
        while gateway.catalog().tool("notes_extra").is_none() {
            events.recv().await.expect("events");
        }
    })
    .await
    .expect("the gateway reads the changed list");
    let extra = client
        .call_tool("notes_extra", ())
        .await
        .expect("the new tool");
    assert_eq!(text(&extra), "extra");

    client.close().await.expect("closed");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_stateless_client_through_stateless_upstreams() {
    through_the_gateway(EraPreference::Auto, Negotiation::Newest).await;
}

#[tokio::test]
async fn a_stateless_client_through_handshake_upstreams() {
    through_the_gateway(EraPreference::Handshake, Negotiation::Newest).await;
}

#[tokio::test]
async fn a_handshake_client_through_stateless_upstreams() {
    through_the_gateway(EraPreference::Auto, Negotiation::HandshakeOnly).await;
}

#[tokio::test]
async fn a_handshake_client_through_handshake_upstreams() {
    through_the_gateway(EraPreference::Handshake, Negotiation::HandshakeOnly).await;
}

/// An update of a resource subscribed to through the gateway, at an
/// upstream spoken to in `era`, comes back as an event.
async fn a_resource_update_is_routed(era: EraPreference) {
    let (gateway, _cancelled, _notes, _stop) = gateway(era).await;
    let mut events = gateway.events();
    gateway
        .subscribe("notes://today")
        .await
        .expect("subscribed");
    gateway
        .call_tool("notes_touch", None, RequestOptions::new())
        .await
        .expect("touched");
    let updated = next_event(&mut events, |event| match event {
        GatewayEvent::ResourceUpdated { upstream, uri } => Some((upstream, uri)),
        _ => None,
    })
    .await;
    assert_eq!(
        (&*updated.0, updated.1.as_str()),
        ("notes", "notes://today")
    );
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_resource_update_is_routed_from_a_handshake_upstream() {
    a_resource_update_is_routed(EraPreference::Handshake).await;
}

#[tokio::test]
async fn a_resource_update_is_routed_from_a_stateless_upstream() {
    a_resource_update_is_routed(EraPreference::Auto).await;
}

#[tokio::test]
async fn a_child_killed_mid_call_fails_the_call_and_is_restarted() {
    let (gateway, _cancelled, _notes, _stop) = gateway(EraPreference::Auto).await;
    let mut events = gateway.events();
    let lost = gateway
        .call_tool("demo_crash", None, RequestOptions::new())
        .await
        .expect_err("the process died");
    assert!(
        matches!(&lost, Error::UpstreamLost { upstream, .. } if upstream == "demo"),
        "{lost:?}"
    );
    assert!(lost.to_string().contains("`demo`"), "{lost}");
    // Seen down, then up again: restarted.
    let mut down = false;
    next_event(&mut events, |event| match event {
        GatewayEvent::UpstreamDown { upstream } if &*upstream == "demo" => {
            down = true;
            None
        }
        GatewayEvent::UpstreamUp { upstream } if &*upstream == "demo" && down => Some(()),
        _ => None,
    })
    .await;
    let status = gateway.statuses()["demo"];
    assert_eq!((status.phase, status.restarts), (Phase::Ready, 1));
    let echoed = gateway
        .call_tool(
            "demo_echo",
            json!({"text": "back"}).as_object().cloned(),
            RequestOptions::new(),
        )
        .await
        .expect("served again");
    assert_eq!(text(&echoed), "back");
    gateway.shutdown().await;
}

#[tokio::test]
async fn readiness_waits_for_every_upstream_or_the_ones_named() {
    let config = || {
        GatewayConfig::new()
            .upstream(
                "demo",
                UpstreamConfig::new(UpstreamTransport::stdio(DEMO, Vec::<String>::new())),
            )
            .expect("demo")
            .upstream(
                "missing",
                UpstreamConfig::new(UpstreamTransport::stdio(
                    "./no-such-mcp-server",
                    Vec::<String>::new(),
                )),
            )
            .expect("missing")
    };
    for (required, ready) in [(None, false), (Some("demo"), true)] {
        let mut builder = Gateway::builder(config());
        if let Some(name) = required {
            builder = builder.ready_requires([name]);
        }
        let gateway = Arc::new(builder.start().expect("started"));
        let mut events = gateway.events();
        // The demo server is up (the missing one never will be).
        while !gateway.statuses()["demo"].connected_once {
            events.recv().await.expect("events");
        }
        let (url, stop) = serve(&gateway).await;
        let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
        let (status, answer) = probe(addr, "/readyz").await;
        assert_eq!(status == 200, ready, "{answer}");
        if !ready {
            assert!(answer.contains("\"missing\""), "{answer}");
        }
        assert_eq!(gateway.is_ready(), ready);
        drop(stop);
        gateway.shutdown().await;
    }
}

/// Two calls in flight to one handshake-era HTTP upstream, each asking
/// its client: each ask reaches the call it belongs to (it came on the SSE
/// stream of that call's request), both pending at once.
#[tokio::test]
async fn concurrent_asks_over_http_reach_their_own_calls() {
    let (gateway, _cancelled, _notes, _stop_notes) = gateway(EraPreference::Handshake).await;
    let gateway = Arc::new(gateway);
    let (url, _stop_gateway) = serve(&gateway).await;
    // Each answer waits for the other ask: both must be pending together.
    let both = Arc::new(tokio::sync::Barrier::new(2));
    let config = ClientConfig::new("downstream", "1")
        .negotiation(Negotiation::HandshakeOnly)
        .request_timeout(WAIT)
        .on_elicitation(move |params, _| {
            let both = both.clone();
            async move {
                both.wait().await;
                let message = match params {
                    ElicitRequestParams::Form(form) => form.message,
                    _ => String::new(),
                };
                let mut content = std::collections::BTreeMap::new();
                content.insert("name".to_owned(), ElicitValue::String(message));
                Ok(ElicitResult::accept(content))
            }
        });
    let client = Client::connect_http(&url, config).await.expect("connects");
    let (one, two) = tokio::join!(
        client.call_tool("notes_confirm", json!({"text": "one"})),
        client.call_tool("notes_confirm", json!({"text": "two"})),
    );
    assert_eq!(text(&one.expect("one")), "one");
    assert_eq!(text(&two.expect("two")), "two");
    client.close().await.expect("closed");
    gateway.shutdown().await;
}

/// A handshake-era client at `debug`, its log messages heard in `logs`,
/// its elicitations waking `asked` and answered once `answer` is notified.
async fn logging_client(url: &str, logs: Heard, asked: Arc<Notify>, answer: Arc<Notify>) -> Client {
    let config = ClientConfig::new("downstream", "1")
        .negotiation(Negotiation::HandshakeOnly)
        .request_timeout(WAIT)
        .on_elicitation(move |_, _| {
            let (asked, answer) = (asked.clone(), answer.clone());
            async move {
                asked.notify_one();
                answer.notified().await;
                let mut content = std::collections::BTreeMap::new();
                content.insert("name".to_owned(), ElicitValue::String("Ada".into()));
                Ok(ElicitResult::accept(content))
            }
        })
        .on_notification(move |notification| {
            if let ServerNotification::LoggingMessage(params) = notification {
                logs.lock().expect("lock").push((params.level, params.data));
            }
            std::future::ready(())
        });
    let client = Client::connect_http(url, config).await.expect("connects");
    client
        .set_logging_level(LoggingLevel::Debug)
        .await
        .expect("logging/setLevel");
    client
}

/// Over stdio nothing on the wire says which call a log message belongs
/// to: with two calls in flight to the demo server (one client's waiting
/// on its elicitation, another's logging), the message reaches neither
/// client; with one, it reaches that call's client.
#[tokio::test]
async fn a_log_message_of_no_one_call_reaches_no_client() {
    let (gateway, _cancelled, _notes, _stop_notes) = gateway(EraPreference::Handshake).await;
    let gateway = Arc::new(gateway);
    let (url, _stop_gateway) = serve(&gateway).await;
    let (asked, answer) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (waiter_logs, logger_logs) = (Heard::default(), Heard::default());
    let waiter = logging_client(&url, waiter_logs.clone(), asked.clone(), answer.clone()).await;
    let logger = logging_client(&url, logger_logs.clone(), asked.clone(), answer.clone()).await;

    let waiting = tokio::spawn({
        let waiter = waiter.clone();
        async move { waiter.call_tool("demo_ask_name", ()).await }
    });
    tokio::time::timeout(WAIT, asked.notified())
        .await
        .expect("the demo server asks the waiting client");
    let logged = logger.call_tool("demo_log", ()).await.expect("log");
    assert_eq!(text(&logged), "logged");
    assert_eq!(*logger_logs.lock().expect("lock"), []);
    answer.notify_one();
    let named = waiting.await.expect("joined").expect("ask_name");
    assert_eq!(text(&named), "hi Ada");
    assert_eq!(*waiter_logs.lock().expect("lock"), []);

    // Alone in flight, the call gets its messages.
    logger.call_tool("demo_log", ()).await.expect("log");
    assert_eq!(
        *logger_logs.lock().expect("lock"),
        [
            (LoggingLevel::Info, json!("info message")),
            (LoggingLevel::Error, json!("error message")),
        ]
    );
    assert_eq!(*waiter_logs.lock().expect("lock"), []);
    waiter.close().await.expect("closed");
    logger.close().await.expect("closed");
    gateway.shutdown().await;
}

/// Through the gateway's server, an upstream lost mid-call is the
/// gateway's own error, told to the model as a tool error naming the
/// upstream (not a JSON-RPC error made up as if the upstream sent it).
#[tokio::test]
async fn an_upstream_lost_mid_call_is_told_as_the_gateways_own_error() {
    let (gateway, _cancelled, _notes, _stop_notes) = gateway(EraPreference::Handshake).await;
    let gateway = Arc::new(gateway);
    let (url, _stop_gateway) = serve(&gateway).await;
    let config = ClientConfig::new("downstream", "1").request_timeout(WAIT);
    let client = Client::connect_http(&url, config).await.expect("connects");
    let lost = client
        .call_tool("demo_crash", ())
        .await
        .expect("the gateway answers with a tool error");
    assert_eq!(lost.is_error, Some(true), "{lost:?}");
    let told = text(&lost);
    assert!(
        told.starts_with("upstream `demo` went away during the request"),
        "{told}"
    );
    client.close().await.expect("closed");
    gateway.shutdown().await;
}

/// The next event `wanted` picks, within [`WAIT`].
async fn next_event<T>(
    events: &mut tokio::sync::broadcast::Receiver<GatewayEvent>,
    mut wanted: impl FnMut(GatewayEvent) -> Option<T>,
) -> T {
    let waiting = async {
        loop {
            if let Some(found) = wanted(events.recv().await.expect("events")) {
                return found;
            }
        }
    };
    tokio::time::timeout(WAIT, waiting)
        .await
        .expect("the event within the wait")
}

/// The notes server on a port of 127.0.0.1 it keeps across crashes.
struct Notes {
    addr: std::net::SocketAddr,
    stop: oneshot::Sender<()>,
    served: tokio::task::JoinHandle<()>,
}

impl Notes {
    /// `server` on `listener`.
    fn serve(server: Server, listener: TcpListener) -> Self {
        let addr = listener.local_addr().expect("addr");
        let (stop, served) = served::serve_on(server, listener);
        Self { addr, stop, served }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops at once, as if it crashed (its connections end with it), and
    /// serves `server` on the same port: every session gone.
    async fn crash_and_serve(self, server: Server) -> Self {
        let Self { addr, stop, served } = self;
        served.abort();
        let _ = served.await;
        drop(stop);
        let listener = TcpListener::bind(addr).await.expect("the same port again");
        Self::serve(server, listener)
    }
}

/// A gateway over `notes` alone, spoken to in `era`, within `limits`,
/// subscribed to `notes://today`; its events from then on.
async fn over_notes(
    notes: &Notes,
    era: EraPreference,
    limits: Limits,
) -> (Gateway, tokio::sync::broadcast::Receiver<GatewayEvent>) {
    let upstream = UpstreamConfig::new(UpstreamTransport::Http {
        url: notes.url(),
        headers: Default::default(),
    });
    let config = GatewayConfig::new()
        .with_limits(limits)
        .upstream("notes", upstream.with_era(era))
        .expect("notes");
    let gateway = Gateway::builder(config).start().expect("started");
    tokio::time::timeout(WAIT, gateway.ready())
        .await
        .expect("connected");
    gateway
        .subscribe("notes://today")
        .await
        .expect("subscribed");
    let events = gateway.events();
    (gateway, events)
}

/// Raises an update of `notes://today` through a client of `notes`' own
/// until the gateway hears one (a subscription made anew may take a
/// moment).
async fn updates_arrive(
    notes: &Notes,
    events: &mut tokio::sync::broadcast::Receiver<GatewayEvent>,
) {
    let other = Client::connect_http(&notes.url(), ClientConfig::new("other", "1"))
        .await
        .expect("another client");
    let updated = async {
        loop {
            other.call_tool("touch", ()).await.expect("touched");
            let heard = tokio::time::timeout(Duration::from_millis(500), async {
                loop {
                    if let GatewayEvent::ResourceUpdated { uri, .. } =
                        events.recv().await.expect("events")
                    {
                        break uri;
                    }
                }
            });
            if let Ok(uri) = heard.await {
                break uri;
            }
        }
    };
    let uri = tokio::time::timeout(WAIT, updated)
        .await
        .expect("the subscription delivers");
    assert_eq!(uri, "notes://today");
    other.close().await.expect("closed");
}

/// The notes server, an HTTP upstream spoken to in `era`, crashes and is
/// served again on the same port with one more tool: every session gone,
/// its lists changed. With no call to prompt it, the gateway reads its
/// lists again (a handshake-era upstream in a new session, a stateless
/// one once its listen stream is back) and its subscription delivers
/// again; the new tool is served.
async fn an_http_upstream_served_anew_is_read_anew(era: EraPreference) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let mut notes = Notes::serve(notes_server(Arc::default()), listener);
    let (gateway, mut events) = over_notes(&notes, era, Limits::new()).await;

    let again = notes_server(Arc::default());
    again
        .catalog()
        .add_tool(ToolDefinition::new(
            Tool::new("added", JsonObject::new()),
            || async { "added" },
        ))
        .expect("added");
    notes = notes.crash_and_serve(again).await;
    next_event(&mut events, |event| {
        let listed = gateway.catalog().tool("notes_added").is_some();
        (matches!(event, GatewayEvent::CatalogChanged) && listed).then_some(())
    })
    .await;
    updates_arrive(&notes, &mut events).await;
    let added = gateway
        .call_tool("notes_added", None, RequestOptions::new())
        .await
        .expect("the new tool served");
    assert_eq!(text(&added), "added");
    assert_eq!(gateway.statuses()["notes"].phase, Phase::Ready);
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_handshake_http_upstream_served_anew_is_read_anew() {
    an_http_upstream_served_anew_is_read_anew(EraPreference::Handshake).await;
}

#[tokio::test]
async fn a_stateless_http_upstream_served_anew_is_read_anew() {
    an_http_upstream_served_anew_is_read_anew(EraPreference::Stateless).await;
}

/// A stateless upstream that drains (still reachable, as behind a
/// balancer that has not yet taken it out) ends the gateway's listen
/// stream and answers each new one 503 with -32603: the gateway asks again
/// at its paced rate, not taking that for a refusal to listen at all, so
/// it follows the upstream again once it is served anew.
#[tokio::test]
async fn a_draining_stateless_upstream_is_listened_to_again() {
    use axum::extract::Request;
    use axum::middleware::{self, Next};

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let service = notes_server(Arc::default()).streamable_http_service(HttpServerConfig::new());
    let draining = service.shutdown_handle();
    // The listen requests that reach the upstream, refused or not.
    let listens = Arc::new(AtomicUsize::new(0));
    let counted = listens.clone();
    let app = axum::Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let listen = request
                .headers()
                .get("mcp-method")
                .is_some_and(|method| method == "subscriptions/listen");
            if listen {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            next.run(request)
        }));
    let served = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let notes = Notes {
        addr,
        stop: oneshot::channel().0,
        served,
    };
    let (gateway, mut events) = over_notes(&notes, EraPreference::Stateless, Limits::new()).await;
    updates_arrive(&notes, &mut events).await;

    let before = listens.load(Ordering::SeqCst);
    draining.drain();
    // Its stream ended, the gateway listens again and is refused, then
    // asks again (with the old rule it stopped at the first refusal).
    tokio::time::timeout(WAIT, async {
        while listens.load(Ordering::SeqCst) < before + 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the gateway asks again after a refusal while draining");

    let notes = notes.crash_and_serve(notes_server(Arc::default())).await;
    updates_arrive(&notes, &mut events).await;
    draining.close().await;
    gateway.shutdown().await;
}

/// Past the restart budget a lost session is not started anew in place:
/// the gateway connects anew (after its backoff), and the new connection
/// subscribes again to what was subscribed to through the gateway.
#[tokio::test]
async fn a_session_lost_past_the_budget_is_connected_anew_with_its_subscriptions() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let mut notes = Notes::serve(notes_server(Arc::default()), listener);
    let limits = Limits::new()
        .with_restart_backoff(Duration::from_millis(50), Duration::from_secs(1))
        .with_restart_budget(1, Duration::from_secs(600));
    let (gateway, mut events) = over_notes(&notes, EraPreference::Handshake, limits).await;
    // The one new session the budget allows, in place.
    notes = notes.crash_and_serve(notes_server(Arc::default())).await;
    updates_arrive(&notes, &mut events).await;
    assert_eq!(gateway.statuses()["notes"].restarts, 0);
    // Past it: connected anew.
    notes = notes.crash_and_serve(notes_server(Arc::default())).await;
    next_event(&mut events, |event| {
        matches!(event, GatewayEvent::UpstreamUp { .. }).then_some(())
    })
    .await;
    updates_arrive(&notes, &mut events).await;
    let status = gateway.statuses()["notes"];
    assert_eq!((status.phase, status.restarts), (Phase::Ready, 1));
    gateway.shutdown().await;
    drop(notes);
}
