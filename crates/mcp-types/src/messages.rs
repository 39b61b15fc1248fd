//! Typed messages: the schema's framed message types, and the unions a
//! receiver parses a method + params into for one revision.
//!
//! [`ClientRequest::parse`] and its siblings look the method up in the
//! revision's method table first, so a method that does not exist at the
//! negotiated revision is refused with `-32601` before its params are read.

use std::fmt;

use serde::Deserialize;

use crate::jsonrpc::{ErrorObject, JsonRpcNotification, JsonRpcRequest, RawJson, RequestId};
use crate::meta::RequestMeta;
use crate::method::{Method, MethodCall, Notification, Request, ResultResponse};
use crate::method_table::{MessageKind, MethodInfo, Side};
use crate::methods;
use crate::revision::Revision;
use crate::untrusted::Escaped;
use crate::{
    CallToolResult, CancelTaskResult, CompleteResult, CreateMessageResult, CreateTaskResult,
    DiscoverResult, ElicitResult, EmptyResult, GetPromptResult, GetTaskPayloadResult,
    GetTaskResult, InitializeResult, InputRequiredResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListRootsResult, ListTasksResult,
    ListToolsResult, ReadResourceResult, ResultOrInputRequired, SubscriptionsListenResult,
};

macro_rules! frame_aliases {
    ($( $(#[$doc:meta])* $alias:ident = $frame:ident<$marker:ident>; )*) => {
        $( $(#[$doc])* pub type $alias = $frame<methods::$marker>; )*
    };
}

frame_aliases! {
    /// The schema's `InitializeRequest`.
    InitializeRequest = Request<Initialize>;
    /// The schema's `PingRequest`.
    PingRequest = Request<Ping>;
    /// The schema's `DiscoverRequest` (2026-07-28).
    DiscoverRequest = Request<Discover>;
    /// The schema's `ListToolsRequest`.
    ListToolsRequest = Request<ListTools>;
    /// The schema's `CallToolRequest`.
    CallToolRequest = Request<CallTool>;
    /// The schema's `ListResourcesRequest`.
    ListResourcesRequest = Request<ListResources>;
    /// The schema's `ListResourceTemplatesRequest`.
    ListResourceTemplatesRequest = Request<ListResourceTemplates>;
    /// The schema's `ReadResourceRequest`.
    ReadResourceRequest = Request<ReadResource>;
    /// The schema's `SubscribeRequest`.
    SubscribeRequest = Request<Subscribe>;
    /// The schema's `UnsubscribeRequest`.
    UnsubscribeRequest = Request<Unsubscribe>;
    /// The schema's `ListPromptsRequest`.
    ListPromptsRequest = Request<ListPrompts>;
    /// The schema's `GetPromptRequest`.
    GetPromptRequest = Request<GetPrompt>;
    /// The schema's `CompleteRequest`.
    CompleteRequest = Request<Complete>;
    /// The schema's `SetLevelRequest`.
    SetLevelRequest = Request<SetLevel>;
    /// The schema's `SubscriptionsListenRequest` (2026-07-28).
    SubscriptionsListenRequest = Request<SubscriptionsListen>;
    /// The schema's `GetTaskRequest` (2025-11-25).
    GetTaskRequest = Request<GetTask>;
    /// The schema's `GetTaskPayloadRequest` (2025-11-25).
    GetTaskPayloadRequest = Request<GetTaskPayload>;
    /// The schema's `ListTasksRequest` (2025-11-25).
    ListTasksRequest = Request<ListTasks>;
    /// The schema's `CancelTaskRequest` (2025-11-25).
    CancelTaskRequest = Request<CancelTask>;
    /// The schema's handshake-era `CreateMessageRequest`; in 2026-07-28 it is
    /// the bare input request `MethodCall<methods::CreateMessage>`.
    CreateMessageRequest = Request<CreateMessage>;
    /// The schema's handshake-era `ListRootsRequest`; see [`CreateMessageRequest`].
    ListRootsRequest = Request<ListRoots>;
    /// The schema's handshake-era `ElicitRequest`; see [`CreateMessageRequest`].
    ElicitRequest = Request<Elicit>;
    /// The schema's `InitializedNotification`.
    InitializedNotification = Notification<Initialized>;
    /// The schema's `CancelledNotification`.
    CancelledNotification = Notification<Cancelled>;
    /// The schema's `ProgressNotification`.
    ProgressNotification = Notification<Progress>;
    /// The schema's `RootsListChangedNotification`.
    RootsListChangedNotification = Notification<RootsListChanged>;
    /// The schema's `LoggingMessageNotification`.
    LoggingMessageNotification = Notification<LoggingMessage>;
    /// The schema's `ResourceListChangedNotification`.
    ResourceListChangedNotification = Notification<ResourceListChanged>;
    /// The schema's `ResourceUpdatedNotification`.
    ResourceUpdatedNotification = Notification<ResourceUpdated>;
    /// The schema's `PromptListChangedNotification`.
    PromptListChangedNotification = Notification<PromptListChanged>;
    /// The schema's `ToolListChangedNotification`.
    ToolListChangedNotification = Notification<ToolListChanged>;
    /// The schema's `ElicitationCompleteNotification` (2025-11-25).
    ElicitationCompleteNotification = Notification<ElicitationComplete>;
    /// The schema's `TaskStatusNotification` (2025-11-25).
    TaskStatusNotification = Notification<TaskStatus>;
    /// The schema's `SubscriptionsAcknowledgedNotification` (2026-07-28).
    SubscriptionsAcknowledgedNotification = Notification<SubscriptionsAcknowledged>;
}

/// The schema's `CallToolResultResponse` (2026-07-28).
pub type CallToolResultResponse = ResultResponse<ResultOrInputRequired<CallToolResult>>;
/// The schema's `GetPromptResultResponse` (2026-07-28).
pub type GetPromptResultResponse = ResultResponse<ResultOrInputRequired<GetPromptResult>>;
/// The schema's `ReadResourceResultResponse` (2026-07-28).
pub type ReadResourceResultResponse = ResultResponse<ResultOrInputRequired<ReadResourceResult>>;
/// The schema's `CompleteResultResponse` (2026-07-28).
pub type CompleteResultResponse = ResultResponse<CompleteResult>;
/// The schema's `DiscoverResultResponse` (2026-07-28).
pub type DiscoverResultResponse = ResultResponse<DiscoverResult>;
/// The schema's `ListToolsResultResponse` (2026-07-28).
pub type ListToolsResultResponse = ResultResponse<ListToolsResult>;
/// The schema's `ListPromptsResultResponse` (2026-07-28).
pub type ListPromptsResultResponse = ResultResponse<ListPromptsResult>;
/// The schema's `ListResourcesResultResponse` (2026-07-28).
pub type ListResourcesResultResponse = ResultResponse<ListResourcesResult>;
/// The schema's `ListResourceTemplatesResultResponse` (2026-07-28).
pub type ListResourceTemplatesResultResponse = ResultResponse<ListResourceTemplatesResult>;
/// The schema's `SubscriptionsListenResultResponse` (2026-07-28).
pub type SubscriptionsListenResultResponse = ResultResponse<SubscriptionsListenResult>;

/// Why a method and its params could not be read as a typed message.
#[derive(Debug)]
#[non_exhaustive]
pub enum MessageError {
    /// The method does not exist at this revision in this direction (`-32601`).
    UnknownMethod {
        /// The method as received.
        method: String,
        /// The revision it was checked against.
        revision: Revision,
    },
    /// The params (or result) do not match the method's schema (`-32602`).
    InvalidParams {
        /// The method whose params were read.
        method: &'static str,
        /// What serde found wrong, with the field and position.
        source: serde_json::Error,
    },
    /// The method requires params and none were given (`-32602`).
    MissingParams {
        /// The method.
        method: &'static str,
    },
}

impl MessageError {
    /// The same failure, an unknown method named against `revision`.
    fn at_revision(self, revision: Revision) -> Self {
        match self {
            MessageError::UnknownMethod { method, .. } => {
                MessageError::UnknownMethod { method, revision }
            }
            other => other,
        }
    }

    /// The JSON-RPC error that answers this failure.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            MessageError::UnknownMethod { .. } => {
                ErrorObject::new(crate::ErrorCode::METHOD_NOT_FOUND, self.to_string())
            }
            _ => ErrorObject::invalid_params(self.to_string()),
        }
    }
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MessageError::UnknownMethod { method, revision } => {
                write!(
                    f,
                    "method `{}` does not exist at protocol revision {revision}",
                    Escaped::name(method)
                )
            }
            // serde quotes what it read (an unknown variant or field) as
            // it came.
            MessageError::InvalidParams { method, source } => write!(
                f,
                "invalid params for `{method}`: {}",
                Escaped::one_line(&source.to_string())
            ),
            MessageError::MissingParams { method } => {
                write!(f, "`{method}` requires params; none were given")
            }
        }
    }
}

