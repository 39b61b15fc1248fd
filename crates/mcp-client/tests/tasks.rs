//! Tasks end to end: our client against our server, in memory and over
//! HTTP on 127.0.0.1. The 2025-11-25 core methods (`tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`, task-augmented
//! `tools/call`) and the 2026-07-28 tasks extension (server-directed
//! creation, `tasks/get`, `tasks/update`, `tasks/cancel`, -32021).

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, Error, HostedTasks, RequestOptions, TaskStart};
use mcp_types::extension::ExtensionId;
use std::collections::BTreeMap;

use mcp_server::{Context, Server, TasksConfig, ToolError};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestedSchema, ElicitResult, ElicitValue, ErrorCode, InputResponse, InputResponses,
    Revision, SamplingMessage, SamplingMessageContentBlock, TaskStatus, TaskSupport, Tool,
    ToolExecution, tasks_ext,
};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};

/// What the test controls in the server.
struct Controls {
    /// `slow` finishes once a permit is added.
    gate: Arc<Semaphore>,
    /// Told when `forever`'s code is dropped (cancelled).
    dropped: mpsc::UnboundedReceiver<()>,
}

struct SendOnDrop(mpsc::UnboundedSender<()>);

impl Drop for SendOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

fn tool(name: &str, support: Option<TaskSupport>) -> Tool {
    let mut tool = Tool::new(name, mcp_types::JsonObject::new());
    tool.description = Some(format!("the `{name}` test tool"));
    if let Some(support) = support {
        tool.execution = Some(ToolExecution::new().with_task_support(support));
    }
    tool
}

fn server() -> (Server, Controls) {
    let gate = Arc::new(Semaphore::new(0));
    let (dropped_tx, dropped) = mpsc::unbounded_channel();
    let slow_gate = gate.clone();
    let server = Server::builder("tasks", "1")
        .tasks(TasksConfig::new().poll_interval(Duration::from_millis(20)))
        .tool_with(tool("slow", Some(TaskSupport::Optional)), move || {
            let gate = slow_gate.clone();
            async move {
                // Each permit lets one call finish.
                if let Ok(permit) = gate.acquire().await {
                    permit.forget();
                }
                "done"
            }
        })
        .tool_with(tool("forever", Some(TaskSupport::Optional)), move || {
            let guard = SendOnDrop(dropped_tx.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                "never"
            }
        })
        .tool_with(
            tool("only_as_task", Some(TaskSupport::Required)),
            || async move { "ran as a task" },
        )
        .tool_with(tool("ask", Some(TaskSupport::Optional)), ask)
        .tool_with(
            tool("gathers_then_task", Some(TaskSupport::Required)),
            gathers_then_task,
        )
        .tool_with(tool("plain", None), || async move { "plain" })
        .tool_with(tool("sees_tasks", None), |cx: Context| async move {
            sees(&cx, tasks_ext::EXTENSION_ID)
        })
        .tool_with(tool("sees_example", None), |cx: Context| async move {
            sees(&cx, EXAMPLE_EXTENSION)
        })
        .tool_with(tool("delegate_elicitation", None), delegate_elicitation)
        .tool_with(tool("delegate_sampling", None), delegate_sampling)
        .tool_with(tool("delegate_and_cancel", None), delegate_and_cancel)
        .build()
        .expect("server");
    (server, Controls { gate, dropped })
}

/// An extension of no meaning, declared per request.
const EXAMPLE_EXTENSION: &str = "com.example/probe";

/// What a tool tells of the extension `id` for the call it serves.
fn sees(cx: &Context, id: &str) -> &'static str {
    if cx.client_supports_extension(id) {
        "declared"
    } else {
        "not declared"
    }
}

fn tool_error(error: mcp_server::Error) -> ToolError {
    ToolError::new(error.to_string())
}

async fn ask(cx: Context) -> Result<String, ToolError> {
    cx.run_as_task().await;
    let answer = cx
        .elicit_form("What is your name?", name_form())
        .await
        .map_err(tool_error)?;
    Ok(format!("Hello, {}!", name_of(&answer)))
}

