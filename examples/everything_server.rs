//! The conformance "everything" server over streamable HTTP: every tool,
//! resource and prompt the official conformance suite's server scenarios
//! expect.
//!
//! ```sh
//! cargo build --release --example everything-server
//! target/release/examples/everything-server --port 3001   # serves http://127.0.0.1:3001/mcp
//! ../shared/tools/conformance server --url http://127.0.0.1:3001/mcp --requirements 2025-11-25
//! ```
//!
//! `--port 0` picks a free port (the address is printed on stderr);
//! `--bind IP` listens on that address instead of 127.0.0.1 (a replica in
//! a network namespace) and `--allowed-host NAME` (repeatable) adds a
//! `Host` the endpoint accepts besides localhost (the balancer's address);
//! `GET /livez` and `GET /readyz` answer health probes, and every path but
//! `/mcp` and those two gets `404`; `--cors-origin ORIGIN` (repeatable)
//! lets browser pages on that origin call the endpoint (CORS, see
//! docs/guide/browser.md; the browser suite in interop/browser runs with it);
//! `--key-file PATH` seals `requestState` with the secret in that file, so
//! replicas behind a load balancer accept each other's state; `--redis URL`
//! shares sessions, SSE events, list changes and tasks with every replica
//! on the same Redis (built with `--features redis`; `cargo xtask cluster`
//! runs three).

use std::time::Duration;

use mcp_server::{
    Answer, Args, Context, InputRequired, ResourceRequest, Server, TasksConfig, ToolError,
};
use mcp_transport::http::{CorsConfig, HttpServerConfig};
use mcp_types::{
    BlobResourceContents, CallToolResult, CompleteRequestParams, ContentBlock,
    CreateMessageRequestParams, ElicitRequestedSchema, GetPromptResult, JsonObject, LoggingLevel,
    Prompt, PromptMessage, Resource, ResourceTemplate, Role, SamplingMessage, TaskSupport,
    TextResourceContents, Tool, ToolExecution,
};
use mcp_types::{
    ClientCapabilities, ElicitAction, ElicitValue, InputResponse,
    MissingRequiredClientCapabilityData, SamplingCapability,
};
use serde::Deserialize;
use serde_json::json;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A WAV file with a header and no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

#[derive(Deserialize, schemars::JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the client's model.
    prompt: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct PromptArgs {
    /// The first argument.
    arg1: String,
    /// The second argument.
    arg2: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct EmbeddedResourceArgs {
    /// The URI of the resource to embed.
    resource_uri: String,
}

fn schema(value: serde_json::Value) -> ElicitRequestedSchema {
    serde_json::from_value(value).expect("a valid elicitation schema")
}

fn text_resource(uri: &str, mime: &str, text: &str) -> ContentBlock {
    let mut contents = TextResourceContents::new(uri, text);
    contents.mime_type = Some(mime.into());
    ContentBlock::resource(contents)
}

/// A form with one required string field.
fn string_form(field: &str) -> ElicitRequestedSchema {
    schema(json!({
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field]
    }))
}

/// A form with one required boolean field.
fn boolean_form(field: &str) -> ElicitRequestedSchema {
    schema(json!({
        "type": "object",
        "properties": {field: {"type": "boolean"}},
        "required": [field]
    }))
}

fn capital_question() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text("What is the capital of France?")],
        100,
    )
}

