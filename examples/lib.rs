//! Runnable examples of the MCP SDK; each file beside this one is one example.
//! List them with `cargo run --example` (no name).
//!
//! [`demo_server`] is the server the examples, the stdio tests and the
//! interop tests share: the "interop contract" that `interop/python/server.py`
//! implements too, so the same client checks run against either.

pub mod extensions;
#[cfg(doctest)]
mod guide;

use mcp_server::{Args, Context, Json, Server, ToolError, Variables};
use mcp_types::{
    ContentBlock, CreateMessageRequestParams, ElicitAction, ElicitRequestedSchema, ElicitValue,
    LoggingLevel, PrimitiveSchemaDefinition, PromptMessage, Resource, ResourceTemplate, Role,
    SamplingMessage, StringSchema,
};
use serde::{Deserialize, Serialize};

/// Arguments of `add`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

/// Result of `add`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct AddResult {
    /// `a + b`.
    pub sum: i64,
}

/// Arguments of `echo`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// Arguments of `sample`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct SampleArgs {
    /// What to ask the client's model.
    pub prompt: String,
}

/// Arguments of `progress`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct ProgressArgs {
    /// How many progress notifications to send.
    pub steps: u32,
}

/// Arguments of the `review` prompt.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct ReviewArgs {
    /// The code to review.
    pub code: String,
    /// The programming language, if known.
    pub language: Option<String>,
}

/// The demo server: seven tools, a resource, a resource template and a prompt.
///
/// # Panics
/// Never: the registrations are static and valid (a unit test builds it).
pub fn demo_server() -> Server {
    demo_builder()
        .build()
        .expect("the demo server's registrations are valid")
}

/// The demo server's builder, to add more before building.
pub fn demo_builder() -> mcp_server::ServerBuilder {
    let mut readme = Resource::new("file:///readme", "readme");
    readme.mime_type = Some("text/plain".into());
    Server::builder("mcp-rust-demo", env!("CARGO_PKG_VERSION"))
        .instructions(
            "A demo server: arithmetic, echo, sampling, elicitation, progress and logging.",
        )
        .tool("add", "Adds two integers", add)
        .tool("echo", "Sends the text back", echo)
        .tool(
            "sample",
            "Asks the client's model and returns its answer",
            sample,
        )
        .tool("ask_name", "Asks the user for their name", ask_name)
        .tool("progress", "Reports progress in steps", progress)
        .tool("log", "Sends two log messages", log)
        .tool("fail", "Always fails", fail)
        .resource(readme, || async { "Read me." })
        .resource_template(
            ResourceTemplate::new("users://{id}/profile", "profile"),
            profile,
        )
        .prompt("review", "Asks for a code review", review)
}

async fn add(Args(args): Args<AddArgs>) -> Result<Json<AddResult>, ToolError> {
    let sum = args
        .a
        .checked_add(args.b)
        .ok_or_else(|| ToolError::new("the sum does not fit in a 64-bit integer"))?;
    Ok(Json(AddResult { sum }))
}

async fn echo(Args(args): Args<EchoArgs>) -> String {
    args.text
}

async fn sample(Args(args): Args<SampleArgs>, cx: Context) -> Result<String, ToolError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(args.prompt)], 100);
    let result = cx.create_message(&params).await?;
    let text = result
        .content
        .blocks()
        .iter()
        .find_map(|b| b.as_text())
        .ok_or_else(|| ToolError::new("the model answered without text"))?;
    Ok(text.to_owned())
}

async fn ask_name(cx: Context) -> Result<String, ToolError> {
    let schema = ElicitRequestedSchema::new()
        .with_property(
            "name",
            PrimitiveSchemaDefinition::String(StringSchema::new()),
        )
        .with_required(vec!["name".into()]);
    let answer = cx.elicit_form("What is your name?", schema).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name"));
    Ok(match (answer.action, name) {
        (ElicitAction::Accept, Some(ElicitValue::String(name))) => format!("hi {name}"),
        (action, _) => format!("no name: {}", action_name(action)),
    })
}

async fn progress(Args(args): Args<ProgressArgs>, cx: Context) -> Result<&'static str, ToolError> {
    let total = f64::from(args.steps);
    for step in 1..=args.steps {
        cx.report_progress(f64::from(step), Some(total), None)
            .await?;
    }
    Ok("done")
}

async fn log(cx: Context) -> Result<&'static str, ToolError> {
    cx.log(LoggingLevel::Info, "info message").await?;
    cx.log(LoggingLevel::Error, "error message").await?;
    Ok("logged")
}

async fn fail() -> Result<String, ToolError> {
    Err(ToolError::new("this tool always fails"))
}

async fn profile(Variables(profile): Variables<ProfileVariables>) -> String {
    format!("profile of {}", profile.id)
}

