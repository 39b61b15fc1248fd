//! What resource, prompt and completion handlers fail with: a JSON-RPC
//! error each (they have no `isError` result), one type per kind; and how
//! any error a handler returns with `?` is read.

use std::fmt;

use mcp_types::{ErrorCode, ErrorObject};

/// What an error a handler returned with `?` says.
pub(crate) enum Classified {
    /// A protocol error the client must act on (a `-32042` it was
    /// answered, a client capability the request lacks).
    Protocol(ErrorObject),
    /// A failure told by its message.
    Message(String),
}

/// Reads `error`: a failed request to the client that the client must act
/// on stays a protocol error; anything else is its message.
pub(crate) fn classify<E: std::error::Error + Send + Sync + 'static>(error: E) -> Classified {
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    match boxed.downcast::<crate::Error>() {
        Ok(error) => match *error {
            crate::Error::Request(mcp_core::Error::Remote(remote))
                if remote.code == ErrorCode::URL_ELICITATION_REQUIRED =>
            {
                Classified::Protocol(remote)
            }
            // The client must fix its request: a protocol error (-32021).
            other @ crate::Error::MissingRequiredClientCapability { .. } => {
                Classified::Protocol(other.to_error_object())
            }
            other => Classified::Message(other.to_string()),
        },
        Err(other) => Classified::Message(other.to_string()),
    }
}

/// Defines an error type of a kind of handler answered with a JSON-RPC
/// error: the constructors they share, `?` from any error, `Display`.
macro_rules! request_error {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        ///
        /// Like `anyhow::Error`, this type does not implement
        /// `std::error::Error`, so that every error type converts into it
        /// with `?`: as `-32603` with its message, except a protocol error
        /// the client must act on (a `-32042` URL elicitation it was
        /// answered, a client capability a stateless request lacks), which
        /// stays as it is.
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name(ErrorObject);

        impl $name {
            #[doc = concat!("The ", $what, " failed: `-32603` with `message`.")]
            pub fn new(message: impl Into<String>) -> Self {
                Self(ErrorObject::internal_error(message))
            }

            /// The request is wrong (`-32602`): a bad argument, say, with
            /// `message` telling the client what to fix.
            pub fn invalid_params(message: impl Into<String>) -> Self {
                Self(ErrorObject::invalid_params(message))
            }

            /// Answers with exactly this JSON-RPC error.
            pub fn protocol(error: ErrorObject) -> Self {
                Self(error)
            }

            /// The message.
            pub fn message(&self) -> &str {
                &self.0.message
            }

            /// The JSON-RPC error the request is answered with (a missing
            /// resource's code is the handshake era's here; see
            /// [`ResourceError::not_found`]).
            pub fn as_error_object(&self) -> &ErrorObject {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0.message)
            }
        }

        impl<E: std::error::Error + Send + Sync + 'static> From<E> for $name {
            fn from(error: E) -> Self {
                match classify(error) {
                    Classified::Protocol(error) => Self(error),
                    Classified::Message(message) => Self::new(message),
                }
            }
        }
    };
}

request_error!(
    /// Why a resource read failed, answered as a JSON-RPC error.
    ResourceError,
    "read"
);

request_error!(
    /// Why a prompt could not be made, answered as a JSON-RPC error.
    PromptError,
    "prompt"
);

request_error!(
    /// Why completions could not be suggested, answered as a JSON-RPC error.
    CompletionError,
    "completion"
);

impl ResourceError {
    /// The resource at `uri` does not exist. Answered with the code of the
    /// request's era (`-32002` in the handshake era, `-32602` from
    /// 2026-07-28 on, as SEP-2164 says), so a handler never asks which.
    pub fn not_found(uri: &str) -> Self {
        Self(ErrorObject::resource_not_found(
            uri,
            mcp_types::Era::Handshake,
        ))
    }

    /// The JSON-RPC error a request of `era` is answered with: a missing
    /// resource's code is that era's.
    pub(crate) fn into_error_object(self, era: mcp_types::Era) -> ErrorObject {
        let mut error = self.0;
        if error.code == ErrorCode::RESOURCE_NOT_FOUND {
            error.code = ErrorCode::missing_resource(era);
        }
        error
    }
}

impl PromptError {
    pub(crate) fn into_error_object(self) -> ErrorObject {
        self.0
    }
}

impl CompletionError {
    pub(crate) fn into_error_object(self) -> ErrorObject {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::Era;

    #[test]
    fn a_missing_resource_answers_with_the_code_of_the_era() {
        let handshake = ResourceError::not_found("notes://x").into_error_object(Era::Handshake);
        assert_eq!(handshake.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(
            handshake.data,
            Some(serde_json::json!({ "uri": "notes://x" }))
        );
        let stateless = ResourceError::not_found("notes://x").into_error_object(Era::Stateless);
        assert_eq!(stateless.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(stateless.data, handshake.data);
    }

    #[test]
    fn any_std_error_is_an_internal_error_with_its_message() {
        fn parse(text: &str) -> Result<i64, PromptError> {
            Ok(text.parse::<i64>()?)
        }
        let error = parse("x").expect_err("not a number").into_error_object();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(error.message, "invalid digit found in string");
    }

    #[test]
    fn invalid_params_is_minus_32602() {
        let error = CompletionError::invalid_params("no such argument").into_error_object();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn a_url_elicitation_requirement_stays_a_protocol_error() {
        let remote = mcp_types::UrlElicitationRequiredData::new(vec![]).into_error("sign in");
        let error: ResourceError =
            crate::Error::Request(mcp_core::Error::Remote(remote.clone())).into();
        assert_eq!(error.into_error_object(Era::Stateless), remote);
    }
}
