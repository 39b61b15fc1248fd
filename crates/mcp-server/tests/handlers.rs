//! Handlers as plain async functions taking extractors, served to a real
//! client connection (the in-memory transport) in both eras: what each
//! extractor reads, what each kind answers when it fails, what `build()`
//! refuses, and the `#[tool]` attribute (feature `macros`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_core::{
    CancellationToken, Connection, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, Peer, RequestContext, SendOptions,
};
use mcp_server::types::{
    CompleteReference, CompleteRequestParams, ErrorCode, ErrorObject, RawJson, Resource,
    ResourceTemplate,
};
use mcp_server::{
    Args, Context, Error, Json, Meta, PromptError, ResourceError, Server, State, ToolError, Uri,
    Variables,
};
use serde_json::{Value, json};

/// A client that answers nothing and ignores notifications.
struct Quiet;

impl Handler for Quiet {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Err(ErrorObject::method_not_found(&request.method))
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

/// One client connection to `server` (served in this process, the
/// connection owning it), in the era its requests choose.
struct Client {
    connection: Connection,
}

impl Client {
    fn connect(server: &Server) -> Self {
        Self {
            connection: Connection::start(server.in_memory(), Quiet, Default::default()),
        }
    }

    fn peer(&self) -> &Peer {
        self.connection.peer()
    }

    /// `method` with `params`: the result, or the error it was answered with.
    async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let params = RawJson::from_serialize(&params).expect("params serialize");
        let answer = self
            .peer()
            .request(method, Some(params), SendOptions::new());
        match tokio::time::timeout(Duration::from_secs(10), answer)
            .await
            .expect("answered in time")
        {
            Ok(result) => Ok(result.parse().expect("a JSON result")),
            Err(mcp_core::Error::Remote(error)) => Err(error),
            Err(other) => panic!("{method} failed: {other}"),
        }
    }

    /// The handshake: a 2025-11-25 session.
    async fn initialize(&self) {
        self.initialize_with(json!({})).await;
    }

    /// The handshake, the client declaring `capabilities`.
    async fn initialize_with(&self, capabilities: Value) {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "handlers", "version": "1"},
            }),
        )
        .await
        .expect("initialized");
    }

    /// `method` as a stateless (2026-07-28) request.
    async fn stateless(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        self.request(method, params).await
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// The state handlers share.
struct Calls(AtomicU64);

async fn add(Args(add): Args<Add>) -> Json<Sum> {
    Json(Sum { sum: add.a + add.b })
}

async fn ping() -> &'static str {
    "pong"
}

/// Extractors in any order: the context, the state, the arguments.
async fn count(cx: Context, State(calls): State<Calls>, Args(add): Args<Add>) -> String {
    let before = calls.0.fetch_add(1, Ordering::Relaxed);
    format!("{} {} {}", before, add.a, cx.is_stateless())
}

/// The request's `_meta` and the cancellation token.
async fn trace(Meta(meta): Meta, cancel: CancellationToken) -> String {
    let trace = meta.extra.get("com.example/trace").cloned();
    format!("{trace:?} cancelled={}", cancel.is_cancelled())
}

async fn fails() -> Result<String, std::io::Error> {
    Err(std::io::Error::other("the disk is gone"))
}

async fn note(uri: Uri, Variables(path): Variables<NotePath>) -> Result<String, ResourceError> {
    if path.name == "missing" {
        return Err(ResourceError::not_found(&uri));
    }
    Ok(format!("{} in {}", path.name, path.folder))
}

