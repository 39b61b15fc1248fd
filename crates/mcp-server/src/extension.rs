//! Server extensions (SEP-2133): how an application adds to the protocol.
//!
//! An [`Extension`] is a value named by a validated reverse-DNS identifier
//! ([`ExtensionId`], such as `com.example/weather`) and registered with
//! [`ServerBuilder::extension`](crate::ServerBuilder::extension). The server
//! advertises it, with its [settings](Extension::settings), under
//! `capabilities.extensions` in both eras (the `initialize` result and
//! `server/discover`). An extension contributes:
//!
//! - **tools and resources**: [`Extension::tool`], [`Extension::tool_with`],
//!   [`Extension::tool_raw`], [`Extension::register`], [`Extension::resource`]
//!   and [`Extension::resource_template`] take exactly what the
//!   [`ServerBuilder`](crate::ServerBuilder) methods of the same name take (handlers that take
//!   [extractors](crate::handler));
//! - **request methods**: [`Extension::request`] for a typed method marker
//!   (a [`RequestMethod`] the extension declares: its wire name, params and
//!   result types), [`Extension::cacheable_request`] for one whose results
//!   carry the 2026-07-28 cache hints; their handlers take extractors too,
//!   the params with [`Params`];
//! - **notification methods**: [`Extension::notification`];
//! - **interception of `tools/call`**: [`Extension::intercept_tool_calls`]
//!   sees every call first and either answers it itself (a result of the
//!   extension's own shape, [`CallOutcome::Extension`]) or lets it
//!   [`proceed`](ToolCall::proceed) to the next interceptor and the tool;
//!   an extension's request method can run a call again from what it kept
//!   of it ([`ToolCall::rerun`], how the tasks extension resumes a task on
//!   whichever process receives the answers).
//!
//! **Negotiation.** By default the client must declare the extension too
//! (in `initialize`, or in a stateless request's `_meta`): until it does,
//! the extension's methods answer `-32601` as if they did not exist, its
//! tools are not listed and cannot be called, and its resources are neither
//! listed nor read. An extension that any client may use once the server
//! offers it (Skills: a client just calls `skills/list`) says so with
//! [`Extension::client_must_declare`]`(false)`. Interceptors run on every
//! call and decide for themselves with [`Context::client_supports_extension`]
//! (which also reads a per-request `_meta` declaration).
//!
//! # Examples
//! ```
//! use mcp_server::extension::Extension;
//! use mcp_server::Server;
//! use mcp_server::types::{ErrorObject, JsonObject};
//!
//! // A method of the extension: its wire name, params and result.
//! #[derive(Debug, Clone, Copy)]
//! enum Forecast {}
//! impl mcp_server::types::Method for Forecast {
//!     const NAME: &'static str = "weather/forecast";
//!     const PARAMS_OPTIONAL: bool = true;
//!     type Params = Option<JsonObject>;
//!     fn absent_params() -> Option<Self::Params> { Some(None) }
//!     fn is_absent(params: &Self::Params) -> bool { params.is_none() }
//! }
//! impl mcp_server::types::RequestMethod for Forecast {
//!     type Result = JsonObject;
//! }
//!
//! async fn forecast() -> Result<JsonObject, ErrorObject> {
//!     let mut result = JsonObject::new();
//!     result.insert("forecast".into(), "sunny".into());
//!     Ok(result)
//! }
//!
//! let weather = Extension::new("com.example/weather")
//!     .expect("a valid identifier")
//!     .tool("sky", "Looks at the sky", || async { "blue" })
//!     .request::<Forecast, _, _>(forecast);
//! let server = Server::builder("weather", "1.0.0").extension(weather).build().unwrap();
//! let extensions = server.capabilities().extensions.unwrap();
//! assert!(extensions.contains_key("com.example/weather"));
//! ```

use std::future::Future;
use std::sync::Arc;

use mcp_core::BoxFuture;
use mcp_types::extension::{ExtensionId, InvalidExtensionId};
use mcp_types::method::{NotificationMethod, RequestMethod};
use mcp_types::{ErrorObject, JsonObject, RawJson, Resource, ResourceTemplate, Tool};

use crate::answer::IntoResourceResult;
use crate::handler::{Handler, Requests, Resources, Tools};
use crate::registration::{Registrations, ToolDefinition, boxed};

pub use crate::extract::Params;
use crate::registry::{ExtNotificationFn, ExtRequest, ExtRequestFn, ExtensionEntry};
use crate::session::Context;
pub use crate::tool_call::{CallOutcome, ToolCall};
use crate::tool_io::IntoToolResult;

