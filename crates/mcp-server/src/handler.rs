//! Handlers: plain async functions that take extractors, as in axum.
//!
//! A handler is any `async fn` (or closure returning a future) whose
//! arguments are all [extractors](FromRequest), in any order and up to
//! eight of them, and whose return value converts into the answer of the
//! request it serves: [`IntoToolResult`](crate::IntoToolResult) for a tool,
//! [`IntoResourceResult`](crate::IntoResourceResult) for a resource,
//! [`IntoPromptResult`](crate::IntoPromptResult) for a prompt,
//! [`IntoCompletionResult`](crate::IntoCompletionResult) for completions.
//! A `Result` of any of those converts too, with any error that converts
//! into the kind's error, so `?` works on any error inside a handler.
//!
//! | extractor | what it reads | kinds |
//! |---|---|---|
//! | [`Args<T>`](crate::Args) | the arguments, typed (and the tool's input schema, a prompt's arguments) | tools, prompts |
//! | [`State<S>`](crate::State) | the state handed to [`ServerBuilder::with_state`](crate::ServerBuilder::with_state) | all |
//! | [`Context`] | the request and its session: progress, logging, asks | all |
//! | [`Meta`](crate::Meta) | the request's `_meta` | all |
//! | [`CancellationToken`](crate::CancellationToken) | cancelled when the client cancels | all |
//! | [`Uri`](crate::Uri), [`Variables<T>`](crate::Variables), [`ResourceRequest`] | the URI read and a template's variables | resources |
//! | [`CompleteRequestParams`] | what to complete | completions |
//!
//! A handler with no arguments at all is a handler too.
//!
//! # Examples
//! ```
//! use mcp_server::{Args, Json, Server, State, ToolError};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! struct Limits { max: i64 }
//!
//! async fn add(Args(add): Args<Add>, State(limits): State<Limits>) -> Result<Json<Sum>, ToolError> {
//!     let sum = add.a.checked_add(add.b).ok_or_else(|| ToolError::new("the sum overflows"))?;
//!     if sum > limits.max {
//!         return Err(ToolError::new(format!("the sum is above {}", limits.max)));
//!     }
//!     Ok(Json(Sum { sum }))
//! }
//!
//! async fn ping() -> &'static str {
//!     "pong"
//! }
//!
//! let server = Server::builder("calculator", "1.0.0")
//!     .with_state(Limits { max: 1_000 })
//!     .tool("add", "Adds two integers", add)
//!     .tool("ping", "Answers pong", ping)
//!     .build()
//!     .expect("valid registrations");
//! assert_eq!(server.tools().len(), 2);
//! ```
//!
//! # Writing an extractor
//! Implement [`FromRequest`] for the kinds it serves (all of them with a
//! generic `K: Kind`). Extraction is synchronous and runs before the
//! handler's future is made, so the future owns only what was extracted.
//!
//! ```
//! use mcp_server::handler::{FromRequest, Kind};
//! use mcp_server::{Context, Server};
//!
//! /// The caller as the transport verified it, or "anonymous".
//! struct Caller(String);
//!
//! impl<K: Kind> FromRequest<K> for Caller {
//!     fn from_request(_: &K::Input, cx: &Context) -> Result<Self, K::Error> {
//!         let principal = cx.transport().principal.as_deref().unwrap_or("anonymous");
//!         Ok(Caller(principal.to_owned()))
//!     }
//! }
//!
//! async fn whoami(Caller(caller): Caller) -> String {
//!     caller
//! }
//!
//! let server = Server::builder("who", "1.0.0").tool("whoami", "Names the caller", whoami).build();
//! assert!(server.is_ok());
//! ```

use std::any::TypeId;
use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;

use mcp_types::method::RequestMethod;
use mcp_types::{CompleteRequestParams, ErrorObject, JsonObject};
use schemars::JsonSchema;

use crate::answer::ResourceRequest;
use crate::handler_error::{CompletionError, PromptError, ResourceError};
use crate::session::Context;
use crate::tool_io::{SchemaError, ToolError, input_schema_for};