#[derive(serde::Deserialize)]
struct NotePath {
    folder: String,
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Repeat {
    /// The text to repeat.
    text: String,
    /// How many times (a number, as text).
    times: Option<u32>,
}

async fn repeat(Args(repeat): Args<Repeat>) -> Result<String, PromptError> {
    let times = repeat.times.unwrap_or(1);
    if times > 3 {
        return Err(PromptError::invalid_params("`times` is at most 3"));
    }
    Ok(repeat.text.repeat(times as usize))
}

async fn greeting() -> String {
    "Say hello.".to_owned()
}

async fn complete(params: CompleteRequestParams) -> Vec<String> {
    match params.reference {
        CompleteReference::Prompt(_) => vec![format!("{}1", params.argument.value)],
        _ => Vec::new(),
    }
}

fn server() -> Server {
    Server::builder("handlers", "1")
        .with_state(Calls(AtomicU64::new(0)))
        .tool("add", "Adds", add)
        .tool("ping", "Pongs", ping)
        .tool("count", "Counts", count)
        .tool("trace", "Reads _meta", trace)
        .tool("fails", "Fails", fails)
        .tool("closure", "A closure", |Args(add): Args<Add>| async move {
            (add.a * add.b).to_string()
        })
        .resource(Resource::new("notes://readme", "readme"), || async {
            "read me"
        })
        .resource_template(
            ResourceTemplate::new("notes://{folder}/{name}", "note"),
            note,
        )
        .prompt("repeat", "Repeats", repeat)
        .prompt("greeting", "Greets", greeting)
        .completion(complete)
        .build()
        .expect("a valid server")
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().expect("a text block")
}

#[tokio::test]
async fn tools_take_extractors_in_any_order_in_both_eras() {
    let server = server();
    let client = Client::connect(&server);
    client.initialize().await;
    let added = client
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await
        .expect("added");
    assert_eq!(added["structuredContent"], json!({"sum": 5}));
    let pong = client
        .request("tools/call", json!({"name": "ping"}))
        .await
        .expect("ponged");
    assert_eq!(text(&pong), "pong");
    let counted = client
        .request(
            "tools/call",
            json!({"name": "count", "arguments": {"a": 7, "b": 0}}),
        )
        .await
        .expect("counted");
    assert_eq!(text(&counted), "0 7 false");
    let counted = client
        .stateless(
            "tools/call",
            json!({"name": "count", "arguments": {"a": 8, "b": 0}}),
        )
        .await
        .expect("counted statelessly");
    assert_eq!(text(&counted), "1 8 true");
    let product = client
        .stateless(
            "tools/call",
            json!({"name": "closure", "arguments": {"a": 6, "b": 7}}),
        )
        .await
        .expect("multiplied");
    assert_eq!(text(&product), "42");
}

#[tokio::test]
async fn the_meta_and_cancellation_extractors_read_the_request() {
    let server = server();
    let client = Client::connect(&server);
    client.initialize().await;
    let traced = client
        .request(
            "tools/call",
            json!({"name": "trace", "_meta": {"com.example/trace": "t-1"}}),
        )
        .await
        .expect("traced");
    assert_eq!(text(&traced), r#"Some(String("t-1")) cancelled=false"#);
    let untraced = client
        .request("tools/call", json!({"name": "trace"}))
        .await
        .expect("traced");
    assert_eq!(text(&untraced), "None cancelled=false");
}

/// Where `hold` leaves its request's cancellation token, for the test to
/// watch once the request is gone.
#[derive(Clone, Default)]
struct Held(
    std::sync::Arc<(
        std::sync::Mutex<Option<CancellationToken>>,
        tokio::sync::Notify,
    )>,
);

/// Hands its token on (as a handler does for work on other tasks) and
/// never answers.
async fn hold(State(held): State<Held>, cancel: CancellationToken) -> String {
    *held.0.0.lock().expect("unpoisoned") = Some(cancel);
    held.0.1.notify_one();
    std::future::pending().await
}

/// The token a handler extracts is the request's own: cancelling the
/// request on the wire cancels the token the handler handed on.
#[tokio::test]
async fn the_extracted_token_is_cancelled_with_its_request() {
    let held = Held::default();
    let server = Server::builder("held", "1")
        .with_state(held.clone())
        .tool("hold", "Holds", hold)
        .build()
        .expect("a valid server");
    let client = Client::connect(&server);
    client.initialize().await;
    let params = RawJson::from_serialize(&json!({"name": "hold"})).expect("params");
    let mut call = Box::pin(
        client
            .peer()
            .request("tools/call", Some(params), SendOptions::new()),
    );
    tokio::select! {
        answer = &mut call => panic!("`hold` never answers: {answer:?}"),
        () = held.0.1.notified() => {}
    }
    let token = held
        .0
        .0
        .lock()
        .expect("unpoisoned")
        .clone()
        .expect("handed on");
    assert!(!token.is_cancelled(), "the request is still running");
    // Dropping the call cancels it on the wire.
    drop(call);
    tokio::time::timeout(Duration::from_secs(10), token.cancelled())
        .await
        .expect("the token is cancelled with its request");
}

#[tokio::test]
async fn bad_arguments_and_failures_are_results_the_model_reads() {
    let server = server();
    let client = Client::connect(&server);
    client.initialize().await;
    let wrong = client
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": "two", "b": 3}}),
        )
        .await
        .expect("a result, not an error");
    assert_eq!(wrong["isError"], true);
    assert!(text(&wrong).contains("`a`"), "{wrong}");
    let failed = client
        .request("tools/call", json!({"name": "fails"}))
        .await
        .expect("a result, not an error");
    assert_eq!(failed["isError"], true);
    assert_eq!(text(&failed), "the disk is gone");
}

#[test]
fn tools_without_arguments_publish_the_no_arguments_schema() {
    let server = server();
    let ping = server
        .tools()
        .into_iter()
        .find(|t| t.name == "ping")
        .expect("ping");
    assert_eq!(
        Value::Object(ping.input_schema.clone()),
        json!({"type": "object", "additionalProperties": false})
    );
    assert!(ping.output_schema.is_none());
    let add = server
        .tools()
        .into_iter()
        .find(|t| t.name == "add")
        .expect("add");
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    assert_eq!(
        add.output_schema.as_ref().expect("Json<Sum>")["type"],
        "object"
    );
}

#[tokio::test]
async fn a_missing_resource_answers_with_the_code_of_each_era() {
    let server = server();
    let client = Client::connect(&server);
    let missing = json!({"uri": "notes://work/missing"});
    let stateless = client
        .stateless("resources/read", missing.clone())
        .await
        .expect_err("missing");
    assert_eq!(stateless.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(stateless.data, Some(json!({"uri": "notes://work/missing"})));
    client.initialize().await;
    let handshake = client
        .request("resources/read", missing)
        .await
        .expect_err("missing");
    assert_eq!(handshake.code, ErrorCode::RESOURCE_NOT_FOUND);
    let found = client
        .request("resources/read", json!({"uri": "notes://work/plan"}))
        .await
        .expect("found");
    assert_eq!(found["contents"][0]["text"], "plan in work");
    let fixed = client
        .request("resources/read", json!({"uri": "notes://readme"}))
        .await
        .expect("found");
    assert_eq!(fixed["contents"][0]["text"], "read me");
}

/// `resources/subscribe` finds what `resources/read` finds: an
/// extension's resources and templates exist only for a client that
/// declared the extension.
#[tokio::test]
async fn an_undeclared_extensions_resources_cannot_be_subscribed_to() {
    const ID: &str = "com.example/notes";
    let extension = mcp_server::extension::Extension::new(ID)
        .expect("a valid id")
        .resource(Resource::new("ext://fixed", "fixed"), || async { "fixed" })
        .resource_template(
            ResourceTemplate::new("ext://{name}/x", "by name"),
            || async { "by name" },
        );
    let server = Server::builder("extended", "1")
        .extension(extension)
        .build()
        .expect("a valid server");
    let undeclared = Client::connect(&server);
    undeclared.initialize().await;
    let declared = Client::connect(&server);
    declared
        .initialize_with(json!({"extensions": {ID: {}}}))
        .await;
    for uri in ["ext://fixed", "ext://a/x"] {
        let read = undeclared
            .request("resources/read", json!({"uri": uri}))
            .await
            .expect_err("not read without the extension");
        assert_eq!(read.code, ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
        let refused = undeclared
            .request("resources/subscribe", json!({"uri": uri}))
            .await
            .expect_err("not subscribed to without the extension");
        assert_eq!(refused.code, ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
        declared
            .request("resources/read", json!({"uri": uri}))
            .await
            .expect("read with the extension");
        declared
            .request("resources/subscribe", json!({"uri": uri}))
            .await
            .expect("subscribed to with the extension");
    }
}

#[tokio::test]
async fn a_bad_prompt_argument_is_invalid_params() {
    let server = server();
    let client = Client::connect(&server);
    client.initialize().await;
    let got = client
        .request(
            "prompts/get",
            json!({"name": "repeat", "arguments": {"text": "ab", "times": "2"}}),
        )
        .await
        .expect("a prompt");
    assert_eq!(got["messages"][0]["content"]["text"], "abab");
    let not_a_number = client
        .request(
            "prompts/get",
            json!({"name": "repeat", "arguments": {"text": "ab", "times": "two"}}),
        )
        .await
        .expect_err("`times` is no number");
    assert_eq!(not_a_number.code, ErrorCode::INVALID_PARAMS);
    assert!(not_a_number.message.contains("times"), "{not_a_number:?}");
    let too_many = client
        .request(
            "prompts/get",
            json!({"name": "repeat", "arguments": {"text": "ab", "times": "9"}}),
        )
        .await
        .expect_err("refused by the handler");
    assert_eq!(too_many.code, ErrorCode::INVALID_PARAMS);
    let listed = client
        .request("prompts/list", json!({}))
        .await
        .expect("listed");
    let prompts = listed["prompts"].as_array().expect("prompts");
    let repeat = prompts
        .iter()
        .find(|p| p["name"] == "repeat")
        .expect("repeat");
    assert_eq!(repeat["arguments"].as_array().map(Vec::len), Some(2));
    let greeting = prompts
        .iter()
        .find(|p| p["name"] == "greeting")
        .expect("greeting");
    assert!(greeting.get("arguments").is_none(), "{greeting}");
}

#[tokio::test]
async fn completions_take_their_params_and_return_values() {
    let server = server();
    let client = Client::connect(&server);
    client.initialize().await;
    let completed = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "repeat"},
                "argument": {"name": "text", "value": "ab"},
            }),
        )
        .await
        .expect("completed");
    assert_eq!(completed["completion"]["values"], json!(["ab1"]));
}