/// An extension of the protocol, registered with
/// [`ServerBuilder::extension`](crate::ServerBuilder::extension). See the
/// [module documentation](self).
pub struct Extension {
    pub(crate) entry: ExtensionEntry,
    /// The extension's tools and resources (registered as the server's own
    /// are), the states their handlers take and what was refused: the
    /// builder adds them to its own at registration.
    pub(crate) items: Registrations,
}

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extension")
            .field("id", &self.entry.id)
            .field("settings", &self.entry.settings)
            .finish_non_exhaustive()
    }
}

impl Extension {
    /// An extension named `id`, with empty settings, contributing nothing yet.
    ///
    /// # Errors
    /// [`InvalidExtensionId`] when `id` is not `vendor.prefix/name`.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidExtensionId> {
        Ok(Self::with_id(ExtensionId::new(id)?))
    }

    /// An extension named by an already validated identifier.
    pub fn with_id(id: ExtensionId) -> Self {
        Self {
            entry: ExtensionEntry {
                id,
                settings: JsonObject::new(),
                client_must_declare: true,
                requests: Default::default(),
                notifications: Default::default(),
                interceptor: None,
            },
            items: Registrations::default(),
        }
    }

    /// The identifier.
    pub fn id(&self) -> &ExtensionId {
        &self.entry.id
    }

    /// The settings advertised under `capabilities.extensions[id]` (`{}`
    /// by default), placed there as given (SEP-2133 has no envelope).
    pub fn settings(mut self, settings: JsonObject) -> Self {
        self.entry.settings = settings;
        self
    }

    /// Whether a client must declare this extension before its methods,
    /// tools and resources exist for it (`true` by default).
    pub fn client_must_declare(mut self, required: bool) -> Self {
        self.entry.client_must_declare = required;
        self
    }

    /// A tool of this extension; as [`ServerBuilder::tool`](crate::ServerBuilder::tool).
    pub fn tool<H, M>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::described(name, description, handler))
    }

    /// A tool of this extension described by `tool`; as
    /// [`ServerBuilder::tool_with`](crate::ServerBuilder::tool_with).
    pub fn tool_with<H, M>(self, tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::new(tool, handler))
    }

    /// A tool of this extension with its schemas as given; as
    /// [`ServerBuilder::tool_raw`](crate::ServerBuilder::tool_raw).
    pub fn tool_raw<H, M>(self, tool: Tool, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        self.register(ToolDefinition::raw(tool, handler))
    }

    /// A tool of this extension made beforehand; as
    /// [`ServerBuilder::register`](crate::ServerBuilder::register).
    pub fn register(mut self, definition: ToolDefinition) -> Self {
        self.items.register(definition);
        self
    }

    /// A resource of this extension; as
    /// [`ServerBuilder::resource`](crate::ServerBuilder::resource).
    pub fn resource<H, M>(mut self, resource: Resource, handler: H) -> Self
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        self.items.resource(resource, handler);
        self
    }

    /// A resource template of this extension; as
    /// [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template).
    pub fn resource_template<H, M>(mut self, template: ResourceTemplate, handler: H) -> Self
    where
        H: Handler<Resources, M>,
        H::Output: IntoResourceResult,
        M: 'static,
    {
        self.items.resource_template(template, handler);
        self
    }

    fn add_request(mut self, method: &str, request: ExtRequest) -> Self {
        if self
            .entry
            .requests
            .insert(method.to_owned(), request)
            .is_some()
        {
            self.items.errors.push(crate::Error::Registration {
                what: format!("method `{method}` of extension `{}`", self.entry.id),
                reason: "the extension already serves this method".into(),
            });
        }
        self
    }

    /// Serves request method `M` with `handler`, a plain async function
    /// taking [extractors](crate::handler): its parsed params with
    /// [`Params`] (params that do not fit answer `-32602`), the
    /// [`Context`], [`State`](crate::State)… It returns
    /// `Result<M::Result, E>` with any `E` that converts into an
    /// `ErrorObject` (a [`crate::Error`] does); the result is sent as the era
    /// shapes results (`resultType` and the server's identity at 2026-07-28).
    pub fn request<M, H, Mk>(self, handler: H) -> Self
    where
        M: RequestMethod,
        M::Params: Send,
        H: Handler<Requests<M>, Mk>,
        H::Output: IntoMethodResult<M>,
        Mk: 'static,
    {
        self.add_typed_request::<M, H, Mk>(handler, false)
    }

    /// As [`request`](Self::request), for a method whose 2026-07-28
    /// results carry the server's list cache hints (`ttlMs`, `cacheScope`;
    /// see [`ServerBuilder::list_cache`](crate::ServerBuilder::list_cache)).
    pub fn cacheable_request<M, H, Mk>(self, handler: H) -> Self
    where
        M: RequestMethod,
        M::Params: Send,
        H: Handler<Requests<M>, Mk>,
        H::Output: IntoMethodResult<M>,
        Mk: 'static,
    {
        self.add_typed_request::<M, H, Mk>(handler, true)
    }

    /// Serves `M` with `handler`; the states it takes are checked at
    /// `build()` like every other handler's.
    fn add_typed_request<M, H, Mk>(mut self, handler: H, cacheable: bool) -> Self
    where
        M: RequestMethod,
        M::Params: Send,
        H: Handler<Requests<M>, Mk>,
        H::Output: IntoMethodResult<M>,
        Mk: 'static,
    {
        let id = &self.entry.id;
        self.items.need(
            || format!("method `{}` of extension `{id}`", M::NAME),
            crate::handler::signature_of::<Requests<M>, Mk, H>().states(),
        );
        let handle = typed_request::<M, H, Mk>(handler);
        self.add_request(M::NAME, ExtRequest { handle, cacheable })
    }

    /// Receives notification method `M` from clients that negotiated the
    /// extension. The handler runs on the connection's read path: keep it
    /// short, and spawn (with an owner) anything long.
    pub fn notification<M, F, Fut>(mut self, handler: F) -> Self
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params, crate::ServerSession) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let handle: ExtNotificationFn = Arc::new(move |params, session| {
            let handler = handler.clone();
            Box::pin(async move {
                match mcp_types::parse_params::<M>(params.as_ref()) {
                    Ok(params) => handler(params, session).await,
                    Err(e) => {
                        tracing::debug!(method = M::NAME, error = %e, "ignored a notification")
                    }
                }
            })
        });
        if self
            .entry
            .notifications
            .insert(M::NAME.to_owned(), handle)
            .is_some()
        {
            self.items.errors.push(crate::Error::Registration {
                what: format!(
                    "notification `{}` of extension `{}`",
                    M::NAME,
                    self.entry.id
                ),
                reason: "the extension already receives this notification".into(),
            });
        }
        self
    }

    /// Sees every `tools/call` before the tool runs (interceptors of several
    /// extensions run in registration order). `interceptor` either answers
    /// the call itself or returns `call.proceed().await`.
    pub fn intercept_tool_calls<F, Fut>(mut self, interceptor: F) -> Self
    where
        F: Fn(ToolCall, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallOutcome, ErrorObject>> + Send + 'static,
    {
        let interceptor = Arc::new(interceptor);
        self.entry.interceptor = Some(Arc::new(move |call, cx| {
            let interceptor = interceptor.clone();
            Box::pin(async move { interceptor(call, cx).await })
        }));
        self
    }
}

