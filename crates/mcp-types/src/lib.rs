#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod macros;

mod capabilities;
mod common;
mod completion;
mod content;
mod dispatch;
mod elicitation;
pub mod envelope;
mod error_code;
mod errors;
pub mod extension;
pub mod json;
pub mod jsonrpc;
mod lenient;
mod lifecycle;
mod logging;
mod messages;
pub mod meta;
pub mod method;
mod method_table;
pub mod methods;
// Not API: counts params parses for tests (see the module).
mod mrtr;
mod notification;
mod params;
#[cfg(feature = "parse-count")]
#[doc(hidden)]
pub mod parse_count;
pub mod peek;
mod prompts;
mod resources;
mod result;
mod revision;
mod roots;
pub mod routing;
mod sampling;
mod session_record;
pub mod skills;
mod subscription;
pub mod tag;
mod task;
pub mod tasks_ext;
mod tools;
pub mod untrusted;

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
pub use session_record::SessionRecord;

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
    SamplingContent, SamplingMessage, ToolChoice, ToolChoiceMode, ToolMessagesError,
    check_tool_messages,
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
