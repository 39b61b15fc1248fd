//! Quick check of the domain types against the official 2026-07-28 examples:
//! every example of a definition this crate models as a domain type is read
//! into that type and written back, and must come out equal (numbers compared
//! numerically). Examples of JSON-RPC frames are skipped and listed.

use std::fs;
use std::path::Path;

use mcp_types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

type Check = fn(&Value) -> Result<Value, String>;

fn round_trip<T: DeserializeOwned + Serialize>(input: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(input.clone()).map_err(|e| format!("read: {e}"))?;
    serde_json::to_value(&typed).map_err(|e| format!("write: {e}"))
}

/// Round-trips `error.data` of an error-response example through `T`.
fn error_data<T: DeserializeOwned + Serialize>(input: &Value) -> Result<Value, String> {
    let data = input
        .pointer("/error/data")
        .ok_or_else(|| "no error.data".to_owned())?;
    let written = round_trip::<T>(data)?;
    let mut output = input.clone();
    if let Some(slot) = output.pointer_mut("/error/data") {
        *slot = written;
    }
    Ok(output)
}

/// Schema definition name -> how to check one of its examples.
fn checks() -> Vec<(&'static str, Check)> {
    macro_rules! table {
        ($($name:literal => $ty:ty),* $(,)?) => {
            vec![$(($name, round_trip::<$ty> as Check)),*]
        };
    }
    let mut table: Vec<(&'static str, Check)> = table![
        "Annotations" => Annotations,
        "AudioContent" => AudioContent,
        "BaseMetadata" => BaseMetadata,
        "BlobResourceContents" => BlobResourceContents,
        "BooleanSchema" => BooleanSchema,
        "CacheableResult" => CacheableResult,
        "CallToolRequestParams" => CallToolRequestParams,
        "CallToolResult" => CallToolResult,
        "CancelledNotificationParams" => CancelledNotificationParams,
        "ClientCapabilities" => ClientCapabilities,
        "CompleteRequestParams" => CompleteRequestParams,
        "CompleteResult" => CompleteResult,
        "ContentBlock" => ContentBlock,
        "CreateMessageRequestParams" => CreateMessageRequestParams,
        "CreateMessageResult" => CreateMessageResult,
        "Cursor" => Cursor,
        "DiscoverResult" => DiscoverResult,
        "ElicitRequestFormParams" => ElicitRequestFormParams,
        "ElicitRequestParams" => ElicitRequestParams,
        "ElicitRequestURLParams" => ElicitRequestUrlParams,
        "ElicitResult" => ElicitResult,
        "EmbeddedResource" => EmbeddedResource,
        "EmptyResult" => EmptyResult,
        "EnumSchema" => EnumSchema,
        "GetPromptRequestParams" => GetPromptRequestParams,
        "GetPromptResult" => GetPromptResult,
        "Icon" => Icon,
        "Icons" => Icons,
        "ImageContent" => ImageContent,
        "Implementation" => Implementation,
        "InputRequest" => InputRequest,
        "InputRequests" => InputRequests,
        "InputRequiredResult" => InputRequiredResult,
        "InputResponse" => InputResponse,
        "InputResponseRequestParams" => InputResponseRequestParams,
        "InputResponses" => InputResponses,
        "JSONArray" => JsonArray,
        "JSONObject" => JsonObject,
        "JSONValue" => JsonValue,
        "LegacyTitledEnumSchema" => LegacyTitledEnumSchema,
        "ListPromptsResult" => ListPromptsResult,
        "ListResourceTemplatesResult" => ListResourceTemplatesResult,
        "ListResourcesResult" => ListResourcesResult,
        "ListRootsResult" => ListRootsResult,
        "ListToolsResult" => ListToolsResult,
        "LoggingLevel" => LoggingLevel,
        "LoggingMessageNotificationParams" => LoggingMessageNotificationParams,
        "MetaObject" => Meta,
        "ModelHint" => ModelHint,
        "ModelPreferences" => ModelPreferences,
        "MultiSelectEnumSchema" => MultiSelectEnumSchema,
        "NotificationMetaObject" => NotificationMeta,
        "NotificationParams" => NotificationParams,
        "NumberSchema" => NumberSchema,
        "PaginatedRequestParams" => PaginatedRequestParams,
        "PaginatedResult" => PaginatedResult,
        "PrimitiveSchemaDefinition" => PrimitiveSchemaDefinition,
        "ProgressNotificationParams" => ProgressNotificationParams,
        "ProgressToken" => ProgressToken,
        "Prompt" => Prompt,
        "PromptArgument" => PromptArgument,
        "PromptMessage" => PromptMessage,
        "PromptReference" => PromptReference,
        "ReadResourceRequestParams" => ReadResourceRequestParams,
        "ReadResourceResult" => ReadResourceResult,
        "RequestMetaObject" => RequestMeta,
        "RequestParams" => RequestParams,
        "Resource" => Resource,
        "ResourceContents" => ResourceContents,
        "ResourceLink" => ResourceLink,
        "ResourceRequestParams" => ResourceRequestParams,
        "ResourceTemplate" => ResourceTemplate,
        "ResourceTemplateReference" => ResourceTemplateReference,
        "ResourceUpdatedNotificationParams" => ResourceUpdatedNotificationParams,
        "Result" => EmptyResult,
        "ResultMetaObject" => ResultMeta,
        "ResultType" => ResultType,
        "Role" => Role,
        "Root" => Root,
        "SamplingMessage" => SamplingMessage,
        "SamplingMessageContentBlock" => SamplingMessageContentBlock,
        "ServerCapabilities" => ServerCapabilities,
        "SingleSelectEnumSchema" => SingleSelectEnumSchema,
        "StringSchema" => StringSchema,
        "SubscriptionFilter" => SubscriptionFilter,
        "SubscriptionsAcknowledgedNotificationParams" => SubscriptionsAcknowledgedNotificationParams,
        "SubscriptionsListenRequestParams" => SubscriptionsListenRequestParams,
        "SubscriptionsListenResult" => SubscriptionsListenResult,
        "SubscriptionsListenResultMetaObject" => SubscriptionsListenResultMeta,
        "TextContent" => TextContent,
        "TextResourceContents" => TextResourceContents,
        "TitledMultiSelectEnumSchema" => TitledMultiSelectEnumSchema,
        "TitledSingleSelectEnumSchema" => TitledSingleSelectEnumSchema,
        "Tool" => Tool,
        "ToolAnnotations" => ToolAnnotations,
        "ToolChoice" => ToolChoice,
        "ToolResultContent" => ToolResultContent,
        "ToolUseContent" => ToolUseContent,
        "UntitledMultiSelectEnumSchema" => UntitledMultiSelectEnumSchema,
        "UntitledSingleSelectEnumSchema" => UntitledSingleSelectEnumSchema,
    ];
    // Error responses are frames, but their `data` is ours.
    table.push((
        "UnsupportedProtocolVersionError",
        error_data::<UnsupportedProtocolVersionData>,
    ));
    table.push((
        "MissingRequiredClientCapabilityError",
        error_data::<MissingRequiredClientCapabilityData>,
    ));
    table
}

