//! Tasks through the gateway, over real sockets: an upstream on 127.0.0.1
//! that runs `slow` as a task (2025-11-25 tasks), another whose `hosted`
//! tool claims task support while the server runs no tasks, and the
//! gateway's server between them and its clients. A task started through
//! the gateway is followed upstream to its result; cancelling it cancels
//! the upstream's; one client never gets, cancels or lists another's; a
//! stateless client's task runs through too; an upstream lost mid-task
//! fails the task. The same with the upstreams spoken to in the stateless
//! era (2026-07-28), where the gateway declares the tasks extension on
//! the task's own calls only.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, HttpClientConfig, Negotiation, TaskStart};
use mcp_gateway::{EraPreference, Gateway, GatewayConfig, UpstreamConfig, UpstreamTransport};
use mcp_server::{Args, Context, Server, TasksConfig, ToolError};
use mcp_types::{
    CallToolResult, ErrorCode, ErrorObject, JsonObject, Task, TaskStatus, TaskSupport, Tool,
    ToolExecution, tasks_ext,
};
use serde_json::json;
use tokio::sync::{Semaphore, mpsc, oneshot};

mod served;

const WAIT: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// A tool that runs as a task when asked (`execution.taskSupport`).
fn task_tool(name: &str) -> Tool {
    task_tool_with(name, TaskSupport::Optional)
}

/// A tool with task support `support`.
fn task_tool_with(name: &str, support: TaskSupport) -> Tool {
    let mut tool = Tool::new(name, JsonObject::new());
    tool.description = Some(format!("{name}, as a task ({support:?})"));
    tool.execution = Some(ToolExecution::new().with_task_support(support));
    tool
}

/// What the upstream's `slow` tells: each call's text as it starts, and as
/// it is dropped unfinished (cancelled); a permit of `gate` lets one finish.
struct Slow {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedReceiver<String>,
    cancelled: mpsc::UnboundedReceiver<String>,
}

impl Slow {
    /// Calls `slow` as a task through `client`; the task, once its tool
    /// runs upstream.
    async fn run(&mut self, client: &Client, text: &str) -> Task {
        let task = start(client, "runner_slow", text).await;
        assert_eq!(next(&mut self.started).await, text);
        task
    }
}

/// Tells `cancelled` of a call dropped before it finished.
struct Unfinished(Option<(String, mpsc::UnboundedSender<String>)>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some((text, cancelled)) = self.0.take() {
            let _ = cancelled.send(text);
        }
    }
}

/// The upstream that runs `slow` as a task (and `plain`, never one).
async fn tasks_upstream() -> (String, Slow, oneshot::Sender<()>) {
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, started) = mpsc::unbounded_channel();
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let permits = gate.clone();
    let asks_cancelled = cancelled_tx.clone();
    let server = Server::builder("runner", "1.0.0")
        .tasks(TasksConfig::new().poll_interval(Duration::from_millis(20)))
        .tool_with(task_tool("slow"), move |Args(args): Args<Text>| {
            let (gate, started, cancelled) =
                (permits.clone(), started_tx.clone(), cancelled_tx.clone());
            async move {
                let mut unfinished = Unfinished(Some((args.text.clone(), cancelled)));
                let _ = started.send(args.text.clone());
                let permit = gate.acquire().await.expect("the gate stays open");
                permit.forget();
                unfinished.0 = None;
                format!("slow: {}", args.text)
            }
        })
        .tool_with(task_tool("broken"), || async move {
            Err::<String, _>(ToolError::protocol(ErrorObject::invalid_params(
                "the input is broken",
            )))
        })
        .tool_with(task_tool("asks"), {
            let cancelled = asks_cancelled;
            move |cx: Context| {
                let guard = Unfinished(Some(("asks".to_owned(), cancelled.clone())));
                async move {
                    let _guard = guard;
                    cx.run_as_task().await;
                    let schema = serde_json::from_value(json!({
                        "type": "object",
                        "properties": {"name": {"type": "string"}}
                    }));
                    let schema = schema.map_err(|e| ToolError::new(e.to_string()))?;
                    let asked = cx.elicit_form("Your name?", schema).await;
                    asked.map_err(|e| ToolError::new(e.to_string()))?;
                    Ok::<_, ToolError>("answered".to_owned())
                }
            }
        })
        .tool_with(
            task_tool_with("required", TaskSupport::Required),
            |Args(args): Args<Text>| async move { format!("required: {}", args.text) },
        )
        .tool(
            "plain",
            "Never a task",
            |Args(args): Args<Text>| async move { format!("plain: {}", args.text) },
        )
        .build()
        .expect("server");
    let (url, stop) = served::serve_http(server).await;
    let slow = Slow {
        gate,
        started,
        cancelled,
    };
    (url, slow, stop)
}

