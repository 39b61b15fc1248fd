//! Reaching the server: the transport from `--stdio` or `--url`, the era
//! policy, and the client's answers to the server (log lines, elicitation,
//! sampling).

use std::sync::Arc;
use std::time::Duration;

use mcp_client::auth::{Browser, LoopbackRedirect, OAuthClient, OAuthConfig};
use mcp_client::types::ServerNotification;
use mcp_client::{
    Client, ClientConfig, Fault, HttpClientConfig, Negotiation, ServerCommand, SessionEvent,
};
use tokio::sync::mpsc;

use crate::args::{Era, LogLevel, ServerArgs};
use crate::ask;
use crate::error::{CliError, UsageError};
use crate::output::Output;
use crate::split::split_command;
use crate::tokens::{SavedLogin, TokenFile};

/// What the session needs besides the connection.
pub(crate) struct Settings<'a> {
    pub(crate) server: &'a ServerArgs,
    pub(crate) sampling_reply: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) output: Output,
    /// Where the server's notifications go (`watch`), if anywhere.
    pub(crate) notifications: Option<mpsc::Sender<ServerNotification>>,
}

/// Connects and negotiates as the command line says.
pub(crate) async fn connect(settings: Settings<'_>) -> Result<Client, CliError> {
    let server = settings.server;
    let config = client_config(&settings);
    let connecting = "connecting to the server";
    match (&server.stdio, &server.url) {
        (Some(command), None) => {
            let (program, args) = stdio_command(server, command)?;
            let command = ServerCommand::new(program).args(args);
            Client::connect_stdio(command, config)
                .await
                .map_err(|e| CliError::from_client(connecting, e))
        }
        (None, Some(url)) => {
            let mut http = HttpClientConfig::new();
            for (name, value) in headers(server)? {
                http = http
                    .header(&name, &value)
                    .map_err(|_| UsageError::Header(format!("{name}: {value}")))?;
            }
            http = http.authorizer(authorizer(url, server.no_browser)?);
            Client::connect_http_with(url, http, config)
                .await
                .map_err(|e| CliError::from_client(connecting, e))
        }
        _ => Err(UsageError::NoServer.into()),
    }
}

/// The program and arguments of `--stdio` (`--header` is refused with it).
pub(crate) fn stdio_command(
    server: &ServerArgs,
    command: &str,
) -> Result<(String, Vec<String>), UsageError> {
    if !server.headers.is_empty() {
        return Err(UsageError::HeaderWithStdio);
    }
    let mut words = split_command(command)
        .map_err(UsageError::Command)?
        .into_iter();
    let program = words.next().ok_or(UsageError::Command(
        "give the server's command, e.g. --stdio \"python server.py\"",
    ))?;
    Ok((program, words.collect()))
}

/// The `--header`s, each as its name and value.
pub(crate) fn headers(server: &ServerArgs) -> Result<Vec<(String, String)>, UsageError> {
    server
        .headers
        .iter()
        .map(|header| {
            let (name, value) = header
                .split_once(':')
                .ok_or_else(|| UsageError::Header(header.clone()))?;
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

fn client_config(settings: &Settings<'_>) -> ClientConfig {
    let negotiation = match settings.server.era {
        Era::Auto => Negotiation::Newest,
        Era::Stateless => Negotiation::StatelessOnly,
        Era::Handshake => Negotiation::HandshakeOnly,
    };
    let output = settings.output.clone();
    let mut config = ClientConfig::new("mcp-cli", env!("CARGO_PKG_VERSION"))
        .negotiation(negotiation)
        .request_timeout(settings.timeout)
        .on_logging(move |message| {
            let output = output.clone();
            async move { output.log_message(&message) }
        })
        .on_event(session_event(settings.output.clone()));
    if let Some(sink) = settings.notifications.clone() {
        let output = settings.output.clone();
        config = config.on_notification(move |notification| {
            // The read loop must not wait on the printer: a full queue
            // drops the notification and says so.
            if sink.try_send(notification).is_err() {
                output.notice("notifications arrive faster than they print; one was dropped");
            }
            async {}
        });
    }
    config = ask::answer_elicitation(config, settings.output.clone());
    ask::answer_sampling(
        config,
        settings.sampling_reply.clone(),
        settings.output.clone(),
    )
}

/// Says on stderr what happened to the session that no command returns:
/// a session started anew, a fault of the server's (the end of the
/// connection is said by the command that it fails).
fn session_event(output: Output) -> impl Fn(SessionEvent) + Send + Sync + 'static {
    move |event| match event {
        SessionEvent::Restarted(restart) => output.notice(&format!(
            "{}; started a new session ({})",
            restart.reason, restart.revision
        )),
        SessionEvent::Fault(Fault::Disconnected) => {}
        SessionEvent::Fault(fault) => output.notice(&format!("the server misbehaved: {fault}")),
        _ => {}
    }
}

/// OAuth for protected servers: sign in through the browser once, then
/// reuse the token kept for this server.
pub(crate) fn authorizer(url: &str, no_browser: bool) -> Result<Arc<SavedLogin>, CliError> {
    let signing_in = "preparing to sign in";
    let browser = if no_browser {
        Browser::PrintOnly
    } else {
        Browser::System
    };
    let step = LoopbackRedirect::bind()
        .map_err(|e| CliError::Connection {
            doing: signing_in.into(),
            source: Box::new(e),
        })?
        .with_browser(browser);
    let redirect_uri = step.redirect_uri();
    let oauth = OAuthClient::new(OAuthConfig::new("mcp-cli", redirect_uri, Arc::new(step)))
        .map_err(|e| CliError::Connection {
            doing: signing_in.into(),
            source: Box::new(e),
        })?;
    Ok(Arc::new(SavedLogin::new(oauth, TokenFile::for_server(url))))
}

/// The protocol's level for `--log-level`.
pub(crate) fn logging_level(level: LogLevel) -> mcp_client::types::LoggingLevel {
    use mcp_client::types::LoggingLevel as L;
    match level {
        LogLevel::Debug => L::Debug,
        LogLevel::Info => L::Info,
        LogLevel::Notice => L::Notice,
        LogLevel::Warning => L::Warning,
        LogLevel::Error => L::Error,
        LogLevel::Critical => L::Critical,
        LogLevel::Alert => L::Alert,
        LogLevel::Emergency => L::Emergency,
    }
}