/// Frame example name -> the member holding one of our types ("" = whole
/// example) and how to check it.
fn frame_parts() -> Vec<(&'static str, &'static str, Check)> {
    vec![
        (
            "CallToolRequest",
            "/params",
            round_trip::<CallToolRequestParams>,
        ),
        (
            "CallToolResultResponse",
            "/result",
            round_trip::<ResultOrInputRequired<CallToolResult>>,
        ),
        (
            "CancelledNotification",
            "/params",
            round_trip::<CancelledNotificationParams>,
        ),
        (
            "CompleteRequest",
            "/params",
            round_trip::<CompleteRequestParams>,
        ),
        (
            "CompleteResultResponse",
            "/result",
            round_trip::<CompleteResult>,
        ),
        ("CreateMessageRequest", "", round_trip::<InputRequest>),
        ("DiscoverRequest", "/params", round_trip::<RequestParams>),
        (
            "DiscoverResultResponse",
            "/result",
            round_trip::<DiscoverResult>,
        ),
        ("ElicitRequest", "", round_trip::<InputRequest>),
        (
            "GetPromptRequest",
            "/params",
            round_trip::<GetPromptRequestParams>,
        ),
        (
            "GetPromptResultResponse",
            "/result",
            round_trip::<ResultOrInputRequired<GetPromptResult>>,
        ),
        (
            "ListPromptsRequest",
            "/params",
            round_trip::<PaginatedRequestParams>,
        ),
        (
            "ListPromptsResultResponse",
            "/result",
            round_trip::<ListPromptsResult>,
        ),
        (
            "ListResourceTemplatesRequest",
            "/params",
            round_trip::<PaginatedRequestParams>,
        ),
        (
            "ListResourceTemplatesResultResponse",
            "/result",
            round_trip::<ListResourceTemplatesResult>,
        ),
        (
            "ListResourcesRequest",
            "/params",
            round_trip::<PaginatedRequestParams>,
        ),
        (
            "ListResourcesResultResponse",
            "/result",
            round_trip::<ListResourcesResult>,
        ),
        (
            "ListToolsRequest",
            "/params",
            round_trip::<PaginatedRequestParams>,
        ),
        (
            "ListToolsResultResponse",
            "/result",
            round_trip::<ListToolsResult>,
        ),
        (
            "LoggingMessageNotification",
            "/params",
            round_trip::<LoggingMessageNotificationParams>,
        ),
        (
            "ProgressNotification",
            "/params",
            round_trip::<ProgressNotificationParams>,
        ),
        (
            "PromptListChangedNotification",
            "/params",
            round_trip::<NotificationParams>,
        ),
        (
            "ReadResourceRequest",
            "/params",
            round_trip::<ReadResourceRequestParams>,
        ),
        (
            "ReadResourceResultResponse",
            "/result",
            round_trip::<ResultOrInputRequired<ReadResourceResult>>,
        ),
        (
            "ResourceListChangedNotification",
            "/params",
            round_trip::<NotificationParams>,
        ),
        (
            "ResourceUpdatedNotification",
            "/params",
            round_trip::<ResourceUpdatedNotificationParams>,
        ),
        (
            "SubscriptionsAcknowledgedNotification",
            "/params",
            round_trip::<SubscriptionsAcknowledgedNotificationParams>,
        ),
        (
            "SubscriptionsListenRequest",
            "/params",
            round_trip::<SubscriptionsListenRequestParams>,
        ),
        (
            "SubscriptionsListenResultResponse",
            "/result",
            round_trip::<SubscriptionsListenResult>,
        ),
        (
            "ToolListChangedNotification",
            "/params",
            round_trip::<NotificationParams>,
        ),
    ]
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn json_eq_compares_numbers_numerically() {
    assert!(json_eq(
        &serde_json::json!({"a": [1]}),
        &serde_json::json!({"a": [1.0]})
    ));
    assert!(!json_eq(
        &serde_json::json!({"a": 1}),
        &serde_json::json!({"a": 2})
    ));
    assert!(!json_eq(
        &serde_json::json!({"a": 1}),
        &serde_json::json!({"a": 1, "b": 1})
    ));
}

#[test]
fn official_2026_examples_round_trip_through_the_domain_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec/2026-07-28/examples");
    let checks = checks();
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();

    let (mut checked, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some((_, check)) = checks.iter().find(|(n, _)| *n == name) else {
            skipped.push(name);
            continue;
        };
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let input: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
            let label = format!("{name}/{}", file.file_name().unwrap().to_string_lossy());
            match check(&input) {
                Ok(output) if json_eq(&input, &output) => checked += 1,
                Ok(output) => {
                    failures.push(format!("{label}: changed\n  in:  {input}\n  out: {output}"))
                }
                Err(error) => failures.push(format!("{label}: {error}")),
            }
        }
    }
    println!(
        "checked {checked} examples; skipped (frames, the lead's): {}",
        skipped.join(", ")
    );
    assert!(checked > 0, "no example was checked");
    assert!(
        failures.is_empty(),
        "{} examples failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_domain_parts_of_official_2026_frame_examples_round_trip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec/2026-07-28/examples");
    let (mut checked, mut failures) = (0, Vec::new());
    for (name, pointer, check) in frame_parts() {
        let dir = root.join(name);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for file in entries.map(|e| e.unwrap().path()) {
            let example: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
            // Notifications without params have nothing of ours to check.
            let Some(input) = example.pointer(pointer) else {
                continue;
            };
            let label = format!(
                "{name}/{}{pointer}",
                file.file_name().unwrap().to_string_lossy()
            );
            match check(input) {
                Ok(output) if json_eq(input, &output) => checked += 1,
                Ok(output) => {
                    failures.push(format!("{label}: changed\n  in:  {input}\n  out: {output}"))
                }
                Err(error) => failures.push(format!("{label}: {error}")),
            }
        }
    }
    println!("checked {checked} frame members");
    assert!(checked > 0, "no frame member was checked");
    assert!(
        failures.is_empty(),
        "{} frame members failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn json_schemas_generate_for_the_unions_and_tags() {
    let schemas = [
        schemars::schema_for!(ContentBlock),
        schemars::schema_for!(InputRequest),
        schemars::schema_for!(InputResponses),
        schemars::schema_for!(ResultOrInputRequired<CallToolResult>),
        schemars::schema_for!(PrimitiveSchemaDefinition),
        schemars::schema_for!(RequestMeta),
        schemars::schema_for!(ResultType),
        schemars::schema_for!(TextContent),
    ];
    let text = serde_json::to_value(&schemas[7]).unwrap();
    assert_eq!(
        text.pointer("/properties/type/const"),
        Some(&Value::from("text"))
    );
    assert!(schemas.iter().all(|schema| schema.as_value().is_object()));
}

