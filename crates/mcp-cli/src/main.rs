#![doc = include_str!("../README.md")]

mod args;
mod arguments;
mod ask;
mod commands;
mod connect;
mod deploy;
mod error;
mod gateway;
mod log;
mod output;
mod redis_url;
mod split;
mod tokens;
mod untrusted;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;
use mcp_client::RequestOptions;
use tokio::sync::mpsc;

use crate::args::{Cli, Command};
use crate::error::CliError;
use crate::output::Output;

/// Notifications queued for `watch` before the newest are dropped.
const NOTIFICATION_QUEUE: usize = 256;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            // --help and --version are not mistakes.
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: could not start the async runtime: {error}");
            return ExitCode::from(3);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            report(&error);
            ExitCode::from(error.exit_code())
        }
    }
}

async fn run(cli: Cli) -> Result<u8, CliError> {
    if let Command::Gateway(args) = &cli.command {
        return gateway::run(&cli.server, args).await;
    }
    let output = Output::new(cli.json);
    let (sink, notifications) = mpsc::channel(NOTIFICATION_QUEUE);
    let watching = matches!(cli.command, Command::Watch(_));
    let client = connect::connect(connect::Settings {
        server: &cli.server,
        sampling_reply: cli.sampling_reply.clone(),
        timeout: Duration::from_secs(cli.timeout),
        output: output.clone(),
        notifications: watching.then_some(sink),
    })
    .await?;
    let mut options = RequestOptions::new();
    if let Some(level) = cli.log_level.map(connect::logging_level) {
        if client.is_stateless() {
            options = options.with_log_level(level);
        } else if let Err(error) = client.set_logging_level(level).await {
            output.notice(&format!("the server did not take the log level: {error}"));
        }
    }
    let run = commands::Run {
        client: &client,
        output: &output,
        options,
        notifications,
    };
    let outcome = commands::run(&cli.command, run).await;
    if let Err(error) = client.close().await {
        output.notice(&format!("closing the connection: {error}"));
    }
    outcome
}

/// `error: what happened: why` on stderr, with each cause once, and the
/// `data` of the server's JSON-RPC error on a line of its own; made
/// printable (the server wrote part of it).
fn report(error: &CliError) {
    let mut message = error.to_string();
    let mut data = None;
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        if let Some(remote) = cause
            .downcast_ref::<mcp_client::Error>()
            .and_then(mcp_client::Error::remote)
        {
            data = remote
                .data
                .as_ref()
                .map(|d| untrusted::json_text(d.to_string()));
        }
        source = cause.source();
    }
    if let Some(data) = data {
        message.push_str("\n  data: ");
        message.push_str(&data);
    }
    eprintln!("error: {}", untrusted::printable(&message));
}
