//! The stateless era (2026-07-28) end to end: both eras on one HTTP
//! endpoint, discover and its fallback, Multi Round-Trip Requests over
//! several rounds, sealed request state, and the HTTP validation ladder.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, ClientSession, Negotiated, RequestOptions};
use mcp_core::MemoryTransport;
use mcp_server::{Answer, Args, Context, InputRequired, Server, ToolError};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{
    CallToolRequestParams, ElicitAction, ElicitRequestParams, ElicitRequestedSchema, ElicitResult,
    ElicitValue, ErrorCode, ErrorObject, InputResponse, LoggingLevel, ResultOrInputRequired,
    Revision,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Arguments of the `log` tool: a tag to log, so a test can tell calls apart.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LogArgs {
    tag: Option<String>,
}

fn name_form() -> ElicitRequestedSchema {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    }))
    .expect("schema")
}

fn answered_name(cx: &Context, key: &str) -> Option<String> {
    match cx.input_response(key) {
        Some(InputResponse::Elicit(r)) if r.action == ElicitAction::Accept => {
            match r.content.as_ref()?.get("name")? {
                ElicitValue::String(name) => Some(name.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn server() -> Server {
    Server::builder("stateless-test", "2")
        .request_state_key(b"a key every instance shares".to_vec())
        .tool("echo", "Echoes", |cx: Context| async move {
            format!("stateless={}", cx.is_stateless())
        })
        .tool(
            "greet",
            "Asks for a name, then greets",
            |cx: Context| async move {
                match answered_name(&cx, "who") {
                    Some(name) => Answer::Complete(format!("hello {name}")),
                    None => Answer::InputRequired(
                        InputRequired::new()
                            .elicit_form("who", "Who are you?", name_form())
                            .state("asked-once"),
                    ),
                }
            },
        )
        .tool(
            "three_rounds",
            "Asks three times",
            |cx: Context| async move {
                let round: u32 = cx.request_state().and_then(|s| s.parse().ok()).unwrap_or(0);
                let answered = answered_name(&cx, &format!("step{round}")).is_some();
                if round == 3 && answered {
                    return Answer::Complete("all three answered".to_owned());
                }
                let next = if answered || round == 0 {
                    round + 1
                } else {
                    round
                };
                Answer::InputRequired(
                    InputRequired::new()
                        .elicit_form(format!("step{next}"), format!("Step {next}"), name_form())
                        .state(next.to_string()),
                )
            },
        )
        .tool_raw(
            {
                let schema = json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}
                }});
                mcp_types::Tool::new("regional", schema.as_object().cloned().unwrap_or_default())
            },
            |Args(arguments): Args<mcp_types::JsonObject>| async move {
                let region = arguments.get("region").and_then(Value::as_str);
                format!("region={}", region.unwrap_or_default())
            },
        )
        .tool("log", "Logs its tag (or \"info line\") at info", log)
        .tool("sample", "Tries a server request", sample)
        .build()
        .expect("server")
}

async fn log(Args(args): Args<LogArgs>, cx: Context) -> Result<&'static str, ToolError> {
    let line = args.tag.unwrap_or_else(|| "info line".into());
    cx.log(LoggingLevel::Info, line).await?;
    Ok("logged")
}

async fn sample(cx: Context) -> Result<&'static str, ToolError> {
    let params = mcp_types::CreateMessageRequestParams::new(
        vec![mcp_types::SamplingMessage::user_text("hi")],
        5,
    );
    cx.create_message(&params).await?;
    Ok("sampled")
}

fn config() -> ClientConfig {
    ClientConfig::new("stateless-client", "1").on_elicitation(|params, _| async move {
        let ElicitRequestParams::Form(_) = params else {
            return Ok(ElicitResult::new(ElicitAction::Decline));
        };
        Ok(ElicitResult::accept(BTreeMap::from([(
            "name".to_owned(),
            ElicitValue::String("Ada".into()),
        )])))
    })
}

struct Running {
    url: String,
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
}

