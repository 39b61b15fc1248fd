//! Asking the client from a handler, one way in either era: form and URL
//! elicitation (accept, decline, cancel), sampling with tools, and roots, in
//! the handshake era (server-to-client requests) and the stateless era
//! (input-required results and retries), in memory, over the stdio framing
//! (newline-delimited JSON on a socket pair) and over HTTP. Each question
//! reaches the client once, however many rounds a call takes. (The demo
//! server's `sample` and `ask_name` run over a real child process's stdio in
//! `examples/tests/stdio.rs`.)

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::{Client, ClientConfig, Negotiation};
use mcp_server::{Context, Elicitation, Server, State, ToolError};
use mcp_transport::http::HttpServerConfig;
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ElicitValue, ListRootsResult, Revision, Root, SamplingMessage,
    SamplingMessageContentBlock, Tool,
};
use serde_json::json;
use tokio::net::TcpListener;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Age {
    age: u32,
}

/// How many times each tool's handler ran, to show stateless re-runs.
#[derive(Default)]
struct Runs(Mutex<BTreeMap<&'static str, usize>>);

impl Runs {
    fn count(&self, tool: &'static str) {
        *self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(tool)
            .or_default() += 1;
    }
    fn of(&self, tool: &'static str) -> usize {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tool)
            .copied()
            .unwrap_or(0)
    }
}

async fn name(State(runs): State<Arc<Runs>>, cx: Context) -> Result<String, ToolError> {
    runs.count("name");
    Ok(match cx.elicit::<Name>("What is your name?").await? {
        Elicitation::Accepted(Name { name }) => format!("hi {name}"),
        Elicitation::Declined => "declined".to_owned(),
        Elicitation::Cancelled => "cancelled".to_owned(),
    })
}

async fn two(State(runs): State<Arc<Runs>>, cx: Context) -> Result<String, ToolError> {
    runs.count("two");
    let Elicitation::Accepted(Name { name }) = cx.elicit::<Name>("Name?").await? else {
        return Ok("no name".to_owned());
    };
    let Elicitation::Accepted(Age { age }) = cx.elicit::<Age>("Age?").await? else {
        return Ok("no age".to_owned());
    };
    Ok(format!("{name} is {age}"))
}

async fn login(cx: Context) -> Result<String, ToolError> {
    let answer = cx
        .elicit_url("Sign in", "https://example.invalid/login", "login-1")
        .await?;
    Ok(format!("{:?}", answer.action))
}

async fn think(State(runs): State<Arc<Runs>>, cx: Context) -> Result<String, ToolError> {
    runs.count("think");
    let mut params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("weather?")], 50);
    params.tools = Some(vec![Tool::new(
        "get_weather",
        json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )]);
    let result = cx.create_message(&params).await?;
    Ok(result
        .content
        .blocks()
        .iter()
        .find_map(|b| b.as_text())
        .unwrap_or_default()
        .to_owned())
}

async fn roots(State(runs): State<Arc<Runs>>, cx: Context) -> Result<String, ToolError> {
    runs.count("roots");
    let roots = cx.list_roots().await?;
    Ok(roots
        .roots
        .iter()
        .map(|r| r.uri.clone())
        .collect::<Vec<_>>()
        .join(","))
}

fn server(runs: Arc<Runs>) -> Server {
    Server::builder("asker", "1.0.0")
        .with_state(runs)
        .tool("name", "Asks the user's name", name)
        .tool("two", "Asks two questions in turn", two)
        .tool("login", "Asks the user to sign in", login)
        .tool("think", "Samples with a tool", think)
        .tool("roots", "Lists the client's roots", roots)
        .build()
        .expect("server")
}

/// What the host was asked, by message.
#[derive(Default)]
struct Asked(Mutex<Vec<String>>);

