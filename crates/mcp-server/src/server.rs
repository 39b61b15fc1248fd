//! The server a tool author builds, and the per-connection runner that
//! answers a client with it.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_core::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext, Transport,
};
use mcp_types::{
    BlobResourceContents, CallToolRequestParams, CallToolResult, ClientNotification, ClientRequest,
    CompleteReference, CompleteRequestParams, CompleteResult, Completion, EmptyResult, ErrorCode,
    ErrorObject, GetPromptRequestParams, GetPromptResult, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, PromptsCapability, RawJson, ReadResourceRequestParams, ReadResourceResult,
    RequestMeta, Resource, ResourceContents, ResourceTemplate, ResourcesCapability, Revision, Role,
    ServerCapabilities, TextResourceContents, Tool, ToolsCapability,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::session::{Context, ServerSession, SessionState};
use crate::tool_io::{IntoToolResult, input_schema_for, parse_arguments};
use crate::{Error, UriTemplate};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type ToolFn = Arc<
    dyn Fn(Option<JsonObject>, Context) -> BoxFuture<Result<CallToolResult, ErrorObject>>
        + Send
        + Sync,
>;
type ResourceFn = Arc<
    dyn Fn(ResourceRequest, Context) -> BoxFuture<Result<Vec<ResourceContents>, ErrorObject>>
        + Send
        + Sync,
>;
type PromptFn = Arc<
    dyn Fn(BTreeMap<String, String>, Context) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;
type SessionFn = Arc<dyn Fn(ServerSession) -> BoxFuture<()> + Send + Sync>;
type CompleteFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

/// The default number of items per page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

struct ToolEntry {
    tool: Tool,
    call: ToolFn,
}

struct ResourceEntry {
    resource: Resource,
    read: ResourceFn,
}

struct TemplateEntry {
    template: ResourceTemplate,
    matcher: UriTemplate,
    read: ResourceFn,
}

struct PromptEntry {
    prompt: Prompt,
    get: PromptFn,
}

struct Registry {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolEntry>,
    tool_index: HashMap<String, usize>,
    resources: Vec<ResourceEntry>,
    resource_index: HashMap<String, usize>,
    templates: Vec<TemplateEntry>,
    prompts: Vec<PromptEntry>,
    prompt_index: HashMap<String, usize>,
    completion: Option<CompleteFn>,
    roots_list_changed: Option<SessionFn>,
    page_size: usize,
    list_changed: bool,
    dispatcher: DispatcherConfig,
}

/// What a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// For a resource template, the variables matched out of the URI.
    pub variables: BTreeMap<String, String>,
}

/// Arguments of a prompt that takes none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, JsonSchema)]
pub struct NoArguments {}

/// Binary resource contents, sent base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Converts what a resource handler returns into resource contents.
///
/// A `String` becomes text contents with the resource's URI and MIME type, a
/// [`Blob`] becomes base64 blob contents; ready `ResourceContents` pass as they are.
pub trait IntoResourceContents {
    /// The contents, given the URI read and the registered MIME type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let mut contents = TextResourceContents::new(uri, self);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0);
        let mut contents = BlobResourceContents::new(uri, encoded);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// Converts what a prompt handler returns into a `GetPromptResult`.
///
/// A `String` becomes one user message; a `PromptMessage` or a list of
/// them becomes the result's messages.
pub trait IntoPromptResult {
    /// The result.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(vec![self])
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(vec![PromptMessage::new(
            Role::User,
            mcp_types::ContentBlock::text(self),
        )])
    }
}

/// Builds a [`Server`]: register tools, resources, prompts and completions,
/// then [`build`](ServerBuilder::build).
///
/// # Examples
/// ```
/// use mcp_server::{Context, Json, Server, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { sum: i64 }
///
/// let server = Server::builder("calculator", "1.0.0")
///     .tool("add", "Adds two integers", |args: Add, _cx: Context| async move {
///         let sum = args.a.checked_add(args.b).ok_or_else(|| ToolError::new("overflow"))?;
///         Ok(Json(Sum { sum }))
///     })
///     .build()
///     .expect("valid registrations");
/// assert_eq!(server.tools().len(), 1);
/// ```
pub struct ServerBuilder {
    registry: Registry,
    errors: Vec<Error>,
}

