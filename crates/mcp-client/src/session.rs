//! One session with a server: the handshake and every typed call.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::{
    Connection, Handler, IncomingNotification, IncomingRequest, NotificationContext, Peer,
    RequestContext, RequestOptions, Transport, TransportError,
};
use mcp_types::method::{Method, NotificationMethod, RequestMethod};
use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteArgument, CompleteContext, CompleteReference,
    CompleteRequestParams, CompleteResult, EmptyResult, ErrorObject, GetPromptRequestParams,
    GetPromptResult, InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    PaginatedRequestParams, RawJson, ReadResourceRequestParams, ReadResourceResult, Revision,
    ServerCapabilities, ServerNotification, ServerRequest, SetLevelRequestParams,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams, methods,
};
use serde::Serialize;
use serde_json::Value;

use crate::Error;
use crate::config::{ClientConfig, RequestInfo};
use crate::stateless;
use mcp_core::CancellationToken;
use mcp_types::{
    DiscoverResult, ErrorCode, InputRequest, InputRequests, InputResponse, InputResponses,
    RequestId, ResultOrInputRequired,
};
use std::time::Instant;

struct State {
    initialized: Option<Arc<InitializeResult>>,
    discovered: Option<Arc<DiscoverResult>>,
    /// Set once the server is known to speak the stateless era.
    stateless: Option<Revision>,
    revision: Revision,
    /// The log level stamped on stateless requests (`logging/setLevel` is
    /// gone in that era).
    log_level: Option<LoggingLevel>,
    /// Each tool's compiled output schema (`None`: the tool declares none).
    output_schemas: HashMap<String, Option<Arc<jsonschema::Validator>>>,
    /// The tools as listed, for their `x-mcp-header` annotations.
    tools: HashMap<String, Tool>,
    /// Cacheable results by method and key, with their expiry.
    cache: HashMap<String, (Instant, RawJson)>,
}

/// Rounds of input requests a call may go through before it is given up.
const MAX_INPUT_ROUNDS: usize = 8;

struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A session with one server: [`initialize`](Self::initialize), then the
/// typed calls. Server requests (sampling, elicitation, roots) and
/// notifications reach the callbacks of the [`ClientConfig`].
///
/// [`Client`](crate::Client) connects and initializes in one call; use a
/// session directly to drive the handshake yourself or bring your own transport.
pub struct ClientSession {
    connection: Connection,
    shared: Arc<Shared>,
    config: ClientConfig,
}

