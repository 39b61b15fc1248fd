//! Wire types of every Model Context Protocol revision, with no async and no I/O.
//!
//! Depend on this crate alone when you need MCP's schemas and messages; the
//! dispatcher, transports, client and server live in `mcp-core`,
//! `mcp-transport`, `mcp-client` and `mcp-server`.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, parsed once with raw params.
//! - [`Revision`]: the registry of known revisions and their [`Era`]s.
//! - [`ErrorCode`]: JSON-RPC and MCP error codes as named constants.

mod error_code;
pub mod jsonrpc;
pub mod method;
mod method_table;
mod revision;

pub use error_code::ErrorCode;
pub use jsonrpc::{
    DecodeError, DecodeErrorKind, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, JsonRpcResultResponse, JsonRpcVersion, RawJson, RequestId,
};
pub use method::{
    Method, MethodCall, Notification, NotificationMethod, Request, RequestMethod, ResultResponse,
};
pub use method_table::{METHODS, MessageKind, MethodInfo, NON_CANCELLABLE, RevisionSet, Side};
pub use revision::{Era, Revision, UnknownRevision};
