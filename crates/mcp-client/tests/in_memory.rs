//! Client and server end to end over the in-memory transport: every feature
//! of the handshake era, and the failure paths.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientConfig, ClientSession, ClientSessionGroup, Error, RequestOptions};
use mcp_core::MemoryTransport;
use mcp_server::{Args, Blob, Context, Json, ResourceRequest, Server, ToolError};
use mcp_types::{
    CompleteArgument, CompleteRequestParams, ContentBlock, CreateMessageRequestParams,
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitRequestedSchema, ElicitResult,
    ElicitValue, ErrorCode, ErrorObject, ListRootsResult, LoggingLevel, PrimitiveSchemaDefinition,
    PromptMessage, PromptReference, Resource, ResourceContents, ResourceTemplate, Revision, Role,
    Root, SamplingMessage, SamplingMessageContentBlock, ServerNotification, StringSchema, Tool,
    ToolChoice, ToolChoiceMode,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct CodeReview {
    /// The code to review.
    code: String,
    /// The language, if known.
    language: Option<String>,
}

async fn add(Args(args): Args<Add>) -> Result<Json<Sum>, ToolError> {
    let sum = args
        .a
        .checked_add(args.b)
        .ok_or_else(|| ToolError::new("the sum overflows a 64-bit integer"))?;
    Ok(Json(Sum { sum }))
}

async fn media() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("text"),
        ContentBlock::image("aW1n", "image/png"),
        ContentBlock::audio("YXVk", "audio/wav"),
        ContentBlock::resource_link("file:///readme", "readme"),
        ContentBlock::resource(mcp_types::TextResourceContents::new(
            "file:///a",
            "embedded",
        )),
    ]
}

async fn progress(Args(args): Args<Steps>, cx: Context) -> Result<&'static str, ToolError> {
    for step in 1..=args.steps {
        cx.report_progress(
            f64::from(step),
            Some(f64::from(args.steps)),
            Some("working"),
        )
        .await?;
    }
    Ok("done")
}

async fn log(cx: Context) -> Result<&'static str, ToolError> {
    cx.log(LoggingLevel::Debug, "debug detail").await?;
    cx.log(LoggingLevel::Info, "info").await?;
    cx.log(LoggingLevel::Error, json!({"error": "bad"})).await?;
    Ok("logged")
}

async fn sample(cx: Context) -> Result<String, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10);
    let result = cx.create_message(&params).await?;
    Ok(result.content.blocks()[0]
        .as_text()
        .unwrap_or("")
        .to_owned())
}

async fn sample_with_tools(cx: Context) -> Result<String, ToolError> {
    let mut params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("weather?")], 10);
    params.tools = Some(vec![Tool::without_arguments("weather")]);
    params.tool_choice = Some(ToolChoice::new(ToolChoiceMode::Auto));
    let result = cx.create_message(&params).await?;
    Ok(result.model)
}

async fn ask_name(cx: Context) -> Result<String, ToolError> {
    let schema = ElicitRequestedSchema::new()
        .with_property(
            "name",
            PrimitiveSchemaDefinition::String(StringSchema::new()),
        )
        .with_required(vec!["name".into()]);
    let answer = cx.elicit_form("Your name?", schema).await?;
    Ok(
        match (
            answer.action,
            answer.content.and_then(|c| c.get("name").cloned()),
        ) {
            (ElicitAction::Accept, Some(ElicitValue::String(name))) => format!("hi {name}"),
            (action, _) => format!("no name: {action:?}"),
        },
    )
}

async fn sign_in(cx: Context) -> Result<String, ToolError> {
    let answer = cx
        .elicit_url("Sign in", "https://example.com/auth", "e-1")
        .await?;
    cx.session().send_elicit_complete("e-1").await?;
    Ok(format!("{:?}", answer.action))
}