async fn gathers_then_task(cx: Context) -> Result<String, ToolError> {
    // Asked within the request (a round trip), then a task.
    let answer = cx
        .elicit_form("What is your name?", name_form())
        .await
        .map_err(tool_error)?;
    cx.run_as_task().await;
    Ok(format!("Hello from a task, {}!", name_of(&answer)))
}

async fn delegate_elicitation(cx: Context) -> Result<String, ToolError> {
    let params = ElicitRequestParams::Form(ElicitRequestFormParams::new(
        "What is your name?",
        name_form(),
    ));
    let task = cx
        .session()
        .elicit_as_task(&params, Some(Duration::from_secs(60)))
        .await
        .map_err(tool_error)?;
    let listed = cx
        .session()
        .list_client_tasks(None)
        .await
        .map_err(tool_error)?;
    let answer: ElicitResult = cx
        .session()
        .wait_for_client_task(&task)
        .await
        .map_err(tool_error)?;
    let done = cx
        .session()
        .get_client_task(&task.task_id)
        .await
        .map_err(tool_error)?;
    Ok(format!(
        "{:?} listed={} {:?} ttl={:?}: Hello, {}!",
        task.status,
        listed.tasks.iter().any(|t| t.task_id == task.task_id),
        done.status,
        task.ttl,
        name_of(&answer)
    ))
}

async fn delegate_sampling(cx: Context) -> Result<String, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Hi")], 10);
    let task = cx
        .session()
        .create_message_as_task(&params, None)
        .await
        .map_err(tool_error)?;
    let answer: CreateMessageResult = cx
        .session()
        .wait_for_client_task(&task)
        .await
        .map_err(tool_error)?;
    let text = answer.content.blocks()[0]
        .as_text()
        .unwrap_or("")
        .to_owned();
    Ok(format!("sampled: {text}"))
}

async fn delegate_and_cancel(cx: Context) -> Result<String, ToolError> {
    let params =
        ElicitRequestParams::Form(ElicitRequestFormParams::new("never answered", name_form()));
    let task = cx
        .session()
        .elicit_as_task(&params, None)
        .await
        .map_err(tool_error)?;
    let cancelled = cx
        .session()
        .cancel_client_task(&task.task_id)
        .await
        .map_err(tool_error)?;
    let polled = cx
        .session()
        .get_client_task(&task.task_id)
        .await
        .map_err(tool_error)?;
    let again = cx.session().cancel_client_task(&task.task_id).await;
    let code = again.err().and_then(|e| match e {
        mcp_server::Error::Request(mcp_core::Error::Remote(e)) => Some(e.code),
        _ => None,
    });
    Ok(format!(
        "{:?} {:?} {:?}",
        cancelled.status, polled.status, code
    ))
}

fn name_form() -> ElicitRequestedSchema {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    }))
    .expect("a form")
}

fn name_of(answer: &ElicitResult) -> String {
    match answer.content.as_ref().and_then(|c| c.get("name")) {
        Some(ElicitValue::String(name)) => name.clone(),
        _ => "nobody".to_owned(),
    }
}

fn ada() -> ElicitResult {
    ElicitResult::accept(BTreeMap::from([(
        "name".to_owned(),
        ElicitValue::String("Ada".to_owned()),
    )]))
}

/// A 2026-07-28 client; with the tasks extension when `tasks` is set.
fn stateless_config(tasks: bool) -> ClientConfig {
    let config = ClientConfig::new("tasks-client", "1")
        .protocol_version(Revision::V2026_07_28)
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|_, _| async move { Ok(ada()) });
    if tasks {
        config
            .claim::<tasks_ext::CreateTaskResult>()
            .expect("the task claim")
    } else {
        config
    }
}

