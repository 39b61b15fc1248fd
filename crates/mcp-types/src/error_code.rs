//! JSON-RPC and MCP error codes as named constants.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The integer `code` of a JSON-RPC error.
///
/// The named constants cover the JSON-RPC standard codes and every code the
/// MCP specification assigns; any other integer is an application code.
///
/// # Examples
/// ```
/// use mcp_types::ErrorCode;
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.code(), -32601);
/// assert_eq!(ErrorCode::from(-32601), ErrorCode::METHOD_NOT_FOUND);
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// `-32700`: the message was not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: the JSON was not a valid JSON-RPC request (bad envelope, a
    /// batch where none is allowed, a response posted where a request belongs).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the method does not exist at this revision, or its capability
    /// was not advertised. Over stateless-era HTTP this is answered with 404.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: invalid params: unknown tool or prompt, bad arguments, bad
    /// cursor, missing `_meta` fields (2026-07-28), a missing resource
    /// (2026-07-28), or a `requestState` that fails verification.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: the receiver failed while serving the request.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);

    /// `-32000`: SDK convention for "the connection closed"; never sent on the wire.
    pub const CONNECTION_CLOSED: ErrorCode = ErrorCode(-32000);
    /// `-32001`: SDK convention for "the request timed out".
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// `-32002`: resource not found (handshake era). Stateless-era servers answer
    /// `-32602` instead, and clients accept both.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

    /// `-32010`: SDK convention for "rate or concurrency limit reached; retry
    /// later"; `data.retryAfterSeconds` says when. The specification assigns
    /// no code for this, so it is taken from the implementation-defined range.
    pub const RATE_LIMITED: ErrorCode = ErrorCode(-32010);

    /// `-32020`: an HTTP routing header is missing, malformed, or disagrees with
    /// the body (2026-07-28; HTTP 400).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021`: serving the request needs a client capability the request did
    /// not declare; `data.requiredCapabilities` names it (2026-07-28; HTTP 400).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022`: the requested protocol version is not supported; `data` holds
    /// `supported` and `requested` (2026-07-28; HTTP 400).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// `-32042`: URL-mode elicitations must complete before the request can be
    /// retried; `data.elicitations` lists them (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

    /// The code of a missing resource in `era` (SEP-2164):
    /// [`RESOURCE_NOT_FOUND`](Self::RESOURCE_NOT_FOUND) in the handshake
    /// era, [`INVALID_PARAMS`](Self::INVALID_PARAMS) from 2026-07-28 on.
    pub const fn missing_resource(era: crate::Era) -> ErrorCode {
        match era {
            crate::Era::Handshake => Self::RESOURCE_NOT_FOUND,
            crate::Era::Stateless => Self::INVALID_PARAMS,
        }
    }

    /// The integer code.
    pub const fn code(self) -> i64 {
        self.0
    }

    /// The conventional name of a known code, such as `"Method not found"`.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "Parse error",
            Self::INVALID_REQUEST => "Invalid request",
            Self::METHOD_NOT_FOUND => "Method not found",
            Self::INVALID_PARAMS => "Invalid params",
            Self::INTERNAL_ERROR => "Internal error",
            Self::CONNECTION_CLOSED => "Connection closed",
            Self::REQUEST_TIMEOUT => "Request timeout",
            Self::RESOURCE_NOT_FOUND => "Resource not found",
            Self::RATE_LIMITED => "Rate limited",
            Self::HEADER_MISMATCH => "Header mismatch",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "Missing required client capability",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            _ => return None,
        })
    }

    /// Whether the code lies in the range JSON-RPC reserves for
    /// implementation-defined server errors (`-32099..=-32000`).
    pub const fn is_server_error_range(self) -> bool {
        self.0 >= -32099 && self.0 <= -32000
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> Self {
        code.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