/// An upstream that claims task support for `hosted` but runs no tasks.
async fn taskless_upstream() -> (String, oneshot::Sender<()>) {
    let server = Server::builder("taskless", "1.0.0")
        .tool_with(task_tool("hosted"), |Args(args): Args<Text>| async move {
            format!("hosted: {}", args.text)
        })
        .build()
        .expect("server");
    served::serve_http(server).await
}

/// The gateway over both upstreams (spoken to in `era`), its server on
/// 127.0.0.1; its URL.
async fn gateway(
    runner: String,
    taskless: String,
    era: EraPreference,
) -> (Arc<Gateway>, String, oneshot::Sender<()>) {
    let upstream = |url| {
        UpstreamConfig::new(UpstreamTransport::Http {
            url,
            headers: Default::default(),
        })
        .with_era(era)
    };
    let config = GatewayConfig::new()
        .upstream("runner", upstream(runner))
        .expect("runner")
        .upstream("taskless", upstream(taskless))
        .expect("taskless");
    let gateway = Arc::new(
        Gateway::builder(config)
            .tasks(TasksConfig::new().poll_interval(Duration::from_millis(20)))
            .start()
            .expect("started"),
    );
    tokio::time::timeout(WAIT, gateway.ready())
        .await
        .expect("both upstreams connect");
    let server = gateway
        .server(Server::builder("gateway", "1.0.0"))
        .expect("the gateway's server");
    let (url, stop) = served::serve_http(server).await;
    (gateway, url, stop)
}

/// The gateway over `runner` and a taskless upstream (spoken to in the
/// handshake era); its URL; what stops the taskless upstream and the
/// gateway's server.
async fn gateway_over(runner: String) -> (Arc<Gateway>, String, [oneshot::Sender<()>; 2]) {
    gateway_over_in(runner, EraPreference::Handshake).await
}

/// As [`gateway_over`], the upstreams spoken to in `era`.
async fn gateway_over_in(
    runner: String,
    era: EraPreference,
) -> (Arc<Gateway>, String, [oneshot::Sender<()>; 2]) {
    let (taskless, stop_taskless) = taskless_upstream().await;
    let (gateway, url, stop) = gateway(runner, taskless, era).await;
    (gateway, url, [stop_taskless, stop])
}

/// The result of `task`, once it ended.
async fn finished(client: &Client, task: &Task) -> Result<CallToolResult, mcp_client::Error> {
    tokio::time::timeout(WAIT, client.wait_for_task(task))
        .await
        .expect("in time")
}

/// A client of the gateway in `era` (one that may be handed tasks).
async fn client(url: &str, era: Negotiation) -> Client {
    let config = ClientConfig::new("downstream", "1")
        .negotiation(era)
        .request_timeout(WAIT)
        .claim::<tasks_ext::CreateTaskResult>()
        .expect("the tasks extension");
    Client::connect_http_with(url, HttpClientConfig::new(), config)
        .await
        .expect("the client connects")
}

/// Calls `tool` as a task; the task it is handed.
async fn start(client: &Client, tool: &str, text: &str) -> Task {
    let started = client.call_tool_as_task(tool, json!({"text": text}), None);
    match started.await.expect("started") {
        TaskStart::Task(task) => task,
        other => panic!("{tool} was not made a task: {other:?}"),
    }
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

async fn next(queue: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, queue.recv())
        .await
        .expect("in time")
        .expect("the upstream is there")
}