mod sealed {
    pub trait Sealed {}
}

/// A kind of request a handler serves: what it brings besides its
/// [`Context`], and what its handlers fail with. One of [`Tools`],
/// [`Resources`], [`Prompts`], [`Completions`] and an extension's
/// [`Requests`].
pub trait Kind: sealed::Sealed + Send + Sync + 'static {
    /// What the request brings: a tool's arguments, the resource asked
    /// for, a prompt's arguments, what to complete.
    type Input: ?Sized;
    /// Why a request of this kind fails (an extractor's refusal too).
    type Error: From<crate::Error>;
}

/// `tools/call`: the input is the call's `arguments` (an empty object when
/// absent); failures are [`ToolError`]s.
#[derive(Debug)]
pub enum Tools {}

/// `resources/read`, of a resource or a template: the input is the
/// [`ResourceRequest`]; failures are [`ResourceError`]s.
#[derive(Debug)]
pub enum Resources {}

/// `prompts/get`: the input is the prompt's arguments (strings by name);
/// failures are [`PromptError`]s.
#[derive(Debug)]
pub enum Prompts {}

/// `completion/complete`: the input is the request's params; failures are
/// [`CompletionError`]s.
#[derive(Debug)]
pub enum Completions {}

/// An extension's request method `M` (see
/// [`Extension::request`](crate::extension::Extension::request)): the
/// input is its params, parsed as `M` declares them (take them with
/// [`Params`](crate::extension::Params)); failures are JSON-RPC errors.
pub struct Requests<M>(PhantomData<fn() -> M>);

impl<M> std::fmt::Debug for Requests<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Requests")
    }
}

impl<M> sealed::Sealed for Requests<M> {}

impl<M: RequestMethod> Kind for Requests<M> {
    type Input = M::Params;
    type Error = ErrorObject;
}

impl sealed::Sealed for Tools {}
impl sealed::Sealed for Resources {}
impl sealed::Sealed for Prompts {}
impl sealed::Sealed for Completions {}

impl Kind for Tools {
    type Input = JsonObject;
    type Error = ToolError;
}

impl Kind for Resources {
    type Input = ResourceRequest;
    type Error = ResourceError;
}

impl Kind for Prompts {
    type Input = BTreeMap<String, String>;
    type Error = PromptError;
}

impl Kind for Completions {
    type Input = CompleteRequestParams;
    type Error = CompletionError;
}

/// A handler's argument, read from the request of kind `K` it serves.
///
/// Tuples of extractors are extractors too (each read in order).
pub trait FromRequest<K: Kind>: Sized {
    /// Reads the value from the request's input and context.
    ///
    /// # Errors
    /// The kind's error, which answers the request instead of the handler:
    /// for a tool's bad arguments an `isError` result the model reads, for
    /// a prompt's `-32602`.
    fn from_request(input: &K::Input, cx: &Context) -> Result<Self, K::Error>;

    /// Tells the registration what this extractor needs: the schema of the
    /// arguments it reads, the shared state it takes. Nothing by default.
    fn describe(signature: &mut Signature) {
        let _ = signature;
    }
}

/// What a handler's extractors told its registration, read once when it is
/// registered: the schema of its arguments, the states it takes.
#[derive(Debug, Default)]
pub struct Signature {
    /// Each reader of the arguments: its type's name, and its schema.
    arguments: Vec<(String, SchemaOf)>,
    states: Vec<StateNeed>,
}

/// Makes the JSON Schema of one type.
type SchemaOf = fn() -> Result<JsonObject, SchemaError>;

/// A state type a handler takes, checked against the server's at `build()`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StateNeed {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
}

impl Signature {
    /// The handler reads its arguments as `T`: a tool's input schema, a
    /// prompt's arguments, come from `T`'s JSON Schema.
    pub fn arguments<T: JsonSchema>(&mut self) {
        self.arguments
            .push((T::schema_name().into_owned(), input_schema_for::<T>));
    }

