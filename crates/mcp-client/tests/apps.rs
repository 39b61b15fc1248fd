//! MCP Apps (`io.modelcontextprotocol/ui`) end to end, our client against
//! our server, in memory and over HTTP, in both eras: the tool points at its
//! `ui://` view, the view is served as `text/html;profile=mcp-app`, and the
//! tool degrades to text for a host that did not declare Apps.

mod common;

use std::time::Duration;

use mcp_client::{Client, ClientConfig};
use mcp_server::apps::{APP_MIME_TYPE, Apps, UI};
use mcp_server::{Context, Server, Tool};
use mcp_types::{ContentBlock, JsonObject, ResourceContents, Revision};
use serde_json::json;

const VIEW: &str = "ui://clock/view";
const HTML: &str = "<!DOCTYPE html><html><body><output>12:00</output></body></html>";

fn server() -> Server {
    let apps = Apps::new().html(VIEW, "clock", HTML).tool(
        Tool::new("time", JsonObject::new()),
        VIEW,
        |cx: Context| async move {
            if cx.client_supports_extension(UI) {
                "rendered by the view"
            } else {
                "it is 12:00"
            }
        },
    );
    Server::builder("apps-test", "1")
        .extension(apps.into_extension())
        .build()
        .expect("server")
}

async fn connect(
    http: bool,
    config: ClientConfig,
) -> (Client, Option<tokio::sync::oneshot::Sender<()>>) {
    if !http {
        let client = Client::connect(server().in_memory(), config)
            .await
            .expect("connected");
        return (client, None);
    }
    let (url, stop) = common::serve_http(server()).await;
    let client = Client::connect_http(&url, config).await.expect("connected");
    (client, Some(stop))
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => &text.text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn an_app_tool_points_at_its_view_and_degrades_to_text_without_apps() {
    for http in [false, true] {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            let what = format!("http={http} at {revision}");
            let base = ClientConfig::new("apps-client", "1")
                .protocol_version(revision)
                .request_timeout(Duration::from_secs(10));
            let mut settings = JsonObject::new();
            settings.insert("mimeTypes".into(), json!([APP_MIME_TYPE]));
            let host = base.clone().extension(UI, settings).expect("identifier");

            let (client, _stop) = connect(http, host).await;
            assert!(client.server_supports_extension(UI), "{what}");
            let tools = client.list_all_tools().await.expect("listed");
            let meta = tools[0].meta.as_ref().expect("_meta");
            assert_eq!(meta["ui"]["resourceUri"], VIEW, "{what}");
            let view = client.read_resource(VIEW).await.expect("read");
            let [ResourceContents::Text(html)] = view.contents.as_slice() else {
                panic!("{what}: one text content");
            };
            assert_eq!(html.mime_type.as_deref(), Some(APP_MIME_TYPE));
            assert_eq!(html.text, HTML);
            let result = client.call_tool("time", json!({})).await.expect("called");
            assert_eq!(text(&result), "rendered by the view", "{what}");
            client.close().await.expect("closed");

            let (client, _stop) = connect(http, base).await;
            let result = client.call_tool("time", json!({})).await.expect("called");
            assert_eq!(text(&result), "it is 12:00", "{what}: degraded to text");
            client.close().await.expect("closed");
        }
    }
}

#[test]
fn apps_refuse_views_outside_ui_and_tools_without_a_view() {
    let bad_view = Apps::new().html("https://example.com", "x", "<html></html>");
    assert!(
        common::refusal(
            Server::builder("a", "1")
                .extension(bad_view.into_extension())
                .build()
        )
        .contains("starts with `ui://`")
    );
    let no_view = Apps::new().tool(
        Tool::new("t", JsonObject::new()),
        "ui://missing",
        || async { "x" },
    );
    assert!(
        common::refusal(
            Server::builder("a", "1")
                .extension(no_view.into_extension())
                .build()
        )
        .contains("no view `ui://missing` is registered")
    );
}