impl std::error::Error for MessageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MessageError::InvalidParams { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads the params of method `M` from raw JSON, or their absent value.
pub fn parse_params<M: Method>(params: Option<&RawJson>) -> Result<M::Params, MessageError> {
    match params {
        Some(raw) => raw.parse().map_err(|source| MessageError::InvalidParams {
            method: M::NAME,
            source,
        }),
        None => M::absent_params().ok_or(MessageError::MissingParams { method: M::NAME }),
    }
}

fn check_table(
    method: &str,
    revision: Revision,
    sender: Side,
    kind: MessageKind,
) -> Result<(), MessageError> {
    match MethodInfo::lookup(method, revision, sender) {
        Some(info) if info.kind == kind => Ok(()),
        _ => Err(MessageError::UnknownMethod {
            method: method.to_owned(),
            revision,
        }),
    }
}

fn params_to_raw<M: Method>(params: &M::Params) -> Result<Option<RawJson>, serde_json::Error> {
    if M::is_absent(params) {
        Ok(None)
    } else {
        RawJson::from_serialize(params).map(Some)
    }
}

macro_rules! typed_union {
    (
        $(#[$doc:meta])*
        $name:ident, sender: $sender:expr, kind: $kind:expr;
        $( $(#[$vdoc:meta])* $variant:ident($marker:ident), )*
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        // Parsed once per message and moved straight into a handler; boxing
        // the larger params would cost an allocation on every message.
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $( $(#[$vdoc])* $variant(<methods::$marker as Method>::Params), )*
        }

        impl $name {
            /// Reads `method` and its raw `params` as a message of `revision`.
            ///
            /// # Errors
            /// [`MessageError::UnknownMethod`] when the method does not exist at
            /// `revision` in this direction; [`MessageError::InvalidParams`] or
            /// [`MessageError::MissingParams`] when the params do not fit.
            pub fn parse(
                method: &str,
                params: Option<&RawJson>,
                revision: Revision,
            ) -> Result<Self, MessageError> {
                Self::check_revision(method, revision)?;
                Self::parse_any_revision(method, params)
                    .map_err(|e| e.at_revision(revision))
            }

            /// Reads `method` and its raw `params` without asking whether the
            /// method exists at a given revision: for a receiver that learns
            /// the revision from the parsed message (a 2026-07-28 request's
            /// `_meta`), followed by [`Self::check_revision`].
            ///
            /// # Errors
            /// [`MessageError::UnknownMethod`] (naming the latest revision)
            /// when no revision has the method in this direction;
            /// [`MessageError::InvalidParams`] or [`MessageError::MissingParams`]
            /// when the params do not fit.
            pub fn parse_any_revision(
                method: &str,
                params: Option<&RawJson>,
            ) -> Result<Self, MessageError> {
                match method {
                    $( <methods::$marker as Method>::NAME => {
                        parse_params::<methods::$marker>(params).map($name::$variant)
                    } )*
                    _ => Err(MessageError::UnknownMethod {
                        method: method.to_owned(),
                        revision: Revision::LATEST,
                    }),
                }
            }

            /// Whether `method` exists at `revision` in this direction.
            ///
            /// # Errors
            /// [`MessageError::UnknownMethod`] when it does not.
            pub fn check_revision(method: &str, revision: Revision) -> Result<(), MessageError> {
                check_table(method, revision, $sender, $kind)
            }

            /// The method name on the wire.
            pub fn method(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => <methods::$marker as Method>::NAME, )*
                }
            }

            /// The params serialized as raw JSON (`None` when absent).
            ///
            /// # Errors
            /// Only if a user-supplied value inside the params fails to serialize.
            pub fn params_json(&self) -> Result<Option<RawJson>, serde_json::Error> {
                match self {
                    $( $name::$variant(params) => params_to_raw::<methods::$marker>(params), )*
                }
            }
        }
    };
}

typed_union! {
    /// A request a client sends to a server.
    ClientRequest, sender: Side::Client, kind: MessageKind::Request;
    /// `initialize`.
    Initialize(Initialize),
    /// `ping`.
    Ping(Ping),
    /// `server/discover`.
    Discover(Discover),
    /// `tools/list`.
    ListTools(ListTools),
    /// `tools/call`.
    CallTool(CallTool),
    /// `resources/list`.
    ListResources(ListResources),
    /// `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplates),
    /// `resources/read`.
    ReadResource(ReadResource),
    /// `resources/subscribe`.
    Subscribe(Subscribe),
    /// `resources/unsubscribe`.
    Unsubscribe(Unsubscribe),
    /// `prompts/list`.
    ListPrompts(ListPrompts),
    /// `prompts/get`.
    GetPrompt(GetPrompt),
    /// `completion/complete`.
    Complete(Complete),
    /// `logging/setLevel`.
    SetLevel(SetLevel),
    /// `subscriptions/listen`.
    SubscriptionsListen(SubscriptionsListen),
    /// `tasks/get`.
    GetTask(GetTask),
    /// `tasks/result`.
    GetTaskPayload(GetTaskPayload),
    /// `tasks/list`.
    ListTasks(ListTasks),
    /// `tasks/cancel`.
    CancelTask(CancelTask),
}

typed_union! {
    /// A request a server sends to a client (handshake era).
    ServerRequest, sender: Side::Server, kind: MessageKind::Request;
    /// `ping`.
    Ping(Ping),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessage),
    /// `roots/list`.
    ListRoots(ListRoots),
    /// `elicitation/create`.
    Elicit(Elicit),
    /// `tasks/get`.
    GetTask(GetTask),
    /// `tasks/result`.
    GetTaskPayload(GetTaskPayload),
    /// `tasks/list`.
    ListTasks(ListTasks),
    /// `tasks/cancel`.
    CancelTask(CancelTask),
}

typed_union! {
    /// A notification a client sends to a server.
    ClientNotification, sender: Side::Client, kind: MessageKind::Notification;
    /// `notifications/initialized`.
    Initialized(Initialized),
    /// `notifications/cancelled`.
    Cancelled(Cancelled),
    /// `notifications/progress`.
    Progress(Progress),
    /// `notifications/roots/list_changed`.
    RootsListChanged(RootsListChanged),
    /// `notifications/tasks/status`.
    TaskStatus(TaskStatus),
}

typed_union! {
    /// A notification a server sends to a client.
    ServerNotification, sender: Side::Server, kind: MessageKind::Notification;
    /// `notifications/cancelled`.
    Cancelled(Cancelled),
    /// `notifications/progress`.
    Progress(Progress),
    /// `notifications/message`.
    LoggingMessage(LoggingMessage),
    /// `notifications/resources/list_changed`.
    ResourceListChanged(ResourceListChanged),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdated),
    /// `notifications/prompts/list_changed`.
    PromptListChanged(PromptListChanged),
    /// `notifications/tools/list_changed`.
    ToolListChanged(ToolListChanged),
    /// `notifications/elicitation/complete`.
    ElicitationComplete(ElicitationComplete),
    /// `notifications/tasks/status`.
    TaskStatus(TaskStatus),
    /// `notifications/subscriptions/acknowledged`.
    SubscriptionsAcknowledged(SubscriptionsAcknowledged),
}

impl ClientRequest {
    /// The request's `params._meta`, if it has one: where a 2026-07-28
    /// request names its revision, client and capabilities.
    pub fn meta(&self) -> Option<&RequestMeta> {
        match self {
            ClientRequest::Initialize(p) => p.meta.as_ref(),
            ClientRequest::Ping(p) | ClientRequest::Discover(p) => p.as_ref()?.meta.as_ref(),
            ClientRequest::ListTools(p)
            | ClientRequest::ListResources(p)
            | ClientRequest::ListResourceTemplates(p)
            | ClientRequest::ListPrompts(p)
            | ClientRequest::ListTasks(p) => p.as_ref()?.meta.as_ref(),
            ClientRequest::CallTool(p) => p.meta.as_ref(),
            ClientRequest::ReadResource(p) => p.meta.as_ref(),
            ClientRequest::Subscribe(p) => p.meta.as_ref(),
            ClientRequest::Unsubscribe(p) => p.meta.as_ref(),
            ClientRequest::GetPrompt(p) => p.meta.as_ref(),
            ClientRequest::Complete(p) => p.meta.as_ref(),
            ClientRequest::SetLevel(p) => p.meta.as_ref(),
            ClientRequest::SubscriptionsListen(p) => p.meta.as_ref(),
            ClientRequest::GetTask(p)
            | ClientRequest::GetTaskPayload(p)
            | ClientRequest::CancelTask(p) => p.meta.as_ref(),
        }
    }

