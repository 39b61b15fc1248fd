//! The interop contract's client checks (see `mcp_examples::demo_server` and
//! `interop/python/server.py`), run against any server that implements it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientConfig, RequestOptions};
use mcp_types::{
    CreateMessageResult, ElicitResult, ElicitValue, ErrorCode, LoggingLevel, ResourceContents,
    SamplingMessageContentBlock,
};
use serde_json::{Value, json};

/// What the client's callbacks saw.
#[derive(Clone, Default)]
pub(crate) struct Events {
    pub(crate) logs: Arc<Mutex<Vec<(LoggingLevel, Value)>>>,
}

impl Events {
    fn logs(&self) -> Vec<(LoggingLevel, Value)> {
        self.logs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A client configured as the contract expects: sampling answers
/// "sampled: <last text>", elicitation accepts the name "Ada"; at the
/// handshake era's newest revision.
pub(crate) fn contract_config() -> (ClientConfig, Events) {
    contract_config_at(mcp_types::Revision::V2025_11_25)
}

/// [`contract_config`] negotiating at most `revision`.
pub(crate) fn contract_config_at(revision: mcp_types::Revision) -> (ClientConfig, Events) {
    let events = Events::default();
    let logs = events.logs.clone();
    let config = ClientConfig::new("interop-rust-client", "0.1.0")
        .protocol_version(revision)
        .request_timeout(Duration::from_secs(30))
        .on_sampling(|params, _| async move {
            let last = params
                .messages
                .last()
                .and_then(|m| m.content.blocks().iter().find_map(|b| b.as_text()))
                .unwrap_or_default()
                .to_owned();
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text(format!("sampled: {last}")),
                "interop-model",
            ))
        })
        .on_elicitation(|_, _| async move {
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::String("Ada".into()),
            )])))
        })
        .on_logging(move |message| {
            let logs = logs.clone();
            async move {
                logs.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((message.level, message.data));
            }
        });
    (config, events)
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

fn resource_text(result: &mcp_types::ReadResourceResult) -> String {
    match result.contents.first() {
        Some(ResourceContents::Text(t)) => t.text.clone(),
        other => panic!("text contents expected, got {other:?}"),
    }
}

/// Every check of the contract; panics with what differs.
pub(crate) async fn check_contract(client: &Client, events: &Events) {
    assert_eq!(
        client.protocol_version(),
        mcp_types::Revision::V2025_11_25,
        "negotiated revision"
    );

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "add", "echo", "sample", "ask_name", "progress", "log", "fail",
    ] {
        assert!(names.contains(&expected), "tool {expected} in {names:?}");
    }
    let add = tools.iter().find(|t| t.name == "add").expect("add");
    assert!(add.output_schema.is_some(), "add declares an output schema");

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .expect("add");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})));

    let echo = client
        .call_tool("echo", json!({"text": "interop"}))
        .await
        .expect("echo");
    assert_eq!(text(&echo), "interop");

    check_asks(client).await;

    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let done = client
        .call_tool_with(
            "progress",
            json!({"steps": 3}),
            RequestOptions::new().with_progress(move |p| {
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((p.progress, p.total));
            }),
        )
        .await
        .expect("progress");
    assert_eq!(text(&done), "done");
    let seen = progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(
        seen,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    client
        .set_logging_level(LoggingLevel::Error)
        .await
        .expect("logging/setLevel");
    let logged = client.call_tool("log", json!({})).await.expect("log");
    assert_eq!(text(&logged), "logged");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while events.logs().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        events.logs(),
        vec![(LoggingLevel::Error, json!("error message"))],
        "only the error passes the level filter"
    );

    let failed = client
        .call_tool("fail", json!({}))
        .await
        .expect("fail answers");
    assert_eq!(failed.is_error, Some(true));
    assert!(
        text(&failed).contains("this tool always fails"),
        "{failed:?}"
    );

    let resources = client.list_resources(None).await.expect("resources/list");
    assert!(
        resources
            .resources
            .iter()
            .any(|r| r.uri == "file:///readme")
    );
    let readme = client
        .read_resource("file:///readme")
        .await
        .expect("read readme");
    assert_eq!(resource_text(&readme), "Read me.");
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("templates");
    assert!(
        templates
            .resource_templates
            .iter()
            .any(|t| t.uri_template == "users://{id}/profile")
    );
    let profile = client
        .read_resource("users://7/profile")
        .await
        .expect("read profile");
    assert_eq!(resource_text(&profile), "profile of 7");
    let missing = client
        .read_resource("file:///missing")
        .await
        .expect_err("missing resource");
    assert!(missing.remote().is_some(), "a JSON-RPC error: {missing}");

    let prompts = client.list_prompts(None).await.expect("prompts/list");
    let review = prompts
        .prompts
        .iter()
        .find(|p| p.name == "review")
        .expect("review");
    let code = review
        .arguments
        .iter()
        .flatten()
        .find(|a| a.name == "code")
        .expect("code argument");
    assert_eq!(code.required, Some(true));
    let prompt = client
        .get_prompt(
            "review",
            BTreeMap::from([
                ("code".to_owned(), "x = 1".to_owned()),
                ("language".to_owned(), "python".to_owned()),
            ]),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Review this python: x = 1")
    );

    match client.call_tool("nope", json!({})).await {
        Err(error) => {
            let code = error.remote().map(|e| e.code);
            assert!(code.is_some(), "a JSON-RPC error: {error}");
            assert_eq!(code, Some(ErrorCode::INVALID_PARAMS), "unknown tool");
        }
        Ok(result) => assert_eq!(result.is_error, Some(true), "unknown tool: {result:?}"),
    }
}

