//! What a server offers, as the builder registered it: tools, resources,
//! templates, prompts and the settings the runner serves them with.

use crate::answer::ResourceRequest;
use crate::catalog::Catalog;
use crate::changes::ListChanges;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use mcp_core::{BoxFuture, DispatcherConfig};
use mcp_types::RawJson;
use mcp_types::extension::ExtensionId;
use mcp_types::{
    CacheScope, PromptsCapability, ResourcesCapability, ResultOrInputRequired, ServerCapabilities,
    ToolsCapability,
};
use mcp_types::{
    CallToolResult, CompleteRequestParams, Completion, ErrorObject, GetPromptResult,
    Implementation, JsonObject, Prompt, Resource, ResourceContents, ResourceTemplate, Tool,
};
use serde_json::Value;

use crate::UriTemplate;
use crate::request_state::StateSealer;
use crate::session::{Context, ServerSession};
use crate::states::AppState;
use crate::tool_call::{CallOutcome, ToolCall};

/// A tool's handler: it reads the call's arguments where they are (the
/// runner keeps them, to retry the call and to bind its `requestState`).
pub(crate) type ToolFn = Arc<
    dyn Fn(
            Option<&JsonObject>,
            Context,
        ) -> BoxFuture<Result<ResultOrInputRequired<CallToolResult>, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type ResourceFn = Arc<
    dyn Fn(ResourceRequest, Context) -> BoxFuture<Result<Vec<ResourceContents>, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type PromptFn = Arc<
    dyn Fn(
            BTreeMap<String, String>,
            Context,
        ) -> BoxFuture<Result<ResultOrInputRequired<GetPromptResult>, ErrorObject>>
        + Send
        + Sync,
>;
pub(crate) type SessionFn = Arc<dyn Fn(ServerSession) -> BoxFuture<()> + Send + Sync>;
/// A subscription hook: the resource's URI and the subscriber's session.
pub(crate) type SubscribeFn = Arc<dyn Fn(String, ServerSession) -> BoxFuture<()> + Send + Sync>;
pub(crate) type CompleteFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

/// What an extension's request handler is given back to the runner: the
/// result, or a protocol error.
pub(crate) type ExtRequestFn =
    Arc<dyn Fn(Option<RawJson>, Context) -> BoxFuture<Result<RawJson, ErrorObject>> + Send + Sync>;
pub(crate) type ExtNotificationFn =
    Arc<dyn Fn(Option<RawJson>, ServerSession) -> BoxFuture<()> + Send + Sync>;
pub(crate) type InterceptFn =
    Arc<dyn Fn(ToolCall, Context) -> BoxFuture<Result<CallOutcome, ErrorObject>> + Send + Sync>;

/// One request method an extension serves.
#[derive(Clone)]
pub(crate) struct ExtRequest {
    pub(crate) handle: ExtRequestFn,
    /// Whether its 2026-07-28 results carry the list cache hints.
    pub(crate) cacheable: bool,
}

/// A registered extension, as the runner serves it.
pub(crate) struct ExtensionEntry {
    pub(crate) id: ExtensionId,
    pub(crate) settings: JsonObject,
    pub(crate) client_must_declare: bool,
    pub(crate) requests: std::collections::HashMap<String, ExtRequest>,
    pub(crate) notifications: std::collections::HashMap<String, ExtNotificationFn>,
    pub(crate) interceptor: Option<InterceptFn>,
}

/// The default number of items per page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// One `x-mcp-header` annotation of a tool (SEP-2243): the header as the
/// schema names it, the `Mcp-Param-*` header it travels as, and the path of
/// the argument it repeats.
pub(crate) struct ParamHeader {
    pub(crate) header: String,
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
}

