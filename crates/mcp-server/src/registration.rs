//! A handler made into what the registry stores: its extractors read and
//! its future boxed once, its answer converted; [`ToolDefinition`], a
//! tool with its handler (what `#[tool]` generates); and [`Registrations`],
//! the plain value of tools, resources, templates and prompts that a
//! builder or an extension collects (an extension contributes its own to
//! the builder's), and that replaces a [`Catalog`](crate::Catalog) group.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_core::BoxFuture;
use mcp_types::{
    CompleteRequestParams, Era, JsonObject, Prompt, PromptArgument, Resource, ResourceContents,
    ResourceTemplate, ResultOrInputRequired, Tool,
};
use serde_json::Value;

use crate::answer::{IntoCompletionResult, IntoPromptResult, IntoResourceResult, ResourceRequest};
use crate::entries::{
    CompleteFn, PromptEntry, PromptFn, ResourceEntry, ResourceFn, TemplateEntry, ToolEntry, ToolFn,
};
use crate::handler::{Completions, Handler, Prompts, Resources, StateNeed, Tools, signature_of};
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

/// Tools, resources, resource templates and prompts with their handlers:
/// what a [`ServerBuilder`](crate::ServerBuilder) or an
/// [`Extension`](crate::extension::Extension) registers, and what a
/// [`Catalog`](crate::Catalog) group is replaced with while the server
/// runs. Each method records what it was given, or why it was refused;
/// the refusal is reported where the registrations are used
/// ([`ServerBuilder::build`](crate::ServerBuilder::build),
/// [`Catalog::replace_group`](crate::Catalog::replace_group)), as are names
/// and URIs registered twice.
///
/// # Examples
/// ```
/// use mcp_server::{Args, Registrations, Server, Tool, ToolDefinition};
/// use mcp_server::types::{JsonObject, Resource};
///
/// # fn main() -> Result<(), mcp_server::Error> {
/// let mut schema = JsonObject::new();
/// schema.insert("type".into(), "object".into());
/// let mut registrations = Registrations::new();
/// registrations
///     .register(ToolDefinition::raw(Tool::new("shout", schema), |Args(a): Args<JsonObject>| async move {
///         a.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_uppercase()
///     }))
///     .resource(Resource::new("memo://motd", "motd"), || async { "hello" })
///     .prompt("greet", "Greets someone", || async { "Say hello." });
///
/// let server = Server::builder("shouter", "1.0.0").build()?;
/// server.catalog().replace_group("shouting", registrations)?;
/// assert_eq!(server.catalog().prompts()[0].name, "greet");
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct Registrations {
    pub(crate) tools: Vec<ToolEntry>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) prompts: Vec<PromptEntry>,
    /// The states the handlers take, by what registered them.
    pub(crate) needs: Vec<(String, StateNeed)>,
    pub(crate) errors: Vec<Error>,
}

impl std::fmt::Debug for Registrations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |items: Vec<&str>| items.join(", ");
        f.debug_struct("Registrations")
            .field(
                "tools",
                &names(self.tools.iter().map(|e| e.tool.name.as_str()).collect()),
            )
            .field(
                "resources",
                &names(
                    self.resources
                        .iter()
                        .map(|e| e.resource.uri.as_str())
                        .collect(),
                ),
            )
            .field(
                "templates",
                &names(
                    self.templates
                        .iter()
                        .map(|e| e.template.uri_template.as_str())
                        .collect(),
                ),
            )
            .field(
                "prompts",
                &names(
                    self.prompts
                        .iter()
                        .map(|e| e.prompt.name.as_str())
                        .collect(),
                ),
            )
            .field("refused", &self.errors.len())
            .finish()
    }
}