async fn review(Args(args): Args<ReviewArgs>) -> PromptMessage {
    let language = args.language.unwrap_or_else(|| "code".into());
    PromptMessage::new(
        Role::User,
        ContentBlock::text(format!("Review this {language}: {}", args.code)),
    )
}

/// The variables of the `users://{id}/profile` template.
#[derive(serde::Deserialize)]
struct ProfileVariables {
    id: String,
}

fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        _ => "cancel",
    }
}

/// Reads a secret (the `requestState` sealing key every replica shares)
/// from the file at `path`: its contents without surrounding whitespace,
/// at least 32 bytes (`head -c 32 /dev/urandom | base64 > FILE` makes one).
///
/// # Errors
/// When the file cannot be read or holds fewer than 32 bytes.
pub fn read_secret(path: &str) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let contents =
        std::fs::read(path).map_err(|e| format!("cannot read the key file {path}: {e}"))?;
    let secret = contents.trim_ascii().to_vec();
    if secret.len() < 32 {
        return Err(format!(
            "the key file {path} holds {} bytes; a key needs at least 32 random bytes",
            secret.len()
        )
        .into());
    }
    Ok(secret)
}

/// What replicas on one Redis share: the HTTP service's stores
/// (`HttpServerConfig::shared`) and the task store (`TasksConfig::store`).
pub struct RedisStores {
    /// Sessions, SSE events and the message bus.
    pub http: mcp_transport::store::SharedStores,
    /// Tasks, so that any replica answers `tasks/get` for a task another runs.
    pub tasks: std::sync::Arc<dyn mcp_server::TaskStore>,
}

/// The shared stores on the Redis at `url` (`redis://host:port/db`, or
/// `redis+sentinel://host:port,…/service` behind Redis Sentinel), with
/// the default key prefix: give them to every replica.
///
/// # Errors
/// When Redis cannot be reached, or the examples were built without the
/// `redis` feature.
pub async fn redis_stores(url: &str) -> Result<RedisStores, Box<dyn std::error::Error>> {
    #[cfg(feature = "redis")]
    {
        let config = mcp_transport::store::redis::RedisConfig::new(url);
        let unreachable = |e: mcp_transport::Error| format!("cannot use the Redis at {url}: {e}");
        let tasks = mcp_server::tasks::RedisTaskStore::connect(config.clone())
            .await
            .map_err(unreachable)?;
        let http = config.connect().await.map_err(unreachable)?;
        Ok(RedisStores {
            http,
            tasks: std::sync::Arc::new(tasks),
        })
    }
    #[cfg(not(feature = "redis"))]
    {
        Err(format!(
            "--redis {url}: built without Redis; build with `--features mcp-examples/redis`"
        )
        .into())
    }
}

/// What [`telemetry`] set up: OpenTelemetry export, or nothing.
pub struct Telemetry(#[cfg(feature = "otel")] Option<mcp_server::otel::Telemetry>);

impl Telemetry {
    /// Flushes what is buffered and stops the exporters (a no-op when
    /// nothing was set up).
    pub fn shutdown(self) {
        #[cfg(feature = "otel")]
        if let Some(telemetry) = self.0 {
            telemetry.shutdown();
        }
    }
}

/// Starts OpenTelemetry export for an example when asked: `--otlp URL` on
/// the command line (an OTLP/HTTP base URL such as `http://127.0.0.1:4318`),
/// else `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/// in the environment; nothing when neither is given. Keep the answer until
/// the program ends and call its `shutdown` to flush.
///
/// # Errors
/// When `--otlp` has no value, the exporters cannot be built, or the
/// examples were built without the `otel` feature and export is asked for.
pub fn telemetry(service_name: &str) -> Result<Telemetry, Box<dyn std::error::Error>> {
    let flag = std::env::args().skip_while(|a| a != "--otlp").nth(1);
    if flag.is_none() && std::env::args().any(|a| a == "--otlp") {
        return Err("--otlp needs a URL, such as http://127.0.0.1:4318".into());
    }
    let from_env = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
    if flag.is_none() && !from_env {
        return Ok(Telemetry(
            #[cfg(feature = "otel")]
            None,
        ));
    }
    #[cfg(feature = "otel")]
    {
        use mcp_server::otel::{OtlpConfig, init_otlp};
        let config = match flag {
            Some(url) => OtlpConfig::from_env().with_endpoint(url),
            None => OtlpConfig::from_env(),
        };
        Ok(Telemetry(Some(init_otlp(
            config.with_service_name(service_name),
        )?)))
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = service_name;
        Err("OpenTelemetry export needs the examples built with the `otel` feature".into())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_demo_server_builds() {
        assert_eq!(super::demo_server().tools().len(), 7);
    }
}