fn config() -> ClientConfig {
    ClientConfig::new("tasks-client", "1")
        .protocol_version(Revision::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
}

fn started(start: Result<TaskStart, Error>) -> mcp_types::Task {
    match start.expect("started") {
        TaskStart::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Starts `forever` as a task and cancels it: cancelled, its code dropped.
async fn cancel_forever(client: &Client, controls: &mut Controls) -> mcp_types::Task {
    let endless = started(client.call_tool_as_task("forever", json!({}), None).await);
    client
        .cancel_task(&endless.task_id)
        .await
        .expect("cancelled");
    let cancelled = client.get_task(&endless.task_id).await.expect("polled");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    in_time(
        "the cancelled tool's code to be dropped",
        controls.dropped.recv(),
    )
    .await
    .expect("dropped");
    endless
}

fn code(error: &Error) -> Option<ErrorCode> {
    error.remote().map(|e| e.code)
}

async fn in_time<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .unwrap_or_else(|_| panic!("{what} took too long"))
}

/// Created, polled, listed, finished; another cancelled (its code
/// dropped); the tool-level task rules; an unknown task.
async fn core_lifecycle(client: Client, mut controls: Controls) {
    refuses_per_request(&client).await;
    let capabilities = client.server_capabilities().expect("initialized");
    let tasks = capabilities.tasks.expect("the core tasks capability");
    assert!(tasks.list.is_some() && tasks.cancel.is_some());

    let required = client.call_tool("only_as_task", json!({})).await;
    assert_eq!(
        required.as_ref().err().and_then(code),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "a task-required tool called plainly"
    );
    let forbidden = client.call_tool_as_task("plain", json!({}), None).await;
    assert_eq!(
        forbidden.as_ref().err().and_then(code),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "a plain tool called as a task"
    );
    let result = in_time(
        "a required task",
        client.call_tool_in_task("only_as_task", json!({})),
    )
    .await
    .expect("ran as a task");
    assert_eq!(result.content[0].as_text(), Some("ran as a task"));

    let task = started(
        client
            .call_tool_as_task("slow", json!({}), Some(Duration::from_secs(60)))
            .await,
    );
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl, Some(60_000));
    assert_eq!(task.poll_interval, Some(20));
    // The gate is closed: the task cannot have finished.
    let polled = client.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Working);
    let listed = client.list_tasks(None).await.expect("listed");
    assert!(listed.tasks.iter().any(|t| t.task_id == task.task_id));
    controls.gate.add_permits(1);
    let result = in_time("the slow task", client.wait_for_task(&task))
        .await
        .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("done"));
    let done = client.get_task(&task.task_id).await.expect("polled");
    assert_eq!(done.status, TaskStatus::Completed);

    let endless = cancel_forever(&client, &mut controls).await;
    let again = client.cancel_task(&endless.task_id).await;
    assert_eq!(
        again.as_ref().err().and_then(code),
        Some(ErrorCode::INVALID_PARAMS),
        "a terminal task cannot be cancelled"
    );
    let waited = client.wait_for_task(&endless).await;
    assert!(
        matches!(waited, Err(Error::TaskCancelled { .. })),
        "{waited:?}"
    );

    let unknown = client.get_task("no-such-task").await;
    assert_eq!(
        unknown.as_ref().err().and_then(code),
        Some(ErrorCode::INVALID_PARAMS)
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn core_tasks_in_memory() {
    let (server, controls) = server();
    let client = Client::connect(server.in_memory(), config())
        .await
        .expect("connected");
    core_lifecycle(client, controls).await;
}

/// `server` over HTTP on 127.0.0.1: its URL, and a stop that waits for it.
async fn serve(server: Server) -> (String, impl std::future::Future<Output = ()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve_http(listener, mcp_server::HttpServerConfig::new(), async {
                let _ = stopped.await;
            })
            .await
    });
    let stop = async move {
        let _ = stop.send(());
        in_time("the server to stop", serving)
            .await
            .expect("joined")
            .expect("served");
    };
    (url, stop)
}

#[tokio::test]
async fn core_tasks_over_http() {
    let (server, controls) = server();
    let (url, stop) = serve(server).await;
    let client = Client::connect_http(&url, config())
        .await
        .expect("connected");
    core_lifecycle(client, controls).await;
    stop.await;
}