/// Hand-written messages in the shapes only older revisions have.
#[test]
fn older_revision_shapes_round_trip() {
    use serde_json::json;
    let cases: Vec<(Value, Check)> = vec![
        // 2024-11-05: inline annotations, single-block sampling content.
        (
            json!({"type": "text", "text": "x", "annotations": {"audience": ["user"], "priority": 0.5}}),
            round_trip::<TextContent>,
        ),
        (
            json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": "endTurn", "_meta": {"k": 1}}),
            round_trip::<CreateMessageResult>,
        ),
        (
            json!({"protocolVersion": "2024-11-05", "capabilities": {"logging": {}, "prompts": {"listChanged": true}}, "serverInfo": {"name": "s", "version": "1"}, "instructions": "i"}),
            round_trip::<InitializeResult>,
        ),
        (
            json!({"protocolVersion": "2024-11-05", "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "experimental": {"x": {"y": 1}}}, "clientInfo": {"name": "c", "version": "1"}, "_meta": {"progressToken": "p"}}),
            round_trip::<InitializeRequestParams>,
        ),
        (
            json!({"type": "ref/resource", "uri": "file:///{x}"}),
            round_trip::<ResourceReference>,
        ),
        // 2025-06-18: legacy enum schema, `_meta` on elicitation and roots results.
        (
            json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "title": "t"}),
            round_trip::<EnumSchema>,
        ),
        (
            json!({"action": "accept", "content": {"n": 1}, "_meta": {"k": "v"}}),
            round_trip::<ElicitResult>,
        ),
        (
            json!({"roots": [{"uri": "file:///a", "name": "a"}], "_meta": {}}),
            round_trip::<ListRootsResult>,
        ),
        // 2025-11-25: tasks, URL elicitation ids, tool execution, related-task meta.
        (
            json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}),
            round_trip::<Tool>,
        ),
        (
            json!({"name": "t", "arguments": {"a": 1}, "task": {"ttl": 60000}, "_meta": {"progressToken": 1, "io.modelcontextprotocol/related-task": {"taskId": "t1"}}}),
            round_trip::<CallToolRequestParams>,
        ),
        (
            json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e1", "_meta": {"progressToken": 2}}),
            round_trip::<ElicitRequestUrlParams>,
        ),
        (
            json!({"reason": "task gone"}),
            round_trip::<CancelledNotificationParams>,
        ),
        (
            json!({"task": {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1000, "pollInterval": 500}}),
            round_trip::<CreateTaskResult>,
        ),
        (
            json!({"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}}),
            round_trip::<TaskStatusNotificationParams>,
        ),
        (
            json!({"tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}}),
            round_trip::<ClientCapabilities>,
        ),
        (
            json!({"tasks": {"list": {}, "requests": {"tools": {"call": {}}}}, "completions": {}}),
            round_trip::<ServerCapabilities>,
        ),
        (
            json!({"elicitations": [{"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}]}),
            round_trip::<UrlElicitationRequiredData>,
        ),
    ];
    for (input, check) in cases {
        let output = check(&input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert!(
            json_eq(&input, &output),
            "changed\n  in:  {input}\n  out: {output}"
        );
    }
}