/// The `execution.taskSupport` the gateway advertises for `name`.
fn task_support(gateway: &Gateway, name: &str) -> Option<TaskSupport> {
    let tools = gateway.catalog();
    let tool = tools.tools.iter().find(|(_, t)| t.name == name);
    tool.and_then(|(_, t)| t.execution.as_ref().and_then(|e| e.task_support))
}

/// Lets `task` (of `slow`) finish: its result `expected`, under the
/// gateway's task id; the upstream's task followed no more.
async fn finishes_under_the_gateways_id(
    gateway: &Gateway,
    client: &Client,
    task: &Task,
    expected: &str,
) {
    let result = finished(client, task).await.expect("the result");
    assert_eq!(text(&result), expected);
    let related = result.meta.as_ref().and_then(|m| m.related_task.as_ref());
    assert_eq!(
        related.map(|r| r.task_id.as_str()),
        Some(task.task_id.as_str()),
        "the gateway's id, never the upstream's"
    );
    assert_eq!(gateway.upstream_tasks(), 0, "followed no more");
}

/// `task` fails, its error saying `what`; polled, it is failed; the
/// gateway follows no upstream task any more.
async fn fails_saying(gateway: &Gateway, client: &Client, task: &Task, what: &str) {
    let failed = finished(client, task).await.expect_err("the task fails");
    assert!(failed.to_string().contains(what), "says `{what}`: {failed}");
    let polled = client.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Failed);
    assert_eq!(gateway.upstream_tasks(), 0);
}

/// Starts `slow` as a task and cancels it through the gateway: the
/// upstream's task is cancelled. The task.
async fn cancels_upstream(gateway: &Gateway, slow: &mut Slow, client: &Client, text: &str) -> Task {
    let task = slow.run(client, text).await;
    client.cancel_task(&task.task_id).await.expect("cancelled");
    assert_eq!(next(&mut slow.cancelled).await, text, "cancelled upstream");
    assert_eq!(gateway.upstream_tasks(), 0);
    task
}

/// A plain call of `slow` stays plain: answered with its result.
async fn stays_plain(slow: &mut Slow, client: &Client) {
    slow.gate.add_permits(1);
    let result = client
        .call_tool("runner_slow", json!({"text": "five"}))
        .await
        .expect("called");
    assert_eq!(text(&result), "slow: five");
    assert_eq!(next(&mut slow.started).await, "five");
}

