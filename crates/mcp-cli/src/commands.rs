//! The subcommands: each asks the server once (or listens, for `watch`)
//! and prints the answer as text or JSON.

use std::time::{Duration, Instant};

use mcp_client::types::{
    CompleteArgument, ContentBlock, PromptReference, ResourceContents, ResourceTemplateReference,
    Role, ServerNotification, SubscriptionFilter, SubscriptionsListenRequestParams, methods,
};
use mcp_client::{Client, RequestOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::args::{
    CallArgs, Command, CompleteArgs, PromptsCommand, ResourcesCommand, ToolsCommand, WatchArgs,
};
use crate::arguments;
use crate::error::{CliError, UsageError};
use crate::output::{Output, first_line};

/// The exit code of a run whose requests succeeded: 0, or 1 when the tool
/// reported an error.
pub(crate) type Outcome = Result<u8, CliError>;

/// What a command needs besides its arguments.
pub(crate) struct Run<'a> {
    pub(crate) client: &'a Client,
    pub(crate) output: &'a Output,
    /// Per-call options (`--log-level` in the stateless era).
    pub(crate) options: RequestOptions,
    /// The server's notifications, for `watch`.
    pub(crate) notifications: mpsc::Receiver<ServerNotification>,
}

/// Runs `command`.
pub(crate) async fn run(command: &Command, run: Run<'_>) -> Outcome {
    match command {
        Command::Info => info(&run),
        Command::Tools(ToolsCommand::List) => tools_list(&run).await,
        Command::Tools(ToolsCommand::Call(args)) => tools_call(&run, args).await,
        Command::Resources(ResourcesCommand::List) => resources_list(&run).await,
        Command::Resources(ResourcesCommand::Templates) => templates_list(&run).await,
        Command::Resources(ResourcesCommand::Read { uri }) => resources_read(&run, uri).await,
        Command::Prompts(PromptsCommand::List) => prompts_list(&run).await,
        Command::Prompts(PromptsCommand::Get { name, pairs }) => {
            prompts_get(&run, name, pairs).await
        }
        Command::Complete(args) => complete(&run, args).await,
        Command::Ping => ping(&run).await,
        Command::Watch(args) => watch(run, args).await,
        // `main` runs the gateway before any connection is made.
        Command::Gateway(_) => Err(UsageError::Gateway("the gateway connects on its own").into()),
    }
}

fn failed(doing: &str) -> impl FnOnce(mcp_client::Error) -> CliError + '_ {
    move |error| CliError::from_client(doing, error)
}

fn info(run: &Run<'_>) -> Outcome {
    let session = run.client.session();
    let era = if session.is_stateless() {
        "stateless"
    } else {
        "handshake"
    };
    let revision = session.protocol_version();
    let server = session.server_info();
    let server_capabilities = session.server_capabilities();
    let instructions = session.instructions();
    if run.output.is_json() {
        let report = json!({
            "protocolVersion": revision.as_str(),
            "era": era,
            "serverInfo": server,
            "capabilities": server_capabilities,
            "instructions": instructions,
        });
        run.output.json(&report, false)?;
        return Ok(0);
    }
    let name = match &server {
        Some(server) => {
            let mut name = format!("{} {}", server.name, server.version);
            if let Some(title) = &server.title {
                name.push_str(&format!(" ({title})"));
            }
            name
        }
        None => " ".to_owned(),
    };
    let capabilities = capabilities(
        &server_capabilities
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or(Value::Null),
    );
    let mut rows = vec![
        ("Protocol", format!("{} ({era})", revision.as_str())),
        ("Server", name),
        ("Capabilities", capabilities),
    ];
    if let Some(instructions) = instructions {
        rows.push(("Instructions", instructions));
    }
    for (label, value) in rows {
        run.output.line(&format!("{label:<14}{value}"))?;
    }
    Ok(0)
}

