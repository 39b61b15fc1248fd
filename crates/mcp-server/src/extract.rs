//! The extractors a handler may take (see [`crate::handler`]).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use mcp_core::CancellationToken;
use mcp_types::method::RequestMethod;
use mcp_types::{CompleteRequestParams, ErrorObject, JsonObject, RequestMeta};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::answer::{ResourceRequest, read_texts};
use crate::handler::{
    Completions, FromRequest, Kind, Prompts, Requests, Resources, Signature, Tools,
};
use crate::handler_error::{PromptError, ResourceError};
use crate::session::Context;
use crate::tool_io::{ToolError, parse_arguments};

/// A tool's or a prompt's arguments, read into `T`, whose JSON Schema
/// becomes the tool's input schema (or the prompt's arguments).
///
/// Derive `serde::Deserialize` and `schemars::JsonSchema`; doc comments on
/// the fields become the descriptions a model reads. Arguments that do not
/// fit answer a tool call with an `isError` result naming the offending
/// argument (which the model can read and correct), a prompt with `-32602`.
/// A prompt's arguments are strings: `String` fields are required ones,
/// `Option<String>` optional ones (numbers and booleans parse from their
/// text). A handler that takes no `Args` takes no arguments.
///
/// # Examples
/// ```
/// use mcp_server::{Args, Server};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Greet {
///     /// Whom to greet.
///     name: String,
/// }
///
/// async fn greet(Args(greet): Args<Greet>) -> String {
///     format!("Hello, {}!", greet.name)
/// }
///
/// let server = Server::builder("greeter", "1.0.0").tool("greet", "Greets", greet).build().unwrap();
/// assert_eq!(server.tools()[0].input_schema["required"], serde_json::json!(["name"]));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema> FromRequest<Tools> for Args<T> {
    fn from_request(input: &JsonObject, _: &Context) -> Result<Self, ToolError> {
        parse_arguments(Some(input)).map(Args)
    }

    fn describe(signature: &mut Signature) {
        signature.arguments::<T>();
    }
}

impl<T: DeserializeOwned + JsonSchema> FromRequest<Prompts> for Args<T> {
    fn from_request(input: &BTreeMap<String, String>, _: &Context) -> Result<Self, PromptError> {
        read_texts(input).map(Args).map_err(|e| {
            PromptError::invalid_params(format!("invalid argument `{}`: {}", e.path(), e.inner()))
        })
    }

    fn describe(signature: &mut Signature) {
        signature.arguments::<T>();
    }
}

/// The state of type `S` handed to
/// [`ServerBuilder::with_state`](crate::ServerBuilder::with_state), shared
/// by every handler (no `Arc` to clone into each closure).
///
/// `build()` refuses a server whose handler takes a `State<S>` it was
/// given no `S` for.
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use mcp_server::{Server, State};
///
/// struct Counter(AtomicU64);
///
/// async fn next(State(counter): State<Counter>) -> String {
///     counter.0.fetch_add(1, Ordering::Relaxed).to_string()
/// }
///
/// let server = Server::builder("counter", "1.0.0")
///     .with_state(Counter(AtomicU64::new(0)))
///     .tool("next", "Counts calls", next)
///     .build();
/// assert!(server.is_ok());
/// ```
pub struct State<S>(pub Arc<S>);

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S> Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: fmt::Debug> fmt::Debug for State<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

impl<K: Kind, S: Send + Sync + 'static> FromRequest<K> for State<S> {
    fn from_request(_: &K::Input, cx: &Context) -> Result<Self, K::Error> {
        // `build()` checked the server holds an `S`.
        cx.shared_state::<S>().map(State).ok_or_else(|| {
            crate::Error::NoState {
                type_name: std::any::type_name::<S>(),
            }
            .into()
        })
    }

    fn describe(signature: &mut Signature) {
        signature.state::<S>();
    }
}

/// The request's `_meta` (empty when it had none): the progress token, the
/// client's per-request declarations, and any key of the application's.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta(pub Arc<RequestMeta>);

impl Deref for Meta {
    type Target = RequestMeta;

    fn deref(&self) -> &RequestMeta {
        &self.0
    }
}

impl<K: Kind> FromRequest<K> for Meta {
    fn from_request(_: &K::Input, cx: &Context) -> Result<Self, K::Error> {
        let meta = cx.shared_meta().cloned().unwrap_or_default();
        Ok(Meta(meta))
    }
}

/// The request's [`Context`]: progress, logging, asking the client, the
/// session.
impl<K: Kind> FromRequest<K> for Context {
    fn from_request(_: &K::Input, cx: &Context) -> Result<Self, K::Error> {
        Ok(cx.clone())
    }
}

/// Cancelled when the client cancels the request or the connection ends:
/// for work the handler hands to other tasks or threads (the handler's own
/// future is simply dropped).
impl<K: Kind> FromRequest<K> for CancellationToken {
    fn from_request(_: &K::Input, cx: &Context) -> Result<Self, K::Error> {
        Ok(cx.cancel_token().clone())
    }
}

/// The URI a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Uri(pub String);

impl Deref for Uri {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Uri {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromRequest<Resources> for Uri {
    fn from_request(input: &ResourceRequest, _: &Context) -> Result<Self, ResourceError> {
        Ok(Uri(input.uri.clone()))
    }
}

/// A resource template's variables, read into `T` (see
/// [`ResourceRequest::variables_as`]); a variable that does not fit
/// answers `-32602` naming it.
///
/// # Examples
/// ```
/// use mcp_server::{Server, Variables};
/// use mcp_server::types::ResourceTemplate;
///
/// #[derive(serde::Deserialize)]
/// struct User { id: u64 }
///
/// async fn user(Variables(user): Variables<User>) -> String {
///     format!("user {}", user.id)
/// }
///
/// let server = Server::builder("users", "1.0.0")
///     .resource_template(ResourceTemplate::new("users://{id}", "user"), user)
///     .build();
/// assert!(server.is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Variables<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Resources> for Variables<T> {
    fn from_request(input: &ResourceRequest, _: &Context) -> Result<Self, ResourceError> {
        input.variables_as().map(Variables)
    }
}

/// The whole read request: its URI and a template's variables as strings.
impl FromRequest<Resources> for ResourceRequest {
    fn from_request(input: &ResourceRequest, _: &Context) -> Result<Self, ResourceError> {
        Ok(input.clone())
    }
}

/// A prompt's arguments as the client sent them, after the required ones
/// were checked present.
impl FromRequest<Prompts> for BTreeMap<String, String> {
    fn from_request(input: &BTreeMap<String, String>, _: &Context) -> Result<Self, PromptError> {
        Ok(input.clone())
    }
}

/// What to complete: the prompt or template, the argument and what the
/// user typed so far, the other arguments already filled in.
impl FromRequest<Completions> for CompleteRequestParams {
    fn from_request(
        input: &CompleteRequestParams,
        _: &Context,
    ) -> Result<Self, crate::CompletionError> {
        Ok(input.clone())
    }
}

/// An extension request's params, parsed as its method `M` declares them
/// (`M::Params`); params that do not fit answer `-32602` before the
/// handler runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Params<P>(pub P);

impl<M: RequestMethod> FromRequest<Requests<M>> for Params<M::Params> {
    fn from_request(input: &M::Params, _: &Context) -> Result<Self, ErrorObject> {
        Ok(Params(input.clone()))
    }
}