    /// Frames the request as JSON-RPC with `id`.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the params fails to serialize.
    pub fn to_jsonrpc(&self, id: RequestId) -> Result<JsonRpcRequest, serde_json::Error> {
        Ok(JsonRpcRequest::new(id, self.method(), self.params_json()?))
    }
}

impl ServerRequest {
    /// Frames the request as JSON-RPC with `id`.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the params fails to serialize.
    pub fn to_jsonrpc(&self, id: RequestId) -> Result<JsonRpcRequest, serde_json::Error> {
        Ok(JsonRpcRequest::new(id, self.method(), self.params_json()?))
    }
}

impl ClientNotification {
    /// Frames the notification as JSON-RPC.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the params fails to serialize.
    pub fn to_jsonrpc(&self) -> Result<JsonRpcNotification, serde_json::Error> {
        Ok(JsonRpcNotification::new(self.method(), self.params_json()?))
    }
}

impl ServerNotification {
    /// Frames the notification as JSON-RPC.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the params fails to serialize.
    pub fn to_jsonrpc(&self) -> Result<JsonRpcNotification, serde_json::Error> {
        Ok(JsonRpcNotification::new(self.method(), self.params_json()?))
    }
}

/// Just the `resultType` of a result, read without parsing the rest.
#[derive(Deserialize)]
struct ResultTypeProbe<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<std::borrow::Cow<'a, str>>,
}