async fn start() -> Running {
    start_with(server()).await
}

async fn start_with(server: Server) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http(listener, HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await;
    });
    Running {
        url: format!("http://{addr}/mcp"),
        addr,
        stop,
    }
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    result.content[0].as_text().expect("text")
}

#[tokio::test]
async fn one_endpoint_serves_both_eras() {
    let running = start().await;
    let modern = Client::connect_http(&running.url, config())
        .await
        .expect("stateless");
    assert!(matches!(modern.negotiated(), Negotiated::Stateless(_)));
    assert_eq!(modern.protocol_version(), Revision::V2026_07_28);
    let discovered = modern.discover_result().expect("discover");
    assert!(
        discovered
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
    assert!(
        discovered
            .supported_versions
            .iter()
            .any(|v| v == "2025-11-25")
    );
    assert_eq!(
        modern.server_info().expect("serverInfo").name,
        "stateless-test"
    );

    let legacy = Client::connect_http(
        &running.url,
        config().protocol_version(Revision::V2025_11_25),
    )
    .await
    .expect("handshake");
    assert!(matches!(legacy.negotiated(), Negotiated::Handshake(_)));

    // The client mirrors annotated arguments into Mcp-Param-* itself.
    modern.list_all_tools().await.expect("listed");
    let regional = modern
        .call_tool("regional", json!({"region": " spaced "}))
        .await
        .expect("headers mirrored");
    assert_eq!(text(&regional), "region= spaced ");
    let a = modern
        .call_tool("echo", json!({}))
        .await
        .expect("modern call");
    let b = legacy
        .call_tool("echo", json!({}))
        .await
        .expect("legacy call");
    assert_eq!(text(&a), "stateless=true");
    assert_eq!(text(&b), "stateless=false");

    // Without the capability on the request: -32021 naming it.
    let missing = modern
        .call_tool("sample", json!({}))
        .await
        .expect_err("-32021");
    let remote = missing.remote().expect("remote");
    assert_eq!(remote.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    assert_eq!(
        remote.data.as_ref().expect("data")["requiredCapabilities"],
        json!({"sampling": {}})
    );
    modern.close().await.expect("closed");

    // With it, the same handler code asks in either era: statelessly the
    // ask travels in an input-required result and the call is retried.
    let sampling = config().on_sampling(|_, _| async move {
        Ok(mcp_types::CreateMessageResult::new(
            mcp_types::SamplingMessageContentBlock::text("x"),
            "m",
        ))
    });
    let capable = Client::connect_http(&running.url, sampling)
        .await
        .expect("stateless");
    let sampled = capable
        .call_tool("sample", json!({}))
        .await
        .expect("a result");
    assert_eq!(sampled.is_error, None, "{}", text(&sampled));
    assert_eq!(text(&sampled), "sampled");
    capable.close().await.expect("closed");
    legacy.close().await.expect("closed");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn input_requests_are_answered_over_several_rounds() {
    let running = start().await;
    let client = Client::connect_http(&running.url, config())
        .await
        .expect("connected");
    let greeted = client.call_tool("greet", json!({})).await.expect("greeted");
    assert_eq!(text(&greeted), "hello Ada");
    let three = client
        .call_tool("three_rounds", json!({}))
        .await
        .expect("three rounds");
    assert_eq!(text(&three), "all three answered");
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn a_tampered_request_state_is_refused_before_the_handler_runs() {
    let running = start().await;
    let client = Client::connect_http(&running.url, config())
        .await
        .expect("connected");
    let params = CallToolRequestParams::new("greet");
    let first = client
        .call_tool_once(&params, RequestOptions::new())
        .await
        .expect("first round");
    let ResultOrInputRequired::InputRequired(input) = first else {
        panic!("input expected");
    };
    let sealed = input.request_state.expect("state");
    assert!(
        !sealed.contains("asked-once"),
        "the state is sealed, not sent in clear: {sealed}"
    );

    let mut retry = CallToolRequestParams::new("greet");
    retry.request_state = Some(format!("{sealed}-TAMPERED"));
    let error = client
        .call_tool_once(&retry, RequestOptions::new())
        .await
        .expect_err("refused");
    assert_eq!(
        error.remote().expect("remote").code,
        ErrorCode::INVALID_PARAMS
    );

    // State sealed for one tool does not open on another.
    let mut elsewhere = CallToolRequestParams::new("three_rounds");
    elsewhere.request_state = Some(sealed);
    let error = client
        .call_tool_once(&elsewhere, RequestOptions::new())
        .await
        .expect_err("refused");
    assert_eq!(
        error.remote().expect("remote").code,
        ErrorCode::INVALID_PARAMS
    );
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn stateless_log_messages_follow_the_requests_log_level() {
    let running = start().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::connect_http(
        &running.url,
        config().on_logging(move |m| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((m.level, m.data));
            }
        }),
    )
    .await
    .expect("connected");
    let refused = client
        .set_logging_level(LoggingLevel::Debug)
        .await
        .expect_err("no logging/setLevel at 2026-07-28");
    assert!(
        matches!(refused, mcp_client::Error::NotInThisEra { .. }),
        "{refused}"
    );
    // Calls a and c carry no level, b and d ask for debug and above.
    let debug = || RequestOptions::new().with_log_level(LoggingLevel::Debug);
    for (tag, options) in [
        ("a", RequestOptions::new()),
        ("b", debug()),
        ("c", RequestOptions::new()),
        ("d", debug()),
    ] {
        client
            .call_tool_with("log", json!({ "tag": tag }), options)
            .await
            .expect("called");
    }
    // Log messages reach the callback in order, so once d's has arrived,
    // anything a or c had sent would be in the channel before it.
    let mut seen = Vec::new();
    while seen
        .last()
        .map(|(_, data): &(LoggingLevel, serde_json::Value)| data.clone())
        != Some(json!("d"))
    {
        let message = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("d's log message in time")
            .expect("a log message");
        seen.push(message);
    }
    assert_eq!(
        seen,
        vec![
            (LoggingLevel::Info, json!("b")),
            (LoggingLevel::Info, json!("d"))
        ],
        "only the calls that asked for a level get log messages"
    );
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

/// A handshake-era-only peer: `initialize` works, `server/discover` does not.
struct OldServer;

impl mcp_core::Handler for OldServer {
    async fn handle_request(
        &self,
        request: mcp_core::IncomingRequest,
        _: mcp_core::RequestContext,
    ) -> Result<mcp_types::RawJson, ErrorObject> {
        match request.method.as_str() {
            "initialize" => Ok(mcp_types::RawJson::from_serialize(&json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"}
            }))
            .expect("json")),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(
        &self,
        _: mcp_core::IncomingNotification,
        _: mcp_core::NotificationContext,
    ) {
    }
}

#[tokio::test]
async fn discover_falls_back_to_initialize_with_an_older_server() {
    let (ours, theirs) = MemoryTransport::pair(16);
    let _old = mcp_core::Connection::start(theirs, OldServer, Default::default());
    let session = ClientSession::new(ours, config());
    match session.negotiate().await.expect("negotiated") {
        Negotiated::Handshake(init) => assert_eq!(init.protocol_version, "2025-06-18"),
        Negotiated::Stateless(_) => panic!("the old server cannot discover"),
    }
    assert!(!session.is_stateless());
    session.close().await;
}

#[tokio::test]
async fn an_adopted_discover_result_skips_the_probe() {
    let server = server();
    let (ours, theirs) = MemoryTransport::pair(16);
    let _connection = server.serve(theirs);
    let first = Client::connect(server.in_memory(), config())
        .await
        .expect("connected");
    let known = first.discover_result().expect("discovered").clone();
    first.close().await.expect("closed");

    let session = ClientSession::new(ours, config());
    let revision = session.adopt(known).expect("a revision both speak");
    assert_eq!(revision, Revision::V2026_07_28);
    assert!(session.is_stateless());
    let result = session.call_tool("echo", json!({})).await.expect("called");
    assert_eq!(text(&result), "stateless=true");
    session.close().await;
}

#[tokio::test]
async fn stateless_requests_work_in_memory_too() {
    let server = server();
    let client = Client::connect(server.in_memory(), config())
        .await
        .expect("connected");
    assert!(matches!(client.negotiated(), Negotiated::Stateless(_)));
    let greeted = client.call_tool("greet", json!({})).await.expect("greeted");
    assert_eq!(text(&greeted), "hello Ada");
    client.close().await.expect("closed");
}

async fn raw(addr: std::net::SocketAddr, headers: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connected");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let json = response
        .split("\r\n\r\n")
        .nth(1)
        .and_then(|b| {
            // Chunked bodies: the JSON is on its own line.
            b.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(Value::is_object)
        })
        .unwrap_or(Value::Null);
    (status, json)
}

fn call(name: &str, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": name,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
}

#[tokio::test]
async fn the_http_validation_ladder_refuses_mismatched_requests() {
    let running = start().await;
    let good = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n";
    let (status, body) = raw(running.addr, good, &call("echo", "2026-07-28")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");

    let wrong_name = good.replace("Mcp-Name: echo", "Mcp-Name: other");
    let (status, body) = raw(running.addr, &wrong_name, &call("echo", "2026-07-28")).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{body}"
    );
    assert_eq!(body["id"], 7, "errors echo the request id");

    let (status, body) = raw(running.addr, good, &call("echo", "v999.0.0")).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{body}"
    );

    let v999 = good.replace("2026-07-28", "v999.0.0");
    let (status, body) = raw(running.addr, &v999, &call("echo", "v999.0.0")).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32022)),
        "{body}"
    );
    assert_eq!(body["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(body["error"]["data"]["supported"], json!(["2026-07-28"]));

    let mut no_meta = call("echo", "2026-07-28");
    no_meta["params"]["_meta"] = json!({});
    let (status, body) = raw(running.addr, good, &no_meta).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "{body}"
    );

    // SEP-2243: an x-mcp-header argument must travel as Mcp-Param-* too.
    let mut regional = call("regional", "2026-07-28");
    regional["params"]["arguments"] = json!({"region": "日本"});
    let headers =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: regional\r\n";
    let (status, body) = raw(running.addr, headers, &regional).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{body}"
    );
    let with_param = format!("{headers}Mcp-Param-Region: =?base64?5pel5pys?=\r\n");
    let (status, body) = raw(running.addr, &with_param, &regional).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "region=日本");
    let wrong = format!("{headers}Mcp-Param-Region: eu\r\n");
    let (status, body) = raw(running.addr, &wrong, &regional).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{body}"
    );

    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
    let (status, body) = raw(
        running.addr,
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: ping\r\n",
        &ping,
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (404, Some(-32601)),
        "{body}"
    );
    let _ = running.stop.send(());
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Booking {
    city: String,
    nights: u32,
}