impl ServerBuilder {
    fn new(info: Implementation) -> Self {
        Self {
            registry: Registry {
                info,
                instructions: None,
                tools: Vec::new(),
                tool_index: HashMap::new(),
                resources: Vec::new(),
                resource_index: HashMap::new(),
                templates: Vec::new(),
                prompts: Vec::new(),
                prompt_index: HashMap::new(),
                completion: None,
                roots_list_changed: None,
                page_size: DEFAULT_PAGE_SIZE,
                list_changed: false,
                dispatcher: DispatcherConfig::default(),
            },
            errors: Vec::new(),
        }
    }

    /// Instructions for the model on how to use this server, sent at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.registry.instructions = Some(instructions.into());
        self
    }

    /// The number of items per page of `tools/list`, `resources/list`,
    /// `resources/templates/list` and `prompts/list` (at least 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.registry.page_size = page_size.max(1);
        self
    }

    /// Declares `listChanged` for tools, resources and prompts: this server
    /// will send the `*/list_changed` notifications.
    pub fn list_changed(mut self, enabled: bool) -> Self {
        self.registry.list_changed = enabled;
        self
    }

    /// The dispatcher settings of each connection (queues, message limits).
    pub fn dispatcher_config(mut self, config: DispatcherConfig) -> Self {
        self.registry.dispatcher = config;
        self
    }

    /// Registers a tool whose input schema comes from `A` and whose output
    /// schema, when it returns [`Json<T>`](crate::Json), from `T`.
    ///
    /// Arguments that do not fit `A` answer with an `isError` result naming
    /// the offending argument, which the model can read and correct.
    pub fn tool<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let name = name.into();
        let mut tool = Tool::new(name, JsonObject::new());
        tool.description = Some(description.into());
        self.tool_with(tool, handler)
    }

    /// Registers a tool described by `tool` (title, annotations, icons…).
    /// Its input schema is replaced by `A`'s, and its output schema, if it
    /// has none, is taken from the return type.
    pub fn tool_with<A, R, F, Fut>(mut self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let what = format!("tool `{}`", tool.name);
        match input_schema_for::<A>() {
            Ok(schema) => tool.input_schema = schema,
            Err(e) => {
                self.errors.push(Error::Registration {
                    what,
                    reason: e.to_string(),
                });
                return self;
            }
        }
        if tool.output_schema.is_none() {
            tool.output_schema = R::output_schema();
        }
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move {
                match parse_arguments::<A>(arguments.as_ref()) {
                    Ok(args) => handler(args, cx).await.into_tool_result(),
                    Err(e) => e.into_answer(),
                }
            })
        });
        self.add_tool(tool, call);
        self
    }

    /// Registers a tool exactly as described by `tool` (its schemas are sent
    /// as given), with a handler that reads the raw `arguments` itself: for
    /// schemas that no Rust type describes, or tools defined at run time.
    pub fn tool_raw<R, F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        R: IntoToolResult + 'static,
        F: Fn(Option<JsonObject>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move { handler(arguments, cx).await.into_tool_result() })
        });
        self.add_tool(tool, call);
        self
    }

    fn add_tool(&mut self, tool: Tool, call: ToolFn) {
        if self.registry.tool_index.contains_key(&tool.name) {
            self.errors.push(Error::Registration {
                what: format!("tool `{}`", tool.name),
                reason: "a tool with this name is already registered".into(),
            });
            return;
        }
        self.registry
            .tool_index
            .insert(tool.name.clone(), self.registry.tools.len());
        self.registry.tools.push(ToolEntry { tool, call });
    }

    /// Registers a resource at a fixed URI.
    pub fn resource<R, F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        R: IntoResourceContents + 'static,
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        if self.registry.resource_index.contains_key(&resource.uri) {
            self.errors.push(Error::Registration {
                what: format!("resource `{}`", resource.uri),
                reason: "a resource with this URI is already registered".into(),
            });
            return self;
        }
        let read = resource_fn(handler, resource.mime_type.clone());
        self.registry
            .resource_index
            .insert(resource.uri.clone(), self.registry.resources.len());
        self.registry
            .resources
            .push(ResourceEntry { resource, read });
        self
    }

    /// Registers a resource template: reads of URIs matching its RFC 6570
    /// template reach `handler` with the matched variables.
    pub fn resource_template<R, F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        R: IntoResourceContents + 'static,
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        let matcher = match UriTemplate::parse(&template.uri_template) {
            Ok(matcher) => matcher,
            Err(e) => {
                self.errors.push(Error::Registration {
                    what: format!("resource template `{}`", template.uri_template),
                    reason: e.to_string(),
                });
                return self;
            }
        };
        let read = resource_fn(handler, template.mime_type.clone());
        self.registry.templates.push(TemplateEntry {
            template,
            matcher,
            read,
        });
        self
    }

    /// Registers a prompt whose arguments come from the fields of `A`
    /// (prompt arguments are strings: use `String` and `Option<String>`
    /// fields; doc comments become descriptions).
    pub fn prompt<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoPromptResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        let mut prompt = Prompt::new(name);
        prompt.description = Some(description.into());
        let arguments = match input_schema_for::<A>() {
            Ok(schema) => prompt_arguments(&schema),
            Err(e) => {
                let mut this = self;
                this.errors.push(Error::Registration {
                    what: format!("prompt `{}`", prompt.name),
                    reason: e.to_string(),
                });
                return this;
            }
        };
        if !arguments.is_empty() {
            prompt.arguments = Some(arguments);
        }
        let handler = Arc::new(handler);
        self.prompt_with(prompt, move |arguments, cx| {
            let handler = handler.clone();
            async move {
                let object: serde_json::Map<String, Value> = arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                let args: A = parse_arguments(Some(&object))
                    .map_err(|e| ErrorObject::invalid_params(e.message().to_owned()))?;
                handler(args, cx).await
            }
        })
    }

    /// Registers a prompt described by `prompt`; `handler` gets the
    /// arguments as given, after the required ones were checked present.
    pub fn prompt_with<R, F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        R: IntoPromptResult + 'static,
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    {
        if self.registry.prompt_index.contains_key(&prompt.name) {
            self.errors.push(Error::Registration {
                what: format!("prompt `{}`", prompt.name),
                reason: "a prompt with this name is already registered".into(),
            });
            return self;
        }
        let handler = Arc::new(handler);
        let get: PromptFn = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            Box::pin(async move { Ok(handler(arguments, cx).await?.into_prompt_result()) })
        });
        self.registry
            .prompt_index
            .insert(prompt.name.clone(), self.registry.prompts.len());
        self.registry.prompts.push(PromptEntry { prompt, get });
        self
    }

    /// Answers `completion/complete` for prompt arguments and template variables.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompleteRequestParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.registry.completion = Some(Arc::new(move |params, cx| {
            let handler = handler.clone();
            Box::pin(async move { handler(params, cx).await })
        }));
        self
    }

    /// Called when a client sends `notifications/roots/list_changed`, with
    /// that client's session (to call [`ServerSession::list_roots`]).
    /// Runs in its own task, so it may send requests to the client.
    pub fn on_roots_list_changed<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ServerSession) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = Arc::new(callback);
        self.registry.roots_list_changed = Some(Arc::new(move |session| {
            let callback = callback.clone();
            Box::pin(async move { callback(session).await })
        }));
        self
    }

    /// The server, or the first registration that was refused.
    ///
    /// # Errors
    /// [`Error::Registration`] for a duplicate name or URI, an argument type
    /// that is not a JSON object, or a URI template that does not parse.
    pub fn build(self) -> Result<Server, Error> {
        if let Some(error) = self.errors.into_iter().next() {
            return Err(error);
        }
        Ok(Server {
            registry: Arc::new(self.registry),
        })
    }
}

