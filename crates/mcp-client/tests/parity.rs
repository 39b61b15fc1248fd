//! What a host ported from the Python SDK v2 relies on (docs/parity.md), in
//! both eras where the item exists in both: hand-driven Multi Round-Trip
//! Requests on reads and prompts, per-call `_meta` reaching the handler,
//! `adopt` and `send_discover`, the callbacks' context (the session and the
//! request's `_meta`), tool-use pairing checked before a sampling request
//! is sent, the -32042 reading helper and the typed helpers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_client::{
    Client, ClientConfig, ClientSession, Error, Negotiated, Negotiation, RequestOptions,
};
use mcp_server::{
    Context, Elicitation, Json, Meta, PromptError, ResourceError, Server, ToolError, Uri,
};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, DiscoverResult, ElicitRequestUrlParams,
    ElicitResult, GetPromptRequestParams, InputRequest, InputResponses, JsonObject,
    ReadResourceRequestParams, RequestMeta, Resource, ResourceContents, ResultOrInputRequired,
    Revision, Role, SamplingMessage, SamplingMessageContentBlock, ServerCapabilities,
    ToolResultContent, ToolUseContent,
};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Structured output of the `weather` tool.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Weather {
    city: String,
    celsius: f64,
}

/// The `com.example/tenant` member of a request's `_meta`, if any.
fn tenant(meta: Option<&RequestMeta>) -> String {
    meta.and_then(|m| m.extra.get("com.example/tenant"))
        .and_then(|v| v.as_str())
        .unwrap_or("none")
        .to_owned()
}

/// A conversation whose tool use goes unanswered: `call-2` is answered in
/// place of `call-1`.
fn unpaired_conversation() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(
        vec![
            SamplingMessage::user_text("weather in Paris?"),
            SamplingMessage::new(
                Role::Assistant,
                ToolUseContent::new("call-1", "weather", JsonObject::new()),
            ),
            SamplingMessage::new(Role::User, ToolResultContent::new("call-2", vec![])),
        ],
        100,
    )
}

/// A tool that cannot run before the user signs in (-32042).
async fn sign_in() -> Result<String, ToolError> {
    Err(ToolError::url_elicitation_required(
        "sign in first",
        vec![ElicitRequestUrlParams::new(
            "Sign in to the notes service",
            "https://example.invalid/sign-in",
        )],
    ))
}

fn server() -> Server {
    Server::builder("parity", "1.0.0")
        .request_state_key(b"the parity tests' request state key".to_vec())
        .resource(
            Resource::new("notes://greeting", "greeting"),
            |Uri(uri): Uri, cx: Context| async move {
                let Elicitation::Accepted(Name { name }) = cx.elicit::<Name>("Who reads?").await?
                else {
                    return Err(ResourceError::new("no reader"));
                };
                Ok(format!("{uri} for {name}"))
            },
        )
        .resource(
            Resource::new("notes://tenant", "tenant"),
            |Meta(meta): Meta| async move { tenant(Some(&meta)) },
        )
        .prompt(
            "welcome",
            "Welcomes whoever answers",
            |cx: Context| async move {
                let Elicitation::Accepted(Name { name }) = cx.elicit::<Name>("Who is it?").await?
                else {
                    return Err(PromptError::new("nobody"));
                };
                Ok(format!("welcome, {name}"))
            },
        )
        .tool(
            "tenant",
            "Says which tenant the call's _meta names",
            |Meta(meta): Meta| async move { tenant(Some(&meta)) },
        )
        .tool("weather", "The weather, structured", || async {
            Json(Weather {
                city: "Paris".into(),
                celsius: 21.5,
            })
        })
        .tool("sign_in", "Needs a sign-in first", sign_in)
        .tool(
            "unpaired",
            "Asks the model with a conversation whose tool use goes unanswered",
            |cx: Context| async move {
                match cx.create_message(&unpaired_conversation()).await {
                    Ok(_) => "sent".to_owned(),
                    Err(error) => format!("refused: {error}"),
                }
            },
        )
        .tool(
            "sample",
            "Asks the model, with a _meta the callback reads",
            |cx: Context| async move {
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hello")], 10)
                        .with_meta(RequestMeta::new().with_extra("com.example/tenant", "acme"));
                match cx.create_message(&params).await {
                    Ok(result) => Ok(result
                        .content
                        .blocks()
                        .iter()
                        .find_map(|b| b.as_text())
                        .unwrap_or_default()
                        .to_owned()),
                    Err(error) => Err(ToolError::from(error)),
                }
            },
        )
        .build()
        .expect("server")
}