/// A tool's `x-mcp-header` annotations ([`mcp_types::routing::annotated_properties`]),
/// derived once when the tool is registered; a tool whose annotations are
/// invalid has none to check.
pub(crate) fn param_headers(tool: &Tool) -> Box<[ParamHeader]> {
    mcp_types::routing::annotated_properties(tool)
        .map(|annotated| {
            annotated
                .into_iter()
                .map(|(header, path)| ParamHeader {
                    name: mcp_types::routing::param_header(&header),
                    header,
                    path,
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) call: ToolFn,
    /// Its `x-mcp-header` annotations, read from its input schema once when
    /// it is registered (every stateless HTTP call checks them).
    pub(crate) param_headers: Box<[ParamHeader]>,
    /// The extension that contributed it (an index into `extensions`).
    pub(crate) owner: Option<usize>,
}

pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) read: ResourceFn,
    /// The extension that contributed it (an index into `extensions`).
    pub(crate) owner: Option<usize>,
}

pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    pub(crate) read: ResourceFn,
    /// The extension that contributed it (an index into `extensions`).
    pub(crate) owner: Option<usize>,
}

pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) get: PromptFn,
}

/// Span fields recorded only on the operator's opt-in, one switch each.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Recorded {
    pub(crate) tool_arguments: bool,
    pub(crate) tool_results: bool,
}

pub(crate) struct Registry {
    pub(crate) info: Implementation,
    /// `info` serialized, made once for the `_meta` of every stateless result.
    pub(crate) info_json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    pub(crate) instructions: Option<String>,
    /// The tools, resources, templates and prompts, changed at run time
    /// through [`Server::catalog`](crate::Server::catalog).
    pub(crate) catalog: Catalog,
    /// Whether the lists are advertised (with `listChanged`) whatever the
    /// catalog holds ([`ServerBuilder::dynamic`](crate::ServerBuilder::dynamic)).
    pub(crate) dynamic: bool,
    /// Told of each resource subscription and its end, in both eras.
    pub(crate) on_subscribe: Option<SubscribeFn>,
    pub(crate) on_unsubscribe: Option<SubscribeFn>,
    pub(crate) completion: Option<CompleteFn>,
    pub(crate) roots_list_changed: Option<SessionFn>,
    pub(crate) page_size: usize,
    pub(crate) sealer: StateSealer,
    pub(crate) changes: ListChanges,
    pub(crate) list_cache: (u64, CacheScope),
    pub(crate) read_cache: (u64, CacheScope),
    pub(crate) list_changed: bool,
    pub(crate) dispatcher: DispatcherConfig,
    /// What the application handed [`ServerBuilder::with_state`](crate::ServerBuilder::with_state).
    pub(crate) state: Option<AppState>,
    /// What the operator opted in to record in `tools/call` spans.
    pub(crate) recorded: Recorded,
    /// The task engine, when the server runs tasks ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)).
    pub(crate) tasks: Option<Arc<crate::tasks::TaskEngine>>,
    /// The registered extensions, in registration order.
    pub(crate) extensions: Vec<ExtensionEntry>,
    /// Which extension serves each extension request method.
    pub(crate) extension_requests: HashMap<String, usize>,
    /// Which extension receives each extension notification method.
    pub(crate) extension_notifications: HashMap<String, usize>,
}

impl Registry {
    /// The capabilities a server with these registrations advertises (see
    /// [`Server::capabilities`](crate::Server::capabilities)).
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let r = self;
        let list_changed = (r.list_changed || r.dynamic).then_some(true);
        let catalog = r.catalog.snapshot();
        let mut capabilities = ServerCapabilities::new();
        // Log messages can always be sent through the context.
        capabilities.logging = Some(JsonObject::new());
        if r.dynamic || !catalog.tools.is_empty() {
            let mut tools = ToolsCapability::new();
            tools.list_changed = list_changed;
            capabilities.tools = Some(tools);
        }
        if r.dynamic || !catalog.resources.is_empty() || !catalog.templates.is_empty() {
            let mut resources = ResourcesCapability::new();
            resources.subscribe = Some(true);
            resources.list_changed = list_changed;
            capabilities.resources = Some(resources);
        }
        if r.dynamic || !catalog.prompts.is_empty() {
            let mut prompts = PromptsCapability::new();
            prompts.list_changed = list_changed;
            capabilities.prompts = Some(prompts);
        }
        if r.completion.is_some() {
            capabilities.completions = Some(JsonObject::new());
        }
        if !r.extensions.is_empty() {
            let extensions = r
                .extensions
                .iter()
                .map(|e| (e.id.to_string(), Value::Object(e.settings.clone())))
                .collect();
            capabilities.extensions = Some(extensions);
        }
        capabilities
    }
}
