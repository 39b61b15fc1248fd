//! A `ServerSession` kept past its handler, over a real streamable HTTP
//! server on 127.0.0.1 driven by raw HTTP: a request it sends with no
//! stream to carry it fails at once (`NoBackChannel`), and goes out once
//! the client opens its GET stream; `related_to` puts what it sends on the
//! named request's own stream; `send_message` sends a prebuilt message.

use std::sync::{Arc, Mutex};

use mcp_core::TransportError;
use mcp_server::types::{JsonRpcMessage, JsonRpcNotification, RawJson, RequestId};
use mcp_server::{Context, Error, Server, ServerSession};
use mcp_transport::http::HttpServerConfig;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};
use tokio::time::timeout;

mod common;
use common::{WAIT, call, in_session, open_get, open_session, post, read_until, request, status};

/// What the handlers hand the test: the session kept by `keep`, and a
/// signal that `hold` is running.
#[derive(Default)]
struct Kept {
    session: Mutex<Option<ServerSession>>,
    holding: Mutex<Option<oneshot::Sender<()>>>,
}

fn server(kept: Arc<Kept>, release: Arc<Notify>) -> Server {
    let keeping = kept.clone();
    Server::builder("back-channel", "1")
        .tool("keep", "Keeps the session for later", move |cx: Context| {
            *keeping.session.lock().expect("lock") = Some(cx.session().clone());
            async { "kept" }
        })
        .tool("hold", "Runs until released", move || {
            let started = kept.holding.lock().expect("lock").take();
            let release = release.clone();
            async move {
                if let Some(started) = started {
                    let _ = started.send(());
                }
                release.notified().await;
                "released"
            }
        })
        .build()
        .expect("valid server")
}

fn notification(text: &str) -> JsonRpcMessage {
    let params = RawJson::from_serialize(&json!({"level": "info", "data": text})).expect("json");
    JsonRpcNotification::new("notifications/message", Some(params)).into()
}

/// The JSON of the first SSE `data:` line in `text` holding `needle`.
fn event_with(text: &str, needle: &str) -> Value {
    let line = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no event with {needle:?}: {text}"));
    serde_json::from_str(line).expect("an event is JSON")
}

#[tokio::test]
async fn a_kept_session_has_a_back_channel_only_while_the_client_listens() {
    let kept = Arc::new(Kept::default());
    let release = Arc::new(Notify::new());
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = server(kept.clone(), release.clone());
    let served = tokio::spawn(async move {
        serving
            .serve_http(listener, HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await
    });

    let session_id = open_session(addr).await;
    let answer = post(addr, &session_id, call(1, "keep")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let session = kept.session.lock().expect("lock").take().expect("kept");

    // No GET stream and no open request: refused at once, not at a timeout.
    match session.send_list_roots().await {
        Err(Error::Request(mcp_core::Error::Transport {
            source: TransportError::NoBackChannel,
            ..
        })) => {}
        other => panic!("expected NoBackChannel, got {other:?}"),
    }

    // Once the client listens, the same request goes out on its GET stream.
    let mut get = open_get(addr, &session_id, None).await;
    let mut seen = String::new();
    read_until(&mut get, &mut seen, "\r\n\r\n").await;
    assert_eq!(status(&seen), 200, "{seen}");
    let asking = session.clone();
    let roots = tokio::spawn(async move { asking.send_list_roots().await });
    read_until(&mut get, &mut seen, "roots/list").await;
    let asked = event_with(&seen, "roots/list");
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"],
                       "result": {"roots": [{"uri": "file:///here"}]}});
    assert_eq!(status(&post(addr, &session_id, reply).await), 202);
    let roots = timeout(WAIT, roots)
        .await
        .expect("answered in time")
        .expect("joined")
        .expect("roots");
    assert_eq!(roots.roots[0].uri, "file:///here");

    // A prebuilt message, tied to nothing, goes to the GET stream.
    session
        .send_message(notification("to whoever listens"))
        .await
        .expect("sent");
    read_until(&mut get, &mut seen, "to whoever listens").await;

    // Tied to an open request, it goes on that request's own stream.
    let (started, running) = oneshot::channel();
    *kept.holding.lock().expect("lock") = Some(started);
    let mut hold = request(
        addr,
        "POST",
        &in_session(&session_id),
        &call(7, "hold").to_string(),
    )
    .await;
    timeout(WAIT, running)
        .await
        .expect("hold runs in time")
        .expect("started");
    session
        .related_to(RequestId::Number(7))
        .send_message(notification("about request 7"))
        .await
        .expect("sent");
    let mut on_hold = String::new();
    read_until(&mut hold, &mut on_hold, "about request 7").await;
    release.notify_one();
    read_until(&mut hold, &mut on_hold, "released").await;

    let _ = stop.send(());
    drop(get);
    timeout(WAIT, served)
        .await
        .expect("serve returns")
        .expect("joined")
        .expect("served");
}