/// The contract's asks in the stateless era (2026-07-28): `sample` and
/// `ask_name` ask the client in input-required results, answered by the
/// same callbacks as the handshake era's server-to-client requests.
// Only the Rust demo server is held to it: the Python contract server asks
// with server-to-client requests, which its SDK does not turn into results.
#[allow(dead_code)]
pub(crate) async fn check_stateless_asks(client: &Client) {
    assert_eq!(client.protocol_version(), mcp_types::Revision::V2026_07_28);
    check_asks(client).await;
}

/// `sample` and `ask_name`, answered by the contract's callbacks.
async fn check_asks(client: &Client) {
    let sampled = client
        .call_tool("sample", json!({"prompt": "hello"}))
        .await
        .expect("sample");
    assert_eq!(text(&sampled), "sampled: hello", "{sampled:?}");
    let named = client
        .call_tool("ask_name", json!({}))
        .await
        .expect("ask_name");
    assert_eq!(text(&named), "hi Ada", "{named:?}");
}

/// The contract's stateless subset (2026-07-28) that any stateless server
/// passes. A client with the default config negotiates it.
pub(crate) async fn check_stateless_contract(client: &Client) {
    assert_eq!(
        client.protocol_version(),
        mcp_types::Revision::V2026_07_28,
        "negotiated revision"
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    let add = tools.iter().find(|t| t.name == "add").expect("add");
    assert!(add.output_schema.is_some(), "add declares an output schema");
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .expect("add");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})));
    let echo = client
        .call_tool("echo", json!({"text": "interop"}))
        .await
        .expect("echo");
    assert_eq!(text(&echo), "interop");

    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let done = client
        .call_tool_with(
            "progress",
            json!({"steps": 3}),
            RequestOptions::new().with_progress(move |p| {
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((p.progress, p.total));
            }),
        )
        .await
        .expect("progress");
    assert_eq!(text(&done), "done");
    let seen = progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(
        seen,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    let failed = client
        .call_tool("fail", json!({}))
        .await
        .expect("fail answers");
    assert_eq!(failed.is_error, Some(true));

    let readme = client
        .read_resource("file:///readme")
        .await
        .expect("read readme");
    assert_eq!(resource_text(&readme), "Read me.");
    let profile = client
        .read_resource("users://7/profile")
        .await
        .expect("read profile");
    assert_eq!(resource_text(&profile), "profile of 7");
    let missing = client
        .read_resource("file:///missing")
        .await
        .expect_err("missing");
    assert_eq!(
        missing.remote().map(|e| e.code),
        Some(ErrorCode::INVALID_PARAMS),
        "a missing resource is -32602 from 2026-07-28 on: {missing}"
    );
    let prompt = client
        .get_prompt(
            "review",
            BTreeMap::from([
                ("code".to_owned(), "x = 1".to_owned()),
                ("language".to_owned(), "python".to_owned()),
            ]),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Review this python: x = 1")
    );
}
