//! What the catalog stores of each tool, resource, template and prompt:
//! its description and its handler, as the runner calls it.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::BoxFuture;
use mcp_types::{
    CallToolResult, CompleteRequestParams, Completion, ErrorObject, GetPromptResult, JsonObject,
    Prompt, Resource, ResourceContents, ResourceTemplate, ResultOrInputRequired, Tool,
};

use crate::UriTemplate;
use crate::answer::ResourceRequest;
use crate::session::Context;

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
pub(crate) type CompleteFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

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