/// The string `field` of an accepted elicitation answered under `key`.
fn accepted_field(cx: &Context, key: &str, field: &str) -> Option<String> {
    match cx.input_response(key) {
        Some(InputResponse::Elicit(result)) if result.action == ElicitAction::Accept => {
            match result.content.as_ref()?.get(field)? {
                ElicitValue::String(value) => Some(value.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn everything_server(tasks: TasksConfig) -> mcp_server::ServerBuilder {
    let json_schema_tool = {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"]
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        });
        let mut tool = Tool::new(
            "json_schema_2020_12_tool",
            schema.as_object().cloned().unwrap_or_default(),
        );
        tool.description =
            Some("A tool whose input schema uses JSON Schema 2020-12 features".into());
        tool
    };

    Server::builder("mcp-rust-everything-server", env!("CARGO_PKG_VERSION"))
        .list_changed(true)
        .tool_raw(
            {
                let mut tool = Tool::without_arguments("test_simple_text");
                tool.description = Some("Returns a simple text response".into());
                tool
            },
            || async {
                "This is a simple text response for testing."
            },
        )
        .tool("test_image_content", "Returns an image", || async move {
            ContentBlock::image(PNG, "image/png")
        })
        .tool("test_audio_content", "Returns audio", || async move {
            ContentBlock::audio(WAV, "audio/wav")
        })
        .tool(
            "test_embedded_resource",
            "Returns an embedded resource",
            || async move {
                text_resource(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )
            },
        )
        .tool(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource",
            || async move {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG, "image/png"),
                    text_resource(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ]
            },
        )
        .tool(
            "test_error_handling",
            "Always fails with a tool error",
            || async move {
                CallToolResult::error("This tool intentionally returns an error for testing")
            },
        )
        .tool(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100",
            progress,
        )
        .tool(
            "test_tool_with_logging",
            "Sends three log messages while running",
            logging,
        )
        .tool(
            "test_sampling",
            "Asks the client's model",
            sampling,
        )
        .tool(
            "test_elicitation",
            "Asks the user for details",
            elicitation,
        )
        .tool(
            "test_elicitation_sep1034_defaults",
            "Elicits fields that carry defaults",
            elicitation_defaults,
        )
        .tool(
            "test_elicitation_sep1330_enums",
            "Elicits every enum shape",
            elicitation_enums,
        )
        .tool(
            "test_reconnection",
            "Closes its SSE stream mid-call; the client resumes it",
            |cx: Context| async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(300)).await;
                "Reconnection test completed"
            },
        )
        // 2026-07-28 tools: per-request capabilities, logging by request,
        // list-change fan-out and Multi Round-Trip Requests.
        .tool(
            "test_missing_capability",
            "Needs the client's sampling capability",
            missing_capability,
        )
        .tool(
            "test_streaming_elicitation",
            "Streams notifications only, never a request",
            streaming_elicitation,
        )
        .tool(
            "test_logging_tool",
            "Logs at the level the request asks for",
            logging_by_request,
        )
        .tool(
            "test_trigger_tool_change",
            "Announces a tool list change to listening clients",
            |cx: Context| async move {
                if let Some(changes) = cx.session().list_changes() {
                    changes.tools_changed();
                }
                "tools/list_changed sent"
            },
        )
        .tool(
            "test_trigger_prompt_change",
            "Announces a prompt list change to listening clients",
            |cx: Context| async move {
                if let Some(changes) = cx.session().list_changes() {
                    changes.prompts_changed();
                }
                "prompts/list_changed sent"
            },
        )
        .tool(
            "test_input_required_result_elicitation",
            "Asks the user's name in its result",
            |cx: Context| async move {
                match accepted_field(&cx, "user_name", "name") {
                    Some(name) => Answer::Complete(format!("Hello, {name}!")),
                    None => Answer::InputRequired(InputRequired::new().elicit_form(
                        "user_name",
                        "What is your name?",
                        string_form("name"),
                    )),
                }
            },
        )
        .tool(
            "test_input_required_result_sampling",
            "Asks the client's model in its result",
            |cx: Context| async move {
                match cx.input_response("sample_request") {
                    Some(InputResponse::CreateMessage(result)) => Answer::Complete(format!(
                        "The model said: {}",
                        result.content.blocks().iter().find_map(|b| b.as_text()).unwrap_or("")
                    )),
                    _ => Answer::InputRequired(
                        InputRequired::new().create_message("sample_request", capital_question()),
                    ),
                }
            },
        )
        .tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots in its result",
            |cx: Context| async move {
                match cx.input_response("roots_request") {
                    Some(InputResponse::ListRoots(result)) => {
                        Answer::Complete(format!("The client has {} root(s)", result.roots.len()))
                    }
                    _ => Answer::InputRequired(InputRequired::new().list_roots("roots_request")),
                }
            },
        )
        .tool(
            "test_input_required_result_request_state",
            "Asks for a confirmation and keeps state across the round trip",
            |cx: Context| async move {
                let confirmed = cx.input_response("confirm").is_some();
                if confirmed && cx.request_state() == Some("awaiting-confirmation") {
                    return Answer::Complete("state-ok: the request state came back intact".to_owned());
                }
                Answer::InputRequired(
                    InputRequired::new()
                        .elicit_form("confirm", "Please confirm", boolean_form("ok"))
                        .state("awaiting-confirmation"),
                )
            },
        )
        .tool(
            "test_input_required_result_multiple_inputs",
            "Asks for an elicitation, a sample and the roots at once",
            |cx: Context| async move {
                let all = ["user_name", "sample_request", "roots_request"]
                    .iter()
                    .all(|key| cx.input_response(key).is_some());
                if all && cx.request_state() == Some("multiple-inputs") {
                    return Answer::Complete("All three inputs received".to_owned());
                }
                Answer::InputRequired(
                    InputRequired::new()
                        .elicit_form("user_name", "What is your name?", string_form("name"))
                        .create_message("sample_request", capital_question())
                        .list_roots("roots_request")
                        .state("multiple-inputs"),
                )
            },
        )
        .tool(
            "test_input_required_result_multi_round",
            "Asks for input over two rounds",
            |cx: Context| async move {
                match cx.request_state() {
                    Some("round-2") if cx.input_response("step2").is_some() => {
                        Answer::Complete("Both rounds complete".to_owned())
                    }
                    Some("round-1") if cx.input_response("step1").is_some() => Answer::InputRequired(
                        InputRequired::new()
                            .elicit_form("step2", "Step 2: confirm", boolean_form("ok"))
                            .state("round-2"),
                    ),
                    _ => Answer::InputRequired(
                        InputRequired::new()
                            .elicit_form("step1", "Step 1: your name", string_form("name"))
                            .state("round-1"),
                    ),
                }
            },
        )
        .tool(
            "test_input_required_result_tampered_state",
            "Refuses a requestState the client altered",
            |cx: Context| async move {
                // A tampered state is refused before this runs.
                match (cx.request_state(), cx.input_response("confirm")) {
                    (Some("untampered"), Some(_)) => Answer::Complete("state verified".to_owned()),
                    _ => Answer::InputRequired(
                        InputRequired::new()
                            .elicit_form("confirm", "Please confirm", boolean_form("ok"))
                            .state("untampered"),
                    ),
                }
            },
        )
        .tool(
            "test_input_required_result_capabilities",
            "Asks only for what the client can do",
            |cx: Context| async move {
                let capabilities = cx.session().client_capabilities().unwrap_or_default();
                let answered = cx.input_responses().is_some_and(|r| !r.is_empty());
                if answered {
                    return Answer::Complete("inputs received".to_owned());
                }
                let mut input = InputRequired::new();
                if capabilities.sampling.is_some() {
                    input = input.create_message("sample_request", capital_question());
                }
                if capabilities.elicitation.is_some() {
                    input = input.elicit_form("user_name", "What is your name?", string_form("name"));
                }
                if capabilities.roots.is_some() {
                    input = input.list_roots("roots_request");
                }
                if input.is_empty() {
                    return Answer::Complete("the client declared no way to give input".to_owned());
                }
                Answer::InputRequired(input)
            },
        )
        .prompt_with(
            {
                let mut p = Prompt::new("test_input_required_result_prompt");
                p.description = Some("A prompt that asks for context first".into());
                p
            },
            |cx: Context| async move {
                match accepted_field(&cx, "user_context", "context") {
                    Some(context) => Answer::Complete(format!("Use this context: {context}")),
                    None => Answer::InputRequired(InputRequired::new().elicit_form(
                        "user_context",
                        "What context should the prompt use?",
                        string_form("context"),
                    )),
                }
            },
        )
        .tool_raw(
            {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"}
                    },
                    "required": ["region"]
                });
                let mut tool = Tool::new(
                    "test_header_param",
                    schema.as_object().cloned().unwrap_or_default(),
                );
                tool.description =
                    Some("Takes a region that is mirrored into the Mcp-Param-Region header".into());
                tool
            },
            |Args(arguments): Args<JsonObject>| async move {
                let region = arguments.get("region").and_then(|r| r.as_str());
                format!("region: {}", region.unwrap_or(""))
            },
        )
        .tool_raw(json_schema_tool, || async {
            "json_schema_2020_12_tool called"
        })
        .resource(
            {
                let mut r = Resource::new("test://static-text", "static-text");
                r.mime_type = Some("text/plain".into());
                r.description = Some("A static text resource".into());
                r
            },
            || async move {
                "This is the content of the static text resource."
            },
        )
        .resource(
            {
                let mut r = Resource::new("test://static-binary", "static-binary");
                r.mime_type = Some("image/png".into());
                r.description = Some("A static binary resource".into());
                r
            },
            |request: ResourceRequest| async move {
                let mut blob = BlobResourceContents::new(request.uri, PNG);
                blob.mime_type = Some("image/png".into());
                mcp_types::ResourceContents::from(blob)
            },
        )
        .resource(
            {
                let mut r = Resource::new("test://watched-resource", "watched-resource");
                r.mime_type = Some("text/plain".into());
                r.description = Some("A resource to subscribe to".into());
                r
            },
            || async { "Watched resource content" },
        )
        .resource_template(
            {
                let mut t = ResourceTemplate::new("test://template/{id}/data", "template-data");
                t.mime_type = Some("application/json".into());
                t.description = Some("Data by id".into());
                t
            },
            |request: ResourceRequest| async move {
                let id = request.variables.get("id").cloned().unwrap_or_default();
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                    .to_string()
            },
        )
        .prompt(
            "test_simple_prompt",
            "A prompt without arguments",
            || async move {
                "This is a simple prompt for testing.".to_owned()
            },
        )
        .prompt(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
            |Args(args): Args<PromptArgs>| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.arg1, args.arg2
                )
            },
        )
        .prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            |Args(args): Args<EmbeddedResourceArgs>| async move {
                vec![
                    PromptMessage::new(
                        Role::User,
                        text_resource(&args.resource_uri, "text/plain", "Embedded resource content for testing."),
                    ),
                    PromptMessage::new(Role::User, ContentBlock::text("Please process the embedded resource above.")),
                ]
            },
        )
        .prompt_with(
            {
                let mut p = Prompt::new("test_prompt_with_image");
                p.description = Some("A prompt with an image".into());
                p
            },
            || async move {
                GetPromptResult::new(vec![
                    PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                    PromptMessage::new(Role::User, ContentBlock::text("Please analyze the image above.")),
                ])
            },
        )
        .completion(complete)
        // The tasks extension's fixtures (SEP-2663): tools that run as tasks,
        // ask for input inside a task, fail, and gather input before becoming one.
            .tasks(tasks)
            .tool(
                "greet",
                "Greets someone (never a task)",
                |Args(args): Args<GreetArgs>| async move { format!("Hello, {}!", args.name) },
            )
            .tool_with(
                task_tool(
                    "slow_compute",
                    "Computes for `seconds` seconds",
                    TaskSupport::Optional,
                ),
                |Args(args): Args<SlowComputeArgs>| async move {
                    let label = args.label.unwrap_or_default();
                    if args.seconds > 0.0 {
                        tokio::time::sleep(Duration::from_secs_f64(args.seconds.min(3600.0))).await;
                    }
                    format!("computed `{label}` in {}s", args.seconds)
                },
            )
            .tool_with(
                task_tool(
                    "failing_job",
                    "Fails after a moment (a tool error)",
                    TaskSupport::Required,
                ),
                failing_job,
            )
            .tool_with(
                task_tool(
                    "protocol_error_job",
                    "Fails with a protocol error",
                    TaskSupport::Optional,
                ),
                protocol_error_job,
            )
            .tool_with(
                task_tool(
                    "confirm_delete",
                    "Asks for a confirmation inside a task",
                    TaskSupport::Optional,
                ),
                confirm_delete,
            )
            .tool_with(
                task_tool(
                    "multi_input",
                    "Asks two questions at once inside a task",
                    TaskSupport::Optional,
                ),
                multi_input,
            )
            .tool_with(
                task_tool(
                    "test_tool_with_task",
                    "Asks for a name by round trip, then runs as a task",
                    TaskSupport::Required,
                ),
                |cx: Context| async move {
                    let Some(name) = accepted_field(&cx, "user_name", "name") else {
                        return Answer::InputRequired(InputRequired::new().elicit_form(
                            "user_name",
                            "What is your name?",
                            string_form("name"),
                        ));
                    };
                    cx.run_as_task().await;
                    Answer::Complete(format!("Hello, {name}! (from a task)"))
                },
            )
        .tool(
            "test_resource_ticks",
            "Raises `count` updates of test://template/{i}/data (i = 1..count), one every `intervalMs`, reporting progress",
            resource_ticks,
        )
        .extension(mcp_examples::extensions::skills())
        .extension(mcp_examples::extensions::apps())
}