fn is_input_required(raw: &RawJson) -> bool {
    raw.parse::<ResultTypeProbe<'_>>()
        .ok()
        .and_then(|p| p.result_type)
        .is_some_and(|t| t == "input_required")
}

fn parse_result<T: serde::de::DeserializeOwned>(
    method: &'static str,
    raw: &RawJson,
) -> Result<T, MessageError> {
    raw.parse()
        .map_err(|source| MessageError::InvalidParams { method, source })
}

/// The result of a request a client sent, as the server answered it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerResult {
    /// An empty result (`ping`, `resources/subscribe`, `logging/setLevel`, ...).
    Empty(EmptyResult),
    /// Of `initialize`.
    Initialize(InitializeResult),
    /// Of `server/discover`.
    Discover(DiscoverResult),
    /// Of `tools/list`.
    ListTools(ListToolsResult),
    /// Of `tools/call`.
    CallTool(CallToolResult),
    /// Of `resources/list`.
    ListResources(ListResourcesResult),
    /// Of `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplatesResult),
    /// Of `resources/read`.
    ReadResource(ReadResourceResult),
    /// Of `prompts/list`.
    ListPrompts(ListPromptsResult),
    /// Of `prompts/get`.
    GetPrompt(GetPromptResult),
    /// Of `completion/complete`.
    Complete(CompleteResult),
    /// Of `subscriptions/listen`.
    SubscriptionsListen(SubscriptionsListenResult),
    /// Of `tasks/get`.
    GetTask(GetTaskResult),
    /// Of `tasks/result`.
    GetTaskPayload(GetTaskPayloadResult),
    /// Of `tasks/list`.
    ListTasks(ListTasksResult),
    /// Of `tasks/cancel`.
    CancelTask(CancelTaskResult),
    /// A task-augmented request was accepted as a task (2025-11-25).
    CreateTask(CreateTaskResult),
    /// The server needs input before it can answer (2026-07-28).
    InputRequired(InputRequiredResult),
}