fn resource_fn<R, F, Fut>(handler: F, mime_type: Option<String>) -> ResourceFn
where
    R: IntoResourceContents + 'static,
    F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
{
    let handler = Arc::new(handler);
    let mime_type: Option<Arc<str>> = mime_type.map(Into::into);
    Arc::new(move |request, cx| {
        let handler = handler.clone();
        let mime_type = mime_type.clone();
        Box::pin(async move {
            let uri = request.uri.clone();
            let body = handler(request, cx).await?;
            Ok(body.into_contents(&uri, mime_type.as_deref()))
        })
    })
}

/// The prompt arguments an object schema describes.
fn prompt_arguments(schema: &JsonObject) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut argument = PromptArgument::new(name.clone());
            argument.description = property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            argument.required = Some(required.contains(&name.as_str()));
            argument
        })
        .collect()
}

/// An MCP server: what it offers, ready to serve any number of connections.
/// Cheap to clone.
#[derive(Clone)]
pub struct Server {
    registry: Arc<Registry>,
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// Starts building a server with a full implementation description.
    pub fn builder_with_info(info: Implementation) -> ServerBuilder {
        ServerBuilder::new(info)
    }

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.registry.info
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> Vec<&Tool> {
        self.registry.tools.iter().map(|e| &e.tool).collect()
    }