fn refusal(built: Result<Server, Error>) -> String {
    match built {
        Ok(_) => panic!("build() should refuse"),
        Err(Error::Registration { what, reason }) => format!("{what}: {reason}"),
        Err(other) => panic!("not a registration error: {other}"),
    }
}

#[test]
fn a_structured_list_is_refused_at_build() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Item {
        name: String,
    }
    async fn items() -> Json<Vec<Item>> {
        Json(Vec::new())
    }
    let refused = refusal(
        Server::builder("x", "1")
            .tool("items", "Lists", items)
            .build(),
    );
    assert!(refused.starts_with("tool `items`"), "{refused}");
    assert!(refused.contains("struct Items"), "{refused}");
}

#[test]
fn a_state_the_server_was_not_given_is_refused_at_build() {
    async fn needs(State(calls): State<Calls>) -> String {
        calls.0.load(Ordering::Relaxed).to_string()
    }
    let refused = refusal(
        Server::builder("x", "1")
            .tool("needs", "Needs", needs)
            .build(),
    );
    assert!(refused.contains("State<"), "{refused}");
    assert!(refused.contains("with_state"), "{refused}");
    let given = Server::builder("x", "1")
        .tool("needs", "Needs", needs)
        .with_state(Calls(AtomicU64::new(0)))
        .build();
    assert!(given.is_ok(), "the state may come after the tool");
}