impl ServerResult {
    /// Reads the raw result of a `method` request sent at `revision`.
    ///
    /// # Errors
    /// [`MessageError::UnknownMethod`] when the client could not have sent
    /// `method` at `revision`; [`MessageError::InvalidParams`] when the result
    /// does not match the method's result type.
    pub fn parse(method: &str, result: &RawJson, revision: Revision) -> Result<Self, MessageError> {
        check_table(method, revision, Side::Client, MessageKind::Request)?;
        let info = MethodInfo::lookup(method, revision, Side::Client).ok_or_else(|| {
            MessageError::UnknownMethod {
                method: method.to_owned(),
                revision,
            }
        })?;
        if info
            .results_at(revision)
            .any(|r| r == "InputRequiredResult")
            && is_input_required(result)
        {
            return parse_result(info.name, result).map(ServerResult::InputRequired);
        }
        let name = info.name;
        Ok(match name {
            "initialize" => ServerResult::Initialize(parse_result(name, result)?),
            "server/discover" => ServerResult::Discover(parse_result(name, result)?),
            "tools/list" => ServerResult::ListTools(parse_result(name, result)?),
            "tools/call" => match parse_result(name, result) {
                Ok(done) => ServerResult::CallTool(done),
                Err(err) if revision == Revision::V2025_11_25 => {
                    // A task-augmented call is answered with the task instead.
                    parse_result(name, result)
                        .map(ServerResult::CreateTask)
                        .map_err(|_| err)?
                }
                Err(err) => return Err(err),
            },
            "resources/list" => ServerResult::ListResources(parse_result(name, result)?),
            "resources/templates/list" => {
                ServerResult::ListResourceTemplates(parse_result(name, result)?)
            }
            "resources/read" => ServerResult::ReadResource(parse_result(name, result)?),
            "prompts/list" => ServerResult::ListPrompts(parse_result(name, result)?),
            "prompts/get" => ServerResult::GetPrompt(parse_result(name, result)?),
            "completion/complete" => ServerResult::Complete(parse_result(name, result)?),
            "subscriptions/listen" => {
                ServerResult::SubscriptionsListen(parse_result(name, result)?)
            }
            "tasks/get" => ServerResult::GetTask(parse_result(name, result)?),
            "tasks/result" => ServerResult::GetTaskPayload(parse_result(name, result)?),
            "tasks/list" => ServerResult::ListTasks(parse_result(name, result)?),
            "tasks/cancel" => ServerResult::CancelTask(parse_result(name, result)?),
            _ => ServerResult::Empty(parse_result(name, result)?),
        })
    }