async fn progress(cx: Context) -> Result<&'static str, ToolError> {
    for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.report_progress(progress, Some(100.0), Some(&format!("step {}", i + 1)))
            .await?;
    }
    Ok("Progress tool completed")
}

async fn logging(cx: Context) -> Result<&'static str, ToolError> {
    for (i, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.session()
            .send_log_message(LoggingLevel::Info, message, Some("everything-server"))
            .await?;
    }
    Ok("Logging tool completed")
}

async fn sampling(Args(args): Args<SamplingArgs>, cx: Context) -> Result<String, ToolError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(args.prompt)], 100);
    let result = cx.create_message(&params).await?;
    let text = result
        .content
        .blocks()
        .iter()
        .find_map(|b| b.as_text())
        .unwrap_or("(no text)")
        .to_owned();
    Ok(format!("LLM response: {text}"))
}

async fn elicitation(Args(args): Args<ElicitationArgs>, cx: Context) -> Result<String, ToolError> {
    let requested = schema(json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "Your username"},
            "email": {"type": "string", "format": "email", "description": "Your email"}
        },
        "required": ["username", "email"]
    }));
    let answer = cx.elicit_form(&args.message, requested).await?;
    Ok(told("User response", &answer))
}

/// An elicitation's answer as the conformance tools report it: `what`,
/// then its action and content as JSON.
fn told(what: &str, answer: &mcp_types::ElicitResult) -> String {
    format!(
        "{what}: action={}, content={}",
        serde_json::to_value(answer.action).unwrap_or_default(),
        serde_json::to_value(&answer.content).unwrap_or_default()
    )
}