/// `tools (listChanged), resources (subscribe, listChanged), logging`.
fn capabilities(capabilities: &Value) -> String {
    let Some(map) = capabilities.as_object() else {
        return "none".to_owned();
    };
    let names: Vec<String> = map
        .iter()
        .map(|(name, value)| {
            let flags: Vec<&str> = value
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, v)| v.as_bool() == Some(true) || v.is_object())
                        .map(|(k, _)| k.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

async fn tools_list(run: &Run<'_>) -> Outcome {
    let tools = run
        .client
        .list_all_tools()
        .await
        .map_err(failed("listing tools"))?;
    if run.output.is_json() {
        run.output.json(&json!({ "tools": tools }), false)?;
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| vec![tool.name.clone(), first_line(tool.description.as_deref())])
        .collect();
    run.output.table(&["NAME", "DESCRIPTION"], &rows)?;
    Ok(0)
}

async fn tools_call(run: &Run<'_>, args: &CallArgs) -> Outcome {
    let arguments = match &args.args {
        Some(json) => arguments::json_object(json)?,
        None if args.pairs.is_empty() => Default::default(),
        None => {
            // Typing the pairs needs the tool's input schema.
            let tools = run
                .client
                .list_all_tools()
                .await
                .map_err(failed("listing tools to read the input schema"))?;
            let schema = tools
                .iter()
                .find(|t| t.name == args.name)
                .map(|t| &t.input_schema);
            arguments::typed_pairs(&args.pairs, schema)?
        }
    };
    let output = run.output.clone();
    let options = run
        .options
        .clone()
        .with_progress(move |progress: mcp_client::Progress| {
            output.progress(
                progress.progress,
                progress.total,
                progress.message.as_deref(),
            );
        });
    let called = run
        .client
        .call_tool_with(&args.name, arguments, options)
        .await;
    run.output.end_progress();
    let result = called.map_err(failed("calling the tool"))?;
    let is_error = result.is_error == Some(true);
    if run.output.is_json() {
        run.output.json(&result, false)?;
    } else {
        for block in &result.content {
            run.output.line(&content_block(block))?;
        }
        if let Some(structured) = result
            .structured_content
            .as_ref()
            .filter(|_| result.content.is_empty())
        {
            run.output
                .line(&serde_json::to_string_pretty(structured).unwrap_or_default())?;
        }
        if is_error {
            run.output.notice("the tool reported an error");
        }
    }
    Ok(u8::from(is_error))
}

/// One content block as text: its text, or a line saying what it is.
fn content_block(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => media("image", &image.mime_type, &image.data),
        ContentBlock::Audio(audio) => media("audio", &audio.mime_type, &audio.data),
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        ContentBlock::Resource(embedded) => resource_contents(&embedded.resource),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn media(kind: &str, mime_type: &str, data: &str) -> String {
    format!("[{kind}: {mime_type}, {} bytes]", decoded_size(data))
}

/// Resource contents: the text, or a line saying what the blob is.
fn resource_contents(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::Text(text) => text.text.clone(),
        ResourceContents::Blob(blob) => format!(
            "[blob: {} {}, {} bytes]",
            blob.uri,
            blob.mime_type.as_deref().unwrap_or_default(),
            decoded_size(&blob.blob)
        ),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// The size in bytes of the base64 `data` once decoded (padding counted
/// out), without decoding it.
fn decoded_size(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3 + data.len() % 4 * 3 / 4).saturating_sub(padding)
}

async fn resources_list(run: &Run<'_>) -> Outcome {
    let resources = run
        .client
        .list_all_resources()
        .await
        .map_err(failed("listing resources"))?;
    if run.output.is_json() {
        run.output.json(&json!({ "resources": resources }), false)?;
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                first_line(r.description.as_deref()),
            ]
        })
        .collect();
    run.output
        .table(&["URI", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)?;
    Ok(0)
}

async fn templates_list(run: &Run<'_>) -> Outcome {
    let templates = run
        .client
        .list_all_resource_templates()
        .await
        .map_err(failed("listing resource templates"))?;
    if run.output.is_json() {
        run.output
            .json(&json!({ "resourceTemplates": templates }), false)?;
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                t.uri_template.clone(),
                t.name.clone(),
                t.mime_type.clone().unwrap_or_default(),
                first_line(t.description.as_deref()),
            ]
        })
        .collect();
    run.output
        .table(&["URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)?;
    Ok(0)
}

async fn resources_read(run: &Run<'_>, uri: &str) -> Outcome {
    let result = run
        .client
        .read_resource_with(uri, run.options.clone())
        .await
        .map_err(failed("reading the resource"))?;
    if run.output.is_json() {
        run.output.json(&result, false)?;
        return Ok(0);
    }
    for contents in &result.contents {
        run.output.line(&resource_contents(contents))?;
    }
    Ok(0)
}

async fn prompts_list(run: &Run<'_>) -> Outcome {
    let prompts = run
        .client
        .list_all_prompts()
        .await
        .map_err(failed("listing prompts"))?;
    if run.output.is_json() {
        run.output.json(&json!({ "prompts": prompts }), false)?;
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let arguments: Vec<String> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    let required = if a.required == Some(true) { "*" } else { "" };
                    format!("{}{required}", a.name)
                })
                .collect();
            vec![
                p.name.clone(),
                arguments.join(" "),
                first_line(p.description.as_deref()),
            ]
        })
        .collect();
    run.output
        .table(&["NAME", "ARGUMENTS (* required)", "DESCRIPTION"], &rows)?;
    Ok(0)
}

