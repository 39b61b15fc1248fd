//! The test client: a [`Client`] connected to a server in this process, in
//! a chosen era, with scripted answers and a record of what arrived.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientConfig, Error, Negotiation, RequestOptions};
use mcp_server::Server;
use mcp_types::method::Method;
use mcp_types::{
    CallToolResult, CreateMessageResult, ElicitAction, ElicitResult, ElicitValue, Era,
    GetPromptResult, InputRequest, JsonRpcNotification, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParams, ProgressNotificationParams, ReadResourceResult, Revision,
    Root, SamplingMessageContentBlock, methods,
};
use serde::Serialize;

use crate::record::{Record, Recording};
use crate::script::Script;

/// How long each request may take unless the builder says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Sets up a [`TestClient`]: era, scripted answers, log level, timeout.
#[derive(Debug)]
pub struct TestClientBuilder {
    revision: Revision,
    script: Script,
    log_level: Option<LoggingLevel>,
    timeout: Duration,
}

impl Default for TestClientBuilder {
    fn default() -> Self {
        Self {
            revision: Revision::LATEST,
            script: Script::default(),
            log_level: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl TestClientBuilder {
    /// Speaks `era` at its newest revision (the stateless era by default).
    #[must_use]
    pub fn era(self, era: Era) -> Self {
        self.revision(match era {
            Era::Handshake => Revision::LATEST_HANDSHAKE,
            Era::Stateless => Revision::LATEST_STATELESS,
        })
    }

    /// Speaks exactly `revision` (2024-11-05 to 2026-07-28).
    #[must_use]
    pub fn revision(mut self, revision: Revision) -> Self {
        self.revision = revision;
        self
    }

    /// Answers the next `sampling/createMessage` with `result`. Answers are
    /// used in order; any sampling answer declares the `sampling` capability.
    #[must_use]
    pub fn sampling_reply(mut self, result: CreateMessageResult) -> Self {
        self.script.sampling.push_back(result);
        self
    }

    /// Answers the next `sampling/createMessage` with `text` from the model
    /// `mcp-testing`.
    #[must_use]
    pub fn sampling_text(self, text: impl Into<String>) -> Self {
        self.sampling_reply(CreateMessageResult::new(
            SamplingMessageContentBlock::text(text.into()),
            "mcp-testing",
        ))
    }

    /// Answers the next `elicitation/create` with `result`. Answers are used
    /// in order; any elicitation answer declares the `elicitation`
    /// capability (form and URL).
    #[must_use]
    pub fn elicitation_reply(mut self, result: ElicitResult) -> Self {
        self.script.elicitation.push_back(result);
        self
    }

    /// Accepts the next `elicitation/create` with `content`, a JSON object
    /// of the form's fields (strings, numbers, booleans, arrays of strings).
    ///
    /// # Panics
    /// When `content` is not such an object: a mistake in the test.
    #[must_use]
    pub fn elicitation_accept(self, content: serde_json::Value) -> Self {
        let fields: BTreeMap<String, ElicitValue> = serde_json::from_value(content.clone())
            .unwrap_or_else(|error| {
                panic!("elicitation_accept takes an object of form values ({error}): {content}")
            });
        self.elicitation_reply(ElicitResult::accept(fields))
    }

    /// Declines the next `elicitation/create`.
    #[must_use]
    pub fn elicitation_decline(self) -> Self {
        self.elicitation_reply(ElicitResult::new(ElicitAction::Decline))
    }

    /// Answers every `roots/list` with these root URIs (declares `roots`).
    #[must_use]
    pub fn roots<I, S>(mut self, uris: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let roots = uris.into_iter().map(Root::new).collect();
        self.script.roots = Some(ListRootsResult::new(roots));
        self
    }

    /// Asks for the server's log messages at `level` and above: for the
    /// session in the handshake era (`logging/setLevel`), on every call in
    /// the stateless era. Without it a stateless server sends no log.
    #[must_use]
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// How long each request may take before the test fails with a timeout
    /// (10 s by default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serves `server` in this process and connects to it in the chosen era.
    ///
    /// Must be called within a tokio runtime.
    ///
    /// # Errors
    /// When negotiation fails (the server does not speak the revision), or
    /// `logging/setLevel` is refused.
    pub async fn connect(self, server: &Server) -> Result<TestClient, Error> {
        let record = Arc::new(Record::default());
        let negotiation = if self.revision.is_stateless() {
            Negotiation::StatelessOnly
        } else {
            Negotiation::HandshakeOnly
        };
        let config = ClientConfig::new("mcp-testing", env!("CARGO_PKG_VERSION"))
            .protocol_version(self.revision)
            .negotiation(negotiation)
            .request_timeout(self.timeout);
        let config = self.script.install(config, record.clone());
        let transport = Recording {
            inner: server.in_memory(),
            record: record.clone(),
        };
        let client = Client::connect(transport, config).await?;
        if let Some(level) = self.log_level.filter(|_| !client.is_stateless()) {
            client.set_logging_level(level).await?;
        }
        Ok(TestClient {
            client,
            record,
            log_level: self.log_level,
        })
    }
}

/// A client connected to a server in this process: calls return the wire
/// results, and what the server sent or asked along the way is recorded
/// (see the [crate docs](crate)).
///
/// Derefs to [`Client`] for every other call.
pub struct TestClient {
    client: Client,
    record: Arc<Record>,
    log_level: Option<LoggingLevel>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("revision", &self.client.protocol_version())
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// Sets up a test client (stateless era, no scripted answers, 10 s timeout).
    pub fn builder() -> TestClientBuilder {
        TestClientBuilder::default()
    }

    /// Connects to `server` with the defaults of [`builder`](Self::builder).
    ///
    /// # Errors
    /// As [`TestClientBuilder::connect`].
    pub async fn connect(server: &Server) -> Result<Self, Error> {
        Self::builder().connect(server).await
    }

    /// The options of every call: a progress token (so the server may
    /// report progress, recorded off the wire) and, stateless, the log level.
    fn options(&self) -> RequestOptions {
        let options = RequestOptions::new().with_progress(|_| {});
        match self.log_level {
            Some(level) if self.client.is_stateless() => options.with_log_level(level),
            _ => options,
        }
    }

    /// Calls a tool (`arguments`: anything that serializes to a JSON object,
    /// or `()`), answering its asks from the script.
    ///
    /// # Errors
    /// As [`mcp_client::ClientSession::call_tool`]; a tool's own failure is
    /// a result with `is_error: Some(true)`, not an error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.client
            .call_tool_with(name, arguments, self.options())
            .await
    }

    /// Reads a resource.
    ///
    /// # Errors
    /// As [`mcp_client::ClientSession::read_resource`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.client.read_resource_with(uri, self.options()).await
    }

    /// Gets a prompt with its arguments.
    ///
    /// # Errors
    /// As [`mcp_client::ClientSession::get_prompt`].
    pub async fn get_prompt<I, K, V>(
        &self,
        name: &str,
        arguments: I,
    ) -> Result<GetPromptResult, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let arguments = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.client
            .get_prompt_with(name, arguments, self.options())
            .await
    }

