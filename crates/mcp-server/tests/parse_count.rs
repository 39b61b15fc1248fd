//! A stateless (2026-07-28) `tools/call` over streamable HTTP has its params
//! parsed into their type once, and read no other way (issue 30). Every parse of raw params goes
//! through `RawJson::parse`, which, with `mcp-types`' test-only
//! `parse-count` feature, notes the type each text holding a watched marker
//! was parsed into.

use std::net::SocketAddr;

use mcp_server::{Args, Server};
use mcp_types::parse_count;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::timeout;

mod common;
use common::{WAIT, read_all, request, stateless_call, status};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

async fn start() -> (
    SocketAddr,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let server = Server::builder("parse-count", "1")
        .tool(
            "echo",
            "Returns its message's length",
            |Args(args): Args<EchoArgs>| async move {
                // Not the message itself: an answer holding the marker would be
                // a text holding it, and nothing here should read one.
                args.message.len().to_string()
            },
        )
        .build()
        .expect("valid server");
    common::serve(server, mcp_transport::http::HttpServerConfig::new()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_tools_call_parses_its_params_once() {
    let (addr, stop, served) = start().await;
    // Nothing else in this process holds this text.
    let marker = "parse-count-marker-5c1e0f";
    let (body, headers) = stateless_call(7, "echo", json!({"message": marker}));
    parse_count::watch(marker);
    let answer = read_all(request(addr, "POST", &headers, &body.to_string()).await).await;
    let parses = parse_count::parses();
    eprintln!("the params were parsed into {parses:?}");
    assert_eq!(status(&answer), 200, "{answer}");
    let length = marker.len().to_string();
    assert!(
        answer.contains(&format!(r#""text":"{length}""#)),
        "the tool ran: {answer}"
    );

    // Into their type once, at the edge: the envelope (the era, the
    // client's version and capabilities, the routed name) is read from that
    // parse, and the handler's context and arguments come from it. Nothing
    // else reads the params: no scan of the envelope, no second parse.
    assert!(
        parses.len() == 1 && parses[0].ends_with("::CallToolRequestParams"),
        "the params were read {} times: {parses:?}",
        parses.len()
    );

    let _ = stop.send(());
    timeout(WAIT, served)
        .await
        .expect("serve returns")
        .expect("joined")
        .expect("served");
}
