//! The demo server tested in-process with `mcp-testing`, the way a tool
//! author tests theirs: every tool, the resource, the template and the
//! prompt, in both eras, with scripted sampling and elicitation answers and
//! the progress and log notifications checked as they were sent.
//! (The guide's chapter: docs/guide/testing.md.)

use mcp_examples::demo_server;
use mcp_testing::{Era, TestClient};
use mcp_types::{LoggingLevel, ResourceContents};
use serde_json::json;

#[tokio::test]
async fn every_tool_of_the_demo_server_in_both_eras() {
    let server = demo_server();
    for era in [Era::Handshake, Era::Stateless] {
        let client = TestClient::builder()
            .era(era)
            .sampling_text("a haiku")
            .elicitation_accept(json!({ "name": "Ada" }))
            .elicitation_decline()
            .log_level(LoggingLevel::Info)
            .connect(&server)
            .await
            .expect("connected");

        let sum = client
            .call_tool("add", json!({ "a": 2, "b": 40 }))
            .await
            .unwrap();
        assert_eq!(
            sum.structured_content,
            Some(json!({ "sum": 42 })),
            "{era:?}"
        );
        let overflow = client
            .call_tool("add", json!({ "a": i64::MAX, "b": 1 }))
            .await
            .unwrap();
        assert_eq!(overflow.is_error, Some(true), "{era:?}");

        let sampled = client
            .call_tool("sample", json!({ "prompt": "a poem" }))
            .await
            .unwrap();
        assert_eq!(sampled.content[0].as_text(), Some("a haiku"), "{era:?}");
        let named = client.call_tool("ask_name", ()).await.unwrap();
        assert_eq!(named.content[0].as_text(), Some("hi Ada"), "{era:?}");
        let declined = client.call_tool("ask_name", ()).await.unwrap();
        assert_eq!(
            declined.content[0].as_text(),
            Some("no name: decline"),
            "{era:?}"
        );
        let methods: Vec<_> = client.asked().iter().map(|a| a.method()).collect();
        assert_eq!(
            methods,
            [
                "sampling/createMessage",
                "elicitation/create",
                "elicitation/create"
            ],
            "{era:?}"
        );

        client
            .call_tool("progress", json!({ "steps": 2 }))
            .await
            .unwrap();
        let steps: Vec<_> = client.progress().iter().map(|p| p.progress).collect();
        assert_eq!(steps, [1.0, 2.0], "{era:?}");
        client.call_tool("log", ()).await.unwrap();
        let logs: Vec<_> = client
            .logs()
            .into_iter()
            .map(|l| (l.level, l.data))
            .collect();
        assert_eq!(
            logs,
            [
                (LoggingLevel::Info, json!("info message")),
                (LoggingLevel::Error, json!("error message")),
            ],
            "{era:?}"
        );

        let failed = client.call_tool("fail", ()).await.unwrap();
        assert_eq!(failed.is_error, Some(true), "{era:?}");

        let profile = client.read_resource("users://42/profile").await.unwrap();
        assert!(
            matches!(&profile.contents[0], ResourceContents::Text(t) if t.text == "profile of 42"),
            "{era:?}: {profile:?}"
        );
        let review = client
            .get_prompt("review", [("code", "fn main() {}"), ("language", "Rust")])
            .await
            .unwrap();
        assert_eq!(
            review.messages[0].content.as_text(),
            Some("Review this Rust: fn main() {}"),
            "{era:?}"
        );
        client.close().await.unwrap();
    }
}
