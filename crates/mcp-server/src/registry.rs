//! What a server offers, as the builder registered it: its catalog of
//! tools, resources, templates and prompts ([`Catalog`]), its extensions,
//! hooks, and the settings the runner serves them with.

use crate::catalog::Catalog;
use crate::changes::ListChanges;
use crate::entries::CompleteFn;
use std::collections::HashMap;
use std::sync::Arc;

use mcp_core::{BoxFuture, DispatcherConfig};
use mcp_types::RawJson;
use mcp_types::extension::ExtensionId;
use mcp_types::{
    CacheScope, ErrorObject, Implementation, JsonObject, PromptsCapability, ResourcesCapability,
    ServerCapabilities, ToolsCapability,
};
use serde_json::Value;

use crate::request_state::StateSealer;
use crate::session::{Context, ServerSession};
use crate::states::AppState;
use crate::tool_call::{CallOutcome, ToolCall};

pub(crate) type SessionFn = Arc<dyn Fn(ServerSession) -> BoxFuture<()> + Send + Sync>;
/// A subscription hook: the resource's URI and the subscriber's session.
pub(crate) type SubscribeFn = Arc<dyn Fn(String, ServerSession) -> BoxFuture<()> + Send + Sync>;

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

/// The default number of resources one client may follow at once: a
/// handshake-era session's subscriptions, or one `subscriptions/listen`
/// stream's `resourceSubscriptions`.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1000;

/// Span fields recorded only on the operator's opt-in, one switch each.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Recorded {
    pub(crate) tool_arguments: bool,
    pub(crate) tool_results: bool,
}

/// The server's identity serialized for the stamp of stateless results,
/// made on first use.
pub(crate) struct IdentityJson {
    /// The server's `Implementation`.
    pub(crate) info: Box<serde_json::value::RawValue>,
    /// `{"io.modelcontextprotocol/serverInfo": info}`: the whole `_meta` of
    /// a result that has none of its own.
    pub(crate) meta: Box<serde_json::value::RawValue>,
}

pub(crate) struct Registry {
    pub(crate) info: Implementation,
    /// `info` as every stateless result carries it, serialized once.
    pub(crate) identity_json: std::sync::OnceLock<IdentityJson>,
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
    /// The resources one session, or one listen stream, may follow.
    pub(crate) max_subscriptions: usize,
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
