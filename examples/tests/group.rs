//! A `ClientSessionGroup` over stdio and streamable HTTP at once, as the
//! Python SDK's group is used: the demo server as a real child process, a
//! notes server on 127.0.0.1, the tool name they share told apart by the
//! naming hook, and a server whose tool list cannot be read joining
//! without it, with a warning.

use std::time::Duration;

use mcp_client::{
    ClientConfig, ClientSessionGroup, Error, HttpClientConfig, ListLimits, RequestOptions,
    ServerParams,
};
use mcp_server::{Args, Server};
use mcp_transport::stdio::ServerCommand;
use serde_json::json;

mod served;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-demo-server");

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// A notes server with an `echo` of its own (the demo server has one too),
/// on a free port of 127.0.0.1 until the sender is dropped; its URL.
async fn notes_over_http() -> (String, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder("notes", "1.0.0")
        .tool(
            "echo",
            "Echoes, the notes way",
            |Args(args): Args<Text>| async move { format!("notes: {}", args.text) },
        )
        .tool("count", "Counts the notes", || async { "3 notes" })
        .build()
        .expect("server");
    served::serve_http(server).await
}

fn config() -> ClientConfig {
    ClientConfig::new("group-test", "1").request_timeout(Duration::from_secs(30))
}

#[tokio::test]
async fn a_group_over_stdio_and_http_names_apart_and_skips_a_failing_listing() {
    let (url, _stop) = notes_over_http().await;

    // Without a hook, the second `echo` is refused and its server closed.
    let mut plain = ClientSessionGroup::new();
    plain
        .connect_to_server(ServerCommand::new(SERVER), config())
        .await
        .expect("the demo server joins");
    let refused = plain
        .connect_to_server(ServerParams::http(&url), config())
        .await
        .expect_err("a name collision");
    assert!(
        matches!(&refused, Error::DuplicateComponents { kind: "tools", names } if names == &["echo"]),
        "{refused}"
    );
    plain.close().await;

    // With the hook, both join under names of their own.
    let mut group =
        ClientSessionGroup::new().with_name_hook(|name, server| format!("{}.{name}", server.name));
    let demo = group
        .connect_to_server(ServerCommand::new(SERVER), config())
        .await
        .expect("the demo server joins");
    let notes = group
        .connect_http(&url, HttpClientConfig::new(), config())
        .await
        .expect("the notes server joins");
    let names: Vec<&str> = group.tools().into_keys().collect();
    assert!(names.contains(&"mcp-rust-demo.echo"), "{names:?}");
    assert!(names.contains(&"notes.echo"), "{names:?}");
    let echoed = group
        .call_tool("notes.echo", json!({"text": "hi"}), RequestOptions::new())
        .await
        .expect("called");
    assert_eq!(echoed.content[0].as_text(), Some("notes: hi"));
    let echoed = group
        .call_tool(
            "mcp-rust-demo.echo",
            json!({"text": "hi"}),
            RequestOptions::new(),
        )
        .await
        .expect("called");
    assert_eq!(echoed.content[0].as_text(), Some("hi"));

    // A server whose tool list passes this host's limit joins without its
    // tools; the failure is kept, and told in the log.
    let strict = config().list_limits(ListLimits::new().with_max_items(1));
    let failing = group
        .add_with_server_info(
            mcp_client::Client::connect_http(&url, strict)
                .await
                .expect("connected"),
            mcp_types::Implementation::new("notes-strict", "1"),
        )
        .await
        .expect("joins without its tools");
    let failures = group.listing_failures(failing);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].kind, "tools");
    assert!(
        matches!(failures[0].error, Error::ListLimit { .. }),
        "{:?}",
        failures[0].error
    );
    assert!(!group.tools().keys().any(|n| n.starts_with("notes-strict.")));
    assert_eq!(
        group.server_info(failing).map(|i| i.name.as_str()),
        Some("notes-strict")
    );
    assert_eq!(group.servers().count(), 3);

    // Disconnecting removes the server's tools; an unknown id is an error.
    group.disconnect(notes).await.expect("disconnected");
    assert!(!group.tools().contains_key("notes.echo"));
    let unknown = group.disconnect(notes).await.expect_err("already gone");
    assert!(
        matches!(unknown, Error::UnknownServer { id } if id == notes),
        "{unknown}"
    );
    assert!(group.server(demo).is_some());
    group.close().await;
}