/// Books after one confirmation round; the state names what was confirmed.
fn booking_server(ttl: Duration) -> Server {
    Server::builder("booking", "1")
        .request_state_key(b"a key every instance shares".to_vec())
        .request_state_ttl(ttl)
        .tool(
            "book",
            "Books a stay",
            |Args(b): Args<Booking>, cx: Context| async move {
                match cx.request_state() {
                    Some(state) => Answer::Complete(format!("booked after {state}")),
                    None => Answer::InputRequired(
                        InputRequired::new()
                            .elicit_form("who", "Who travels?", name_form())
                            .state(format!("confirm-{}-{}", b.city, b.nights)),
                    ),
                }
            },
        )
        .build()
        .expect("server")
}

fn booking(city: &str, state: Option<String>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("book");
    params.arguments = json!({"city": city, "nights": 2}).as_object().cloned();
    params.request_state = state;
    params
}

/// The sealed state of `book`'s first round for `city`.
async fn first_round(client: &Client, city: &str) -> String {
    let first = client
        .call_tool_once(&booking(city, None), RequestOptions::new())
        .await
        .expect("first round");
    let ResultOrInputRequired::InputRequired(input) = first else {
        panic!("input expected");
    };
    input.request_state.expect("state")
}

/// Asserts `params` is refused with -32602 naming `why`, without the state.
async fn assert_refused(client: &Client, params: &CallToolRequestParams, why: &str) {
    let error = client
        .call_tool_once(params, RequestOptions::new())
        .await
        .expect_err("refused");
    let error = error.remote().expect("a JSON-RPC error");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains(why), "{}", error.message);
    let state = params.request_state.as_deref().expect("a state");
    assert!(!error.message.contains(state), "the state is not echoed");
}

