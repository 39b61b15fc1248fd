//! Two servers sharing their stores serve one client as one: every test
//! runs two `serve_http` instances on 127.0.0.1 (each its own `Server`, so
//! nothing is shared in process but the stores, the task store and the
//! `requestState` secret) against the in-memory stores and, with feature
//! `redis`, against one real redis-server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_server::types::{ElicitRequestedSchema, JsonObject, TaskSupport, Tool, ToolExecution};
use mcp_server::{
    Args, Context, LoggingLevel, Resource, Server, State, TaskStore, TasksConfig, ToolError,
};
use mcp_transport::http::HttpServerConfig;
use mcp_transport::store::SharedStores;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tokio::time::timeout;

mod common;
use common::{
    WAIT, call, in_session, mint_session, open_get, open_session, post, read_all, read_until,
    request, send_initialized, status,
};

/// The `requestState` secret every instance shares (as replicas must).
const STATE_KEY: &[u8; 32] = b"a secret both instances share...";

/// `delete`: runs as a task, then asks for a confirmation; its `file`
/// argument also travels in the `Mcp-Param-File` header.
fn delete_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {"file": {"type": "string", "x-mcp-header": "File"}},
        "required": ["file"]
    });
    let Value::Object(schema) = schema else {
        unreachable!("an object")
    };
    let mut tool = Tool::new("delete", schema);
    tool.execution = Some(ToolExecution::new().with_task_support(TaskSupport::Optional));
    tool
}

/// The form `delete` asks to confirm with.
struct ConfirmForm(ElicitRequestedSchema);

/// Notified by the test, so that `stream` logs its second message.
struct Release(Arc<Notify>);

async fn delete(
    Args(arguments): Args<JsonObject>,
    State(form): State<ConfirmForm>,
    cx: Context,
) -> Result<String, ToolError> {
    let file = arguments
        .get("file")
        .and_then(Value::as_str)
        .unwrap_or("nothing")
        .to_owned();
    cx.run_as_task().await;
    let answer = cx
        .elicit_form(&format!("Really delete {file}?"), form.0.clone())
        .await?;
    let confirmed = answer
        .content
        .as_ref()
        .and_then(|c| c.get("confirm"))
        .is_some_and(|v| matches!(v, mcp_server::types::ElicitValue::Boolean(true)));
    Ok(if confirmed {
        format!("deleted {file}")
    } else {
        format!("kept {file}")
    })
}

async fn whoami(cx: Context) -> String {
    let name = cx
        .session()
        .client_info()
        .map(|i| i.name)
        .unwrap_or_default();
    format!("{name} {:?}", cx.session().log_level())
}

async fn roots(cx: Context) -> Result<String, ToolError> {
    let roots = cx.list_roots().await?;
    Ok(roots
        .roots
        .first()
        .map(|r| r.uri.clone())
        .unwrap_or_default())
}

async fn stream(State(release): State<Release>, cx: Context) -> Result<&'static str, ToolError> {
    cx.log(LoggingLevel::Info, "first").await?;
    release.0.notified().await;
    cx.log(LoggingLevel::Info, "second").await?;
    Ok("streamed")
}

fn server(release: Arc<Notify>, tasks: Arc<dyn TaskStore>) -> Server {
    let confirm_form: ElicitRequestedSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]
    }))
    .expect("a form");
    Server::builder("shared", "1")
        .tasks(
            TasksConfig::new()
                .store(tasks)
                .poll_interval(Duration::from_millis(20)),
        )
        .request_state_key(STATE_KEY.to_vec())
        .with_state(ConfirmForm(confirm_form))
        .with_state(Release(release))
        .tool_raw(delete_tool(), delete)
        .tool("whoami", "Who the session's client is", whoami)
        .tool("roots", "Asks the client for its roots", roots)
        .tool("stream", "Logs, waits, logs again", stream)
        .resource(Resource::new("file:///r", "r"), || async { "r" })
        .resource(Resource::new("file:///on-a", "on-a"), || async { "a" })
        .resource(Resource::new("file:///on-b", "on-b"), || async { "b" })
        .resource(Resource::new("file:///on-a-too", "on-a-too"), || async {
            "a"
        })
        .build()
        .expect("valid server")
}

