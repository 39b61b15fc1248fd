//! The test client against a real server in this process, in both eras:
//! scripted answers reach the handler, asks and notifications are recorded
//! in order, an unscripted ask fails with a message that says what to add.

use mcp_server::types::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, Resource, ResourceContents,
    SamplingMessage,
};
use mcp_server::{Args, Context, Elicitation, Server, ToolError};
use mcp_testing::{Era, InputRequest, TestClient};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    topic: String,
}

async fn greet(cx: Context) -> Result<String, ToolError> {
    Ok(match cx.elicit::<Name>("Your name?").await? {
        Elicitation::Accepted(Name { name }) => format!("hello {name}"),
        Elicitation::Declined | Elicitation::Cancelled => "hello, stranger".into(),
    })
}

async fn summarize(cx: Context) -> Result<String, ToolError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("summarize")], 100);
    let answer = cx.create_message(&params).await?;
    Ok(format!("model {} said {:?}", answer.model, answer.content))
}

async fn roots(cx: Context) -> Result<String, ToolError> {
    let roots = cx.list_roots().await?;
    Ok(format!("{} roots", roots.roots.len()))
}

async fn work(Args(args): Args<Steps>, cx: Context) -> Result<&'static str, ToolError> {
    for step in 1..=args.steps {
        cx.report_progress(f64::from(step), Some(f64::from(args.steps)), None)
            .await?;
        cx.log(LoggingLevel::Info, format!("step {step}")).await?;
    }
    cx.log(LoggingLevel::Debug, "done").await?;
    Ok("worked")
}

async fn explain(Args(args): Args<Topic>) -> String {
    format!("Explain {}", args.topic)
}

fn server() -> Server {
    Server::builder("under-test", "1.0.0")
        .tool("greet", "Asks for a name", greet)
        .tool("summarize", "Asks the model", summarize)
        .tool("roots", "Counts the roots", roots)
        .tool("work", "Reports progress and logs", work)
        .resource(Resource::new("mem://motd", "motd"), || async { "be kind" })
        .prompt("explain", "Explains a topic", explain)
        .build()
        .expect("the server builds")
}

const ERAS: [Era; 2] = [Era::Handshake, Era::Stateless];

#[tokio::test]
async fn scripted_elicitation_answers_reach_the_handler_in_order_in_both_eras() {
    let server = server();
    for era in ERAS {
        let client = TestClient::builder()
            .era(era)
            .elicitation_accept(json!({ "name": "Ada" }))
            .elicitation_decline()
            .connect(&server)
            .await
            .expect("connected");
        assert_eq!(client.is_stateless(), era == Era::Stateless);
        let first = client.call_tool("greet", ()).await.expect("called");
        assert_eq!(first.content[0].as_text(), Some("hello Ada"), "{era:?}");
        let second = client.call_tool("greet", ()).await.expect("called");
        assert_eq!(
            second.content[0].as_text(),
            Some("hello, stranger"),
            "{era:?}"
        );
        let asked = client.asked();
        assert_eq!(asked.len(), 2, "{era:?}: each ask recorded once: {asked:?}");
        assert!(
            matches!(&asked[0], InputRequest::Elicit(ElicitRequestParams::Form(form)) if form.message == "Your name?"),
            "{era:?}: {asked:?}"
        );
        assert!(
            client.asked().is_empty(),
            "asked() forgets what it returned"
        );
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn sampling_and_roots_are_answered_from_the_script_in_both_eras() {
    let server = server();
    for era in ERAS {
        let client = TestClient::builder()
            .era(era)
            .sampling_text("short")
            .roots(["file:///a", "file:///b"])
            .connect(&server)
            .await
            .expect("connected");
        let sampled = client.call_tool("summarize", ()).await.expect("called");
        let text = sampled.content[0].as_text().expect("text");
        assert!(
            text.starts_with("model mcp-testing said"),
            "{era:?}: {text}"
        );
        assert!(text.contains("short"), "{era:?}: {text}");
        let roots = client.call_tool("roots", ()).await.expect("called");
        assert_eq!(roots.content[0].as_text(), Some("2 roots"), "{era:?}");
        let methods: Vec<_> = client.asked().iter().map(InputRequest::method).collect();
        assert_eq!(methods, ["sampling/createMessage", "roots/list"], "{era:?}");
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn an_ask_with_no_scripted_answer_left_fails_naming_the_builder_method() {
    let server = server();
    for era in ERAS {
        let client = TestClient::builder()
            .era(era)
            .elicitation_decline()
            .connect(&server)
            .await
            .expect("connected");
        client
            .call_tool("greet", ())
            .await
            .expect("the first is scripted");
        let message = match (era, client.call_tool("greet", ()).await) {
            // Handshake: the handler's ask fails and the tool reports it.
            (Era::Handshake, Ok(result)) => {
                assert_eq!(result.is_error, Some(true), "{era:?}: {result:?}");
                result.content[0].as_text().unwrap_or_default().to_owned()
            }
            // Stateless: the client cannot answer the input request.
            (Era::Stateless, Err(error)) => error.to_string(),
            (era, other) => panic!("{era:?}: the wrong kind of failure: {other:?}"),
        };
        assert!(
            message.contains("TestClientBuilder::elicitation_reply"),
            "{era:?}: {message}"
        );
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn progress_and_logs_are_recorded_in_order_before_the_result_returns() {
    let server = server();
    for era in ERAS {
        let client = TestClient::builder()
            .era(era)
            .log_level(LoggingLevel::Info)
            .connect(&server)
            .await
            .expect("connected");
        let result = client
            .call_tool("work", json!({ "steps": 3 }))
            .await
            .expect("called");
        assert_eq!(result.content[0].as_text(), Some("worked"));
        let progress: Vec<_> = client
            .progress()
            .iter()
            .map(|p| (p.progress, p.total))
            .collect();
        assert_eq!(
            progress,
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "{era:?}"
        );
        // Info and above: the debug message is filtered by the server.
        let logs: Vec<_> = client
            .logs()
            .into_iter()
            .map(|l| (l.level, l.data))
            .collect();
        assert_eq!(
            logs,
            [
                (LoggingLevel::Info, json!("step 1")),
                (LoggingLevel::Info, json!("step 2")),
                (LoggingLevel::Info, json!("step 3")),
            ],
            "{era:?}"
        );
        assert!(client.logs().is_empty() && client.progress().is_empty());
        client.close().await.expect("closed");
    }
}

#[tokio::test]
async fn without_a_log_level_a_stateless_server_sends_no_log() {
    let client = TestClient::connect(&server()).await.expect("connected");
    client
        .call_tool("work", json!({ "steps": 1 }))
        .await
        .expect("called");
    assert!(client.logs().is_empty());
    assert_eq!(client.progress().len(), 1);
    client.close().await.expect("closed");
}

#[tokio::test]
async fn resources_and_prompts_return_their_wire_results_in_both_eras() {
    let server = server();
    for era in ERAS {
        let client = TestClient::builder()
            .era(era)
            .connect(&server)
            .await
            .expect("connected");
        let read = client.read_resource("mem://motd").await.expect("read");
        assert!(
            matches!(&read.contents[0], ResourceContents::Text(text) if text.text == "be kind"),
            "{era:?}: {read:?}"
        );
        let prompt = client
            .get_prompt("explain", [("topic", "tides")])
            .await
            .expect("got");
        assert_eq!(
            prompt.messages[0].content.as_text(),
            Some("Explain tides"),
            "{era:?}"
        );
        client.close().await.expect("closed");
    }
}