impl Registrations {
    /// Nothing registered yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing was registered (or refused).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
            && self.resources.is_empty()
            && self.templates.is_empty()
            && self.prompts.is_empty()
            && self.errors.is_empty()
    }

    /// Records that what `what` names takes `states`.
    pub(crate) fn need(&mut self, what: impl Fn() -> String, states: &[StateNeed]) {
        self.needs
            .extend(states.iter().map(|&state| (what(), state)));
    }

    /// Adds a tool made beforehand (such as [`ToolDefinition::raw`], or
    /// the `add_tool()` that `#[tool]` generates for `async fn add`).
    pub fn register(&mut self, definition: ToolDefinition) -> &mut Self {
        let ToolDefinition {
            tool,
            call,
            states,
            refusal,
        } = definition;
        if let Some(refusal) = refusal {
            self.errors.push(refusal);
            return self;
        }
        self.need(|| format!("tool `{}`", tool.name), &states);
        self.tools.push(ToolEntry {
            tool,
            call,
            param_headers: Box::default(),
            owner: None,
        });
        self
    }

    /// Adds a tool served by `handler`, as
    /// [`ServerBuilder::tool`](crate::ServerBuilder::tool) does.
    pub fn tool<H, M>(
        &mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> &mut Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::described(name, description, handler))
    }

    /// Adds a resource at a fixed URI, as
    /// [`ServerBuilder::resource`](crate::ServerBuilder::resource) does.
    pub fn resource<H, M>(&mut self, resource: Resource, handler: H) -> &mut Self
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
        self
    }

    /// Adds a resource template (refused when it does not parse), as
    /// [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template) does.
    pub fn resource_template<H, M>(&mut self, template: ResourceTemplate, handler: H) -> &mut Self
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
                return self;
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
        self
    }

    /// Adds a prompt whose arguments come from the handler's
    /// [`Args<T>`](crate::Args), as
    /// [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) does.
    pub fn prompt<H, M>(
        &mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> &mut Self
    where
        H: Handler<Prompts, M>,
        H::Output: IntoPromptResult,
        M: 'static,
    {
        let mut prompt = Prompt::new(name);
        prompt.description = Some(description.into());
        match signature_of::<Prompts, M, H>().arguments_schema() {
            Ok(schema) => {
                let arguments = schema.as_ref().map(prompt_arguments).unwrap_or_default();
                if !arguments.is_empty() {
                    prompt.arguments = Some(arguments);
                }
            }
            Err(reason) => {
                self.errors.push(Error::Registration {
                    what: format!("prompt `{}`", prompt.name),
                    reason,
                });
                return self;
            }
        }
        self.prompt_with(prompt, handler)
    }

    /// Adds a prompt described by `prompt` (its arguments as given), as
    /// [`ServerBuilder::prompt_with`](crate::ServerBuilder::prompt_with)
    /// does: the handler may take them as a `BTreeMap<String, String>`.
    pub fn prompt_with<H, M>(&mut self, prompt: Prompt, handler: H) -> &mut Self
    where
        H: Handler<Prompts, M>,
        H::Output: IntoPromptResult,
        M: 'static,
    {
        self.need(
            || format!("prompt `{}`", prompt.name),
            signature_of::<Prompts, M, H>().states(),
        );
        let get = prompt_fn(handler);
        self.prompts.push(PromptEntry { prompt, get });
        self
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
        // Prompts have no owner: an extension's are the server's own.
        self.prompts.extend(other.prompts);
    }
}

/// Refuses the first of `needs` whose state `states` lacks.
pub(crate) fn check_states(
    needs: &[(String, StateNeed)],
    states: Option<&crate::states::States>,
) -> Result<(), Error> {
    let Some((what, state)) = needs
        .iter()
        .find(|(_, state)| !states.is_some_and(|s| s.contains(state.type_id)))
    else {
        return Ok(());
    };
    let name = state.type_name;
    Err(Error::Registration {
        what: what.clone(),
        reason: format!(
            "its handler takes `State<{name}>`, but the server holds no `{name}`; \
             hand one to `ServerBuilder::with_state`"
        ),
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
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_come_from_the_schema() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Review {
            /// The code to review.
            code: String,
            language: Option<String>,
        }
        let schema = crate::input_schema_for::<Review>().expect("object");
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