    /// The capabilities this server declares, from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        let r = &self.registry;
        let list_changed = r.list_changed.then_some(true);
        let mut capabilities = ServerCapabilities::new();
        // Log messages can always be sent through the context.
        capabilities.logging = Some(JsonObject::new());
        if !r.tools.is_empty() {
            let mut tools = ToolsCapability::new();
            tools.list_changed = list_changed;
            capabilities.tools = Some(tools);
        }
        if !r.resources.is_empty() || !r.templates.is_empty() {
            let mut resources = ResourcesCapability::new();
            resources.subscribe = Some(true);
            resources.list_changed = list_changed;
            capabilities.resources = Some(resources);
        }
        if !r.prompts.is_empty() {
            let mut prompts = PromptsCapability::new();
            prompts.list_changed = list_changed;
            capabilities.prompts = Some(prompts);
        }
        if r.completion.is_some() {
            capabilities.completions = Some(JsonObject::new());
        }
        capabilities
    }

    /// Serves one client over `transport`. The connection runs in the
    /// background until the transport ends or [`ServerConnection::shutdown`].
    ///
    /// Must be called within a tokio runtime.
    pub fn serve<T: Transport>(&self, transport: T) -> ServerConnection {
        let state = Arc::new(SessionState::default());
        let handler = Runner {
            registry: self.registry.clone(),
            state: state.clone(),
        };
        let connection = Connection::start(transport, handler, self.registry.dispatcher.clone());
        let session = ServerSession::new(connection.peer().clone(), state);
        ServerConnection {
            connection,
            session,
        }
    }

    /// Serves one client on this process's stdin and stdout until stdin
    /// closes. Nothing else may write to stdout: log with `tracing` to stderr.
    ///
    /// # Errors
    /// Never fails today; the `Result` leaves room for transport setup errors.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        let connection = self.serve(mcp_transport::stdio::stdio_server());
        connection.wait().await;
        Ok(())
    }
}

#[cfg(feature = "http")]
impl Server {
    /// This server as a streamable HTTP endpoint: a `tower::Service` to
    /// mount in a hyper or axum app. Each HTTP session gets its own
    /// connection to this server.
    pub fn streamable_http_service(
        &self,
        config: mcp_transport::http::HttpServerConfig,
    ) -> mcp_transport::http::StreamableHttpService {
        let server = self.clone();
        mcp_transport::http::StreamableHttpService::new(config, move |transport| {
            let connection = server.serve(transport);
            // The connection lives until its session ends.
            tokio::spawn(async move { connection.wait().await });
        })
    }

    /// Serves this server over streamable HTTP on `listener` until
    /// `shutdown` resolves (use `std::future::pending()` to run forever).
    ///
    /// # Errors
    /// When accepting connections fails persistently.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        config: mcp_transport::http::HttpServerConfig,
        shutdown: impl Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        mcp_transport::http::serve(listener, self.streamable_http_service(config), shutdown).await
    }
}

/// One client being served.
pub struct ServerConnection {
    connection: Connection,
    session: ServerSession,
}

impl ServerConnection {
    /// The session, to send the client notifications and requests outside
    /// any request handler.
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// Resolves when the client disconnects.
    pub async fn wait(&self) {
        self.connection.wait().await
    }