/// One of the two servers.
struct Instance {
    addr: SocketAddr,
    server: Server,
    release: Arc<Notify>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Instance {
    async fn start(stores: SharedStores, tasks: Arc<dyn TaskStore>) -> Self {
        let release = Arc::new(Notify::new());
        let server = server(release.clone(), tasks);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let config = HttpServerConfig::new().shared(stores);
        let running = server.clone();
        let served = tokio::spawn(async move {
            running
                .serve_http(listener, config, async {
                    let _ = stopped.await;
                })
                .await
        });
        Self {
            addr,
            server,
            release,
            stop: Some(stop),
            served,
        }
    }

    async fn stop(mut self) {
        let _ = self.stop.take().expect("running").send(());
        timeout(WAIT, &mut self.served)
            .await
            .expect("serve returns")
            .expect("joined")
            .expect("served");
    }
}

/// A session initialized on one server is served by the other, with the
/// state set on the first (client info, log level).
async fn a_session_minted_by_one_server_is_served_by_the_other(a: &Instance, b: &Instance) {
    let session = open_session(a.addr).await;
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                       "params": {"level": "error"}});
    assert!(post(a.addr, &session, level).await.contains("\"result\""));
    let answer = post(b.addr, &session, call(2, "whoami")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(
        answer.contains("shared-client Some(Error)"),
        "restored on the other server: {answer}"
    );
    let unknown = post(b.addr, "no-such-session", call(3, "whoami")).await;
    assert_eq!(status(&unknown), 404, "{unknown}");
}

/// DELETE on one server ends the session on both, its GET stream included.
async fn delete_on_one_server_ends_the_session_everywhere(a: &Instance, b: &Instance) {
    let session = open_session(a.addr).await;
    let mut get = open_get(a.addr, &session, None).await;
    let mut text = String::new();
    read_until(&mut get, &mut text, "200 OK").await;
    let deleted = read_all(request(b.addr, "DELETE", &in_session(&session), "").await).await;
    assert_eq!(status(&deleted), 200, "{deleted}");
    timeout(WAIT, get.read_to_end(&mut Vec::new()))
        .await
        .expect("the GET stream on the first server ends")
        .expect("read");
    for addr in [a.addr, b.addr] {
        let answer = post(addr, &session, call(9, "whoami")).await;
        assert_eq!(status(&answer), 404, "{answer}");
    }
}