/// `tally/read`: a request method of a test extension.
enum ReadTally {}

impl mcp_server::types::method::Method for ReadTally {
    const NAME: &'static str = "tally/read";
    const PARAMS_OPTIONAL: bool = true;
    type Params = Option<mcp_server::types::JsonObject>;
    fn absent_params() -> Option<Self::Params> {
        Some(None)
    }
    fn is_absent(params: &Self::Params) -> bool {
        params.is_none()
    }
}

impl mcp_server::types::method::RequestMethod for ReadTally {
    type Result = mcp_server::types::JsonObject;
}

#[test]
fn a_state_an_extensions_method_takes_is_checked_at_build() {
    async fn tally(
        State(calls): State<Calls>,
    ) -> Result<mcp_server::types::JsonObject, ErrorObject> {
        let mut result = mcp_server::types::JsonObject::new();
        result.insert("calls".into(), calls.0.load(Ordering::Relaxed).into());
        Ok(result)
    }
    let extension = || {
        mcp_server::extension::Extension::new("com.example/tally")
            .expect("a valid id")
            .request::<ReadTally, _, _>(tally)
    };
    let refused = refusal(Server::builder("x", "1").extension(extension()).build());
    assert!(refused.contains("tally/read"), "{refused}");
    assert!(refused.contains("with_state"), "{refused}");
    let given = Server::builder("x", "1")
        .extension(extension())
        .with_state(Calls(AtomicU64::new(0)))
        .build();
    assert!(given.is_ok(), "the state may come after the extension");
}