async fn needs_auth() -> Result<String, ToolError> {
    let mut visit = mcp_types::ElicitRequestUrlParams::new("Sign in", "https://example.com/auth");
    visit.elicitation_id = Some("e-2".into());
    Err(ToolError::url_elicitation_required(
        "authorization required",
        vec![visit],
    ))
}

async fn roots(cx: Context) -> Result<String, ToolError> {
    let roots = cx.list_roots().await?;
    Ok(roots
        .roots
        .iter()
        .map(|r| r.uri.clone())
        .collect::<Vec<_>>()
        .join(","))
}

async fn ping_back(cx: Context) -> Result<&'static str, ToolError> {
    cx.session().send_ping().await?;
    Ok("pong")
}

async fn review(Args(args): Args<CodeReview>) -> Vec<PromptMessage> {
    let language = args.language.unwrap_or_else(|| "code".into());
    vec![PromptMessage::new(
        Role::User,
        ContentBlock::text(format!("Review this {language}: {}", args.code)),
    )]
}

async fn complete(params: CompleteRequestParams) -> Vec<String> {
    let prefix = params.argument.value;
    ["python", "rust", "ruby"]
        .into_iter()
        .filter(|v| v.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

fn demo_server() -> Server {
    Server::builder("demo", "1.2.3")
        .instructions("Use `add` for sums.")
        .tool("add", "Adds two integers", add)
        .tool("media", "Returns every kind of content", media)
        .tool("progress", "Reports progress", progress)
        .tool("log", "Logs at several levels", log)
        .tool("sample", "Asks the client's model", sample)
        .tool("sample_with_tools", "Asks with tools", sample_with_tools)
        .tool("ask_name", "Elicits a name", ask_name)
        .tool("sign_in", "Elicits a URL visit", sign_in)
        .tool("needs_auth", "Requires a URL elicitation", needs_auth)
        .tool("roots", "Lists the client's roots", roots)
        .tool("ping_back", "Pings the client", ping_back)
        .tool_with(
            {
                let mut tool = Tool::new("liar", Default::default());
                let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
                tool.output_schema = schema.as_object().cloned();
                tool
            },
            || async move { Json(json!({"n": "not a number"})) },
        )
        .resource(
            {
                let mut r = Resource::new("file:///readme", "readme");
                r.mime_type = Some("text/plain".into());
                r
            },
            || async { "Read me." },
        )
        .resource(Resource::new("file:///logo", "logo"), || async {
            Blob(vec![0, 1, 2])
        })
        .resource_template(
            ResourceTemplate::new("users://{id}/profile", "profile"),
            |request: ResourceRequest| async move {
                format!("profile of {}", request.variables["id"])
            },
        )
        .prompt("review", "Reviews code", review)
        .completion(complete)
        .build()
        .expect("valid server")
}

fn full_config() -> ClientConfig {
    ClientConfig::new("test-host", "0.1.0")
        .protocol_version(Revision::V2025_11_25)
        .on_sampling(|params, _| async move {
            let n = params.messages.len();
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text(format!("{n} message(s) read")),
                "test-model",
            ))
        })
        .on_elicitation(|params, _| async move {
            Ok(match params {
                ElicitRequestParams::Form(_) => ElicitResult::accept(BTreeMap::from([(
                    "name".to_owned(),
                    ElicitValue::String("Ada".into()),
                )])),
                ElicitRequestParams::Url(_) => ElicitResult::new(ElicitAction::Accept),
                _ => ElicitResult::new(ElicitAction::Decline),
            })
        })
        .on_list_roots(
            |_| async move { Ok(ListRootsResult::new(vec![Root::new("file:///project")])) },
        )
}

async fn connect(config: ClientConfig) -> Client {
    Client::connect(demo_server().in_memory(), config)
        .await
        .expect("connected")
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    result.content[0].as_text().expect("text content")
}