/// Announces an update of `uri` on `on` until the GET stream `get` carries
/// it (an update before the stream opened has no stream to go on); `Err`
/// after [`WAIT`].
async fn announce_until_read(
    on: &Instance,
    get: &mut TcpStream,
    text: &mut String,
    uri: &str,
) -> Result<(), tokio::time::error::Elapsed> {
    // Only updates travel on this GET stream.
    let needle = format!("\"uri\":\"{uri}\"");
    let arrived = async {
        while !text.contains(&needle) {
            on.server.list_changes().resource_updated(uri);
            let mut buffer = [0u8; 4096];
            if let Ok(read) = timeout(Duration::from_millis(200), get.read(&mut buffer)).await {
                let n = read.expect("read");
                assert!(n > 0, "the GET stream ended: {text}");
                text.push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        }
    };
    timeout(WAIT, arrived).await
}

/// A resource update announced on one server reaches a subscriber whose
/// GET stream is on the other.
async fn a_resource_update_on_one_server_reaches_a_subscriber_on_the_other(
    a: &Instance,
    b: &Instance,
) {
    let session = open_session(a.addr).await;
    let (mut get, mut text) = subscribe_and_listen(a.addr, &session, "file:///r").await;
    announce_until_read(b, &mut get, &mut text, "file:///r")
        .await
        .expect("the update reaches the subscriber on the other server");
}

/// `notifications/initialized` reaching the other server: the minting one
/// counts the session as initialized once a request follows there, so it
/// forwards the session's resource updates (it waited for ever before).
async fn initialized_through_the_other_server_counts_once_a_request_follows(
    a: &Instance,
    b: &Instance,
) {
    let session = mint_session(a.addr).await;
    send_initialized(b.addr, &session).await;
    let (mut get, mut text) = subscribe_and_listen(a.addr, &session, "file:///on-a-too").await;
    announce_until_read(a, &mut get, &mut text, "file:///on-a-too")
        .await
        .expect("the minting server forwards the update");
}

/// Subscriptions made through either server all count: each server merges
/// its own into the shared record, and the server holding the GET stream
/// reads the record again for a URI it did not see subscribed.
async fn subscriptions_made_on_either_server_all_count(a: &Instance, b: &Instance) {
    let session = open_session(a.addr).await;
    for (addr, id, uri) in [(a.addr, 1, "file:///on-a"), (b.addr, 2, "file:///on-b")] {
        let subscribe = json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
                               "params": {"uri": uri}});
        let answer = post(addr, &session, subscribe).await;
        assert!(answer.contains("\"result\""), "{uri}: {answer}");
    }
    // Subscribed on a again: b's subscription must survive a's save.
    let again = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
                       "params": {"uri": "file:///on-a-too"}});
    assert!(post(a.addr, &session, again).await.contains("\"result\""));
    let mut get = open_get(a.addr, &session, None).await;
    let mut text = String::new();
    read_until(&mut get, &mut text, "200 OK").await;
    announce_until_read(b, &mut get, &mut text, "file:///on-b")
        .await
        .expect("an update for the URI subscribed through b reaches the stream on a");
}

/// A server-to-client request sent by one server and answered through the
/// other reaches the handler waiting on the first.
async fn an_answer_through_the_other_server_reaches_the_waiting_handler(
    a: &Instance,
    b: &Instance,
) {
    let session = open_session(a.addr).await;
    let mut call_stream = request(
        a.addr,
        "POST",
        &in_session(&session),
        &call(5, "roots").to_string(),
    )
    .await;
    let mut text = String::new();
    read_until(&mut call_stream, &mut text, "roots/list").await;
    let start = text.find("{\"jsonrpc\"").expect("an event");
    let asked: Value = serde_json::Deserializer::from_str(&text[start..])
        .into_iter()
        .next()
        .expect("one")
        .expect("json");
    assert_eq!(asked["method"], "roots/list", "{text}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"roots": [{"uri": "file:///answered-on-b"}]}});
    let routed = post(b.addr, &session, answer).await;
    assert_eq!(status(&routed), 202, "{routed}");
    read_until(&mut call_stream, &mut text, "file:///answered-on-b").await;
    assert!(text.contains("\"id\":5"), "the tool's result: {text}");
}

/// A POST stream of one server, cut off, resumes on the other with
/// `Last-Event-ID`: every later event once, in order, the answer last.
async fn a_stream_resumes_on_the_other_server_without_loss_or_duplicates(
    a: &Instance,
    b: &Instance,
) {
    let session = open_session(a.addr).await;
    let mut call_stream = request(
        a.addr,
        "POST",
        &in_session(&session),
        &call(7, "stream").to_string(),
    )
    .await;
    let mut text = String::new();
    read_until(&mut call_stream, &mut text, "first").await;
    let last_id = text
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("id: "))
        .next()
        .expect("an event id")
        .trim()
        .to_owned();
    drop(call_stream);
    let mut resumed = open_get(b.addr, &session, Some(&last_id)).await;
    let mut replayed = String::new();
    read_until(&mut resumed, &mut replayed, "200 OK").await;
    // The rest is written on the first server while the second follows.
    a.release.notify_one();
    read_until(&mut resumed, &mut replayed, "streamed").await;
    replayed.push_str(&read_all(resumed).await);
    assert_eq!(replayed.matches("second").count(), 1, "once: {replayed}");
    assert!(
        !replayed.contains("\"first\""),
        "nothing up to the id: {replayed}"
    );
    let second = replayed.find("second").expect("second");
    let answer = replayed.find("streamed").expect("answer");
    assert!(second < answer, "in order: {replayed}");
}