async fn elicitation_defaults(cx: Context) -> Result<String, ToolError> {
    let requested = schema(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verified user", "default": true}
        }
    }));
    let answer = cx
        .elicit_form("Please review and update the form fields", requested)
        .await?;
    Ok(told("Elicitation completed", &answer))
}

async fn elicitation_enums(cx: Context) -> Result<String, ToolError> {
    let requested = schema(json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
        }
    }));
    let answer = cx.elicit_form("Choose your options", requested).await?;
    Ok(format!(
        "Elicitation completed: action={}",
        serde_json::to_value(answer.action).unwrap_or_default()
    ))
}

async fn missing_capability(cx: Context) -> Result<&'static str, ToolError> {
    let mut sampling = ClientCapabilities::new();
    sampling.sampling = Some(SamplingCapability::new());
    if !cx.session().check_client_capability(&sampling) {
        return Err(ToolError::protocol(
            MissingRequiredClientCapabilityData::new(sampling)
                .into_error("this tool needs the client's sampling capability"),
        ));
    }
    Ok("the client can sample")
}

async fn streaming_elicitation(cx: Context) -> Result<&'static str, ToolError> {
    cx.report_progress(1.0, Some(1.0), Some("streaming"))
        .await?;
    Ok("streamed without server requests")
}