#[tokio::test]
async fn initialize_negotiates_and_declares_what_is_registered() {
    let client =
        connect(ClientConfig::new("host", "1").protocol_version(Revision::V2025_11_25)).await;
    assert_eq!(client.protocol_version(), Revision::V2025_11_25);
    assert_eq!(client.server_info().expect("named").name, "demo");
    assert_eq!(
        client.instructions().as_deref(),
        Some("Use `add` for sums.")
    );
    let caps = client.server_capabilities().expect("negotiated");
    assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.completions.is_some());
    assert_eq!(
        caps.resources.as_ref().and_then(|r| r.subscribe),
        Some(true)
    );
    client.close().await.expect("closed");

    for revision in [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
    ] {
        let client = connect(ClientConfig::new("host", "1").protocol_version(revision)).await;
        assert_eq!(client.protocol_version().as_str(), revision.as_str());
        client.send_ping().await.expect("ping");
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn a_client_asking_for_an_unknown_revision_gets_the_latest_handshake_one() {
    let (ours, theirs) = MemoryTransport::pair(16);
    let _server = demo_server().serve(theirs);
    let peer = mcp_core::Connection::start(ours, NoRequests, Default::default());
    let params = json!({
        "protocolVersion": "1999-01-01",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "0"}
    });
    let result = peer
        .peer()
        .request(
            "initialize",
            Some(mcp_types::RawJson::from_serialize(&params).unwrap()),
            mcp_core::SendOptions::new(),
        )
        .await
        .expect("initialized");
    let result: serde_json::Value = result.parse().expect("json");
    assert_eq!(result["protocolVersion"], "2025-11-25");
}

struct NoRequests;

impl mcp_core::Handler for NoRequests {
    async fn handle_request(
        &self,
        r: mcp_core::IncomingRequest,
        _: mcp_core::RequestContext,
    ) -> Result<mcp_types::RawJson, ErrorObject> {
        Err(ErrorObject::method_not_found(&r.method))
    }
    async fn handle_notification(
        &self,
        _: mcp_core::IncomingNotification,
        _: mcp_core::NotificationContext,
    ) {
    }
}

#[tokio::test]
async fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let (ours, theirs) = MemoryTransport::pair(16);
    let _server = demo_server().serve(theirs);
    let session = ClientSession::new(
        ours,
        ClientConfig::new("host", "1").protocol_version(Revision::V2025_11_25),
    );
    session.send_ping().await.expect("ping before initialize");
    let error = session.list_tools(None).await.expect_err("refused");
    let remote = error.remote().expect("a remote error");
    assert_eq!(remote.code, ErrorCode::INVALID_REQUEST);
    assert!(remote.message.contains("initialize"), "{}", remote.message);
    session.initialize().await.expect("initialized");
    assert!(
        !session
            .list_tools(None)
            .await
            .expect("listed")
            .tools
            .is_empty()
    );
    session.close().await;
}