#[tokio::test]
async fn a_request_state_replayed_with_other_arguments_is_refused() {
    let running = start_with(booking_server(Duration::from_secs(600))).await;
    let client = Client::connect_http(&running.url, config())
        .await
        .expect("connected");
    let sealed = first_round(&client, "Paris").await;

    let rome = booking("Rome", Some(sealed.clone()));
    assert_refused(&client, &rome, "different arguments").await;

    // The same arguments, in another key order, open it.
    let mut same = booking("Paris", Some(sealed));
    same.arguments = json!({"nights": 2, "city": "Paris"}).as_object().cloned();
    let done = client
        .call_tool_once(&same, RequestOptions::new())
        .await
        .expect("retried");
    let ResultOrInputRequired::Complete(done) = done else {
        panic!("complete expected");
    };
    assert_eq!(text(&done), "booked after confirm-Paris-2");
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

#[tokio::test]
async fn a_request_state_past_its_ttl_is_refused() {
    // A zero TTL: every state has expired by the time it comes back.
    let running = start_with(booking_server(Duration::ZERO)).await;
    let client = Client::connect_http(&running.url, config())
        .await
        .expect("connected");
    let sealed = first_round(&client, "Paris").await;
    assert_refused(&client, &booking("Paris", Some(sealed)), "expired").await;
    client.close().await.expect("closed");
    let _ = running.stop.send(());
}

/// Opaque bearer tokens: `<name>-token` is `<name>`.
struct Users;

impl mcp_transport::http::TokenVerifier for Users {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        _resource: &'a str,
    ) -> mcp_transport::http::Verification<'a> {
        Box::pin(async move {
            let user = token.strip_suffix("-token").ok_or_else(|| {
                mcp_transport::http::TokenRejection::Invalid("unknown token".into())
            })?;
            Ok(mcp_transport::http::TokenClaims::new().with_subject(user))
        })
    }
}