/// A client of [`server`] in `era`: the elicitation callback answers "Ada"
/// (from a `Serialize` value); the sampling callback counts its calls, reads
/// the request's `_meta` and calls back into the server through the
/// session it is handed.
async fn client(server: &Server, era: Negotiation, sampled: Arc<AtomicUsize>) -> Client {
    let config = ClientConfig::new("parity-test", "1")
        .negotiation(era)
        .on_elicitation(|_, _| async {
            ElicitResult::accept_from(&json!({"name": "Ada"}))
                .map_err(|e| mcp_types::ErrorObject::internal_error(e.to_string()))
        })
        .on_sampling(move |_, info| {
            let sampled = sampled.clone();
            async move {
                sampled.fetch_add(1, Ordering::SeqCst);
                let tools = info
                    .session
                    .list_tools(None)
                    .await
                    .map_err(|e| mcp_types::ErrorObject::internal_error(e.to_string()))?;
                let text = format!(
                    "tenant {}, {} tools",
                    tenant(info.meta.as_ref()),
                    tools.tools.len()
                );
                Ok(CreateMessageResult::new(
                    SamplingMessageContentBlock::text(text),
                    "parity-model",
                ))
            }
        });
    Client::connect(server.in_memory(), config)
        .await
        .expect("connected")
}

const ERAS: [Negotiation; 2] = [Negotiation::HandshakeOnly, Negotiation::StatelessOnly];

fn text_of(contents: &[ResourceContents]) -> String {
    match &contents[0] {
        ResourceContents::Text(text) => text.text.clone(),
        other => panic!("text contents, not {other:?}"),
    }
}

/// The input requests and state of an answer that asks for input.
fn asked<R: std::fmt::Debug>(
    answer: ResultOrInputRequired<R>,
) -> (Vec<(String, InputRequest)>, Option<String>) {
    match answer {
        ResultOrInputRequired::InputRequired(input) => (
            input
                .input_requests
                .expect("requests")
                .into_iter()
                .collect(),
            input.request_state,
        ),
        ResultOrInputRequired::Complete(done) => panic!("input asked for first, not {done:?}"),
    }
}

/// The result of an answer that completes.
fn completed<R>(answer: ResultOrInputRequired<R>) -> R {
    match answer {
        ResultOrInputRequired::Complete(done) => done,
        ResultOrInputRequired::InputRequired(input) => panic!("a result, not {input:?}"),
    }
}

/// Answers every input request through the session's callbacks, by hand.
async fn answer_by_hand(
    session: &ClientSession,
    requests: Vec<(String, InputRequest)>,
) -> InputResponses {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let response = session
            .dispatch_input_request(key.clone(), request)
            .await
            .expect("the elicitation callback answers");
        responses.insert(key, response);
    }
    responses
}

#[tokio::test]
async fn manual_rounds_on_a_read_and_a_prompt_return_the_input_request_when_allowed() {
    let server = server();
    let stateless = client(&server, Negotiation::StatelessOnly, Arc::default()).await;

    let mut read = ReadResourceRequestParams::new("notes://greeting");
    let (requests, state) = asked(
        stateless
            .read_resource_once(&read, RequestOptions::new())
            .await
            .expect("answered"),
    );
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].1.method(), "elicitation/create");
    read.input_responses = Some(answer_by_hand(&stateless, requests).await);
    read.request_state = state;
    let done = completed(
        stateless
            .read_resource_once(&read, RequestOptions::new())
            .await
            .expect("answered"),
    );
    assert_eq!(text_of(&done.contents), "notes://greeting for Ada");

    let mut get = GetPromptRequestParams::new("welcome");
    let (requests, state) = asked(
        stateless
            .get_prompt_once(&get, RequestOptions::new())
            .await
            .expect("answered"),
    );
    get.input_responses = Some(answer_by_hand(&stateless, requests).await);
    get.request_state = state;
    let done = completed(
        stateless
            .get_prompt_once(&get, RequestOptions::new())
            .await
            .expect("answered"),
    );
    assert_eq!(done.messages[0].content.as_text(), Some("welcome, Ada"));
    stateless.close().await.expect("closed");

    // The handshake era has no input rounds: the server asks with requests
    // of its own, which the callbacks answer, and the result comes at once.
    let handshake = client(&server, Negotiation::HandshakeOnly, Arc::default()).await;
    let read = handshake
        .read_resource_once(
            &ReadResourceRequestParams::new("notes://greeting"),
            RequestOptions::new(),
        )
        .await
        .expect("answered");
    assert_eq!(
        text_of(&completed(read).contents),
        "notes://greeting for Ada"
    );
    let got = handshake
        .get_prompt_once(
            &GetPromptRequestParams::new("welcome"),
            RequestOptions::new(),
        )
        .await
        .expect("answered");
    assert_eq!(
        completed(got).messages[0].content.as_text(),
        Some("welcome, Ada")
    );
    handshake.close().await.expect("closed");
}