#[tokio::test]
async fn tools_have_schemas_from_types_and_structured_results() {
    let client =
        connect(ClientConfig::new("host", "1").protocol_version(Revision::V2025_11_25)).await;
    let tools = client.list_all_tools().await.expect("tools");
    let add = tools.iter().find(|t| t.name == "add").expect("add");
    assert_eq!(add.description.as_deref(), Some("Adds two integers"));
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    assert_eq!(
        add.input_schema["properties"]["a"]["description"],
        "The first addend."
    );
    let output = add.output_schema.as_ref().expect("output schema");
    assert_eq!(output["properties"]["sum"]["type"], "integer");

    let result = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .expect("called");
    assert_eq!(result.structured_content, Some(json!({"sum": 42})));
    assert_eq!(text(&result), r#"{"sum":42}"#);
    assert_eq!(result.is_error, None);

    let media = client.call_tool("media", ()).await.expect("called");
    assert!(matches!(
        media.content.as_slice(),
        [
            ContentBlock::Text(_),
            ContentBlock::Image(_),
            ContentBlock::Audio(_),
            ContentBlock::ResourceLink(_),
            ContentBlock::Resource(_)
        ]
    ));
    client.close().await.expect("closed");
}

#[tokio::test]
async fn tool_failures_are_results_the_model_can_read() {
    let client =
        connect(ClientConfig::new("host", "1").protocol_version(Revision::V2025_11_25)).await;
    let overflow = client
        .call_tool("add", json!({"a": i64::MAX, "b": 1}))
        .await
        .expect("a result");
    assert_eq!(overflow.is_error, Some(true));
    assert!(text(&overflow).contains("overflows"));

    let bad = client
        .call_tool("add", json!({"a": "two", "b": 1}))
        .await
        .expect("a result");
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("`a`"),
        "names the argument: {}",
        text(&bad)
    );

    let missing = client
        .call_tool("add", json!({"a": 1}))
        .await
        .expect("a result");
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("b"), "{}", text(&missing));

    let unknown = client
        .call_tool("nope", ())
        .await
        .expect_err("unknown tool");
    let remote = unknown.remote().expect("remote");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    assert!(remote.message.contains("nope"));

    let auth = client
        .call_tool("needs_auth", ())
        .await
        .expect_err("-32042");
    let remote = auth.remote().expect("remote");
    assert_eq!(remote.code, ErrorCode::URL_ELICITATION_REQUIRED);
    assert_eq!(
        remote.data.as_ref().expect("data")["elicitations"][0]["elicitationId"],
        "e-2"
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn results_that_break_their_output_schema_are_rejected_by_the_client() {
    let client =
        connect(ClientConfig::new("host", "1").protocol_version(Revision::V2025_11_25)).await;
    // Not listed yet: the schema is unknown, so nothing is checked and no
    // `tools/list` is sent behind the caller's back.
    client.call_tool("liar", ()).await.expect("unknown schema");
    client.list_all_tools().await.expect("listed");
    let error = client.call_tool("liar", ()).await.expect_err("invalid");
    assert!(
        matches!(error, Error::InvalidToolResult { ref tool, .. } if tool == "liar"),
        "{error}"
    );
    client.close().await.expect("closed");

    let lenient = connect(
        ClientConfig::new("host", "1")
            .protocol_version(Revision::V2025_11_25)
            .validate_tool_output(false),
    )
    .await;
    lenient.list_all_tools().await.expect("listed");
    lenient.call_tool("liar", ()).await.expect("not validated");
    lenient.close().await.expect("closed");
}

#[tokio::test]
async fn lists_are_paginated_with_cursors() {
    let server = Server::builder("many", "1")
        .page_size(2)
        .tool("t1", "", || async { "1" })
        .tool("t2", "", || async { "2" })
        .tool("t3", "", || async { "3" })
        .tool("t4", "", || async { "4" })
        .tool("t5", "", || async { "5" })
        .build()
        .expect("server");
    let client = Client::connect(
        server.in_memory(),
        ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25),
    )
    .await
    .expect("connected");
    let first = client.list_tools(None).await.expect("page");
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.expect("more");
    let second = client.list_tools(Some(cursor)).await.expect("page");
    assert_eq!(second.tools[0].name, "t3");
    assert_eq!(client.list_all_tools().await.expect("all").len(), 5);
    let bad = client
        .list_tools(Some("garbage".into()))
        .await
        .expect_err("bad cursor");
    assert_eq!(
        bad.remote().expect("remote").code,
        ErrorCode::INVALID_PARAMS
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn resources_static_templated_missing_and_subscribed() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = ClientConfig::new("h", "1")
        .protocol_version(Revision::V2025_11_25)
        .on_notification(move |n| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(n);
            }
        });
    let server = demo_server();
    let (ours, theirs) = MemoryTransport::pair(16);
    let connection = server.serve(theirs);
    let client = Client::connect(ours, config).await.expect("connected");

    let listed = client.list_resources(None).await.expect("listed");
    assert_eq!(listed.resources.len(), 2);
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("templates");
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "users://{id}/profile"
    );

    let readme = client.read_resource("file:///readme").await.expect("read");
    match &readme.contents[0] {
        ResourceContents::Text(t) => {
            assert_eq!(t.text, "Read me.");
            assert_eq!(t.mime_type.as_deref(), Some("text/plain"));
        }
        other => panic!("text expected, got {other:?}"),
    }
    let logo = client.read_resource("file:///logo").await.expect("read");
    assert!(matches!(&logo.contents[0], ResourceContents::Blob(b) if b.blob == "AAEC"));
    let profile = client
        .read_resource("users://42/profile")
        .await
        .expect("read");
    assert!(matches!(&profile.contents[0], ResourceContents::Text(t) if t.text == "profile of 42"));

    let missing = client
        .read_resource("file:///missing")
        .await
        .expect_err("missing");
    assert_eq!(
        missing.remote().expect("remote").code,
        ErrorCode::RESOURCE_NOT_FOUND
    );

    client
        .subscribe_resource("file:///readme")
        .await
        .expect("subscribed");
    connection
        .session()
        .send_resource_updated("file:///readme")
        .await
        .expect("sent");
    connection
        .session()
        .send_resource_updated("file:///logo")
        .await
        .expect("not subscribed: dropped");
    let notification = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("in time")
        .expect("a notification");
    assert!(
        matches!(notification, ServerNotification::ResourceUpdated(ref p) if p.uri == "file:///readme")
    );
    client
        .unsubscribe_resource("file:///readme")
        .await
        .expect("unsubscribed");
    connection
        .session()
        .send_resource_updated("file:///readme")
        .await
        .expect("dropped");
    connection
        .session()
        .send_tool_list_changed()
        .await
        .expect("sent");
    let next = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("in time")
        .expect("a notification");
    assert!(
        matches!(next, ServerNotification::ToolListChanged(_)),
        "no update after unsubscribing: {next:?}"
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn prompts_with_arguments_and_completions() {
    let client = connect(ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25)).await;
    let prompts = client.list_prompts(None).await.expect("listed");
    let review = &prompts.prompts[0];
    let arguments = review.arguments.as_ref().expect("arguments");
    let code = arguments.iter().find(|a| a.name == "code").expect("code");
    assert_eq!(code.required, Some(true));

    let got = client
        .get_prompt(
            "review",
            BTreeMap::from([
                ("code".into(), "fn x() {}".into()),
                ("language".into(), "Rust".into()),
            ]),
        )
        .await
        .expect("got");
    assert_eq!(
        got.messages[0].content.as_text(),
        Some("Review this Rust: fn x() {}")
    );

    let missing = client
        .get_prompt("review", BTreeMap::new())
        .await
        .expect_err("missing argument");
    let remote = missing.remote().expect("remote");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    assert!(remote.message.contains("code"));
    let unknown = client
        .get_prompt("nope", BTreeMap::new())
        .await
        .expect_err("unknown");
    assert_eq!(
        unknown.remote().expect("remote").code,
        ErrorCode::INVALID_PARAMS
    );

    let completion = client
        .complete(
            PromptReference::new("review"),
            CompleteArgument::new("language", "r"),
            None,
        )
        .await
        .expect("completed");
    assert_eq!(completion.completion.values, vec!["rust", "ruby"]);
    client.close().await.expect("closed");
}

