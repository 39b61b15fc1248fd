//! Tasks end to end: our client against our server, in memory and over
//! HTTP on 127.0.0.1. The 2025-11-25 core methods (`tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`, task-augmented
//! `tools/call`).

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, Error};
use mcp_server::{Context, NoArguments, Server, TasksConfig};
use mcp_types::{ErrorCode, Revision, TaskStatus, TaskSupport, Tool, ToolExecution};
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
        .tool_with(
            tool("slow", Some(TaskSupport::Optional)),
            move |_: NoArguments, _cx: Context| {
                let gate = slow_gate.clone();
                async move {
                    let _permit = gate.acquire().await;
                    "done"
                }
            },
        )
        .tool_with(
            tool("forever", Some(TaskSupport::Optional)),
            move |_: NoArguments, _cx: Context| {
                let guard = SendOnDrop(dropped_tx.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    "never"
                }
            },
        )
        .tool_with(
            tool("only_as_task", Some(TaskSupport::Required)),
            |_: NoArguments, _cx: Context| async move { "ran as a task" },
        )
        .tool_with(
            tool("plain", None),
            |_: NoArguments, _cx: Context| async move { "plain" },
        )
        .build()
        .expect("server");
    (server, Controls { gate, dropped })
}

fn config() -> ClientConfig {
    ClientConfig::new("tasks-client", "1")
        .protocol_version(Revision::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
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

    let task = client
        .call_tool_as_task("slow", json!({}), Some(Duration::from_secs(60)))
        .await
        .expect("created");
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

    let endless = client
        .call_tool_as_task("forever", json!({}), None)
        .await
        .expect("created");
    let cancelled = client
        .cancel_task(&endless.task_id)
        .await
        .expect("cancelled");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    in_time(
        "the cancelled tool's code to be dropped",
        controls.dropped.recv(),
    )
    .await
    .expect("dropped");
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

#[tokio::test]
async fn core_tasks_over_http() {
    let (server, controls) = server();
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
    let client = Client::connect_http(&url, config())
        .await
        .expect("connected");
    core_lifecycle(client, controls).await;
    let _ = stop.send(());
    in_time("the server to stop", serving)
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test]
async fn a_server_without_tasks_refuses_the_core_methods() {
    let server = Server::builder("no-tasks", "1")
        .tool_with(
            tool("slow", Some(TaskSupport::Optional)),
            |_: NoArguments, _cx: Context| async move { "done" },
        )
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
