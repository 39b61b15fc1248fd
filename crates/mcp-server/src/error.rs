//! The one error type of this crate.

use mcp_types::{
    ClientCapabilities, ElicitationCapability, ErrorCode, ErrorObject, JsonObject,
    MissingRequiredClientCapabilityData, RootsCapability, SamplingCapability,
};

/// `{"sampling":{}}` for `sampling`, `{"sampling":{"tools":{}}}` for `sampling.tools`.
fn required_capabilities(capability: &str) -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::new();
    let (top, sub) = capability.split_once('.').unwrap_or((capability, ""));
    match top {
        "sampling" => {
            let mut sampling = SamplingCapability::new();
            if sub == "tools" {
                sampling.tools = Some(JsonObject::new());
            }
            capabilities.sampling = Some(sampling);
        }
        "elicitation" => {
            let mut elicitation = ElicitationCapability::new();
            match sub {
                "form" => elicitation.form = Some(JsonObject::new()),
                "url" => elicitation.url = Some(JsonObject::new()),
                _ => {}
            }
            capabilities.elicitation = Some(elicitation);
        }
        "roots" => capabilities.roots = Some(RootsCapability::new()),
        _ => {}
    }
    capabilities
}

/// What went wrong while building or running a server, or while asking the
/// client something from a handler.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool, resource or prompt could not be registered (duplicate name,
    /// an argument type that is not a JSON object, a bad URI template).
    #[error("cannot register {what}: {reason}")]
    Registration {
        /// What was being registered, such as "tool `add`".
        what: String,
        /// Why it was refused, with what to do.
        reason: String,
    },
    /// The client did not declare the capability this request needs.
    #[error(
        "the client did not declare the `{capability}` capability, so `{method}` cannot be sent; \
         check `client_params()` or `check_client_capability` before asking"
    )]
    MissingClientCapability {
        /// The capability, such as `sampling.tools`.
        capability: &'static str,
        /// The method that needs it.
        method: &'static str,
    },
    /// A `sampling/createMessage` whose tool uses and tool results do not
    /// pair up was refused before it was sent (see
    /// [`check_tool_messages`](mcp_types::check_tool_messages)).
    #[error("the sampling request was not sent: {0}")]
    InvalidSamplingMessages(#[source] mcp_types::ToolMessagesError),
    /// A stateless (2026-07-28) request lacks a client capability the
    /// handler needs: answered with `-32021` and `data.requiredCapabilities`.
    #[error(
        "this request's client capabilities lack `{capability}`, which `{method}` needs; \
         declare it in `_meta` clientCapabilities"
    )]
    MissingRequiredClientCapability {
        /// The capability, such as `sampling.tools`.
        capability: &'static str,
        /// The method that needs it.
        method: &'static str,
    },
    /// A stateless (2026-07-28) request cannot send requests to the client.
    #[error(
        "`{method}` cannot be sent to the client at protocol revision 2026-07-28; return \
         `InputRequired` from the handler to ask the client in the result instead"
    )]
    NoServerRequests {
        /// The method that was to be sent.
        method: &'static str,
    },
    /// A stateless (2026-07-28) handler asked the client for input it has
    /// not answered yet. Return it (with `?`): the call then ends with an
    /// `input_required` result carrying the ask, and the handler runs again
    /// once the client answered.
    #[error(
        "the client has not answered `{method}` yet; return this error so the SDK can ask it \
         (the handler runs again with the answer)"
    )]
    AwaitingInput {
        /// The ask's method.
        method: &'static str,
    },
    /// The client's answer to an ask is not of the kind that was asked.
    #[error(
        "the client's answer `{key}` does not answer what was asked; the client must answer each input request with its own kind of result"
    )]
    InputMismatch {
        /// The ask's key.
        key: String,
    },
    /// A type asked for with `Context::elicit` is not a flat form.
    #[error("`{type_name}` cannot be asked as an elicitation form: {reason}")]
    InvalidElicitationSchema {
        /// The Rust type.
        type_name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The user's submitted form does not fit the type asked for.
    #[error("the submitted form does not fit the type asked for: {source}")]
    InvalidElicitationAnswer {
        /// What serde found wrong.
        source: serde_json::Error,
    },
    /// A handler asked for state of a type the server was not built with.
    #[error(
        "the server holds no state of type `{type_name}`; hand it to \
         `ServerBuilder::with_state` (the type must match exactly)"
    )]
    NoState {
        /// The type asked for.
        type_name: &'static str,
    },
    /// The session has not been initialized, so the client's capabilities are unknown.
    #[error("the client has not initialized the session yet, so `{method}` cannot be sent")]
    NotInitialized {
        /// The method that was to be sent.
        method: &'static str,
    },
    /// The request to the client failed: it answered with an error, timed
    /// out, or the connection closed.
    #[error(transparent)]
    Request(#[from] mcp_core::Error),
    /// The client's answer does not match the method's result schema.
    #[error("the client's answer to `{method}` is not a valid result: {source}")]
    InvalidResult {
        /// The method.
        method: &'static str,
        /// What serde found wrong.
        source: serde_json::Error,
    },
    /// Params could not be serialized.
    #[error("could not serialize the params of `{method}`: {source}")]
    Serialize {
        /// The method.
        method: &'static str,
        /// The serializer's error.
        source: serde_json::Error,
    },
    /// The transport could not be set up.
    #[error(transparent)]
    Transport(#[from] mcp_core::TransportError),
}

impl Error {
    /// The JSON-RPC error a request handler answers with when this error ends it.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Error::Request(e) => e.to_error_object(),
            Error::MissingClientCapability { .. } => ErrorObject::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                self.to_string(),
            ),
            Error::MissingRequiredClientCapability { capability, .. } => {
                MissingRequiredClientCapabilityData::new(required_capabilities(capability))
                    .into_error(self.to_string())
            }
            _ => ErrorObject::internal_error(self.to_string()),
        }
    }
}

impl From<Error> for ErrorObject {
    fn from(error: Error) -> Self {
        error.to_error_object()
    }
}
