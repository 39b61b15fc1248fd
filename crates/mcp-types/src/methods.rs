//! One marker type per MCP method, tying its wire name to its params and
//! result types (see [`crate::Method`]).
//!
//! The schema's framed message types are aliases over these markers: the
//! schema's `CallToolRequest` is [`crate::CallToolRequest`] =
//! `Request<methods::CallTool>`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::method::declare_method;
use crate::{
    CallToolRequestParams, CallToolResult, CancelTaskResult, CancelledNotificationParams,
    CompleteRequestParams, CompleteResult, CreateMessageRequestParams, CreateMessageResult,
    DiscoverResult, ElicitRequestParams, ElicitResult, EmptyResult, GetPromptRequestParams,
    GetPromptResult, GetTaskPayloadResult, GetTaskResult, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListRootsResult, ListTasksResult, ListToolsResult, LoggingMessageNotificationParams, Meta,
    NotificationParams, PaginatedRequestParams, ProgressNotificationParams,
    ReadResourceRequestParams, ReadResourceResult, RequestMeta, RequestParams,
    ResourceUpdatedNotificationParams, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult, TaskStatusNotificationParams, UnsubscribeRequestParams,
};

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel` (2025-11-25): the
/// task they address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task identifier.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl TaskIdParams {
    /// Params addressing task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            meta: None,
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The id of the URL-mode elicitation that completed.
    pub elicitation_id: String,
    /// Metadata attached to the notification.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitationCompleteParams {
    /// Params announcing that elicitation `elicitation_id` completed.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        Self {
            elicitation_id: elicitation_id.into(),
            meta: None,
        }
    }
}

declare_method! {
    /// `initialize`: the client opens a handshake-era session.
    Initialize = "initialize", request, params: InitializeRequestParams, result: InitializeResult
}
declare_method! {
    /// `ping`: either side checks the other is alive (handshake era).
    Ping = "ping", request, optional params: RequestParams, result: EmptyResult
}
declare_method! {
    /// `server/discover`: the client learns the server's versions and capabilities (2026-07-28).
    Discover = "server/discover", request, optional params: RequestParams, result: DiscoverResult
}
declare_method! {
    /// `tools/list`: one page of the server's tools.
    ListTools = "tools/list", request, optional params: PaginatedRequestParams, result: ListToolsResult
}
declare_method! {
    /// `tools/call`: invoke a tool. In 2026-07-28 the answer may instead be an
    /// `InputRequiredResult`; read it as `ResultOrInputRequired<CallToolResult>`.
    CallTool = "tools/call", request, params: CallToolRequestParams, result: CallToolResult
}
declare_method! {
    /// `resources/list`: one page of the server's resources.
    ListResources = "resources/list", request, optional params: PaginatedRequestParams, result: ListResourcesResult
}
declare_method! {
    /// `resources/templates/list`: one page of the server's resource templates.
    ListResourceTemplates = "resources/templates/list", request, optional params: PaginatedRequestParams, result: ListResourceTemplatesResult
}
declare_method! {
    /// `resources/read`: the contents of one resource (may be input-required in 2026-07-28).
    ReadResource = "resources/read", request, params: ReadResourceRequestParams, result: ReadResourceResult
}
declare_method! {
    /// `resources/subscribe`: ask for `notifications/resources/updated` on a URI (handshake era).
    Subscribe = "resources/subscribe", request, params: SubscribeRequestParams, result: EmptyResult
}
declare_method! {
    /// `resources/unsubscribe`: stop a subscription (handshake era).
    Unsubscribe = "resources/unsubscribe", request, params: UnsubscribeRequestParams, result: EmptyResult
}
declare_method! {
    /// `prompts/list`: one page of the server's prompts.
    ListPrompts = "prompts/list", request, optional params: PaginatedRequestParams, result: ListPromptsResult
}
declare_method! {
    /// `prompts/get`: render a prompt with arguments (may be input-required in 2026-07-28).
    GetPrompt = "prompts/get", request, params: GetPromptRequestParams, result: GetPromptResult
}
declare_method! {
    /// `completion/complete`: completion values for a prompt or template argument.
    Complete = "completion/complete", request, params: CompleteRequestParams, result: CompleteResult
}
declare_method! {
    /// `logging/setLevel`: the minimum level of `notifications/message` (handshake era).
    SetLevel = "logging/setLevel", request, params: SetLevelRequestParams, result: EmptyResult
}
declare_method! {
    /// `subscriptions/listen`: open a notification stream (2026-07-28).
    SubscriptionsListen = "subscriptions/listen", request, params: SubscriptionsListenRequestParams, result: SubscriptionsListenResult
}
declare_method! {
    /// `tasks/get`: a task's status (2025-11-25, experimental).
    GetTask = "tasks/get", request, params: TaskIdParams, result: GetTaskResult
}
declare_method! {
    /// `tasks/result`: a finished task's result (2025-11-25, experimental).
    GetTaskPayload = "tasks/result", request, params: TaskIdParams, result: GetTaskPayloadResult
}
declare_method! {
    /// `tasks/list`: one page of tasks (2025-11-25, experimental).
    ListTasks = "tasks/list", request, optional params: PaginatedRequestParams, result: ListTasksResult
}
declare_method! {
    /// `tasks/cancel`: cancel a task (2025-11-25, experimental).
    CancelTask = "tasks/cancel", request, params: TaskIdParams, result: CancelTaskResult
}
declare_method! {
    /// `sampling/createMessage`: the server asks the client's model for a message.
    CreateMessage = "sampling/createMessage", request, params: CreateMessageRequestParams, result: CreateMessageResult
}
declare_method! {
    /// `roots/list`: the server asks for the client's roots.
    ListRoots = "roots/list", request, optional params: RequestParams, result: ListRootsResult
}
declare_method! {
    /// `elicitation/create`: the server asks the user for input (form or URL).
    Elicit = "elicitation/create", request, params: ElicitRequestParams, result: ElicitResult
}
declare_method! {
    /// `notifications/initialized`: the client finished the handshake.
    Initialized = "notifications/initialized", notification, optional params: NotificationParams
}
declare_method! {
    /// `notifications/cancelled`: a request's sender gives it up.
    Cancelled = "notifications/cancelled", notification, params: CancelledNotificationParams
}
declare_method! {
    /// `notifications/progress`: progress of a request that asked for it.
    Progress = "notifications/progress", notification, params: ProgressNotificationParams
}
declare_method! {
    /// `notifications/roots/list_changed`: the client's roots changed (handshake era).
    RootsListChanged = "notifications/roots/list_changed", notification, optional params: NotificationParams
}
declare_method! {
    /// `notifications/message`: a log message from the server.
    LoggingMessage = "notifications/message", notification, params: LoggingMessageNotificationParams
}
declare_method! {
    /// `notifications/resources/list_changed`: the server's resources changed.
    ResourceListChanged = "notifications/resources/list_changed", notification, optional params: NotificationParams
}
declare_method! {
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated = "notifications/resources/updated", notification, params: ResourceUpdatedNotificationParams
}
declare_method! {
    /// `notifications/prompts/list_changed`: the server's prompts changed.
    PromptListChanged = "notifications/prompts/list_changed", notification, optional params: NotificationParams
}
declare_method! {
    /// `notifications/tools/list_changed`: the server's tools changed.
    ToolListChanged = "notifications/tools/list_changed", notification, optional params: NotificationParams
}
declare_method! {
    /// `notifications/elicitation/complete`: a URL-mode elicitation finished (2025-11-25).
    ElicitationComplete = "notifications/elicitation/complete", notification, params: ElicitationCompleteParams
}
declare_method! {
    /// `notifications/tasks/status`: a task changed status (2025-11-25, experimental).
    TaskStatus = "notifications/tasks/status", notification, params: TaskStatusNotificationParams
}
declare_method! {
    /// `notifications/subscriptions/acknowledged`: first message of a listen stream (2026-07-28).
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", notification, params: SubscriptionsAcknowledgedNotificationParams
}