    /// The result serialized as raw JSON.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the result fails to serialize.
    pub fn to_json(&self) -> Result<RawJson, serde_json::Error> {
        match self {
            ServerResult::Empty(r) => RawJson::from_serialize(r),
            ServerResult::Initialize(r) => RawJson::from_serialize(r),
            ServerResult::Discover(r) => RawJson::from_serialize(r),
            ServerResult::ListTools(r) => RawJson::from_serialize(r),
            ServerResult::CallTool(r) => RawJson::from_serialize(r),
            ServerResult::ListResources(r) => RawJson::from_serialize(r),
            ServerResult::ListResourceTemplates(r) => RawJson::from_serialize(r),
            ServerResult::ReadResource(r) => RawJson::from_serialize(r),
            ServerResult::ListPrompts(r) => RawJson::from_serialize(r),
            ServerResult::GetPrompt(r) => RawJson::from_serialize(r),
            ServerResult::Complete(r) => RawJson::from_serialize(r),
            ServerResult::SubscriptionsListen(r) => RawJson::from_serialize(r),
            ServerResult::GetTask(r) => RawJson::from_serialize(r),
            ServerResult::GetTaskPayload(r) => RawJson::from_serialize(r),
            ServerResult::ListTasks(r) => RawJson::from_serialize(r),
            ServerResult::CancelTask(r) => RawJson::from_serialize(r),
            ServerResult::CreateTask(r) => RawJson::from_serialize(r),
            ServerResult::InputRequired(r) => RawJson::from_serialize(r),
        }
    }
}

