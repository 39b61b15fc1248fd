//! A handler made into what the registry stores: its extractors read and
//! its future boxed once, its answer converted; [`ToolDefinition`], a
//! tool with its handler (what `#[tool]` generates); and [`Registrations`],
//! the plain value of tools, resources and templates that a builder or an
//! extension collects (an extension contributes its own to the builder's).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_core::BoxFuture;
use mcp_types::{
    CompleteRequestParams, Era, JsonObject, Resource, ResourceContents, ResourceTemplate,
    ResultOrInputRequired, Tool,
};

use crate::answer::{IntoCompletionResult, IntoPromptResult, IntoResourceResult, ResourceRequest};
use crate::handler::{Completions, Handler, Prompts, Resources, StateNeed, Tools, signature_of};
use crate::registry::{
    CompleteFn, PromptFn, ResourceEntry, ResourceFn, TemplateEntry, ToolEntry, ToolFn,
};
use crate::session::Context;
use crate::tool_io::{IntoToolResult, empty_input_schema};
use crate::{Error, UriTemplate};

/// A tool and its handler, ready for
/// [`ServerBuilder::register`](crate::ServerBuilder::register): what the
/// `#[tool]` attribute (feature `macros`) generates, and what
/// [`ServerBuilder::tool`](crate::ServerBuilder::tool) makes.
///
/// # Examples
/// ```
/// use mcp_server::{Server, Tool, ToolDefinition};
///
/// async fn now() -> String {
///     "12:00".to_owned()
/// }
///
/// let mut clock = Tool::new("now", Default::default());
/// clock.title = Some("Clock".into());
/// let server = Server::builder("clock", "1.0.0")
///     .register(ToolDefinition::new(clock, now))
///     .build()
///     .unwrap();
/// // No `Args`: the schema of a tool without arguments.
/// assert_eq!(server.tools()[0].input_schema["additionalProperties"], false);
/// ```
pub struct ToolDefinition {
    pub(crate) tool: Tool,
    pub(crate) call: ToolFn,
    pub(crate) states: Vec<StateNeed>,
    /// Why it cannot be registered, reported by `build()`.
    pub(crate) refusal: Option<Error>,
}

impl std::fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl ToolDefinition {
    /// `tool` served by `handler`. Its input schema becomes that of the
    /// handler's [`Args<T>`](crate::Args) (`{"type": "object",
    /// "additionalProperties": false}` when it takes none); its output
    /// schema, unless `tool` has one, that of its return type (when it
    /// returns [`Json<T>`](crate::Json)).
    pub fn new<H, M>(tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        let mut definition = Self::raw(tool, handler);
        let signature = signature_of::<Tools, M, H>();
        let refuse = |reason: String| Error::Registration {
            what: format!("tool `{}`", definition.tool.name),
            reason,
        };
        match signature.arguments_schema() {
            Ok(schema) => {
                definition.tool.input_schema = schema.unwrap_or_else(empty_input_schema);
            }
            Err(reason) => definition.refusal = Some(refuse(reason)),
        }
        if definition.tool.output_schema.is_none() {
            match H::Output::output_schema() {
                Ok(schema) => definition.tool.output_schema = schema,
                Err(e) => definition.refusal = Some(refuse(e.to_string())),
            }
        }
        definition
    }

    /// A tool named `name` and described by `description`, served by
    /// `handler` (its schemas as [`new`](Self::new) makes them).
    pub(crate) fn described<H, M>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        let mut tool = Tool::new(name, JsonObject::new());
        tool.description = Some(description.into());
        Self::new(tool, handler)
    }

    /// `tool` exactly as described (its schemas are sent as given), served
    /// by `handler`: for schemas no Rust type describes, or tools defined
    /// at run time; the handler reads the arguments with
    /// [`Args<JsonObject>`](crate::Args).
    pub fn raw<H, M>(tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        let signature = signature_of::<Tools, M, H>();
        Self {
            tool,
            call: tool_fn(handler),
            states: signature.states().to_vec(),
            refusal: None,
        }
    }

    /// The tool as it will be listed.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The tool, to add a title, annotations or icons before registering.
    pub fn tool_mut(&mut self) -> &mut Tool {
        &mut self.tool
    }
}

/// What a [`ServerBuilder`](crate::ServerBuilder) or an
/// [`Extension`](crate::extension::Extension) registered, in order: tools,
/// resources and templates, the states their handlers take, and the
/// registrations refused (reported by `build()`). Names and URIs are
/// checked unique when the server is built, across the server's own and
/// every extension's.
#[derive(Default)]
pub(crate) struct Registrations {
    pub(crate) tools: Vec<ToolEntry>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    /// The states the handlers take, by what registered them.
    pub(crate) needs: Vec<(String, StateNeed)>,
    pub(crate) errors: Vec<Error>,
}

impl Registrations {
    /// Records that what `what` names takes `states`.
    pub(crate) fn need(&mut self, what: impl Fn() -> String, states: &[StateNeed]) {
        self.needs
            .extend(states.iter().map(|&state| (what(), state)));
    }

    /// Adds a tool made beforehand.
    pub(crate) fn register(&mut self, definition: ToolDefinition) {
        let ToolDefinition {
            tool,
            call,
            states,
            refusal,
        } = definition;
        if let Some(refusal) = refusal {
            self.errors.push(refusal);
            return;
        }
        self.need(|| format!("tool `{}`", tool.name), &states);
        self.tools.push(ToolEntry {
            tool,
            call,
            param_headers: Box::default(),
            owner: None,
        });
    }