#[test]
fn arguments_read_twice_are_refused_at_build() {
    async fn twice(Args(_): Args<Add>, Args(_): Args<BTreeMap<String, i64>>) -> String {
        String::new()
    }
    let refused = refusal(
        Server::builder("x", "1")
            .tool("twice", "Twice", twice)
            .build(),
    );
    assert!(refused.contains("once"), "{refused}");
}

#[test]
fn tasks_register_their_extension_openly_and_only_once() {
    let server = Server::builder("x", "1")
        .tasks(mcp_server::TasksConfig::new())
        .build()
        .expect("valid");
    let extensions = server.capabilities().extensions.expect("extensions");
    assert!(
        extensions.contains_key(mcp_server::types::tasks_ext::EXTENSION_ID),
        "2026-07-28 tasks are the tasks extension: {extensions:?}"
    );
    let twice = Server::builder("x", "1")
        .tasks(mcp_server::TasksConfig::new())
        .tasks(mcp_server::TasksConfig::new())
        .build();
    assert!(refusal(twice).contains("twice"));
}

#[test]
fn a_tool_error_converts_from_any_error_with_question_mark() {
    fn parse(text: &str) -> Result<i64, ToolError> {
        Ok(text.parse::<i64>()?)
    }
    assert_eq!(
        parse("x").expect_err("no number").message(),
        "invalid digit found in string"
    );
}

/// The `#[tool]` attribute: the name and description come from the
/// function, and the function stays callable as written.
#[cfg(feature = "macros")]
mod tool_attribute {
    use super::{Add, Sum};
    use mcp_server::{Args, Json, Server, State, ToolError, tool};

    struct Limit(i64);

    /// Adds two integers.
    ///
    /// Sums above the server's limit are refused.
    #[tool]
    async fn add(Args(add): Args<Add>, State(limit): State<Limit>) -> Result<Json<Sum>, ToolError> {
        let sum = add.a + add.b;
        if sum > limit.0 {
            return Err(ToolError::new("the sum is above the limit"));
        }
        Ok(Json(Sum { sum }))
    }

    /// Not the description.
    #[tool(name = "pong", description = "Answers ping")]
    pub(crate) async fn ping() -> &'static str {
        "pong"
    }

    #[test]
    fn a_tool_fn_registers_with_its_name_doc_and_schemas() {
        let server = Server::builder("macros", "1")
            .with_state(Limit(100))
            .register(add_tool())
            .register(ping_tool())
            .build()
            .expect("valid");
        let tools = server.tools();
        assert_eq!(tools[0].name, "add");
        assert_eq!(
            tools[0].description.as_deref(),
            Some("Adds two integers.\n\nSums above the server's limit are refused.")
        );
        assert_eq!(
            tools[0].input_schema["required"],
            serde_json::json!(["a", "b"])
        );
        assert!(tools[0].output_schema.is_some());
        assert_eq!(tools[1].name, "pong");
        assert_eq!(tools[1].description.as_deref(), Some("Answers ping"));
    }

    #[test]
    fn the_state_a_tool_fn_takes_is_checked_at_build() {
        let refused = Server::builder("macros", "1").register(add_tool()).build();
        assert!(refused.is_err());
    }

    #[tokio::test]
    async fn the_function_stays_callable() {
        assert_eq!(ping().await, "pong");
        let sum = add(
            Args(Add { a: 1, b: 2 }),
            State(std::sync::Arc::new(Limit(10))),
        )
        .await
        .expect("below the limit");
        assert_eq!(sum.0.sum, 3);
    }
}