/// The result of a request a server sent, as the client answered it
/// (handshake era).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientResult {
    /// An empty result (`ping`).
    Empty(EmptyResult),
    /// Of `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Of `roots/list`.
    ListRoots(ListRootsResult),
    /// Of `elicitation/create`.
    Elicit(ElicitResult),
    /// Of `tasks/get`.
    GetTask(GetTaskResult),
    /// Of `tasks/result`.
    GetTaskPayload(GetTaskPayloadResult),
    /// Of `tasks/list`.
    ListTasks(ListTasksResult),
    /// Of `tasks/cancel`.
    CancelTask(CancelTaskResult),
    /// A task-augmented request was accepted as a task (2025-11-25).
    CreateTask(CreateTaskResult),
}

impl ClientResult {
    /// Reads the raw result of a `method` request the server sent at `revision`.
    ///
    /// # Errors
    /// As [`ServerResult::parse`].
    pub fn parse(method: &str, result: &RawJson, revision: Revision) -> Result<Self, MessageError> {
        let info = MethodInfo::lookup(method, revision, Side::Server)
            .filter(|info| info.kind == MessageKind::Request)
            .ok_or_else(|| MessageError::UnknownMethod {
                method: method.to_owned(),
                revision,
            })?;
        let name = info.name;
        let task_or = |err: MessageError| -> Result<ClientResult, MessageError> {
            if revision == Revision::V2025_11_25 {
                parse_result(name, result)
                    .map(ClientResult::CreateTask)
                    .map_err(|_| err)
            } else {
                Err(err)
            }
        };
        Ok(match name {
            "sampling/createMessage" => match parse_result(name, result) {
                Ok(r) => ClientResult::CreateMessage(r),
                Err(err) => task_or(err)?,
            },
            "roots/list" => ClientResult::ListRoots(parse_result(name, result)?),
            "elicitation/create" => match parse_result(name, result) {
                Ok(r) => ClientResult::Elicit(r),
                Err(err) => task_or(err)?,
            },
            "tasks/get" => ClientResult::GetTask(parse_result(name, result)?),
            "tasks/result" => ClientResult::GetTaskPayload(parse_result(name, result)?),
            "tasks/list" => ClientResult::ListTasks(parse_result(name, result)?),
            "tasks/cancel" => ClientResult::CancelTask(parse_result(name, result)?),
            _ => ClientResult::Empty(parse_result(name, result)?),
        })
    }

    /// The result serialized as raw JSON.
    ///
    /// # Errors
    /// Only if a user-supplied value inside the result fails to serialize.
    pub fn to_json(&self) -> Result<RawJson, serde_json::Error> {
        match self {
            ClientResult::Empty(r) => RawJson::from_serialize(r),
            ClientResult::CreateMessage(r) => RawJson::from_serialize(r),
            ClientResult::ListRoots(r) => RawJson::from_serialize(r),
            ClientResult::Elicit(r) => RawJson::from_serialize(r),
            ClientResult::GetTask(r) => RawJson::from_serialize(r),
            ClientResult::GetTaskPayload(r) => RawJson::from_serialize(r),
            ClientResult::ListTasks(r) => RawJson::from_serialize(r),
            ClientResult::CancelTask(r) => RawJson::from_serialize(r),
            ClientResult::CreateTask(r) => RawJson::from_serialize(r),
        }
    }
}

/// The 2026-07-28 bare input requests, by the schema's names.
pub mod input {
    use super::{MethodCall, methods};

    /// The 2026-07-28 `CreateMessageRequest`: an input request without framing.
    pub type CreateMessageRequest = MethodCall<methods::CreateMessage>;
    /// The 2026-07-28 `ListRootsRequest`.
    pub type ListRootsRequest = MethodCall<methods::ListRoots>;
    /// The 2026-07-28 `ElicitRequest`.
    pub type ElicitRequest = MethodCall<methods::Elicit>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request is parsed into a `ClientRequest` and moved (copied)
    /// several times on its way to a handler, so its size is a cost of
    /// every call: the client's capabilities and info are boxed to keep it
    /// small (issue 30). A variant or field that makes it large again
    /// fails here.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_parsed_request_stays_small_to_move() {
        assert!(std::mem::size_of::<ClientRequest>() <= 320);
        assert!(std::mem::size_of::<RequestMeta>() <= 128);
    }
}
