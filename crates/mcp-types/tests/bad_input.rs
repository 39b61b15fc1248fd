//! Bad input is refused with an error that says what is wrong.

use mcp_types::{
    CallToolRequest, ClientRequest, DecodeErrorKind, ErrorCode, JsonRpcMessage, MessageError,
    RawJson, Revision, ServerRequest,
};

fn raw(text: &str) -> RawJson {
    RawJson::from_string(text.to_owned()).expect("valid JSON")
}

#[test]
fn a_method_that_does_not_exist_at_the_revision_is_refused_with_method_not_found() {
    let err = ClientRequest::parse("initialize", Some(&raw(r#"{}"#)), Revision::V2026_07_28)
        .expect_err("initialize is gone in 2026-07-28");
    assert!(matches!(err, MessageError::UnknownMethod { .. }));
    assert_eq!(err.to_error_object().code, ErrorCode::METHOD_NOT_FOUND);
    assert!(err.to_string().contains("initialize"), "{err}");
    assert!(err.to_string().contains("2026-07-28"), "{err}");

    let err = ClientRequest::parse("server/discover", None, Revision::V2025_11_25)
        .expect_err("discover does not exist before 2026-07-28");
    assert!(matches!(err, MessageError::UnknownMethod { .. }));

    // Elicitation arrived in 2025-06-18; a server cannot send it at 2025-03-26.
    let params = raw(r#"{"message":"name?","requestedSchema":{"type":"object","properties":{}}}"#);
    assert!(
        ServerRequest::parse("elicitation/create", Some(&params), Revision::V2025_06_18).is_ok()
    );
    assert!(
        ServerRequest::parse("elicitation/create", Some(&params), Revision::V2025_03_26).is_err()
    );

    // A client cannot send a server's request.
    assert!(ClientRequest::parse("sampling/createMessage", None, Revision::V2025_11_25).is_err());
}

#[test]
fn a_missing_required_field_is_named() {
    let err = ClientRequest::parse(
        "tools/call",
        Some(&raw(r#"{"arguments":{}}"#)),
        Revision::V2025_11_25,
    )
    .expect_err("`name` is required");
    assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
    assert!(err.to_string().contains("missing field `name`"), "{err}");

    let err = ClientRequest::parse("tools/call", None, Revision::V2025_11_25)
        .expect_err("params are required");
    assert!(matches!(
        err,
        MessageError::MissingParams {
            method: "tools/call"
        }
    ));
    assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);

    let err = serde_json::from_str::<CallToolRequest>(
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
    )
    .expect_err("a framed request needs an id");
    assert!(err.to_string().contains("missing field `id`"), "{err}");
}

#[test]
fn a_wrong_type_is_reported_with_its_field() {
    let err = ClientRequest::parse(
        "tools/call",
        Some(&raw(r#"{"name":42}"#)),
        Revision::V2025_11_25,
    )
    .expect_err("`name` must be a string");
    assert!(
        err.to_string()
            .contains("invalid type: integer `42`, expected a string"),
        "{err}"
    );

    let err = ClientRequest::parse(
        "logging/setLevel",
        Some(&raw(r#"{"level":"loud"}"#)),
        Revision::V2025_11_25,
    )
    .expect_err("`loud` is no level");
    assert!(err.to_string().contains("loud"), "{err}");

    let err = serde_json::from_str::<CallToolRequest>(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x"}}"#,
    )
    .expect_err("the method must match the type");
    assert!(
        err.to_string()
            .contains("expected method `tools/call`, found `tools/list`"),
        "{err}"
    );
}

#[test]
fn a_bool_id_is_refused_as_an_invalid_request() {
    let err = JsonRpcMessage::from_str(r#"{"jsonrpc":"2.0","id":false,"method":"ping"}"#)
        .expect_err("bool ids are not ids");
    assert_eq!(err.kind, DecodeErrorKind::Invalid);
    assert_eq!(err.to_error_object().code, ErrorCode::INVALID_REQUEST);
    assert!(err.message.contains("bool"), "{}", err.message);

    let err = serde_json::from_str::<CallToolRequest>(
        r#"{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"x"}}"#,
    )
    .expect_err("bool ids are not ids");
    assert!(err.to_string().contains("bool"), "{err}");
}

#[test]
fn a_typed_request_reads_back_what_it_writes() {
    let params = raw(r#"{"name":"add","arguments":{"a":1,"b":2}}"#);
    let request =
        ClientRequest::parse("tools/call", Some(&params), Revision::V2025_11_25).expect("valid");
    let ClientRequest::CallTool(call) = &request else {
        panic!("a tools/call")
    };
    assert_eq!(call.name, "add");
    let framed = request.to_jsonrpc(7.into()).expect("serializes");
    assert_eq!(framed.method, "tools/call");
    assert_eq!(framed.params.expect("params").get(), params.get());
}

#[test]
fn a_request_read_before_its_revision_is_known_names_it_in_meta() {
    let params = raw(
        r#"{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
    );
    let parsed = ClientRequest::parse_any_revision("tools/call", Some(&params))
        .expect("tools/call exists at some revision");
    let meta = parsed.meta().expect("the request carries `_meta`");
    assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    assert!(meta.client_capabilities.is_some());
    assert!(ClientRequest::check_revision("tools/call", Revision::V2026_07_28).is_ok());

    // The table is asked separately, and names the revision it was asked at.
    let err = ClientRequest::check_revision("initialize", Revision::V2026_07_28)
        .expect_err("initialize is gone in 2026-07-28");
    assert!(err.to_string().contains("2026-07-28"), "{err}");
    let err = ClientRequest::parse_any_revision("com.example/unknown", None)
        .expect_err("no revision has the method");
    assert_eq!(err.to_error_object().code, ErrorCode::METHOD_NOT_FOUND);

    // Every request's `_meta` is typed, the tasks methods' too.
    let params = raw(r#"{"taskId":"t1","_meta":{"progressToken":7}}"#);
    let parsed = ClientRequest::parse_any_revision("tasks/get", Some(&params)).expect("tasks/get");
    assert!(
        parsed
            .meta()
            .and_then(|m| m.progress_token.as_ref())
            .is_some()
    );
    let parsed = ClientRequest::parse_any_revision("tools/list", None).expect("tools/list");
    assert!(parsed.meta().is_none(), "absent params have no `_meta`");
}

/// serde quotes an unknown variant as it came, and a method is the peer's
/// own text: the errors show both escaped, a long method cut.
#[test]
fn the_peers_text_in_an_error_is_shown_escaped() {
    let hostile = format!("x\u{1b}]0;t\u{7}\n{}", "m".repeat(1000));
    let err =
        ClientRequest::parse(&hostile, None, Revision::V2025_11_25).expect_err("no such method");
    let shown = err.to_string();
    assert!(
        shown.starts_with(r"method `x\x1b]0;t\x07\x0ammm"),
        "{shown}"
    );
    assert!(shown.len() < 300, "cut: {shown}");
    assert_eq!(err.to_error_object().message, shown);

    let params = raw(r#"{"level":"\u001b[2J\u202e"}"#);
    let err = ClientRequest::parse("logging/setLevel", Some(&params), Revision::V2025_11_25)
        .expect_err("no such level");
    assert!(matches!(err, MessageError::InvalidParams { .. }));
    let shown = err.to_string();
    assert!(shown.contains(r"\x1b[2J\u{202e}"), "{shown}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
        "{shown}"
    );

    for text in [
        r#"{"jsonrpc":"\u001b[2J","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"\u001b[2J","message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":{"\u001b[2J":1},"method":"ping"}"#,
    ] {
        let err = JsonRpcMessage::from_str(text).expect_err("invalid");
        let shown = err.to_string();
        assert!(!shown.chars().any(char::is_control), "{shown}");
    }
    let err = JsonRpcMessage::from_str(r#"{"jsonrpc":"\u001b[2J","id":1,"method":"ping"}"#)
        .expect_err("not 2.0");
    assert_eq!(
        err.to_string(),
        r#"not a valid JSON-RPC message: `jsonrpc` is `\x1b[2J`; MCP requires "2.0""#
    );
}
