//! One session with a server: the handshake and every typed call.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::{
    Connection, Handler, IncomingNotification, IncomingRequest, NotificationContext, Peer,
    RequestContext, RequestOptions, Transport,
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

struct State {
    initialized: Option<Arc<InitializeResult>>,
    revision: Revision,
    /// Each tool's compiled output schema (`None`: the tool declares none).
    output_schemas: HashMap<String, Option<Arc<jsonschema::Validator>>>,
}

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
                revision: config.protocol_version,
                output_schemas: HashMap::new(),
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
        let params = InitializeRequestParams::new(
            self.config.protocol_version.as_str(),
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

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        self.shared.lock().initialized.clone()
    }

    /// The server's capabilities, once initialized.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.initialize_result().map(|r| r.capabilities.clone())
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
        let result = self.peer().request(M::NAME, params, options).await?;
        result.parse().map_err(|source| Error::InvalidResult {
            method: M::NAME,
            source,
        })
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
        let result = self
            .request::<methods::ListTools>(&paginated(cursor), RequestOptions::new())
            .await?;
        self.cache_output_schemas(&result.tools);
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
        let result = self.request::<methods::CallTool>(&params, options).await?;
        if self.config.validate_tool_output && result.is_error != Some(true) {
            self.validate_tool_result(name, &result).await?;
        }
        Ok(result)
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
        self.request::<methods::ListResources>(&paginated(cursor), RequestOptions::new())
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
        self.request::<methods::ListResourceTemplates>(&paginated(cursor), RequestOptions::new())
            .await
    }

    /// Reads a resource.
    ///
    /// # Errors
    /// [`Error::Request`]: a missing resource is a remote error (`-32002` in
    /// the handshake era).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.request::<methods::ReadResource>(
            &ReadResourceRequestParams::new(uri),
            RequestOptions::new(),
        )
        .await
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
        self.request::<methods::ListPrompts>(&paginated(cursor), RequestOptions::new())
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
        self.request::<methods::GetPrompt>(&params, RequestOptions::new())
            .await
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
        if let ServerNotification::ToolListChanged(_) = &parsed {
            // Output schemas may have changed with the tools.
            self.shared.lock().output_schemas.clear();
        }
        if let Some(callback) = &self.config.notification {
            callback(parsed).await;
        }
    }
}
