//! Wire types of every Model Context Protocol revision, with no async and no I/O.
//!
//! Depend on this crate alone when you need MCP's schemas and messages; the
//! dispatcher, transports, client and server live in `mcp-core`,
//! `mcp-transport`, `mcp-client` and `mcp-server`.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, parsed once with raw params.
//! - [`Revision`]: the registry of known revisions and their [`Era`]s.
//! - [`ErrorCode`]: JSON-RPC and MCP error codes as named constants.
//! - Domain types, one per schema definition, the union over every revision
//!   (a field one revision lacks is an `Option`): [`meta`] (`_meta` objects
//!   and key grammar), common shapes, capabilities, content blocks, results,
//!   tasks, and the tags ([`tag`]) that tell union variants apart.
//!
//! # Schema names and Rust names
//!
//! Types keep the schema's names, except:
//!
//! | Schema definition | Rust |
//! |---|---|
//! | `MetaObject` | [`Meta`] (`= JsonObject`) |
//! | `RequestMetaObject` | [`RequestMeta`] |
//! | `ResultMetaObject` | [`ResultMeta`] |
//! | `NotificationMetaObject` | [`NotificationMeta`] |
//! | `JSONObject` / `JSONArray` / `JSONValue` | [`JsonObject`] / [`JsonArray`] / [`JsonValue`] |
//! | `Result` | [`EmptyResult`] (an open object) |
//! | `Annotated` (2024-11-05) | [`Annotated`] (`= Annotations`) |
//! | `CancelTaskResult` | [`CancelTaskResult`] (`= GetTaskResult`) |

#[macro_use]
mod macros;

mod capabilities;
mod common;
mod content;
mod dispatch;
mod error_code;
pub mod jsonrpc;
mod logging;
pub mod meta;
mod params;
mod resources;
mod result;
mod revision;
pub mod tag;
mod task;

pub use error_code::ErrorCode;
pub use jsonrpc::{
    DecodeError, DecodeErrorKind, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, JsonRpcResultResponse, JsonRpcVersion, RawJson, RequestId,
};
pub use revision::{Era, Revision, UnknownRevision};

pub use capabilities::{
    ClientCapabilities, ClientTaskRequests, ClientTasksCapability, ElicitationCapability,
    ElicitationTaskRequests, PromptsCapability, ResourcesCapability, RootsCapability,
    SamplingCapability, SamplingTaskRequests, ServerCapabilities, ServerTaskRequests,
    ServerTasksCapability, ToolsCapability, ToolsTaskRequests,
};
pub use common::{
    Annotated, Annotations, BaseMetadata, Cursor, Icon, IconTheme, Icons, Implementation,
    JsonArray, JsonObject, JsonValue, ProgressToken, Role,
};
pub use content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceLink,
    SamplingMessageContentBlock, TextContent, ToolResultContent, ToolUseContent,
};
pub use logging::LoggingLevel;
pub use meta::{Meta, NotificationMeta, RequestMeta, ResultMeta};
pub use params::{PaginatedRequestParams, RequestParams};
pub use resources::{BlobResourceContents, ResourceContents, TextResourceContents};
pub use result::{CacheScope, CacheableResult, EmptyResult, PaginatedResult, ResultType};
pub use tag::*;
pub use task::{
    CancelTaskResult, CreateTaskResult, GetTaskPayloadResult, GetTaskResult, ListTasksResult,
    RelatedTaskMetadata, Task, TaskAugmentedRequestParams, TaskMetadata, TaskStatus,
    TaskStatusNotificationParams,
};