    /// The handler takes shared state of type `S`: `build()` refuses the
    /// server when [`ServerBuilder::with_state`](crate::ServerBuilder::with_state)
    /// was given none.
    pub fn state<S: Send + Sync + 'static>(&mut self) {
        self.states.push(StateNeed {
            type_id: TypeId::of::<S>(),
            type_name: std::any::type_name::<S>(),
        });
    }

    /// The schema of the arguments: `None` when no extractor reads them.
    ///
    /// # Errors
    /// A refusal to say why the handler cannot be registered: two
    /// extractors read the arguments, or their type is not an object.
    pub(crate) fn arguments_schema(&self) -> Result<Option<JsonObject>, String> {
        match self.arguments.as_slice() {
            [] => Ok(None),
            [(_, schema)] => schema().map(Some).map_err(|e| e.to_string()),
            several => Err(format!(
                "its handler reads the arguments {} times (as {}); take them once, with one `Args<T>`",
                several.len(),
                several
                    .iter()
                    .map(|(name, _)| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    pub(crate) fn states(&self) -> &[StateNeed] {
        &self.states
    }
}

/// A function that serves requests of kind `K`: implemented for every
/// `Fn(E1, …, En) -> impl Future` (`n` up to 8) whose arguments are
/// [extractors](FromRequest) of `K`. `M` only tells the implementations
/// apart (the extractors' types); it is inferred.
pub trait Handler<K: Kind, M>: Send + Sync + 'static {
    /// What the function's future resolves to.
    type Output;
    /// The function's future.
    type Future: Future<Output = Self::Output> + Send + 'static;

    /// Reads the extractors and calls the function.
    ///
    /// # Errors
    /// The first extractor's refusal; the function is not called then.
    fn call(&self, input: &K::Input, cx: &Context) -> Result<Self::Future, K::Error>;

    /// What the extractors tell the registration.
    fn describe(signature: &mut Signature);
}

/// Implements [`FromRequest`] for a tuple of extractors and [`Handler`] for
/// functions taking them.
macro_rules! extractors {
    ($($extractor:ident),*) => {
        impl<K: Kind, $($extractor: FromRequest<K>,)*> FromRequest<K> for ($($extractor,)*) {
            #[allow(unused_variables)]
            fn from_request(input: &K::Input, cx: &Context) -> Result<Self, K::Error> {
                Ok(($(<$extractor as FromRequest<K>>::from_request(input, cx)?,)*))
            }

            #[allow(unused_variables)]
            fn describe(signature: &mut Signature) {
                $(<$extractor as FromRequest<K>>::describe(signature);)*
            }
        }

        impl<K, F, Fut, $($extractor,)*> Handler<K, ($($extractor,)*)> for F
        where
            K: Kind,
            F: Fn($($extractor),*) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            $($extractor: FromRequest<K>,)*
        {
            type Output = Fut::Output;
            type Future = Fut;

            #[allow(non_snake_case)]
            fn call(&self, input: &K::Input, cx: &Context) -> Result<Fut, K::Error> {
                let ($($extractor,)*) = <($($extractor,)*) as FromRequest<K>>::from_request(input, cx)?;
                Ok(self($($extractor),*))
            }

            fn describe(signature: &mut Signature) {
                <($($extractor,)*) as FromRequest<K>>::describe(signature);
            }
        }
    };
}

extractors!();
extractors!(E1);
extractors!(E1, E2);
extractors!(E1, E2, E3);
extractors!(E1, E2, E3, E4);
extractors!(E1, E2, E3, E4, E5);
extractors!(E1, E2, E3, E4, E5, E6);
extractors!(E1, E2, E3, E4, E5, E6, E7);
extractors!(E1, E2, E3, E4, E5, E6, E7, E8);

/// What a handler of kind `K` registered with the builder tells it.
pub(crate) fn signature_of<K: Kind, M, H: Handler<K, M>>() -> Signature {
    let mut signature = Signature::default();
    H::describe(&mut signature);
    signature
}