impl Asked {
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A host that answers by the message: names "Ada", age 36; "decline" and
/// "cancel" in `reply` choose the action for the name form.
fn host(era: Revision, reply: ElicitAction, asked: Arc<Asked>) -> ClientConfig {
    let (a1, a2, a3) = (asked.clone(), asked.clone(), asked);
    let negotiation = if era.is_stateless() {
        Negotiation::StatelessOnly
    } else {
        Negotiation::HandshakeOnly
    };
    ClientConfig::new("host", "1")
        .protocol_version(era)
        .negotiation(negotiation)
        .on_elicitation(move |params, _| {
            let asked = a1.clone();
            async move {
                let message = match &params {
                    ElicitRequestParams::Form(form) => form.message.clone(),
                    ElicitRequestParams::Url(url) => format!("url:{}", url.url),
                    _ => "other".to_owned(),
                };
                asked
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(message.clone());
                let content = match message.as_str() {
                    "Age?" => BTreeMap::from([("age".to_owned(), ElicitValue::Integer(36))]),
                    _ => BTreeMap::from([("name".to_owned(), ElicitValue::String("Ada".into()))]),
                };
                Ok(match (reply, &params) {
                    (action, ElicitRequestParams::Url(_)) => ElicitResult::new(action),
                    (ElicitAction::Accept, _) => ElicitResult::accept(content),
                    (action, _) => ElicitResult::new(action),
                })
            }
        })
        .on_sampling(move |params, _| {
            let asked = a2.clone();
            async move {
                asked
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push("sampling".into());
                let tools = params.tools.as_ref().map_or(0, Vec::len);
                Ok(CreateMessageResult::new(
                    SamplingMessageContentBlock::text(format!("sampled with {tools} tool(s)")),
                    "test-model",
                ))
            }
        })
        .sampling_tools(true)
        .on_list_roots(move |_| {
            let asked = a3.clone();
            async move {
                asked
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push("roots".into());
                Ok(ListRootsResult::new(vec![Root::new("file:///work")]))
            }
        })
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result.content[0].as_text().expect("text").to_owned()
}

/// Where the server runs.
#[derive(Clone, Copy, Debug)]
enum Via {
    Memory,
    Stdio,
    Http,
}

/// What keeps a server running for one test: dropped at its end.
#[allow(dead_code)]
enum Keep {
    Nothing,
    Connection(mcp_server::ServerConnection),
    Http(tokio::sync::oneshot::Sender<()>),
}

async fn connect(server: &Server, via: Via, config: ClientConfig) -> (Client, Keep) {
    match via {
        Via::Memory => (
            Client::connect(server.in_memory(), config)
                .await
                .expect("connected"),
            Keep::Nothing,
        ),
        Via::Stdio => {
            // The stdio transport's framing over a socket pair.
            let (ours, theirs) = tokio::net::UnixStream::pair().expect("socket pair");
            let (their_read, their_write) = theirs.into_split();
            let connection =
                server.serve(mcp_transport::LineTransport::new(their_read, their_write));
            let (our_read, our_write) = ours.into_split();
            let transport = mcp_transport::LineTransport::new(our_read, our_write);
            let client = Client::connect(transport, config).await.expect("connected");
            (client, Keep::Connection(connection))
        }
        Via::Http => {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
            let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let served = server.clone();
            tokio::spawn(async move {
                let _ = served
                    .serve_http(listener, HttpServerConfig::new(), async {
                        let _ = stopped.await;
                    })
                    .await;
            });
            let client = Client::connect_http(&url, config).await.expect("connected");
            (client, Keep::Http(stop))
        }
    }
}

const ERAS: [Revision; 2] = [Revision::V2025_11_25, Revision::V2026_07_28];
const VIAS: [Via; 3] = [Via::Memory, Via::Stdio, Via::Http];

#[tokio::test]
async fn forms_and_urls_are_accepted_declined_or_cancelled_in_either_era() {
    for era in ERAS {
        for via in VIAS {
            for (reply, expected) in [
                (ElicitAction::Accept, "hi Ada"),
                (ElicitAction::Decline, "declined"),
                (ElicitAction::Cancel, "cancelled"),
            ] {
                let runs = Arc::new(Runs::default());
                let asked = Arc::new(Asked::default());
                let server = server(runs.clone());
                let (client, stop) = connect(&server, via, host(era, reply, asked.clone())).await;
                assert_eq!(client.protocol_version(), era);
                let result = client.call_tool("name", json!({})).await.expect("called");
                assert_eq!(text(&result), expected, "{era} {via:?} {reply:?}");
                assert_eq!(asked.all(), vec!["What is your name?"], "asked once");
                let login = client.call_tool("login", json!({})).await.expect("login");
                assert_eq!(
                    text(&login),
                    format!("{reply:?}"),
                    "{era} {via:?}: URL mode"
                );
                let expected_runs = if era.is_stateless() { 2 } else { 1 };
                assert_eq!(runs.of("name"), expected_runs, "{era}: runs of the handler");
                client.close().await.expect("closed");
                drop(stop);
            }
        }
    }
}

#[tokio::test]
async fn each_question_is_asked_once_across_rounds() {
    for era in ERAS {
        for via in VIAS {
            let runs = Arc::new(Runs::default());
            let asked = Arc::new(Asked::default());
            let server = server(runs.clone());
            let (client, stop) =
                connect(&server, via, host(era, ElicitAction::Accept, asked.clone())).await;
            let result = client.call_tool("two", json!({})).await.expect("called");
            assert_eq!(text(&result), "Ada is 36", "{era} {via:?}");
            assert_eq!(
                asked.all(),
                vec!["Name?", "Age?"],
                "{era} {via:?}: each asked once"
            );
            // Stateless: a run per unanswered question plus the final one.
            let expected_runs = if era.is_stateless() { 3 } else { 1 };
            assert_eq!(runs.of("two"), expected_runs, "{era} {via:?}");
            client.close().await.expect("closed");
            drop(stop);
        }
    }
}

#[tokio::test]
async fn url_elicitation_sampling_with_tools_and_roots_work_in_either_era() {
    for era in ERAS {
        for via in VIAS {
            let runs = Arc::new(Runs::default());
            let asked = Arc::new(Asked::default());
            let server = server(runs.clone());
            let (client, stop) =
                connect(&server, via, host(era, ElicitAction::Accept, asked.clone())).await;
            let login = client.call_tool("login", json!({})).await.expect("login");
            assert_eq!(text(&login), "Accept", "{era} {via:?}");
            let sampled = client.call_tool("think", json!({})).await.expect("think");
            assert_eq!(text(&sampled), "sampled with 1 tool(s)", "{era} {via:?}");
            let roots = client.call_tool("roots", json!({})).await.expect("roots");
            assert_eq!(text(&roots), "file:///work", "{era} {via:?}");
            assert_eq!(
                asked.all(),
                vec!["url:https://example.invalid/login", "sampling", "roots"],
                "{era} {via:?}: each asked once"
            );
            client.close().await.expect("closed");
            drop(stop);
        }
    }
}

#[tokio::test]
async fn an_ask_the_client_cannot_answer_is_refused_with_its_capability() {
    let runs = Arc::new(Runs::default());
    let server = server(runs);
    for era in ERAS {
        let negotiation = if era.is_stateless() {
            Negotiation::StatelessOnly
        } else {
            Negotiation::HandshakeOnly
        };
        let config = ClientConfig::new("bare", "1")
            .protocol_version(era)
            .negotiation(negotiation);
        let client = Client::connect(server.in_memory(), config)
            .await
            .expect("connected");
        let outcome = client.call_tool("roots", json!({})).await;
        if era.is_stateless() {
            // The request itself cannot be served: -32021 names what it needs.
            let error = outcome.expect_err("refused");
            let remote = error.remote().expect("the server's error");
            assert_eq!(
                remote.code,
                mcp_types::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            );
            assert_eq!(
                remote.data.as_ref().expect("data")["requiredCapabilities"],
                json!({"roots": {}})
            );
        } else {
            // The session's client declared no roots: a tool error the model reads.
            let result = outcome.expect("a tool result");
            assert_eq!(result.is_error, Some(true));
            assert!(text(&result).contains("`roots`"), "{}", text(&result));
        }
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn a_handshake_era_input_required_is_fulfilled_with_requests() {
    async fn ask(State(calls): State<Arc<AtomicUsize>>, cx: Context) -> mcp_server::Answer<String> {
        calls.fetch_add(1, Ordering::SeqCst);
        if let Some(mcp_types::InputResponse::ListRoots(roots)) = cx.input_response("r") {
            return mcp_server::Answer::Complete(format!("{} root(s)", roots.roots.len()));
        }
        mcp_server::Answer::InputRequired(mcp_server::InputRequired::new().list_roots("r"))
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("explicit", "1")
        .with_state(calls.clone())
        .tool("ask", "Asks with an explicit InputRequired", ask)
        .build()
        .expect("server");
    let asked = Arc::new(Asked::default());
    let client = Client::connect(
        server.in_memory(),
        host(Revision::V2025_11_25, ElicitAction::Accept, asked.clone()),
    )
    .await
    .expect("connected");
    let result = client.call_tool("ask", json!({})).await.expect("called");
    assert_eq!(text(&result), "1 root(s)");
    assert_eq!(asked.all(), vec!["roots"]);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "ran again with the answer");
    client.close().await.expect("closed");
}