/// The upstream task is passed through: started there, followed to its
/// result under the gateway's own id; cancelled there when the client
/// cancels; seen by its own client only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_passes_through_to_its_upstream_and_stays_its_clients() {
    let (runner, mut slow, _stop_runner) = tasks_upstream().await;
    let (gateway, url, _stops) = gateway_over(runner).await;
    let support = |name: &str| task_support(&gateway, name);
    assert_eq!(support("runner_slow"), Some(TaskSupport::Optional));
    assert_eq!(support("runner_plain"), None, "never a task");

    let alice = client(&url, Negotiation::HandshakeOnly).await;
    let bob = client(&url, Negotiation::HandshakeOnly).await;

    // Started through the gateway: running upstream, polled here.
    let task = slow.run(&alice, "one").await;
    assert_eq!(gateway.upstream_tasks(), 1);
    let polled = alice.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Working);

    // Another client neither sees, lists nor cancels it: to bob it does
    // not exist.
    let code = |error: mcp_client::Error| error.remote().map(|e| e.code);
    let got = bob.get_task(&task.task_id).await.map(|_| ());
    assert_eq!(
        got.map_err(code),
        Err(Some(ErrorCode::INVALID_PARAMS)),
        "not bob's"
    );
    let cancelled = bob.cancel_task(&task.task_id).await.map(|_| ());
    assert_eq!(
        cancelled.map_err(code),
        Err(Some(ErrorCode::INVALID_PARAMS)),
        "not bob's"
    );
    let listed = bob.list_tasks(None).await.expect("listed");
    assert!(listed.tasks.is_empty(), "bob has none: {listed:?}");
    let listed = alice.list_tasks(None).await.expect("listed");
    let ids: Vec<_> = listed.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, [task.task_id.as_str()]);

    // Let it finish: its client is told, and the result comes under the
    // gateway's task id.
    let mut watch = alice.watch_tasks(std::slice::from_ref(&task.task_id), Default::default());
    slow.gate.add_permits(1);
    let told = tokio::time::timeout(WAIT, async {
        loop {
            let state = watch.next().await.expect("a state").expect("pushed");
            if state.task.status.is_terminal() {
                break state.task.status;
            }
        }
    });
    assert_eq!(told.await.expect("in time"), TaskStatus::Completed);
    drop(watch);
    finishes_under_the_gateways_id(&gateway, &alice, &task, "slow: one").await;
    let task = cancels_upstream(&gateway, &mut slow, &alice, "two").await;
    let polled = alice.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Cancelled);

    // A tool whose upstream runs no tasks: the gateway's task calls it.
    let task = start(&alice, "taskless_hosted", "three").await;
    let result = finished(&alice, &task).await.expect("the result");
    assert_eq!(text(&result), "hosted: three");

    // A tool never run as a task is refused as one.
    let refused = alice
        .call_tool_as_task("runner_plain", json!({"text": "four"}), None)
        .await;
    assert_eq!(
        refused
            .as_ref()
            .err()
            .and_then(|e| e.remote())
            .map(|e| e.code),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "not a task tool: {refused:?}"
    );

    // Plain calls of a task tool stay plain.
    stays_plain(&mut slow, &alice).await;
    gateway.shutdown().await;
}

/// A stateless (2026-07-28) client's task, through the tasks extension,
/// passes through to the handshake-era upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_clients_task_passes_through() {
    let (runner, mut slow, _stop_runner) = tasks_upstream().await;
    let (gateway, url, _stops) = gateway_over(runner).await;
    let carol = client(&url, Negotiation::StatelessOnly).await;
    let task = slow.run(&carol, "six").await;
    assert_eq!(gateway.upstream_tasks(), 1, "passed through");
    slow.gate.add_permits(1);
    let result = finished(&carol, &task).await.expect("the result");
    assert_eq!(text(&result), "slow: six");
    assert_eq!(gateway.upstream_tasks(), 0);
    gateway.shutdown().await;
}

/// An upstream that goes away while it runs a task fails the task, saying
/// so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_lost_mid_task_fails_the_task() {
    lost_mid_task(EraPreference::Handshake).await;
}

/// An upstream spoken to in `era` goes away while it runs a task: the task
/// fails, saying so.
async fn lost_mid_task(era: EraPreference) {
    let (runner, mut slow, stop_runner) = tasks_upstream().await;
    let (gateway, url, _stops) = gateway_over_in(runner, era).await;
    let alice = client(&url, Negotiation::HandshakeOnly).await;
    let task = slow.run(&alice, "seven").await;
    drop(stop_runner);
    fails_saying(&gateway, &alice, &task, "lost the task").await;
    gateway.shutdown().await;
}

/// An upstream process that dies while it runs a task (and is started
/// again) fails the task, naming the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_of_an_upstream_process_that_dies_fails() {
    const DEMO: &str = env!("CARGO_BIN_EXE_mcp-demo-server");
    let limits = mcp_gateway::Limits::new()
        .with_restart_backoff(Duration::from_millis(50), Duration::from_secs(1));
    let config = GatewayConfig::new()
        .with_limits(limits)
        .upstream(
            "demo",
            UpstreamConfig::new(UpstreamTransport::stdio(
                DEMO,
                ["--with-crash-tool", "--with-task-tool"],
            ))
            .with_era(EraPreference::Handshake),
        )
        .expect("demo");
    let gateway = Arc::new(Gateway::builder(config).start().expect("started"));
    tokio::time::timeout(WAIT, gateway.ready())
        .await
        .expect("the demo server connects");
    let server = gateway
        .server(Server::builder("gateway", "1.0.0"))
        .expect("the gateway's server");
    let (url, _stop) = served::serve_http(server).await;
    let alice = client(&url, Negotiation::HandshakeOnly).await;
    let started = alice.call_tool_as_task("demo_linger", json!({}), None);
    let TaskStart::Task(task) = started.await.expect("started") else {
        panic!("demo_linger was not made a task");
    };
    let crashed = alice.call_tool("demo_crash", json!({})).await;
    let crashed = crashed.expect("an error result");
    assert_eq!(crashed.is_error, Some(true), "the process died mid-call");
    fails_saying(&gateway, &alice, &task, "upstream `demo`").await;
    gateway.shutdown().await;
}