    /// Adds a resource at a fixed URI.
    pub(crate) fn resource<H, M>(&mut self, resource: Resource, handler: H)
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        self.need(
            || format!("resource `{}`", resource.uri),
            signature_of::<Resources, M, H>().states(),
        );
        let read = resource_fn(handler, resource.mime_type.clone());
        self.resources.push(ResourceEntry {
            resource,
            read,
            owner: None,
        });
    }

    /// Adds a resource template (refused when it does not parse).
    pub(crate) fn resource_template<H, M>(&mut self, template: ResourceTemplate, handler: H)
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        let what = || format!("resource template `{}`", template.uri_template);
        let matcher = match UriTemplate::parse(&template.uri_template) {
            Ok(matcher) => matcher,
            Err(e) => {
                self.errors.push(Error::Registration {
                    what: what(),
                    reason: e.to_string(),
                });
                return;
            }
        };
        self.need(what, signature_of::<Resources, M, H>().states());
        let read = resource_fn(handler, template.mime_type.clone());
        self.templates.push(TemplateEntry {
            template,
            matcher,
            read,
            owner: None,
        });
    }

    /// Whether a resource at `uri` was added.
    pub(crate) fn has_resource(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.resource.uri == uri)
    }

    /// Adds what `other` registered, as contributed by extension `owner`.
    pub(crate) fn contribute(&mut self, other: Registrations, owner: usize) {
        let owner = Some(owner);
        self.errors.extend(other.errors);
        self.needs.extend(other.needs);
        self.tools.extend(
            other
                .tools
                .into_iter()
                .map(|tool| ToolEntry { owner, ..tool }),
        );
        self.resources.extend(
            other
                .resources
                .into_iter()
                .map(|resource| ResourceEntry { owner, ..resource }),
        );
        self.templates.extend(
            other
                .templates
                .into_iter()
                .map(|template| TemplateEntry { owner, ..template }),
        );
    }
}

/// `called` boxed: the handler's future, then `finish` of its output; or,
/// when an extractor refused, `refuse` of its error at once.
pub(crate) fn boxed<Fut, E, T>(
    called: Result<Fut, E>,
    finish: impl FnOnce(Fut::Output) -> T + Send + 'static,
    refuse: impl FnOnce(E) -> T,
) -> BoxFuture<T>
where
    Fut: Future + Send + 'static,
    T: Send + 'static,
{
    match called {
        Ok(future) => Box::pin(async move { finish(future.await) }),
        Err(error) => Box::pin(std::future::ready(refuse(error))),
    }
}

/// A tool's handler as the registry stores it.
pub(crate) fn tool_fn<H, M>(handler: H) -> ToolFn
where
    H: Handler<Tools, M>,
    H::Output: IntoToolResult,
    M: 'static,
{
    Arc::new(move |arguments: Option<&JsonObject>, cx: Context| {
        let empty = JsonObject::new();
        boxed(
            handler.call(arguments.unwrap_or(&empty), &cx),
            IntoToolResult::into_tool_answer,
            |error| error.into_answer().map(ResultOrInputRequired::Complete),
        )
    })
}

/// A resource's (or template's) handler as the registry stores it; its
/// contents carry the registered MIME type.
pub(crate) fn resource_fn<H, M>(handler: H, mime_type: Option<String>) -> ResourceFn
where
    H: Handler<Resources, M>,
    H::Output: IntoResourceResult,
    M: 'static,
{
    let mime_type: Option<Arc<str>> = mime_type.map(Into::into);
    Arc::new(move |request: ResourceRequest, cx: Context| {
        // A missing resource's code is the era's.
        let era = if cx.is_stateless() {
            Era::Stateless
        } else {
            Era::Handshake
        };
        let called = handler.call(&request, &cx);
        let (uri, mime_type) = (request.uri, mime_type.clone());
        boxed(
            called,
            move |output| -> Result<Vec<ResourceContents>, _> {
                output
                    .into_resource_contents(&uri, mime_type.as_deref())
                    .map_err(|e| e.into_error_object(era))
            },
            |error| Err(error.into_error_object(era)),
        )
    })
}

/// A prompt's handler as the registry stores it.
pub(crate) fn prompt_fn<H, M>(handler: H) -> PromptFn
where
    H: Handler<Prompts, M>,
    H::Output: IntoPromptResult,
    M: 'static,
{
    Arc::new(move |arguments: BTreeMap<String, String>, cx: Context| {
        boxed(
            handler.call(&arguments, &cx),
            |output| {
                output
                    .into_prompt_answer()
                    .map_err(|e| e.into_error_object())
            },
            |error| Err(error.into_error_object()),
        )
    })
}

/// The completion handler as the registry stores it.
pub(crate) fn completion_fn<H, M>(handler: H) -> CompleteFn
where
    H: Handler<Completions, M>,
    H::Output: IntoCompletionResult,
    M: 'static,
{
    Arc::new(move |params: CompleteRequestParams, cx: Context| {
        boxed(
            handler.call(&params, &cx),
            |output| output.into_completion().map_err(|e| e.into_error_object()),
            |error| Err(error.into_error_object()),
        )
    })
}