#[tokio::test]
async fn a_server_without_tasks_refuses_the_core_methods() {
    let server = Server::builder("no-tasks", "1")
        .tool_with(tool("slow", Some(TaskSupport::Optional)), || async move {
            "done"
        })
        .build()
        .expect("server");
    let client = Client::connect(server.in_memory(), config())
        .await
        .expect("connected");
    assert!(
        client
            .server_capabilities()
            .expect("initialized")
            .tasks
            .is_none()
    );
    let get = client.get_task("t").await;
    assert_eq!(
        get.as_ref().err().and_then(code),
        Some(ErrorCode::METHOD_NOT_FOUND)
    );
    client.close().await.expect("closed");
}

/// Polls until the task reaches `status` (bounded by `in_time`).
async fn until_status(client: &Client, task_id: &str, status: TaskStatus) -> mcp_client::TaskState {
    in_time("the task's status", async {
        loop {
            let state = client.task_state(task_id).await.expect("polled");
            if state.task.status == status {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// The 2026-07-28 extension: -32021 without it; with it, server-directed
/// tasks, polled, answered through `tasks/update`, composed with a round
/// trip, cancelled (idempotently), an unknown task.
async fn extension_lifecycle(plain: Client, client: Client, mut controls: Controls) {
    let required = plain.call_tool("only_as_task", json!({})).await;
    let error = required.as_ref().err().and_then(Error::remote).cloned();
    assert_eq!(
        error.as_ref().map(|e| e.code),
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "{required:?}"
    );
    assert_eq!(
        error.and_then(|e| e.data).expect("data")["requiredCapabilities"]["extensions"]
            [tasks_ext::EXTENSION_ID],
        json!({})
    );
    declares_per_request(&plain).await;
    let required = plain.call_tool("only_as_task", json!({})).await;
    assert_eq!(
        required.as_ref().err().and_then(code),
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "the session still does not declare the extension: {required:?}"
    );
    // The task methods declare the extension for their own request.
    let get = plain.get_task("anything").await;
    assert_eq!(
        get.as_ref().err().and_then(code),
        Some(ErrorCode::INVALID_PARAMS),
        "an unknown task, not a missing capability"
    );
    assert!(
        matches!(
            plain.list_tasks(None).await,
            Err(Error::NotInThisEra { .. })
        ),
        "no task list at 2026-07-28"
    );

    assert!(client.server_supports_extension(tasks_ext::EXTENSION_ID));
    let task = started(client.call_tool_as_task("slow", json!({}), None).await);
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.poll_interval, Some(20));
    assert!(task.ttl.is_some());
    let polled = client.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Working, "the gate is closed");
    controls.gate.add_permits(1);
    let result = in_time("the slow task", client.wait_for_task(&task))
        .await
        .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("done"));

    // Answered by hand through tasks/update.
    let asking = started(client.call_tool_as_task("ask", json!({}), None).await);
    let waiting = until_status(&client, &asking.task_id, TaskStatus::InputRequired).await;
    let requests = waiting.input_requests.expect("open requests");
    assert_eq!(requests.len(), 1);
    let key = requests.keys().next().expect("a key").clone();
    let responses = InputResponses::from([(key, InputResponse::Elicit(ada()))]);
    client
        .update_task(&asking.task_id, &responses)
        .await
        .expect("acknowledged");
    let result = in_time("the answered task", client.wait_for_task(&asking))
        .await
        .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));

    // Answered by the callbacks: wait_for_task does it.
    let result = in_time("an asking task", client.call_tool_in_task("ask", json!({})))
        .await
        .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));

    // A round trip in the request, then a task.
    let result = in_time(
        "a round trip, then a task",
        client.call_tool_in_task("gathers_then_task", json!({})),
    )
    .await
    .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("Hello from a task, Ada!"));

    let endless = cancel_forever(&client, &mut controls).await;
    client
        .cancel_task(&endless.task_id)
        .await
        .expect("cancelling an ended task is acknowledged too");
    let waited = client.wait_for_task(&endless).await;
    assert!(
        matches!(waited, Err(Error::TaskCancelled { .. })),
        "{waited:?}"
    );

    let unknown = client.get_task("no-such-task").await;
    assert_eq!(
        unknown.as_ref().err().and_then(code),
        Some(ErrorCode::INVALID_PARAMS)
    );
    plain.close().await.expect("closed");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn extension_tasks_in_memory() {
    let (server, controls) = server();
    let plain = Client::connect(server.in_memory(), stateless_config(false))
        .await
        .expect("connected");
    let client = Client::connect(server.in_memory(), stateless_config(true))
        .await
        .expect("connected");
    extension_lifecycle(plain, client, controls).await;
}