#[tokio::test]
async fn a_request_state_issued_to_one_user_is_refused_for_another() {
    use mcp_transport::http::{
        BearerGuard, HttpClientConfig, ProtectedResource, ServeConfig, serve,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let service = BearerGuard::new(
        booking_server(Duration::from_secs(600)).streamable_http_service(HttpServerConfig::new()),
        ProtectedResource::new(url.clone(), "https://as.example.com"),
        std::sync::Arc::new(Users),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(listener, service, ServeConfig::new(), async {
        let _ = stopped.await;
    }));
    let as_user = |user: &str| {
        let http = HttpClientConfig::new()
            .header("authorization", &format!("Bearer {user}-token"))
            .expect("header");
        Client::connect_http_with(&url, http, config())
    };
    let alice = as_user("alice").await.expect("alice connected");
    let bob = as_user("bob").await.expect("bob connected");
    let sealed = first_round(&alice, "Paris").await;

    let replayed = booking("Paris", Some(sealed.clone()));
    assert_refused(&bob, &replayed, "another principal").await;
    let done = alice
        .call_tool_once(&booking("Paris", Some(sealed)), RequestOptions::new())
        .await
        .expect("alice retried");
    assert!(matches!(done, ResultOrInputRequired::Complete(_)));
    alice.close().await.expect("closed");
    bob.close().await.expect("closed");
    let _ = stop.send(());
}