    /// The log messages (`notifications/message`) received since the last
    /// look, in order; they are forgotten.
    ///
    /// # Panics
    /// When the server sent one that does not parse.
    pub fn logs(&self) -> Vec<LoggingMessageNotificationParams> {
        self.record.take_params(methods::LoggingMessage::NAME)
    }

    /// The progress reports (`notifications/progress`) received since the
    /// last look, in order; they are forgotten.
    ///
    /// # Panics
    /// When the server sent one that does not parse.
    pub fn progress(&self) -> Vec<ProgressNotificationParams> {
        self.record.take_params(methods::Progress::NAME)
    }

    /// Every notification received since the last look (log messages and
    /// progress not yet taken included), as on the wire; they are forgotten.
    pub fn notifications(&self) -> Vec<JsonRpcNotification> {
        self.record.take_notifications()
    }

    /// What the server asked the client since the last look (sampling,
    /// elicitation, roots), in order, answered or not; forgotten after.
    /// In the stateless era each ask appears once: the client answers it
    /// once, and the server keeps the answer for its later rounds.
    pub fn asked(&self) -> Vec<InputRequest> {
        self.record.take_asked()
    }

    /// The client, for calls this type does not wrap.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Ends the session and the server's connection.
    ///
    /// # Errors
    /// As [`Client::close`].
    pub async fn close(self) -> Result<(), Error> {
        self.client.close().await
    }
}

impl Deref for TestClient {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}