impl ClientSession {
    /// Starts a session over `transport`. Nothing is sent until
    /// [`initialize`](Self::initialize). Must be called within a tokio runtime.
    pub fn new<T: Transport>(transport: T, config: ClientConfig) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                initialized: None,
                discovered: None,
                stateless: None,
                revision: config.protocol_version,
                log_level: None,
                output_schemas: HashMap::new(),
                tools: HashMap::new(),
                cache: HashMap::new(),
            }),
        });
        let handler = Callbacks {
            config: config.clone(),
            shared: shared.clone(),
        };
        let connection = Connection::start(transport, handler, config.dispatcher.clone());
        Self {
            connection,
            shared,
            config,
        }
    }

    /// The dispatcher's peer, for requests this crate has no helper for.
    pub fn peer(&self) -> &Peer {
        self.connection.peer()
    }

    /// Sends `initialize` and then `notifications/initialized`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails;
    /// [`Error::UnsupportedProtocolVersion`] when the server answers with a
    /// revision this client does not speak (the session is then unusable).
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, Error> {
        let requested = if self.config.protocol_version.is_handshake() {
            self.config.protocol_version
        } else {
            Revision::LATEST_HANDSHAKE
        };
        self.shared.lock().stateless = None;
        let params = InitializeRequestParams::new(
            requested.as_str(),
            self.config.capabilities(),
            self.config.info.clone(),
        );
        let result = self
            .request::<methods::Initialize>(&params, RequestOptions::new())
            .await?;
        let Some(revision) =
            Revision::from_version(&result.protocol_version).filter(|r| r.is_handshake())
        else {
            return Err(Error::UnsupportedProtocolVersion {
                answered: result.protocol_version,
                supported: Revision::HANDSHAKE
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let result = Arc::new(result);
        {
            let mut state = self.shared.lock();
            state.initialized = Some(result.clone());
            state.revision = revision;
        }
        self.notify::<methods::Initialized>(&None).await?;
        Ok(result)
    }

    /// Asks the server what it is (`server/discover`, 2026-07-28) and, if it
    /// answers, speaks the stateless era with it from now on: every request
    /// then carries the `_meta` envelope and the routing headers.
    ///
    /// A `-32022` naming a version both sides speak is retried once, as a
    /// new request, at the newest of them.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (a handshake-era server
    /// does: fall back to [`initialize`](Self::initialize)) or fails.
    pub async fn discover(&self) -> Result<Arc<DiscoverResult>, Error> {
        let preferred = if self.config.protocol_version.is_stateless() {
            self.config.protocol_version
        } else {
            Revision::LATEST_STATELESS
        };
        match self.discover_at(preferred).await {
            Err(error) => {
                let retry = error
                    .remote()
                    .filter(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
                    .and_then(|e| e.data.as_ref())
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .and_then(|supported| {
                        supported
                            .iter()
                            .filter_map(Value::as_str)
                            .filter_map(Revision::from_version)
                            .filter(|r| r.is_stateless())
                            .max_by_key(|r| r.as_str())
                    });
                match retry {
                    Some(mutual) => self.discover_at(mutual).await,
                    None => Err(error),
                }
            }
            ok => ok,
        }
    }

    async fn discover_at(&self, revision: Revision) -> Result<Arc<DiscoverResult>, Error> {
        self.shared.lock().stateless = Some(revision);
        let outcome = self
            .request::<methods::Discover>(&None, RequestOptions::new())
            .await;
        let mut state = self.shared.lock();
        match outcome {
            Ok(result) => {
                let result = Arc::new(result);
                state.discovered = Some(result.clone());
                state.revision = revision;
                Ok(result)
            }
            Err(error) => {
                state.stateless = None;
                Err(error)
            }
        }
    }

    /// Speaks the stateless era at `revision` with a server already known
    /// to (a `DiscoverResult` kept from an earlier connection, say), without
    /// asking again. Era verdicts may be cached per server; re-run
    /// [`negotiate`](Self::negotiate) if requests then fail.
    pub fn adopt(&self, revision: Revision, discovered: DiscoverResult) -> Arc<DiscoverResult> {
        let discovered = Arc::new(discovered);
        let mut state = self.shared.lock();
        state.stateless = Some(revision);
        state.revision = revision;
        state.discovered = Some(discovered.clone());
        discovered
    }

    /// Talks to the server in the newest era both sides speak: `discover`
    /// when this client prefers the stateless era, falling back to
    /// `initialize` when the server does not answer it as a stateless
    /// server would (any error but a version negotiation failure).
    ///
    /// # Errors
    /// As [`initialize`](Self::initialize); or the discover error when the
    /// server speaks only stateless versions this client does not.
    pub async fn negotiate(&self) -> Result<Negotiated, Error> {
        if self.config.protocol_version.is_stateless() {
            match self.discover().await {
                Ok(discovered) => return Ok(Negotiated::Stateless(discovered)),
                Err(error)
                    if error
                        .remote()
                        .is_some_and(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
                        && error.remote().and_then(|e| e.data.as_ref()).is_some() =>
                {
                    return Err(error);
                }
                // No connection, or no credentials: `initialize` would
                // fail the same way (and sign the user in again).
                Err(error)
                    if error.is_connection_closed()
                        || matches!(error.transport(), Some(TransportError::Auth(_))) =>
                {
                    return Err(error);
                }
                Err(error) => {
                    tracing::debug!(%error, "server/discover refused; falling back to initialize");
                }
            }
        }
        self.initialize().await.map(Negotiated::Handshake)
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        self.shared.lock().initialized.clone()
    }

    /// The server's answer to `server/discover`, once discovered.
    pub fn discover_result(&self) -> Option<Arc<DiscoverResult>> {
        self.shared.lock().discovered.clone()
    }

    /// Whether requests are stateless (2026-07-28).
    pub fn is_stateless(&self) -> bool {
        self.shared.lock().stateless.is_some()
    }

    /// The server's capabilities, once initialized or discovered.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        let state = self.shared.lock();
        match (&state.stateless, &state.discovered, &state.initialized) {
            (Some(_), Some(d), _) => Some(d.capabilities.clone()),
            (_, _, Some(i)) => Some(i.capabilities.clone()),
            _ => None,
        }
    }

    /// The negotiated revision (the requested one before initialization).
    pub fn protocol_version(&self) -> Revision {
        self.shared.lock().revision
    }

    /// Sends a request of method `M` and reads its typed result, with this
    /// session's default timeout unless `options` sets one.
    ///
    /// # Errors
    /// [`Error::Request`] when the server answers with an error, the request
    /// times out or the connection closes; [`Error::InvalidResult`] when the
    /// answer does not fit `M::Result`.
    pub async fn request<M: RequestMethod>(
        &self,
        params: &M::Params,
        mut options: RequestOptions,
    ) -> Result<M::Result, Error> {
        if options.timeout.is_none() {
            options.timeout = self.config.request_timeout;
        }
        let params = raw_params::<M>(params)?;
        let result = self.request_raw(M::NAME, params, options).await?;
        result.parse().map_err(|source| Error::InvalidResult {
            method: M::NAME,
            source,
        })
    }

    /// Sends `method` with raw params, stamped for the stateless era when
    /// the session speaks it.
    async fn request_raw(
        &self,
        method: &'static str,
        params: Option<RawJson>,
        mut options: RequestOptions,
    ) -> Result<RawJson, Error> {
        let stateless = {
            let state = self.shared.lock();
            state.stateless.map(|revision| {
                let tool = (method == methods::CallTool::NAME)
                    .then(|| tool_name(params.as_ref()))
                    .flatten()
                    .and_then(|name| state.tools.get(&name).cloned());
                (revision, state.log_level, tool)
            })
        };
        let params = match stateless {
            Some((revision, log_level, tool)) => {
                let (params, headers) = stateless::stamp(
                    method,
                    params,
                    revision,
                    &self.config.info,
                    &self.config.capabilities(),
                    log_level,
                    tool.as_ref(),
                )
                .map_err(|source| Error::Serialize { method, source })?;
                for (name, value) in headers.iter() {
                    options.headers.append(name, value);
                }
                params
            }
            None => params,
        };
        Ok(self.peer().request(method, params, options).await?)
    }

    /// A cacheable stateless result from the cache, or fetched and kept for
    /// its `ttlMs`.
    async fn cached<M: RequestMethod>(
        &self,
        key: String,
        params: &M::Params,
    ) -> Result<M::Result, Error> {
        let hit = {
            let mut state = self.shared.lock();
            match state.cache.get(&key) {
                Some((expires, raw)) if *expires > Instant::now() => Some(raw.clone()),
                Some(_) => {
                    state.cache.remove(&key);
                    None
                }
                None => None,
            }
        };
        let raw = match hit {
            Some(raw) => raw,
            None => {
                let params = raw_params::<M>(params)?;
                let raw = self.request_raw(M::NAME, params, self.options()).await?;
                if let Some(ttl) = cache_ttl(&raw) {
                    if self.is_stateless() {
                        self.shared
                            .lock()
                            .cache
                            .insert(key, (Instant::now() + ttl, raw.clone()));
                    }
                }
                raw
            }
        };
        raw.parse().map_err(|source| Error::InvalidResult {
            method: M::NAME,
            source,
        })
    }

    fn options(&self) -> RequestOptions {
        let mut options = RequestOptions::new();
        options.timeout = self.config.request_timeout;
        options
    }

    /// Answers a server's input requests through the config's callbacks.
    async fn fulfil(&self, requests: InputRequests) -> Result<InputResponses, Error> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let info = RequestInfo {
                id: RequestId::from(key.clone()),
                cancel: CancellationToken::new(),
            };
            let method = request.method();
            let missing = || Error::NoCallback { method };
            let response = match request {
                InputRequest::Elicit(params) => {
                    let callback = self.config.elicitation.as_ref().ok_or_else(missing)?;
                    InputResponse::Elicit(
                        callback(params, info)
                            .await
                            .map_err(|e| Error::Request(mcp_core::Error::Remote(e)))?,
                    )
                }
                InputRequest::CreateMessage(params) => {
                    let callback = self.config.sampling.as_ref().ok_or_else(missing)?;
                    InputResponse::CreateMessage(
                        callback(params, info)
                            .await
                            .map_err(|e| Error::Request(mcp_core::Error::Remote(e)))?,
                    )
                }
                InputRequest::ListRoots(_) => {
                    let callback = self.config.roots.as_ref().ok_or_else(missing)?;
                    InputResponse::ListRoots(
                        callback(info)
                            .await
                            .map_err(|e| Error::Request(mcp_core::Error::Remote(e)))?,
                    )
                }
                _ => return Err(missing()),
            };
            responses.insert(key, response);
        }
        Ok(responses)
    }

    /// Sets the log level stamped on every stateless request (there is no
    /// `logging/setLevel` at 2026-07-28).
    pub fn set_request_log_level(&self, level: Option<LoggingLevel>) {
        self.shared.lock().log_level = level;
    }

    /// Sends a notification of method `M`.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn notify<M: NotificationMethod>(&self, params: &M::Params) -> Result<(), Error> {
        let params = raw_params::<M>(params)?;
        self.peer().notify(M::NAME, params).await?;
        Ok(())
    }

    /// Sends `ping`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server does not answer.
    pub async fn send_ping(&self) -> Result<(), Error> {
        self.request::<methods::Ping>(&None, RequestOptions::new())
            .await
            .map(|_: EmptyResult| ())
    }

    /// One page of `tools/list` (pass the previous page's `next_cursor`).
    /// Also caches each tool's output schema for [`call_tool`](Self::call_tool).
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        let key = format!("tools/list\0{}", cursor.as_deref().unwrap_or(""));
        let mut result = self
            .cached::<methods::ListTools>(key, &paginated(cursor))
            .await?;
        if self.is_stateless() {
            // Tools whose `x-mcp-header` annotations are invalid cannot be
            // called correctly over HTTP: the spec drops them from view.
            result.tools.retain(|tool| match mcp_types::routing::annotated_properties(tool) {
                Ok(_) => true,
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "dropping a tool with invalid x-mcp-header annotations");
                    false
                }
            });
        }
        self.cache_output_schemas(&result.tools);
        let mut state = self.shared.lock();
        for tool in &result.tools {
            state.tools.insert(tool.name.clone(), tool.clone());
        }
        Ok(result)
    }

    /// Every tool, following `nextCursor` through all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_tools(cursor).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool. `arguments` is anything that serializes to a JSON
    /// object (a struct, a `json!({...})`), or `()` for none.
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error (unknown tool, timeout,
    /// closed connection); [`Error::InvalidToolResult`] when the result does
    /// not match the tool's output schema. A tool's own failure is not an
    /// error: it is a result with `is_error: Some(true)`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, RequestOptions::new())
            .await
    }

    /// Calls a tool with a timeout, a progress callback or extra headers
    /// (see [`RequestOptions`]).
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = tool_arguments(arguments)?;
        let mut round = 0;
        let result = loop {
            match self.call_tool_once(&params, options.clone()).await? {
                ResultOrInputRequired::Complete(result) => break result,
                ResultOrInputRequired::InputRequired(input) => {
                    round += 1;
                    if round > MAX_INPUT_ROUNDS {
                        return Err(Error::TooManyInputRounds {
                            method: methods::CallTool::NAME,
                            rounds: MAX_INPUT_ROUNDS,
                        });
                    }
                    params.input_responses = Some(
                        self.fulfil(input.input_requests.unwrap_or_default())
                            .await?,
                    );
                    params.request_state = input.request_state;
                }
            }
        };
        if self.config.validate_tool_output && result.is_error != Some(true) {
            self.validate_tool_result(name, &result).await?;
        }
        Ok(result)
    }

    /// One `tools/call` exchange, without answering input requests: the
    /// raw [`ResultOrInputRequired`] for hosts that drive Multi Round-Trip
    /// Requests themselves (set `input_responses` and `request_state` on
    /// `params` to retry).
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error; [`Error::InvalidResult`]
    /// when the answer is neither a result nor an input request.
    pub async fn call_tool_once(
        &self,
        params: &CallToolRequestParams,
        mut options: RequestOptions,
    ) -> Result<ResultOrInputRequired<CallToolResult>, Error> {
        if options.timeout.is_none() {
            options.timeout = self.config.request_timeout;
        }
        let raw = RawJson::from_serialize(params).map_err(|source| Error::Serialize {
            method: methods::CallTool::NAME,
            source,
        })?;
        let result = self
            .request_raw(methods::CallTool::NAME, Some(raw), options)
            .await?;
        result.parse().map_err(|source| Error::InvalidResult {
            method: methods::CallTool::NAME,
            source,
        })
    }

    async fn validate_tool_result(&self, name: &str, result: &CallToolResult) -> Result<(), Error> {
        let cached = self.shared.lock().output_schemas.get(name).cloned();
        let validator = match cached {
            Some(validator) => validator,
            None => {
                // Learn the tool's schema once; a tool missing from the
                // listing is not validated (the server may hide it).
                self.list_all_tools().await?;
                self.shared
                    .lock()
                    .output_schemas
                    .get(name)
                    .cloned()
                    .flatten()
            }
        };
        let Some(validator) = validator else {
            return Ok(());
        };
        let Some(structured) = &result.structured_content else {
            return Err(Error::InvalidToolResult {
                tool: name.to_owned(),
                reason: "the tool declares an output schema but returned no structured content"
                    .into(),
            });
        };
        validator
            .validate(structured)
            .map_err(|e| Error::InvalidToolResult {
                tool: name.to_owned(),
                reason: e.to_string(),
            })
    }

    fn cache_output_schemas(&self, tools: &[Tool]) {
        let compiled: Vec<(String, Option<Arc<jsonschema::Validator>>)> = tools
            .iter()
            .map(|tool| {
                let validator = tool.output_schema.as_ref().and_then(|schema| {
                    match jsonschema::validator_for(&Value::Object(schema.clone())) {
                        Ok(v) => Some(Arc::new(v)),
                        Err(e) => {
                            tracing::warn!(tool = %tool.name, error = %e, "ignoring an output schema that does not compile");
                            None
                        }
                    }
                });
                (tool.name.clone(), validator)
            })
            .collect();
        self.shared.lock().output_schemas.extend(compiled);
    }

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, Error> {
        let key = format!("resources/list\0{}", cursor.as_deref().unwrap_or(""));
        self.cached::<methods::ListResources>(key, &paginated(cursor))
            .await
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        let key = format!(
            "resources/templates/list\0{}",
            cursor.as_deref().unwrap_or("")
        );
        self.cached::<methods::ListResourceTemplates>(key, &paginated(cursor))
            .await
    }

    /// Reads a resource.
    ///
    /// # Errors
    /// [`Error::Request`]: a missing resource is a remote error (`-32002` in
    /// the handshake era).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let mut params = ReadResourceRequestParams::new(uri);
        let mut round = 0;
        loop {
            let raw = RawJson::from_serialize(&params).map_err(|source| Error::Serialize {
                method: methods::ReadResource::NAME,
                source,
            })?;
            let answer: ResultOrInputRequired<ReadResourceResult> = self
                .request_raw(methods::ReadResource::NAME, Some(raw), self.options())
                .await?
                .parse()
                .map_err(|source| Error::InvalidResult {
                    method: methods::ReadResource::NAME,
                    source,
                })?;
            match answer {
                ResultOrInputRequired::Complete(result) => return Ok(result),
                ResultOrInputRequired::InputRequired(input) => {
                    round += 1;
                    if round > MAX_INPUT_ROUNDS {
                        return Err(Error::TooManyInputRounds {
                            method: methods::ReadResource::NAME,
                            rounds: MAX_INPUT_ROUNDS,
                        });
                    }
                    params.input_responses = Some(
                        self.fulfil(input.input_requests.unwrap_or_default())
                            .await?,
                    );
                    params.request_state = input.request_state;
                }
            }
        }
    }

    /// Subscribes to `notifications/resources/updated` for `uri`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.request::<methods::Subscribe>(&SubscribeRequestParams::new(uri), RequestOptions::new())
            .await
            .map(|_| ())
    }

    /// Ends a subscription.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.request::<methods::Unsubscribe>(
            &UnsubscribeRequestParams::new(uri),
            RequestOptions::new(),
        )
        .await
        .map(|_| ())
    }

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        let key = format!("prompts/list\0{}", cursor.as_deref().unwrap_or(""));
        self.cached::<methods::ListPrompts>(key, &paginated(cursor))
            .await
    }

    /// Gets a prompt with its arguments.
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown prompt or a missing argument is a
    /// remote `-32602`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        let mut round = 0;
        loop {
            let raw = RawJson::from_serialize(&params).map_err(|source| Error::Serialize {
                method: methods::GetPrompt::NAME,
                source,
            })?;
            let answer: ResultOrInputRequired<GetPromptResult> = self
                .request_raw(methods::GetPrompt::NAME, Some(raw), self.options())
                .await?
                .parse()
                .map_err(|source| Error::InvalidResult {
                    method: methods::GetPrompt::NAME,
                    source,
                })?;
            match answer {
                ResultOrInputRequired::Complete(result) => return Ok(result),
                ResultOrInputRequired::InputRequired(input) => {
                    round += 1;
                    if round > MAX_INPUT_ROUNDS {
                        return Err(Error::TooManyInputRounds {
                            method: methods::GetPrompt::NAME,
                            rounds: MAX_INPUT_ROUNDS,
                        });
                    }
                    params.input_responses = Some(
                        self.fulfil(input.input_requests.unwrap_or_default())
                            .await?,
                    );
                    params.request_state = input.request_state;
                }
            }
        }
    }

    /// Asks for completions of an argument of a prompt or resource template.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    pub async fn complete(
        &self,
        reference: impl Into<CompleteReference>,
        argument: CompleteArgument,
        context_arguments: Option<BTreeMap<String, String>>,
    ) -> Result<CompleteResult, Error> {
        let mut params = CompleteRequestParams::new(reference, argument);
        if let Some(arguments) = context_arguments {
            let mut context = CompleteContext::new();
            context.arguments = Some(arguments);
            params.context = Some(context);
        }
        self.request::<methods::Complete>(&params, RequestOptions::new())
            .await
    }

    /// Asks the server to send log messages at `level` and above.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.is_stateless() {
            // The stateless era asks for log messages on each request.
            self.set_request_log_level(Some(level));
            return Ok(());
        }
        self.request::<methods::SetLevel>(&SetLevelRequestParams::new(level), RequestOptions::new())
            .await
            .map(|_| ())
    }

    /// Tells the server the roots changed.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    pub async fn send_roots_list_changed(&self) -> Result<(), Error> {
        self.notify::<methods::RootsListChanged>(&None).await
    }

    /// Closes the session and waits for its tasks to end.
    pub async fn close(self) {
        self.connection.shutdown().await
    }

    /// Resolves when the connection ends (the server went away or it was closed).
    pub async fn closed(&self) {
        self.connection.wait().await
    }
}