#[tokio::test]
async fn extension_tasks_over_http() {
    let (server, controls) = server();
    let (url, stop) = serve(server).await;
    let plain = Client::connect_http(&url, stateless_config(false))
        .await
        .expect("connected");
    let client = Client::connect_http(&url, stateless_config(true))
        .await
        .expect("connected");
    extension_lifecycle(plain, client, controls).await;
    stop.await;
}

/// The next pushed state of a watched task with `status` (bounded).
async fn until_pushed(
    watch: &mut mcp_client::TaskWatch<'_>,
    status: TaskStatus,
) -> mcp_client::TaskState {
    in_time("a pushed task state", async {
        loop {
            let state = watch
                .next()
                .await
                .expect("the watch goes on")
                .expect("the server pushes task states");
            if state.task.status == status {
                return state;
            }
        }
    })
    .await
}

/// Starts `slow` as a task of stateless `client` and watches it: pushed
/// working (the gate is closed), then, once a permit of `gate` lets it
/// finish, completed. The last state pushed.
async fn watched_to_its_end(client: &Client, gate: &Semaphore) -> mcp_client::TaskState {
    let task = started(client.call_tool_as_task("slow", json!({}), None).await);
    let mut watch = client.watch_tasks(std::slice::from_ref(&task.task_id), Default::default());
    // The current state comes first.
    let first = in_time("the first pushed state", watch.next())
        .await
        .expect("a state")
        .expect("accepted");
    assert_eq!(first.task.status, TaskStatus::Working);
    gate.add_permits(1);
    let done = until_pushed(&mut watch, TaskStatus::Completed).await;
    assert_eq!(done.task.task_id, task.task_id);
    done
}

