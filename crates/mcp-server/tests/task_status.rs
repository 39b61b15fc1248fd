//! 2025-11-25 task status notifications survive a lagging change feed: a
//! session whose feed fell behind (it lost the change that named its task)
//! is still told the task's end once it catches up.

use std::time::Duration;

use mcp_core::{
    Connection, Handler, IncomingNotification, IncomingRequest, MemoryTransport,
    NotificationContext, RequestContext, SendOptions,
};
use mcp_server::{Server, TasksConfig};
use mcp_types::{ErrorObject, RawJson, TaskStatus, TaskSupport, Tool, ToolExecution};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A client that answers nothing and hands every notification to the test.
struct Notifications(mpsc::UnboundedSender<(String, Value)>);

impl Handler for Notifications {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Err(ErrorObject::method_not_found(&request.method))
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        _: NotificationContext,
    ) {
        let params = notification
            .params
            .and_then(|p| p.parse::<Value>().ok())
            .unwrap_or(Value::Null);
        let _ = self.0.send((notification.method, params));
    }
}

fn raw(value: Value) -> Option<RawJson> {
    Some(RawJson::from_serialize(&value).expect("serializes"))
}

async fn in_time<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .unwrap_or_else(|_| panic!("{what} took longer than 10 s"))
}

/// A raw client of `server` over memory, `initialize`d at 2025-11-25 (not
/// yet `notifications/initialized`): the serving side, the client's
/// connection, and the notifications it hears.
async fn initialize(
    server: &Server,
) -> (
    mcp_server::ServerConnection,
    Connection,
    mpsc::UnboundedReceiver<(String, Value)>,
) {
    let (ours, theirs) = MemoryTransport::pair(256);
    let serving = server.serve(theirs);
    let (notified, notifications) = mpsc::unbounded_channel();
    let client = Connection::start(ours, Notifications(notified), Default::default());
    request(
        client.peer(),
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }),
    )
    .await;
    (serving, client, notifications)
}

/// `method`'s result (a failure fails the test).
async fn request(peer: &mcp_core::Peer, method: &str, params: Value) -> Value {
    let answer = peer
        .request(method, raw(params), SendOptions::new())
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    answer.parse::<Value>().expect("json")
}

#[tokio::test]
async fn a_lagging_session_is_still_told_that_its_task_ended() {
    let mut quick = Tool::new("quick", mcp_types::JsonObject::new());
    quick.execution = Some(ToolExecution::new().with_task_support(TaskSupport::Optional));
    let server = Server::builder("tasks", "1")
        .tasks(TasksConfig::new())
        .list_changed(true)
        .tool_with(quick, || async { "done" })
        .build()
        .expect("a valid server");
    let (_serving, client, mut notifications) = initialize(&server).await;
    let peer = client.peer();
    let request = |method: &'static str, params: Value| request(peer, method, params);
    // Until `notifications/initialized` the session's feed is not read, so
    // what is announced meanwhile piles up in it.
    let created = request(
        "tools/call",
        json!({"name": "quick", "arguments": {}, "task": {}}),
    )
    .await;
    let task_id = created["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    in_time("the task's end", async {
        loop {
            let got = request("tasks/get", json!({"taskId": task_id})).await;
            if got["status"] == "completed" {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    // More changes than the feed keeps: the one naming the task is lost.
    for _ in 0..100 {
        server.list_changes().tools_changed();
    }
    peer.notify("notifications/initialized", None)
        .await
        .expect("initialized");

    let told = in_time("the task's status notification", async {
        loop {
            let (method, params) = notifications.recv().await.expect("connected");
            if method == "notifications/tasks/status" && params["taskId"] == task_id.as_str() {
                return params;
            }
        }
    })
    .await;
    assert_eq!(
        told["status"],
        serde_json::to_value(TaskStatus::Completed).expect("status")
    );
}

#[tokio::test]
async fn a_tools_code_knows_the_task_it_runs_as() {
    let mut which = Tool::new("which", mcp_types::JsonObject::new());
    which.execution = Some(ToolExecution::new().with_task_support(TaskSupport::Optional));
    let server = Server::builder("tasks", "1")
        .tasks(TasksConfig::new())
        .tool_with(which, |cx: mcp_server::Context| async move {
            cx.session().task_id().unwrap_or("none").to_owned()
        })
        .build()
        .expect("a valid server");
    let (_serving, client, _notifications) = initialize(&server).await;
    let peer = client.peer();
    let request = |method: &'static str, params: Value| request(peer, method, params);
    peer.notify("notifications/initialized", None)
        .await
        .expect("initialized");

    let plain = request("tools/call", json!({"name": "which", "arguments": {}})).await;
    assert_eq!(plain["content"][0]["text"], "none", "no task: {plain}");
    let created = request(
        "tools/call",
        json!({"name": "which", "arguments": {}, "task": {}}),
    )
    .await;
    let task_id = created["task"]["taskId"].as_str().expect("a task");
    let result = in_time(
        "the task's result",
        request("tasks/result", json!({"taskId": task_id})),
    )
    .await;
    assert_eq!(
        result["content"][0]["text"], task_id,
        "its own task: {result}"
    );
}