/// What `negotiate` settled on.
#[derive(Debug, Clone)]
pub enum Negotiated {
    /// The handshake era: the server's `initialize` answer.
    Handshake(Arc<InitializeResult>),
    /// The stateless era: the server's `server/discover` answer.
    Stateless(Arc<DiscoverResult>),
}

fn tool_name(params: Option<&RawJson>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Name {
        name: String,
    }
    params?.parse::<Name>().ok().map(|n| n.name)
}

/// How long a stateless result may be reused: its `ttlMs`, if above zero.
fn cache_ttl(raw: &RawJson) -> Option<std::time::Duration> {
    #[derive(serde::Deserialize)]
    struct Hints {
        #[serde(rename = "ttlMs")]
        ttl_ms: Option<u64>,
    }
    let ttl = raw.parse::<Hints>().ok()?.ttl_ms?;
    (ttl > 0).then(|| std::time::Duration::from_millis(ttl))
}

fn paginated(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    cursor.map(|cursor| {
        let mut params = PaginatedRequestParams::default();
        params.cursor = Some(cursor);
        params
    })
}

fn tool_arguments(arguments: impl Serialize) -> Result<Option<JsonObject>, Error> {
    let serialize_error = |source| Error::Serialize {
        method: methods::CallTool::NAME,
        source,
    };
    match serde_json::to_value(arguments).map_err(serialize_error)? {
        Value::Null => Ok(None),
        Value::Object(object) => Ok(Some(object)),
        other => Err(serialize_error(serde::ser::Error::custom(format!(
            "tool arguments must be a JSON object, not {other}"
        )))),
    }
}

