//! Wire types of every Model Context Protocol revision, with no async and no I/O.
//!
//! Depend on this crate alone when you need MCP's schemas and messages; the
//! dispatcher, transports, client and server live in `mcp-core`,
//! `mcp-transport`, `mcp-client` and `mcp-server`.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, parsed once with raw params.
//! - [`Revision`]: the registry of known revisions and their [`Era`]s.
//! - [`ErrorCode`]: JSON-RPC and MCP error codes as named constants.
//! - [`methods`]: one marker per method; [`Request<M>`](Request),
//!   [`Notification<M>`](Notification) and [`MethodCall<M>`](MethodCall) are the
//!   framed messages (the schema's `CallToolRequest` is [`CallToolRequest`]).
//! - [`MethodInfo`] / [`METHODS`]: which method exists at which revision, in which
//!   direction; [`ClientRequest`], [`ServerRequest`], [`ClientNotification`],
//!   [`ServerNotification`], [`ClientResult`], [`ServerResult`] parse a method
//!   and its params for one revision and refuse what that revision lacks.
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
//! | `ResourceContents` (the abstract base) | [`BaseResourceContents`]; [`ResourceContents`] is the text-or-blob union |
//! | `SubscriptionsListenResultMetaObject` | [`SubscriptionsListenResultMeta`] |
//! | `ElicitRequestURLParams` | [`ElicitRequestUrlParams`] |
//! | `ResourceReference` (≤ 2025-03-26) | [`ResourceReference`] (`= ResourceTemplateReference`) |
//! | `CancelTaskResult` | [`CancelTaskResult`] (`= GetTaskResult`) |
//! | `InputRequests` / `InputResponses` | `BTreeMap<String, InputRequest>` / `BTreeMap<String, InputResponse>` aliases |
//! | `Cursor` | [`Cursor`] (`= String`) |
//!
//! Error `data` payloads have no definition of their own in the schema:
//! [`UnsupportedProtocolVersionData`], [`MissingRequiredClientCapabilityData`],
//! [`UrlElicitationRequiredData`]. Inline schema objects got names too:
//! [`ElicitRequestedSchema`], [`EnumOption`], [`UntitledEnumItems`],
//! [`TitledEnumItems`], [`Completion`], [`CompleteArgument`],
//! [`CompleteContext`], [`CompleteReference`], [`SamplingContent`],
//! [`ElicitValue`], the capability structs, and the enums of closed string
//! sets ([`ElicitAction`], [`IncludeContext`], [`ToolChoiceMode`],
//! [`TaskSupport`], [`StringFormat`], [`NumberType`], [`IconTheme`]).

#[macro_use]
mod macros;

mod capabilities;
mod common;
mod completion;
mod content;
mod dispatch;
mod elicitation;
mod error_code;
mod errors;
pub mod extension;
pub mod jsonrpc;
mod lifecycle;
mod logging;
mod messages;
pub mod meta;
pub mod method;
mod method_table;
pub mod methods;
mod mrtr;
mod notification;
mod params;
mod prompts;
mod resources;
mod result;
mod revision;
mod roots;
pub mod routing;
mod sampling;
mod subscription;
pub mod tag;
mod task;
mod tools;

pub use error_code::ErrorCode;
pub use jsonrpc::{
    DecodeError, DecodeErrorKind, ErrorObject, JsonRpcErrorResponse, JsonRpcMessage,
    JsonRpcNotification, JsonRpcPayload, JsonRpcRequest, JsonRpcResultResponse, JsonRpcVersion,
    RawJson, RequestId,
};
pub use messages::*;
pub use method::{
    Method, MethodCall, Notification, NotificationMethod, RawCall, Request, RequestMethod,
    ResultResponse,
};
pub use method_table::{METHODS, MessageKind, MethodInfo, NON_CANCELLABLE, RevisionSet, Side};
pub use methods::{ElicitationCompleteParams, TaskIdParams};
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
pub use completion::{
    CompleteArgument, CompleteContext, CompleteReference, CompleteRequestParams, CompleteResult,
    Completion, PromptReference, ResourceReference, ResourceTemplateReference,
};
pub use content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceLink,
    SamplingMessageContentBlock, TextContent, ToolResultContent, ToolUseContent,
};
pub use elicitation::{
    BooleanSchema, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestUrlParams, ElicitRequestedSchema, ElicitResult, ElicitValue, EnumOption,
    EnumSchema, LegacyTitledEnumSchema, MultiSelectEnumSchema, NumberSchema, NumberType,
    PrimitiveSchemaDefinition, SingleSelectEnumSchema, StringFormat, StringSchema, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
pub use errors::{
    MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData, UrlElicitationRequiredData,
};
pub use lifecycle::{DiscoverResult, InitializeRequestParams, InitializeResult};
pub use logging::{LoggingLevel, SetLevelRequestParams};
pub use meta::{Meta, NotificationMeta, RequestMeta, ResultMeta};
pub use mrtr::{
    InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponseRequestParams,
    InputResponses, ResultOrInputRequired,
};
pub use notification::{
    CancelledNotificationParams, LoggingMessageNotificationParams, NotificationParams,
    ProgressNotificationParams, ResourceUpdatedNotificationParams,
    SubscriptionsAcknowledgedNotificationParams,
};
pub use params::{PaginatedRequestParams, RequestParams};
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    BaseResourceContents, BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents,
    ResourceRequestParams, ResourceTemplate, SubscribeRequestParams, TextResourceContents,
    UnsubscribeRequestParams,
};
pub use result::{CacheScope, CacheableResult, EmptyResult, PaginatedResult, ResultType};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingContent, SamplingMessage, ToolChoice, ToolChoiceMode,
};
pub use subscription::{
    SubscriptionFilter, SubscriptionsListenRequestParams, SubscriptionsListenResult,
    SubscriptionsListenResultMeta,
};
pub use tag::*;
pub use task::{
    CancelTaskResult, CreateTaskResult, GetTaskPayloadResult, GetTaskResult, ListTasksResult,
    RelatedTaskMetadata, Task, TaskAugmentedRequestParams, TaskMetadata, TaskStatus,
    TaskStatusNotificationParams,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations,
    ToolExecution,
};