async fn prompts_get(run: &Run<'_>, name: &str, pairs: &[String]) -> Outcome {
    let arguments = arguments::string_pairs(pairs)?;
    let result = run
        .client
        .get_prompt_with(name, arguments, run.options.clone())
        .await
        .map_err(failed("getting the prompt"))?;
    if run.output.is_json() {
        run.output.json(&result, false)?;
        return Ok(0);
    }
    if let Some(description) = &result.description {
        run.output.line(description)?;
    }
    for message in &result.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            _ => "other",
        };
        run.output
            .line(&format!("{role}: {}", content_block(&message.content)))?;
    }
    Ok(0)
}

async fn complete(run: &Run<'_>, args: &CompleteArgs) -> Outcome {
    let context = if args.context.is_empty() {
        None
    } else {
        Some(arguments::string_pairs(&args.context)?)
    };
    let argument = CompleteArgument::new(&args.argument, &args.value);
    let completing = "asking for completions";
    let result = match (&args.prompt, &args.template) {
        (Some(prompt), _) => {
            run.client
                .complete(PromptReference::new(prompt), argument, context)
                .await
        }
        (None, Some(template)) => {
            run.client
                .complete(ResourceTemplateReference::new(template), argument, context)
                .await
        }
        // clap requires one of the two.
        (None, None) => return Err(crate::error::UsageError::NoReference.into()),
    }
    .map_err(failed(completing))?;
    if run.output.is_json() {
        run.output.json(&result, false)?;
        return Ok(0);
    }
    for value in &result.completion.values {
        run.output.line(value)?;
    }
    Ok(0)
}

async fn ping(run: &Run<'_>) -> Outcome {
    let started = Instant::now();
    // The stateless era has no `ping`: a `server/discover` round trip is
    // its liveness check, sent again whatever the session negotiated with
    // (`discover()` would answer from that and prove nothing).
    if run.client.is_stateless() {
        let session = run.client.session();
        session
            .send_discover(session.protocol_version())
            .await
            .map(drop)
            .map_err(failed("pinging the server (server/discover)"))?;
    } else {
        run.client
            .send_ping()
            .await
            .map_err(failed("pinging the server"))?;
    }
    let milliseconds = started.elapsed().as_secs_f64() * 1000.0;
    if run.output.is_json() {
        run.output
            .json(&json!({ "ok": true, "milliseconds": milliseconds }), false)?;
    } else {
        run.output.line(&format!("pong in {milliseconds:.1} ms"))?;
    }
    Ok(0)
}

/// Listens until Ctrl-C or `--count` notifications: in the stateless era
/// through a `subscriptions/listen` request, in the handshake era on the
/// session (subscribing to each `--resource`).
async fn watch(mut run: Run<'_>, args: &WatchArgs) -> Outcome {
    let client = run.client;
    let listen = async {
        if client.is_stateless() {
            let mut filter = SubscriptionFilter::new();
            filter.tools_list_changed = Some(true);
            filter.prompts_list_changed = Some(true);
            filter.resources_list_changed = Some(true);
            if !args.resources.is_empty() {
                filter.resource_subscriptions = Some(args.resources.clone());
            }
            let params = SubscriptionsListenRequestParams::new(filter);
            // The listen request lasts as long as the watch.
            let options = run.options.clone().with_timeout(WATCH_LIMIT);
            client
                .session()
                .request::<methods::SubscriptionsListen>(&params, options)
                .await
                .map(drop)
                .map_err(failed("listening for notifications"))
        } else {
            for uri in &args.resources {
                client
                    .subscribe_resource(uri)
                    .await
                    .map_err(failed("subscribing to the resource"))?;
            }
            run.output
                .to_stderr("watching for notifications (Ctrl-C to stop)");
            std::future::pending().await
        }
    };
    let print = async {
        let mut seen = 0u64;
        while let Some(notification) = run.notifications.recv().await {
            let method = notification.method();
            match method {
                "notifications/message" | "notifications/progress" => continue,
                "notifications/subscriptions/acknowledged" => {
                    run.output
                        .to_stderr("watching for notifications (Ctrl-C to stop)");
                    continue;
                }
                _ => {}
            }
            let params = notification
                .params_json()
                .ok()
                .flatten()
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .unwrap_or(Value::Null);
            if run.output.is_json() {
                run.output
                    .json(&json!({ "method": method, "params": params }), true)?;
            } else if params.as_object().is_some_and(|p| !p.is_empty()) {
                run.output.line(&format!("{method} {params}"))?;
            } else {
                run.output.line(method)?;
            }
            seen += 1;
            if args.count.is_some_and(|count| seen >= count) {
                break;
            }
        }
        Ok::<_, CliError>(())
    };
    tokio::select! {
        listened = listen => listened?,
        printed = print => printed?,
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(0)
}

/// How long a `subscriptions/listen` request may stay open.
const WATCH_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);