/// A stateless (2026-07-28) upstream serving the tasks extension: a task
/// started through the gateway (by a client of either era) runs there,
/// is polled and its result fetched; cancelling it cancels the upstream's;
/// a `required` tool runs as a task; plain calls stay plain; a tool whose
/// upstream runs no tasks is called plainly for the gateway's task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_passes_through_to_a_stateless_upstream() {
    let (runner, mut slow, _stop_runner) = tasks_upstream().await;
    let (gateway, url, _stops) = gateway_over_in(runner, EraPreference::Stateless).await;
    let support = |name: &str| task_support(&gateway, name);
    assert_eq!(support("runner_slow"), Some(TaskSupport::Optional));
    assert_eq!(support("runner_required"), Some(TaskSupport::Required));

    let alice = client(&url, Negotiation::HandshakeOnly).await;
    let task = slow.run(&alice, "one").await;
    assert_eq!(gateway.upstream_tasks(), 1, "passed through");
    let polled = alice.get_task(&task.task_id).await.expect("polled");
    assert_eq!(polled.status, TaskStatus::Working);
    slow.gate.add_permits(1);
    finishes_under_the_gateways_id(&gateway, &alice, &task, "slow: one").await;
    cancels_upstream(&gateway, &mut slow, &alice, "two").await;

    // A tool the upstream runs only as a task.
    let task = start(&alice, "runner_required", "three").await;
    let result = finished(&alice, &task).await.expect("the result");
    assert_eq!(text(&result), "required: three", "no -32021");

    // A stateless client's task too.
    let carol = client(&url, Negotiation::StatelessOnly).await;
    let task = slow.run(&carol, "four").await;
    assert_eq!(gateway.upstream_tasks(), 1, "passed through");
    slow.gate.add_permits(1);
    let result = finished(&carol, &task).await.expect("the result");
    assert_eq!(text(&result), "slow: four");

    // Plain calls of a task tool stay plain: the gateway does not declare
    // the extension for them, so the upstream answers with the result.
    stays_plain(&mut slow, &alice).await;

    // The taskless upstream runs no tasks: the gateway's task calls it.
    let task = start(&alice, "taskless_hosted", "six").await;
    let result = finished(&alice, &task).await.expect("the result");
    assert_eq!(text(&result), "hosted: six");

    // A task that fails upstream fails with the upstream's own error.
    let task = start(&alice, "runner_broken", "seven").await;
    let failed = finished(&alice, &task).await.expect_err("the task fails");
    assert_eq!(
        failed.remote().map(|e| e.message.as_str()),
        Some("the input is broken"),
        "{failed}"
    );

    // A task that asks for input is not relayed: cancelled upstream, and
    // the downstream task fails saying why.
    let task = start(&alice, "runner_asks", "eight").await;
    let failed = finished(&alice, &task).await.expect_err("the task fails");
    assert!(failed.to_string().contains("asked for input"), "{failed}");
    assert_eq!(
        next(&mut slow.cancelled).await,
        "asks",
        "cancelled upstream"
    );
    assert_eq!(gateway.upstream_tasks(), 0);
    gateway.shutdown().await;
}

/// A stateless upstream that goes away while it runs a task fails the
/// task, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_upstream_lost_mid_task_fails_the_task() {
    lost_mid_task(EraPreference::Stateless).await;
}