/// Task status notifications reach a watching client: on the session at
/// 2025-11-25 (`notifications/tasks/status`), on a `subscriptions/listen`
/// stream at 2026-07-28 (`notifications/tasks`, the result inlined); a
/// 2026-07-28 client without the extension is refused (-32021).
async fn status_notifications(
    handshake: Client,
    plain: Client,
    stateless: Client,
    gate: &Semaphore,
) {
    let task = started(handshake.call_tool_as_task("slow", json!({}), None).await);
    let mut watch = handshake.watch_tasks(std::slice::from_ref(&task.task_id), Default::default());
    gate.add_permits(1);
    let done = until_pushed(&mut watch, TaskStatus::Completed).await;
    assert_eq!(done.task.task_id, task.task_id);
    drop(watch);

    // A client whose config does not claim the extension declares it for
    // the task call and the watch alone.
    for client in [&stateless, &plain] {
        let done = watched_to_its_end(client, gate).await;
        assert_eq!(
            done.result.expect("the result inlined").content[0].as_text(),
            Some("done")
        );
    }
    for client in [handshake, plain, stateless] {
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn status_notifications_in_memory() {
    let (server, controls) = server();
    let connect = |config| Client::connect(server.in_memory(), config);
    let handshake = connect(config()).await.expect("connected");
    let plain = connect(stateless_config(false)).await.expect("connected");
    let stateless = connect(stateless_config(true)).await.expect("connected");
    status_notifications(handshake, plain, stateless, &controls.gate).await;
}

#[tokio::test]
async fn status_notifications_over_http() {
    let (server, controls) = server();
    let (url, stop) = serve(server).await;
    let handshake = Client::connect_http(&url, config())
        .await
        .expect("connected");
    let plain = Client::connect_http(&url, stateless_config(false))
        .await
        .expect("connected");
    let stateless = Client::connect_http(&url, stateless_config(true))
        .await
        .expect("connected");
    status_notifications(handshake, plain, stateless, &controls.gate).await;
    stop.await;
}

/// A 2025-11-25 client whose elicitation answers wait for the test: each
/// request's related task goes out on `asked`, the answer comes from
/// `answers`.
fn answering_config(
    asked: mpsc::UnboundedSender<Option<String>>,
    answers: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<ElicitResult>>>,
) -> ClientConfig {
    config().on_elicitation(move |params, _| {
        let asked = asked.clone();
        let answers = answers.clone();
        async move {
            let related = match &params {
                mcp_types::ElicitRequestParams::Form(form) => form
                    .meta
                    .as_ref()
                    .and_then(|m| m.related_task.as_ref())
                    .map(|t| t.task_id.clone()),
                _ => None,
            };
            let _ = asked.send(related);
            let answer = answers.lock().await.recv().await;
            answer.ok_or_else(|| mcp_types::ErrorObject::internal_error("the test ended"))
        }
    })
}

/// At 2025-11-25 a task whose tool waits for the client's answer is
/// `input_required` meanwhile (seen by polling and pushed), and finishes
/// once answered; the elicitation names the task.
async fn input_required_while_asking(
    client: Client,
    mut asked: mpsc::UnboundedReceiver<Option<String>>,
    answer: mpsc::UnboundedSender<ElicitResult>,
) {
    let task = started(client.call_tool_as_task("ask", json!({}), None).await);
    let mut watch = client.watch_tasks(std::slice::from_ref(&task.task_id), Default::default());
    let related = in_time("the elicitation", asked.recv())
        .await
        .expect("asked");
    assert_eq!(related.as_deref(), Some(task.task_id.as_str()));
    let waiting = in_time("input_required", async {
        loop {
            let polled = client.get_task(&task.task_id).await.expect("polled");
            if polled.status == TaskStatus::InputRequired {
                return polled;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(waiting.task_id, task.task_id);
    until_pushed(&mut watch, TaskStatus::InputRequired).await;
    answer.send(ada()).expect("the callback waits");
    let result = in_time("the answered task", client.wait_for_task(&task))
        .await
        .expect("finished");
    assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
    until_pushed(&mut watch, TaskStatus::Completed).await;
    drop(watch);
    client.close().await.expect("closed");
}

fn answering() -> (
    ClientConfig,
    mpsc::UnboundedReceiver<Option<String>>,
    mpsc::UnboundedSender<ElicitResult>,
) {
    let (asked_tx, asked) = mpsc::unbounded_channel();
    let (answer, answers) = mpsc::unbounded_channel();
    let config = answering_config(asked_tx, Arc::new(tokio::sync::Mutex::new(answers)));
    (config, asked, answer)
}

#[tokio::test]
async fn input_required_while_asking_in_memory() {
    let (server, _controls) = server();
    let (config, asked, answer) = answering();
    let client = Client::connect(server.in_memory(), config)
        .await
        .expect("connected");
    input_required_while_asking(client, asked, answer).await;
}

#[tokio::test]
async fn input_required_while_asking_over_http() {
    let (server, _controls) = server();
    let (url, stop) = serve(server).await;
    let (config, asked, answer) = answering();
    let client = Client::connect_http(&url, config).await.expect("connected");
    input_required_while_asking(client, asked, answer).await;
    stop.await;
}

/// A 2025-11-25 client that runs the server's task-augmented elicitation
/// and sampling as tasks; an elicitation saying "never answered" waits
/// until cancelled (`dropped` is told when its callback is dropped).
fn hosting_config(dropped: mpsc::UnboundedSender<()>) -> ClientConfig {
    config()
        .host_tasks(HostedTasks::new().poll_interval(Duration::from_millis(20)))
        .on_elicitation(move |params, _| {
            let guard = SendOnDrop(dropped.clone());
            async move {
                let _guard = guard;
                if let ElicitRequestParams::Form(form) = &params {
                    if form.message == "never answered" {
                        std::future::pending::<()>().await;
                    }
                }
                Ok(ada())
            }
        })
        .on_sampling(|_, _| async move {
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text("a poem"),
                "test-model",
            ))
        })
}

/// The server's task-augmented elicitation and sampling run as client
/// tasks: created, listed, polled, fetched; one cancelled (its callback
/// dropped, a second cancel refused).
async fn client_hosted_tasks(client: Client, mut dropped: mpsc::UnboundedReceiver<()>) {
    let result = in_time(
        "a task-augmented elicitation",
        client.call_tool("delegate_elicitation", json!({})),
    )
    .await
    .expect("called");
    assert_eq!(
        result.content[0].as_text(),
        Some("Working listed=true Completed ttl=Some(60000): Hello, Ada!")
    );
    let result = in_time(
        "a task-augmented sampling",
        client.call_tool("delegate_sampling", json!({})),
    )
    .await
    .expect("called");
    assert_eq!(result.content[0].as_text(), Some("sampled: a poem"));
    // The finished elicitation's callback is gone; drain its signal.
    in_time("the first callback's end", dropped.recv())
        .await
        .expect("dropped");
    let result = in_time(
        "a cancelled client task",
        client.call_tool("delegate_and_cancel", json!({})),
    )
    .await
    .expect("called");
    assert_eq!(
        result.content[0].as_text(),
        Some("Cancelled Cancelled Some(ErrorCode(-32602))")
    );
    in_time("the cancelled callback to be dropped", dropped.recv())
        .await
        .expect("dropped");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn client_hosted_tasks_in_memory() {
    let (server, _controls) = server();
    let (tx, dropped) = mpsc::unbounded_channel();
    let client = Client::connect(server.in_memory(), hosting_config(tx))
        .await
        .expect("connected");
    client_hosted_tasks(client, dropped).await;
}

#[tokio::test]
async fn client_hosted_tasks_over_http() {
    let (server, _controls) = server();
    let (url, stop) = serve(server).await;
    let (tx, dropped) = mpsc::unbounded_channel();
    let client = Client::connect_http(&url, hosting_config(tx))
        .await
        .expect("connected");
    client_hosted_tasks(client, dropped).await;
    stop.await;
}

/// One request declares an extension; the session's other requests do not
/// (2026-07-28): `plain`'s config declares no extension.
async fn declares_per_request(plain: &Client) {
    let probe = ExtensionId::new(EXAMPLE_EXTENSION).expect("an extension id");
    let declaring = RequestOptions::new().with_extension(probe, Default::default());
    let seen = plain
        .call_tool_with("sees_example", json!({}), declaring)
        .await
        .expect("called");
    assert_eq!(first_text(seen), "declared");
    let seen = plain
        .call_tool("sees_example", json!({}))
        .await
        .expect("called");
    assert_eq!(
        first_text(seen),
        "not declared",
        "the next request is plain"
    );

    // call_tool_as_task declares the tasks extension for that call only.
    match plain.call_tool_as_task("sees_tasks", json!({}), None).await {
        Ok(TaskStart::Complete(result)) => assert_eq!(first_text(result), "declared"),
        other => panic!("a plain tool answers at once: {other:?}"),
    }
    let seen = plain
        .call_tool("sees_tasks", json!({}))
        .await
        .expect("called");
    assert_eq!(first_text(seen), "not declared");
    let result = in_time(
        "a required task",
        plain.call_tool_in_task("only_as_task", json!({})),
    )
    .await
    .expect("ran as a task");
    assert_eq!(first_text(result), "ran as a task");
}

/// A handshake-era session refuses a per-request extension, saying why.
async fn refuses_per_request(handshake: &Client) {
    let probe = ExtensionId::new(EXAMPLE_EXTENSION).expect("an extension id");
    let refused = handshake
        .call_tool_with(
            "plain",
            json!({}),
            RequestOptions::new().with_extension(probe, Default::default()),
        )
        .await;
    match refused {
        Err(error @ Error::ExtensionPerRequest { .. }) => {
            assert!(error.to_string().contains(EXAMPLE_EXTENSION), "{error}");
        }
        other => panic!("refused in the handshake era: {other:?}"),
    }
}

fn first_text(result: mcp_types::CallToolResult) -> String {
    result.content[0]
        .as_text()
        .map(str::to_owned)
        .unwrap_or_default()
}