fn raw_params<M: Method>(params: &M::Params) -> Result<Option<RawJson>, Error> {
    if M::is_absent(params) {
        return Ok(None);
    }
    RawJson::from_serialize(params)
        .map(Some)
        .map_err(|source| Error::Serialize {
            method: M::NAME,
            source,
        })
}

/// Answers the server's requests and notifications with the config's callbacks.
struct Callbacks {
    config: ClientConfig,
    shared: Arc<Shared>,
}

fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the answer: {e}")))
}

fn not_supported(what: &str) -> ErrorObject {
    ErrorObject::new(
        mcp_types::ErrorCode::METHOD_NOT_FOUND,
        format!("this client does not support {what}: it declared no such capability"),
    )
}

impl Handler for Callbacks {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.shared.lock().revision;
        let parsed = ServerRequest::parse(&request.method, request.params.as_ref(), revision)
            .map_err(|e| e.to_error_object())?;
        let info = RequestInfo {
            id: cx.id.clone(),
            cancel: cx.cancel.clone(),
        };
        match parsed {
            ServerRequest::Ping(_) => to_raw(&EmptyResult::new()),
            ServerRequest::CreateMessage(params) => match &self.config.sampling {
                Some(sampling) => to_raw(&sampling(params, info).await?),
                None => Err(not_supported("sampling")),
            },
            ServerRequest::Elicit(params) => match &self.config.elicitation {
                Some(elicitation) => to_raw(&elicitation(params, info).await?),
                None => Err(not_supported("elicitation")),
            },
            ServerRequest::ListRoots(_) => match &self.config.roots {
                Some(roots) => to_raw(&roots(info).await?),
                None => Err(not_supported("roots")),
            },
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        _: NotificationContext,
    ) {
        let revision = self.shared.lock().revision;
        let parsed = match ServerNotification::parse(
            &notification.method,
            notification.params.as_ref(),
            revision,
        ) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::debug!(error = %e, "ignored a notification");
                return;
            }
        };
        if let (Some(logging), ServerNotification::LoggingMessage(params)) =
            (&self.config.logging, &parsed)
        {
            logging(params.clone()).await;
        }
        match &parsed {
            ServerNotification::ToolListChanged(_) => {
                // Output schemas may have changed with the tools.
                let mut state = self.shared.lock();
                state.output_schemas.clear();
                state.cache.retain(|key, _| !key.starts_with("tools/"));
            }
            ServerNotification::PromptListChanged(_) => {
                self.shared
                    .lock()
                    .cache
                    .retain(|key, _| !key.starts_with("prompts/"));
            }
            ServerNotification::ResourceListChanged(_) => {
                self.shared
                    .lock()
                    .cache
                    .retain(|key, _| !key.starts_with("resources/"));
            }
            _ => {}
        }
        if let Some(callback) = &self.config.notification {
            callback(parsed).await;
        }
    }
}
