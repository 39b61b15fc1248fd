//! The gateway over real upstreams: the demo server as a child process
//! (stdio, with its `crash` tool) and a notes server on 127.0.0.1
//! (streamable HTTP), both offering `echo`. Merged without collisions,
//! each called, sampling and elicitation answered, progress and
//! cancellation forwarded, a resource update routed, the child killed
//! mid-call and served again after its restart.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{ClientConfig, RequestOptions};
use mcp_gateway::{
    EraPreference, Error, Gateway, GatewayConfig, GatewayEvent, Limits, Phase, UpstreamConfig,
    UpstreamTransport,
};
use mcp_server::{Args, Context, Server};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{
    CreateMessageResult, ElicitResult, ElicitValue, Resource, SamplingMessageContentBlock,
};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-demo-server");
const WAIT: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// The notes server on a free port of 127.0.0.1 until the sender is
/// dropped: `echo`, `touch` (announces `notes://today` updated) and
/// `wait` (runs until cancelled, then wakes `cancelled`).
async fn notes_over_http(cancelled: Arc<Notify>) -> (String, oneshot::Sender<()>) {
    let server = Server::builder("notes", "1.0.0")
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
        .expect("server");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        let _ = server
            .serve_http(listener, HttpServerConfig::new(), shutdown)
            .await;
    });
    (format!("http://{addr}/mcp"), stop)
}

/// The gateway's own answers to what upstreams ask (until the downstream
/// client answers them).
fn client() -> ClientConfig {
    ClientConfig::new("gateway-test", "1")
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
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

async fn gateway(http_era: EraPreference) -> (Gateway, Arc<Notify>, oneshot::Sender<()>) {
    let cancelled = Arc::new(Notify::new());
    let (url, stop) = notes_over_http(cancelled.clone()).await;
    let limits =
        Limits::new().with_restart_backoff(Duration::from_millis(50), Duration::from_secs(1));
    let config = GatewayConfig::new()
        .with_limits(limits)
        .upstream(
            "demo",
            UpstreamConfig::new(UpstreamTransport::stdio(DEMO, ["--with-crash-tool"])),
        )
        .expect("demo")
        .upstream(
            "notes",
            UpstreamConfig::new(UpstreamTransport::http(url)).with_era(http_era),
        )
        .expect("notes");
    let gateway = Gateway::builder(config)
        .client(client())
        .start()
        .expect("started");
    tokio::time::timeout(WAIT, gateway.ready())
        .await
        .expect("both upstreams connect");
    (gateway, cancelled, stop)
}

async fn merged_calls_asks_progress_and_cancellation(http_era: EraPreference) {
    let (gateway, cancelled, _stop) = gateway(http_era).await;

    let catalog = gateway.catalog();
    let names: Vec<&str> = catalog.tools.iter().map(|(_, t)| t.name.as_str()).collect();
    for name in ["demo_echo", "notes_echo", "demo_crash", "notes_wait"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(catalog.dropped.is_empty(), "{:?}", catalog.dropped);
    assert_eq!(catalog.prompts[0].1.name, "demo_review");

    let args = |value: serde_json::Value| value.as_object().cloned();
    let demo = gateway
        .call_tool(
            "demo_echo",
            args(json!({"text": "hi"})),
            RequestOptions::new(),
        )
        .await
        .expect("demo echo");
    assert_eq!(text(&demo), "hi");
    let notes = gateway
        .call_tool(
            "notes_echo",
            args(json!({"text": "hi"})),
            RequestOptions::new(),
        )
        .await
        .expect("notes echo");
    assert_eq!(text(&notes), "notes: hi");
    let structured = gateway
        .call_tool(
            "demo_add",
            args(json!({"a": 2, "b": 3})),
            RequestOptions::new(),
        )
        .await
        .expect("add");
    assert_eq!(structured.structured_content, Some(json!({"sum": 5})));

    // The upstream's asks reach the gateway's client, and back.
    let sampled = gateway
        .call_tool(
            "demo_sample",
            args(json!({"prompt": "Capital of France?"})),
            RequestOptions::new(),
        )
        .await
        .expect("sample");
    assert_eq!(text(&sampled), "Paris");
    let named = gateway
        .call_tool("demo_ask_name", None, RequestOptions::new())
        .await
        .expect("ask_name");
    assert_eq!(text(&named), "hi Ada");

    // Progress flows back.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let progress = {
        let seen = seen.clone();
        RequestOptions::new().with_progress(move |p| seen.lock().expect("lock").push(p.progress))
    };
    gateway
        .call_tool("demo_progress", args(json!({"steps": 3})), progress)
        .await
        .expect("progress");
    assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0]);

    // Dropping a call cancels it upstream.
    let waiting = gateway.call_tool("notes_wait", None, RequestOptions::new());
    let gave_up = tokio::time::timeout(Duration::from_millis(300), waiting).await;
    assert!(gave_up.is_err(), "the wait tool never answers");
    tokio::time::timeout(WAIT, cancelled.notified())
        .await
        .expect("the upstream saw the cancellation");

    // Prompts and resources route to their owners.
    let prompt = gateway
        .get_prompt(
            "demo_review",
            [("code".to_owned(), "fn main() {}".to_owned())].into(),
            RequestOptions::new(),
        )
        .await
        .expect("prompt");
    assert!(!prompt.messages.is_empty());
    let note = gateway
        .read_resource("notes://today", RequestOptions::new())
        .await
        .expect("note");
    assert_eq!(note.contents.len(), 1);
    let profile = gateway
        .read_resource("users://7/profile", RequestOptions::new())
        .await
        .expect("profile by template");
    assert_eq!(profile.contents.len(), 1);
    let unknown = gateway
        .call_tool("nobody_echo", None, RequestOptions::new())
        .await;
    assert!(
        matches!(unknown, Err(Error::NotFound { kind: "tool", .. })),
        "{unknown:?}"
    );

    gateway.shutdown().await;
}

#[tokio::test]
async fn two_upstreams_as_one_stateless_http() {
    merged_calls_asks_progress_and_cancellation(EraPreference::Auto).await;
}

#[tokio::test]
async fn two_upstreams_as_one_handshake_http() {
    merged_calls_asks_progress_and_cancellation(EraPreference::Handshake).await;
}

#[tokio::test]
async fn a_resource_update_is_routed_from_its_upstream() {
    let (gateway, _cancelled, _stop) = gateway(EraPreference::Handshake).await;
    let mut events = gateway.events();
    gateway
        .subscribe("notes://today")
        .await
        .expect("subscribed");
    gateway
        .call_tool("notes_touch", None, RequestOptions::new())
        .await
        .expect("touched");
    let updated = tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await.expect("events") {
                GatewayEvent::ResourceUpdated { upstream, uri } => break (upstream, uri),
                _ => continue,
            }
        }
    })
    .await
    .expect("an update");
    assert_eq!(
        (&*updated.0, updated.1.as_str()),
        ("notes", "notes://today")
    );
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_child_killed_mid_call_fails_the_call_and_is_restarted() {
    let (gateway, _cancelled, _stop) = gateway(EraPreference::Auto).await;
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
    tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await.expect("events") {
                GatewayEvent::UpstreamDown { upstream } if &*upstream == "demo" => down = true,
                GatewayEvent::UpstreamUp { upstream } if &*upstream == "demo" && down => break,
                _ => {}
            }
        }
    })
    .await
    .expect("restarted");
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