#[tokio::test]
async fn per_call_meta_reaches_the_handler_in_either_era() {
    let server = server();
    for era in ERAS {
        let client = client(&server, era, Arc::default()).await;
        let options = || {
            RequestOptions::new()
                .with_meta(RequestMeta::new().with_extra("com.example/tenant", "acme"))
        };
        let called = client
            .call_tool_with("tenant", (), options())
            .await
            .expect("called");
        assert_eq!(called.content[0].as_text(), Some("acme"), "{era:?}");
        let plain = client.call_tool("tenant", ()).await.expect("called");
        assert_eq!(plain.content[0].as_text(), Some("none"), "{era:?}");
        let read = client
            .read_resource_with("notes://tenant", options())
            .await
            .expect("read");
        assert_eq!(text_of(&read.contents), "acme", "{era:?}");
        // The other typed calls take it too (`ping` is the handshake era's).
        if era == Negotiation::HandshakeOnly {
            client.send_ping_with(options()).await.expect("pinged");
        }
        let tools = client
            .list_tools_with(None, options())
            .await
            .expect("listed");
        assert!(!tools.tools.is_empty());
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn adopting_an_initialize_result_and_refusing_a_discover_result_with_no_mutual_revision() {
    let server = server();
    let first = client(&server, Negotiation::HandshakeOnly, Arc::default()).await;
    let initialized = first.initialize_result().expect("initialized").clone();
    first.close().await.expect("closed");

    // A session adopts what an earlier connection settled, sending nothing:
    // initialize then answers with the adopted result.
    let session = ClientSession::new(server.in_memory(), ClientConfig::new("parity-test", "1"));
    let revision = session.adopt(initialized.clone()).expect("adopted");
    assert_eq!(revision, Revision::V2025_11_25);
    assert!(!session.is_stateless());
    assert_eq!(session.protocol_version(), Revision::V2025_11_25);
    assert_eq!(session.server_info().expect("named").name, "parity");
    let again = session.initialize().await.expect("cached");
    assert_eq!(*again, initialized);

    // A discover result naming no revision this client speaks is refused,
    // and the session keeps what it had.
    let mut alien = DiscoverResult::new(vec!["2099-01-01".into()], ServerCapabilities::new());
    let refused = session
        .adopt(alien.clone())
        .expect_err("no mutual revision");
    assert!(
        matches!(refused, Error::NoMutualRevision { ref offered, .. } if offered == &["2099-01-01"]),
        "{refused}"
    );
    assert!(!session.is_stateless());
    assert!(session.initialize_result().is_some());

    // With one in common, the newest mutual revision is spoken, and the
    // initialize result is dropped (one era at a time).
    alien.supported_versions.push("2026-07-28".into());
    let revision = session.adopt(alien).expect("adopted");
    assert_eq!(revision, Revision::V2026_07_28);
    assert!(session.is_stateless());
    assert!(session.initialize_result().is_none());
    assert!(matches!(
        session.negotiate().await,
        Ok(Negotiated::Stateless(_))
    ));
    session.close().await;
}

#[tokio::test]
async fn send_discover_probes_once_and_adopts_nothing() {
    let server = server();
    let session = ClientSession::new(server.in_memory(), ClientConfig::new("parity-test", "1"));
    let discovered = session
        .send_discover(Revision::V2026_07_28)
        .await
        .expect("discovered");
    assert!(
        discovered
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
    assert!(!session.is_stateless(), "nothing adopted");
    assert!(session.discover_result().is_none());
    let refused = session
        .send_discover(Revision::V2025_11_25)
        .await
        .expect_err("no discover in the handshake era");
    assert!(matches!(refused, Error::NotInThisEra { .. }), "{refused}");
    let revision = session.adopt(discovered).expect("adopted");
    assert_eq!(revision, Revision::V2026_07_28);
    let called = session.call_tool("tenant", ()).await.expect("called");
    assert_eq!(called.content[0].as_text(), Some("none"));
    session.close().await;
}

#[tokio::test]
async fn a_callback_reads_the_request_meta_and_calls_back_through_its_session() {
    let server = server();
    // Handshake era: the server's request carries its own `_meta`.
    let sampled = Arc::new(AtomicUsize::new(0));
    let handshake = client(&server, Negotiation::HandshakeOnly, sampled.clone()).await;
    let tool_count = handshake.list_all_tools().await.expect("listed").len();
    let result = handshake.call_tool("sample", ()).await.expect("called");
    assert_eq!(
        result.content[0].as_text(),
        Some(format!("tenant acme, {tool_count} tools").as_str())
    );
    assert_eq!(sampled.load(Ordering::SeqCst), 1);
    handshake.close().await.expect("closed");

    // Stateless era: the input request carries the same `_meta`, and the
    // callback runs inside the call, with the session to call back through.
    let sampled = Arc::new(AtomicUsize::new(0));
    let stateless = client(&server, Negotiation::StatelessOnly, sampled.clone()).await;
    let result = stateless.call_tool("sample", ()).await.expect("called");
    assert_eq!(
        result.content[0].as_text(),
        Some(format!("tenant acme, {tool_count} tools").as_str())
    );
    assert_eq!(sampled.load(Ordering::SeqCst), 1);
    stateless.close().await.expect("closed");
}

#[tokio::test]
async fn a_sampling_request_with_an_unanswered_tool_use_is_refused_before_it_is_sent() {
    let server = server();
    for era in ERAS {
        let sampled = Arc::new(AtomicUsize::new(0));
        let client = client(&server, era, sampled.clone()).await;
        let result = client.call_tool("unpaired", ()).await.expect("called");
        let text = result.content[0].as_text().expect("text");
        assert!(
            text.starts_with("refused: the sampling request was not sent")
                && text.contains("unanswered: [\"call-1\"]"),
            "{era:?}: {text}"
        );
        assert_eq!(
            sampled.load(Ordering::SeqCst),
            0,
            "{era:?}: the client was never asked"
        );
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn a_url_elicitation_required_error_is_read_in_either_era() {
    let server = server();
    for era in ERAS {
        let client = client(&server, era, Arc::default()).await;
        let error = client.call_tool("sign_in", ()).await.expect_err("-32042");
        let required = error.url_elicitation_required().expect("the elicitations");
        assert_eq!(required.elicitations.len(), 1, "{era:?}");
        assert_eq!(
            required.elicitations[0].url,
            "https://example.invalid/sign-in"
        );
        let other = client
            .call_tool("no-such-tool", ())
            .await
            .expect_err("unknown");
        assert!(other.url_elicitation_required().is_none());
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn a_structured_result_reads_as_its_type() {
    let server = server();
    for era in ERAS {
        let client = client(&server, era, Arc::default()).await;
        client.list_all_tools().await.expect("listed");
        let result = client.call_tool("weather", ()).await.expect("called");
        let weather: Weather = result.structured_as().expect("structured");
        assert_eq!(
            weather,
            Weather {
                city: "Paris".into(),
                celsius: 21.5
            },
            "{era:?}"
        );
        let plain = client.call_tool("tenant", ()).await.expect("called");
        assert!(plain.structured_as::<Weather>().is_err());
        client.close().await.expect("closed");
    }
}

#[test]
fn an_accepted_elicitation_is_built_from_any_serialize_value() {
    #[derive(serde::Serialize)]
    struct Contact {
        name: String,
        age: i64,
        tags: Vec<String>,
        nickname: Option<String>,
    }
    let answer = ElicitResult::accept_from(&Contact {
        name: "Ada".into(),
        age: 36,
        tags: vec!["math".into()],
        nickname: None,
    })
    .expect("a flat form");
    let content: BTreeMap<_, _> = answer.content.expect("content");
    assert_eq!(content.len(), 3, "the None field is left out");
    assert!(ElicitResult::accept_from(&json!({"nested": {"no": 1}})).is_err());
    assert!(ElicitResult::accept_from(&"not an object").is_err());
}