    /// Closes the connection and waits for its tasks to end.
    pub async fn shutdown(self) {
        self.connection.shutdown().await
    }
}

struct Runner {
    registry: Arc<Registry>,
    state: Arc<SessionState>,
}

fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the result: {e}")))
}

fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{cursor}`")))?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

fn cursor_of(params: &Option<PaginatedRequestParams>) -> Option<&str> {
    params.as_ref().and_then(|p| p.cursor.as_deref())
}

impl Runner {
    fn session(&self, cx: &RequestContext) -> ServerSession {
        ServerSession::new(cx.peer.clone(), self.state.clone())
    }

    fn context(&self, cx: &RequestContext, meta: Option<RequestMeta>) -> Context {
        Context::new(
            self.session(cx),
            cx.id.clone(),
            cx.cancel.clone(),
            meta,
            cx.transport.clone(),
        )
    }

    fn initialize(&self, params: InitializeRequestParams) -> Result<RawJson, ErrorObject> {
        let revision = Revision::from_version(&params.protocol_version)
            .filter(|r| r.is_handshake())
            .unwrap_or(Revision::LATEST_HANDSHAKE);
        tracing::debug!(
            client = %params.client_info.name,
            requested = %params.protocol_version,
            answered = %revision,
            "initialize"
        );
        self.state.set_client(params, revision);
        let r = &self.registry;
        let mut result = InitializeResult::new(
            revision.as_str(),
            Server {
                registry: r.clone(),
            }
            .capabilities(),
            r.info.clone(),
        );
        result.instructions = r.instructions.clone();
        to_raw(&result)
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let Some(&index) = self.registry.tool_index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool `{}`",
                params.name
            )));
        };
        let entry = &self.registry.tools[index];
        let context = self.context(cx, params.meta);
        let result = (entry.call)(params.arguments, context).await?;
        to_raw(&result)
    }

    async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let uri = params.uri;
        let context = self.context(cx, params.meta);
        let (read, variables) = if let Some(&i) = self.registry.resource_index.get(&uri) {
            (&self.registry.resources[i].read, BTreeMap::new())
        } else if let Some((entry, variables)) = self
            .registry
            .templates
            .iter()
            .find_map(|t| t.matcher.match_uri(&uri).map(|v| (t, v)))
        {
            (&entry.read, variables)
        } else {
            return Err(ErrorObject::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                format!("resource `{uri}` not found"),
            )
            .with_data(serde_json::json!({ "uri": uri })));
        };
        let contents = read(ResourceRequest { uri, variables }, context).await?;
        to_raw(&ReadResourceResult::new(contents))
    }

    async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let Some(&index) = self.registry.prompt_index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown prompt `{}`",
                params.name
            )));
        };
        let entry = &self.registry.prompts[index];
        let arguments = params.arguments.unwrap_or_default();
        let missing: Vec<&str> = entry
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "prompt `{}` needs the argument(s) {}",
                params.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let context = self.context(cx, params.meta);
        let result = (entry.get)(arguments, context).await?;
        to_raw(&result)
    }

    async fn complete(
        &self,
        params: CompleteRequestParams,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let Some(complete) = &self.registry.completion else {
            return Err(ErrorObject::method_not_found("completion/complete"));
        };
        match &params.reference {
            CompleteReference::Prompt(p) if !self.registry.prompt_index.contains_key(&p.name) => {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown prompt `{}`",
                    p.name
                )));
            }
            _ => {}
        }
        let context = self.context(cx, params.meta.clone());
        let completion = complete(params, context).await?;
        to_raw(&CompleteResult::new(completion))
    }

    fn subscribe_target_exists(&self, uri: &str) -> bool {
        self.registry.resource_index.contains_key(uri)
            || self
                .registry
                .templates
                .iter()
                .any(|t| t.matcher.match_uri(uri).is_some())
    }
}

impl Handler for Runner {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.state.revision();
        let parsed = ClientRequest::parse(
            &request.method,
            request.params.as_ref(),
            revision.unwrap_or(Revision::LATEST_HANDSHAKE),
        );
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(e) => return Err(e.to_error_object()),
        };
        let r = &self.registry;
        match parsed {
            ClientRequest::Initialize(params) => self.initialize(params),
            ClientRequest::Ping(_) => to_raw(&EmptyResult::new()),
            _ if revision.is_none() => Err(ErrorObject::invalid_request(format!(
                "`{}` before initialization: send `initialize` first",
                request.method
            ))),
            ClientRequest::ListTools(params) => {
                let tools: Vec<Tool> = r.tools.iter().map(|e| e.tool.clone()).collect();
                let (tools, next) = page(&tools, cursor_of(&params), r.page_size)?;
                let mut result = ListToolsResult::new(tools);
                result.next_cursor = next;
                to_raw(&result)
            }
            ClientRequest::CallTool(params) => self.call_tool(params, &cx).await,
            ClientRequest::ListResources(params) => {
                let all: Vec<Resource> = r.resources.iter().map(|e| e.resource.clone()).collect();
                let (resources, next) = page(&all, cursor_of(&params), r.page_size)?;
                let mut result = ListResourcesResult::new(resources);
                result.next_cursor = next;
                to_raw(&result)
            }
            ClientRequest::ListResourceTemplates(params) => {
                let all: Vec<ResourceTemplate> =
                    r.templates.iter().map(|e| e.template.clone()).collect();
                let (templates, next) = page(&all, cursor_of(&params), r.page_size)?;
                let mut result = ListResourceTemplatesResult::new(templates);
                result.next_cursor = next;
                to_raw(&result)
            }
            ClientRequest::ReadResource(params) => self.read_resource(params, &cx).await,
            ClientRequest::Subscribe(params) => {
                if !self.subscribe_target_exists(&params.uri) {
                    return Err(ErrorObject::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        format!("resource `{}` not found", params.uri),
                    ));
                }
                self.state.subscribe(params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::Unsubscribe(params) => {
                self.state.unsubscribe(&params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::ListPrompts(params) => {
                let all: Vec<Prompt> = r.prompts.iter().map(|e| e.prompt.clone()).collect();
                let (prompts, next) = page(&all, cursor_of(&params), r.page_size)?;
                let mut result = ListPromptsResult::new(prompts);
                result.next_cursor = next;
                to_raw(&result)
            }
            ClientRequest::GetPrompt(params) => self.get_prompt(params, &cx).await,
            ClientRequest::Complete(params) => self.complete(params, &cx).await,
            ClientRequest::SetLevel(params) => {
                self.state.set_log_level(params.level);
                to_raw(&EmptyResult::new())
            }
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        cx: NotificationContext,
    ) {
        let revision = self.state.revision().unwrap_or(Revision::LATEST_HANDSHAKE);
        match ClientNotification::parse(
            &notification.method,
            notification.params.as_ref(),
            revision,
        ) {
            Ok(ClientNotification::Initialized(_)) => self.state.mark_initialized(),
            Ok(ClientNotification::RootsListChanged(_)) => {
                if let Some(callback) = &self.registry.roots_list_changed {
                    let session = ServerSession::new(cx.peer.clone(), self.state.clone());
                    // Its own task: the callback may wait on requests to the client.
                    tokio::spawn(callback(session));
                }
            }
            Ok(other) => tracing::debug!(method = other.method(), "notification"),
            Err(e) => tracing::debug!(error = %e, "ignored a notification"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hand_out_cursors_until_the_end() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).expect("page");
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!((last, next), (vec![4], None));
        let error = page(&items, Some("nope"), 2).expect_err("a bad cursor");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(page(&items, Some("99"), 2).is_err());
    }

    #[test]
    fn prompt_arguments_come_from_the_schema() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Review {
            /// The code to review.
            code: String,
            language: Option<String>,
        }
        let schema = input_schema_for::<Review>().expect("object");
        let arguments = prompt_arguments(&schema);
        assert_eq!(arguments.len(), 2);
        let code = arguments.iter().find(|a| a.name == "code").expect("code");
        assert_eq!(code.required, Some(true));
        assert_eq!(code.description.as_deref(), Some("The code to review."));
        let language = arguments
            .iter()
            .find(|a| a.name == "language")
            .expect("language");
        assert_eq!(language.required, Some(false));
    }
}