async fn logging_by_request(cx: Context) -> Result<&'static str, ToolError> {
    cx.log(LoggingLevel::Info, "logging tool: info").await?;
    cx.log(LoggingLevel::Error, "logging tool: error").await?;
    Ok("logged")
}

async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(500)).await;
    Err(ToolError::new("the job failed"))
}

async fn protocol_error_job(cx: Context) -> Result<String, ToolError> {
    cx.run_as_task().await;
    Err(ToolError::protocol(mcp_types::ErrorObject::internal_error(
        "the job hit an internal error",
    )))
}

async fn confirm_delete(cx: Context) -> Result<&'static str, ToolError> {
    cx.run_as_task().await;
    let answer = cx
        .elicit_form("Really delete the file?", boolean_form("confirm"))
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    let confirmed = answer.action == ElicitAction::Accept
        && matches!(
            answer.content.as_ref().and_then(|c| c.get("confirm")),
            Some(ElicitValue::Boolean(true))
        );
    Ok(if confirmed { "deleted" } else { "kept" })
}

async fn multi_input(cx: Context) -> Result<String, ToolError> {
    cx.run_as_task().await;
    let (first, second) = tokio::join!(
        cx.elicit_form("First name?", string_form("first")),
        cx.elicit_form("Last name?", string_form("last")),
    );
    let field = |answer: &mcp_types::ElicitResult, key: &str| match answer
        .content
        .as_ref()
        .and_then(|c| c.get(key))
    {
        Some(ElicitValue::String(value)) => value.clone(),
        _ => String::new(),
    };
    let first = first.map_err(|e| ToolError::new(e.to_string()))?;
    let second = second.map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!(
        "Hello, {} {}!",
        field(&first, "first"),
        field(&second, "last")
    ))
}