/// Converts what an extension's request handler returns into the method's
/// result: `Result<M::Result, E>` with any `E` that converts into an
/// `ErrorObject`.
pub trait IntoMethodResult<M: RequestMethod> {
    /// The result, or the JSON-RPC error the request is answered with.
    ///
    /// # Errors
    /// The handler's failure.
    fn into_method_result(self) -> Result<M::Result, ErrorObject>;
}

impl<M: RequestMethod, E: Into<ErrorObject>> IntoMethodResult<M> for Result<M::Result, E> {
    fn into_method_result(self) -> Result<M::Result, ErrorObject> {
        self.map_err(Into::into)
    }
}

fn typed_request<M, H, Mk>(handler: H) -> ExtRequestFn
where
    M: RequestMethod,
    M::Params: Send,
    H: Handler<Requests<M>, Mk>,
    H::Output: IntoMethodResult<M>,
    Mk: 'static,
{
    Arc::new(
        move |params, cx| -> BoxFuture<Result<RawJson, ErrorObject>> {
            let params = match mcp_types::parse_params::<M>(params.as_ref()) {
                Ok(params) => params,
                Err(e) => {
                    let refused = Err(ErrorObject::invalid_params(e.to_string()));
                    return Box::pin(std::future::ready(refused));
                }
            };
            boxed(
                handler.call(&params, &cx),
                |output| {
                    let result = output.into_method_result()?;
                    RawJson::from_serialize(&result).map_err(|e| {
                        ErrorObject::internal_error(format!("could not serialize the result: {e}"))
                    })
                },
                Err,
            )
        },
    )
}