/// A stateless (2026-07-28) request declaring the tasks extension and
/// form elicitation, with `headers` besides the era's own; its JSON-RPC
/// answer.
async fn stateless(
    addr: SocketAddr,
    id: u64,
    method: &str,
    (name_header, name): (&str, &str),
    mut params: Value,
    headers: &[(&str, &str)],
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut all = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ];
    all.extend_from_slice(headers);
    let answer = read_all(request(addr, "POST", &all, &body.to_string()).await).await;
    assert_eq!(status(&answer), 200, "{name_header}: {answer}");
    let start = answer.find("{\"").expect("a JSON body");
    serde_json::Deserializer::from_str(&answer[start..])
        .into_iter::<Value>()
        .next()
        .expect("one message")
        .expect("json")
}

async fn get_task(addr: SocketAddr, id: u64, task_id: &str) -> Value {
    let answer = stateless(
        addr,
        id,
        "tasks/get",
        ("taskId", task_id),
        json!({"taskId": task_id}),
        &[],
    )
    .await;
    answer["result"].clone()
}

/// Polls `tasks/get` on `addr` until the task is `status`.
async fn until_status(addr: SocketAddr, task_id: &str, status: &str) -> Value {
    let polled = async {
        for id in 100.. {
            let task = get_task(addr, id, task_id).await;
            if task["status"] == status {
                return task;
            }
            assert!(
                task["status"] == "working" || task["status"] == "input_required",
                "{task}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        unreachable!("polled without end")
    };
    timeout(WAIT, polled)
        .await
        .unwrap_or_else(|_| panic!("task {task_id} not {status} within {WAIT:?}"))
}

/// A task that asks for input, started on one server, is answered through
/// the other: the other runs the call again from the shared record (tool,
/// arguments, the answers, the sealed state) and the task completes, read
/// on either server.
async fn a_task_started_on_one_server_is_answered_through_the_other(a: &Instance, b: &Instance) {
    let created = stateless(
        a.addr,
        1,
        "tools/call",
        ("name", "delete"),
        json!({"name": "delete", "arguments": {"file": "notes.txt"}}),
        &[("Mcp-Param-File", "notes.txt")],
    )
    .await;
    let task_id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let waiting = until_status(b.addr, &task_id, "input_required").await;
    let requests = waiting["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("open requests: {waiting}"));
    assert_eq!(requests.len(), 1, "{waiting}");
    let key = requests.keys().next().expect("a key").clone();
    let mut responses = serde_json::Map::new();
    responses.insert(
        key,
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let updated = stateless(
        b.addr,
        2,
        "tasks/update",
        ("taskId", &task_id),
        json!({"taskId": task_id, "inputResponses": responses}),
        &[],
    )
    .await;
    assert!(updated["result"].is_object(), "acknowledged: {updated}");
    let done = until_status(a.addr, &task_id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "deleted notes.txt",
        "{done}"
    );
    assert_eq!(
        get_task(b.addr, 3, &task_id).await,
        done,
        "the same on both"
    );
}

/// A task waiting for input whose record keeps no call (as written by an
/// older server) fails with a clear error when answered, instead of hanging.
async fn a_task_kept_without_its_call_fails_clearly(a: &Instance, tasks: &dyn TaskStore) {
    use mcp_server::tasks::{TaskRecord, TaskUpdate};
    let task_id = mcp_server::tasks::contract::unique("old");
    let old = TaskRecord::working(
        task_id.clone(),
        "anonymous".into(),
        "tools/call".into(),
        1,
        Some(60_000),
        Some(20),
    );
    tasks.create(old).await.expect("created");
    let open = json!({"confirm": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Sure?",
        "requestedSchema": {"type": "object", "properties": {}}}}});
    let Value::Object(open) = open else {
        unreachable!("an object")
    };
    tasks
        .transition(
            "anonymous",
            &task_id,
            TaskUpdate::input_required(open, None),
            2,
        )
        .await
        .expect("input_required");
    let updated = stateless(
        a.addr,
        4,
        "tasks/update",
        ("taskId", &task_id),
        json!({"taskId": task_id,
               "inputResponses": {"confirm": {"action": "accept", "content": {}}}}),
        &[],
    )
    .await;
    assert!(updated["result"].is_object(), "acknowledged: {updated}");
    let failed = until_status(a.addr, &task_id, "failed").await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("keeps no call to run again"), "{failed}");
}

async fn every_scenario(
    stores_a: SharedStores,
    stores_b: SharedStores,
    tasks_a: Arc<dyn TaskStore>,
    tasks_b: Arc<dyn TaskStore>,
) {
    let a = Instance::start(stores_a, tasks_a.clone()).await;
    let b = Instance::start(stores_b, tasks_b).await;
    a_task_started_on_one_server_is_answered_through_the_other(&a, &b).await;
    a_task_kept_without_its_call_fails_clearly(&a, tasks_a.as_ref()).await;
    a_session_minted_by_one_server_is_served_by_the_other(&a, &b).await;
    a_session_minted_by_one_server_is_served_by_the_other(&b, &a).await;
    an_answer_through_the_other_server_reaches_the_waiting_handler(&a, &b).await;
    a_resource_update_on_one_server_reaches_a_subscriber_on_the_other(&a, &b).await;
    initialized_through_the_other_server_counts_once_a_request_follows(&a, &b).await;
    subscriptions_made_on_either_server_all_count(&a, &b).await;
    a_stream_resumes_on_the_other_server_without_loss_or_duplicates(&a, &b).await;
    delete_on_one_server_ends_the_session_everywhere(&a, &b).await;
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_sharing_in_memory_stores_serve_one_client_as_one() {
    let stores = SharedStores::in_memory();
    let tasks: Arc<dyn TaskStore> = Arc::new(mcp_server::InMemoryTaskStore::new());
    every_scenario(stores.clone(), stores, tasks.clone(), tasks).await;
}

#[cfg(feature = "redis")]
#[path = "../../mcp-transport/tests/support/redis_server.rs"]
mod redis_server;

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_sharing_one_redis_serve_one_client_as_one() {
    use mcp_transport::store::redis::RedisConfig;
    let redis = redis_server::RedisServer::start();
    let config = || RedisConfig::new(redis.url()).prefix("two");
    let a = config().connect().await.expect("connect");
    let b = config().connect().await.expect("connect");
    let task_store = || async {
        let store = mcp_server::tasks::RedisTaskStore::connect(config())
            .await
            .expect("connect");
        Arc::new(store) as Arc<dyn TaskStore>
    };
    every_scenario(a, b, task_store().await, task_store().await).await;
}

/// Subscribes `session` to `uri` on the server at `addr` and opens its GET
/// stream there, read up to its status line: the stream and what was read.
async fn subscribe_and_listen(
    addr: std::net::SocketAddr,
    session: &str,
    uri: &str,
) -> (tokio::net::TcpStream, String) {
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                           "params": {"uri": uri}});
    assert!(post(addr, session, subscribe).await.contains("\"result\""));
    let mut get = open_get(addr, session, None).await;
    let mut text = String::new();
    read_until(&mut get, &mut text, "200 OK").await;
    (get, text)
}