async fn resource_ticks(Args(args): Args<TicksArgs>, cx: Context) -> Result<String, ToolError> {
    for i in 1..=args.count.min(1000) {
        tokio::time::sleep(Duration::from_millis(args.interval_ms.min(10_000))).await;
        if let Some(changes) = cx.session().list_changes() {
            changes.resource_updated(format!("test://template/{i}/data"));
        }
        cx.report_progress(f64::from(i), Some(f64::from(args.count)), None)
            .await?;
    }
    Ok(format!("{} updates raised", args.count))
}

async fn complete(params: CompleteRequestParams) -> Vec<String> {
    let candidates: &[&str] = match params.argument.name.as_str() {
        "arg1" => &["paris", "park", "party"],
        "arg2" => &["red", "green", "blue"],
        _ => &[],
    };
    candidates
        .iter()
        .filter(|c| c.starts_with(&params.argument.value))
        .map(|c| (*c).to_owned())
        .collect()
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TicksArgs {
    /// How many updates to raise.
    count: u32,
    /// Milliseconds before each update.
    interval_ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SlowComputeArgs {
    /// How long the computation takes, in seconds (0: at once).
    #[serde(default)]
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// A tool that may run as a task (`execution.taskSupport`).
fn task_tool(name: &str, description: &str, support: TaskSupport) -> Tool {
    let mut tool = Tool::new(name, JsonObject::new());
    tool.description = Some(description.into());
    tool.execution = Some(ToolExecution::new().with_task_support(support));
    tool
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 3001u16;
    let mut bind = std::net::IpAddr::from([127, 0, 0, 1]);
    let mut hosts: Vec<String> = Vec::new();
    let mut key = None;
    let mut redis = None;
    let mut cors_origins: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .ok_or("--port needs a value")?
                    .parse()
                    .map_err(|e| format!("--port: {e}"))?;
            }
            "--bind" => {
                bind = args
                    .next()
                    .ok_or("--bind needs an IP address")?
                    .parse()
                    .map_err(|e| format!("--bind: {e}"))?;
            }
            "--allowed-host" => hosts.push(args.next().ok_or("--allowed-host needs a name")?),
            "--key-file" => {
                let path = args.next().ok_or("--key-file needs a path")?;
                key = Some(mcp_examples::read_secret(&path)?);
            }
            "--redis" => redis = Some(args.next().ok_or("--redis needs a URL")?),
            "--cors-origin" => cors_origins.push(
                args.next()
                    .ok_or("--cors-origin needs an origin, e.g. http://localhost:5173")?,
            ),
            // Read by `mcp_examples::telemetry`.
            "--otlp" => {
                args.next();
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: everything-server [--port PORT] [--bind IP] [--allowed-host NAME]... [--cors-origin ORIGIN]... [--key-file PATH] [--redis URL] [--otlp URL]"
                )
                .into());
            }
        }
    }
    let telemetry = mcp_examples::telemetry("everything-server")?;
    let mut config = hosts.into_iter().fold(
        HttpServerConfig::new().retry(Duration::from_millis(500)),
        HttpServerConfig::allow_host,
    );
    if !cors_origins.is_empty() {
        let cors = CorsConfig::new(&cors_origins).map_err(|e| format!("--cors-origin: {e}"))?;
        config = config.cors(cors);
    }
    let mut tasks = TasksConfig::new().poll_interval(Duration::from_millis(200));
    if let Some(url) = redis {
        let shared = mcp_examples::redis_stores(&url).await?;
        config = config.shared(shared.http);
        tasks = tasks.store(shared.tasks);
    }
    let mut builder = everything_server(tasks);
    if let Some(key) = key {
        builder = builder.request_state_key(key);
    }
    let server = builder.build()?;
    let listener = tokio::net::TcpListener::bind((bind, port)).await?;
    eprintln!("everything-server: http://{}/mcp", listener.local_addr()?);
    server
        .serve_http(listener, config, mcp_server::shutdown_signal())
        .await?;
    telemetry.shutdown();
    Ok(())
}