#[tokio::test]
async fn progress_reaches_the_callers_callback() {
    let client = connect(ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25)).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with(
            "progress",
            json!({"steps": 3}),
            RequestOptions::new().with_progress(move |p| {
                sink.lock().unwrap().push((p.progress, p.total));
            }),
        )
        .await
        .expect("called");
    assert_eq!(text(&result), "done");
    // Progress notifications are sent before the response on the same stream.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn log_messages_are_filtered_by_the_level_the_client_set() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = ClientConfig::new("h", "1")
        .protocol_version(Revision::V2025_11_25)
        .on_logging(move |params| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(params.level);
            }
        });
    let client = connect(config).await;
    client
        .set_logging_level(LoggingLevel::Warning)
        .await
        .expect("set");
    client.call_tool("log", ()).await.expect("called");
    client
        .send_ping()
        .await
        .expect("a round trip after the notifications");
    let level = rx.recv().await.expect("one message");
    assert_eq!(level, LoggingLevel::Error);
    assert!(rx.try_recv().is_err(), "debug and info were filtered");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn sampling_elicitation_roots_and_ping_reach_the_clients_callbacks() {
    let client = connect(full_config()).await;
    let sampled = client.call_tool("sample", ()).await.expect("called");
    assert_eq!(text(&sampled), "1 message(s) read");
    let named = client.call_tool("ask_name", ()).await.expect("called");
    assert_eq!(text(&named), "hi Ada");
    let signed = client.call_tool("sign_in", ()).await.expect("called");
    assert_eq!(text(&signed), "Accept");
    let roots = client.call_tool("roots", ()).await.expect("called");
    assert_eq!(text(&roots), "file:///project");
    let pong = client.call_tool("ping_back", ()).await.expect("called");
    assert_eq!(text(&pong), "pong");
    client.send_roots_list_changed().await.expect("sent");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn missing_client_capabilities_fail_before_anything_is_sent() {
    let client = connect(ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25)).await;
    for tool in ["sample", "ask_name", "sign_in", "roots"] {
        let result = client.call_tool(tool, ()).await.expect("a result");
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(
            text(&result).contains("capability"),
            "{tool}: {}",
            text(&result)
        );
    }
    // Sampling without `sampling.tools` refuses a request that offers tools.
    let client2 = connect(full_config()).await;
    let result = client2
        .call_tool("sample_with_tools", ())
        .await
        .expect("a result");
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("sampling.tools"),
        "{}",
        text(&result)
    );
    let client3 = connect(full_config().sampling_tools(true)).await;
    let result = client3
        .call_tool("sample_with_tools", ())
        .await
        .expect("a result");
    assert_eq!(text(&result), "test-model");
    for c in [client, client2, client3] {
        c.close().await.expect("closed");
    }
}

struct SignalOnDrop(mpsc::UnboundedSender<()>);

impl Drop for SignalOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn a_cancelled_call_cancels_the_servers_handler() {
    let (tx, mut cancelled) = mpsc::unbounded_channel::<()>();
    let server = Server::builder("waiter", "1")
        .tool("wait", "Waits forever", move || {
            // The dispatcher drops a cancelled handler's future; the guard
            // tells the test it happened.
            let guard = SignalOnDrop(tx.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                "never"
            }
        })
        .build()
        .expect("server");
    let client = Client::connect(
        server.in_memory(),
        ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25),
    )
    .await
    .expect("connected");
    let error = client
        .call_tool_with(
            "wait",
            (),
            RequestOptions::new().with_timeout(Duration::from_millis(100)),
        )
        .await
        .expect_err("timed out");
    assert!(error.is_timeout(), "{error}");
    tokio::time::timeout(Duration::from_secs(5), cancelled.recv())
        .await
        .expect("the handler saw notifications/cancelled")
        .expect("signal");
    client.send_ping().await.expect("still connected");

    let call = client.call_tool("wait", ());
    let dropped = tokio::time::timeout(Duration::from_millis(100), call).await;
    assert!(dropped.is_err(), "the call never answers");
    tokio::time::timeout(Duration::from_secs(5), cancelled.recv())
        .await
        .expect("dropping the call future cancelled it on the server")
        .expect("signal");
    client.send_ping().await.expect("still connected");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn roots_changes_and_elicitation_completion_reach_the_other_side() {
    let (roots_tx, mut roots_rx) = mpsc::unbounded_channel();
    async fn sign_in(cx: Context) -> Result<&'static str, ToolError> {
        cx.session().send_elicit_complete("e-9").await?;
        Ok("sent")
    }
    let server = Server::builder("roots", "1")
        .tool("sign_in", "", sign_in)
        .on_roots_list_changed(move |session| {
            let roots_tx = roots_tx.clone();
            async move {
                let roots = session.send_list_roots().await.expect("roots/list");
                let _ = roots_tx.send(roots.roots[0].uri.clone());
            }
        })
        .build()
        .expect("server");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = full_config().on_notification(move |n| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(n);
        }
    });
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    client.send_roots_list_changed().await.expect("sent");
    let uri = tokio::time::timeout(Duration::from_secs(5), roots_rx.recv())
        .await
        .expect("the server re-listed the roots")
        .expect("a uri");
    assert_eq!(uri, "file:///project");
    client.call_tool("sign_in", ()).await.expect("called");
    let notification = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("in time")
        .expect("a notification");
    assert!(
        matches!(notification, ServerNotification::ElicitationComplete(ref p) if p.elicitation_id == "e-9"),
        "{notification:?}"
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_session_group_aggregates_servers_and_names_collisions() {
    let other = Server::builder("other", "1")
        .tool(
            "add",
            "Adds differently",
            |Args(args): Args<Add>| async move { format!("{}", args.a + args.b + 1) },
        )
        .build()
        .expect("server");
    let mut plain = ClientSessionGroup::new();
    plain
        .add(connect(ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25)).await)
        .await
        .expect("first");
    let clash = Client::connect(
        other.in_memory(),
        ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25),
    )
    .await
    .expect("c");
    let error = plain.add(clash).await.expect_err("`add` collides");
    assert!(
        matches!(error, Error::DuplicateComponents { kind: "tools", .. }),
        "{error}"
    );
    plain.close().await;

    let mut group =
        ClientSessionGroup::new().with_name_hook(|name, server| format!("{}.{name}", server.name));
    let demo = group
        .add(connect(ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25)).await)
        .await
        .expect("demo");
    group
        .add(
            Client::connect(
                other.in_memory(),
                ClientConfig::new("h", "1").protocol_version(Revision::V2025_11_25),
            )
            .await
            .expect("c"),
        )
        .await
        .expect("other");
    assert!(group.tools().contains_key("demo.add") && group.tools().contains_key("other.add"));
    assert!(group.prompts().contains_key("demo.review"));
    assert!(group.resources().contains_key("demo.readme"));
    let sum = group
        .call_tool("other.add", json!({"a": 1, "b": 1}), RequestOptions::new())
        .await
        .expect("called");
    assert_eq!(text(&sum), "3");
    group.disconnect(demo).await.expect("disconnected");
    assert!(!group.tools().contains_key("demo.add"));
    let gone = group
        .call_tool("demo.add", (), RequestOptions::new())
        .await
        .expect_err("gone");
    assert!(matches!(gone, Error::UnknownComponent { .. }));
    group.close().await;
}

#[tokio::test]
async fn registration_mistakes_are_reported_by_build() {
    let duplicate = Server::builder("dup", "1")
        .tool("a", "", || async { "1" })
        .tool("a", "", || async { "2" })
        .build();
    assert!(matches!(
        duplicate,
        Err(mcp_server::Error::Registration { .. })
    ));
    let non_object = Server::builder("bad", "1")
        .tool("n", "", |Args(_): Args<u32>| async { "1" })
        .build();
    let error = non_object.err().expect("refused").to_string();
    assert!(error.contains("object"), "{error}");
    let template = Server::builder("bad", "1")
        .resource_template(ResourceTemplate::new("users://{id", "broken"), || async {
            "x"
        })
        .build();
    assert!(template.is_err());
}
