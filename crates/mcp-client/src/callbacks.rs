//! The host's answers to what a server asks: one path for both eras.
//! Handshake era: the server's requests arrive through the dispatcher
//! ([`Callbacks`] is the connection's handler). Stateless era: they arrive as
//! the input requests of an `input_required` result ([`ClientSession::fulfil`]).
//! Either way each ask reaches the same config callback through [`answer`]
//! ([`ClientSession::dispatch_input_request`] for a host that drives the
//! stateless rounds itself).

use std::collections::HashMap;
use std::sync::Arc;

use mcp_core::{
    CancellationToken, Handler, IncomingNotification, IncomingRequest, NotificationContext,
    RequestContext,
};
use mcp_types::method::Method;
use mcp_types::{
    ElicitRequestParams, EmptyResult, ErrorObject, InputRequest, InputRequests, InputResponse,
    InputResponses, RawJson, RequestId, RequestMeta, ServerNotification, ServerRequest, tasks_ext,
};
use serde::Serialize;

use crate::error::Error;
use crate::extension::bindings::BindingQueue;
use crate::hosted::Host;
use crate::session::{ClientSession, OwnerSlot, RequestInfo, SessionConfig, Shared};
use mcp_tasks::to_object;

/// Why the host could not answer an ask.
enum Refusal {
    /// The config has no callback for the method (the capability was not declared).
    NoCallback(&'static str),
    /// The callback answered with an error.
    Callback(&'static str, ErrorObject),
}

impl Refusal {
    /// The JSON-RPC error the server is answered with.
    fn into_error(self) -> ErrorObject {
        match self {
            Refusal::Callback(_, error) => error,
            Refusal::NoCallback(method) => ErrorObject::new(
                mcp_types::ErrorCode::METHOD_NOT_FOUND,
                format!("this client does not support `{method}`: it declared no such capability"),
            ),
        }
    }
}

/// An answer as the JSON a task keeps.
/// Answers one ask of the server with the config's callback.
async fn answer(
    config: &SessionConfig,
    request: InputRequest,
    info: RequestInfo,
) -> Result<InputResponse, Refusal> {
    let method = request.method();
    let refused = |error| Refusal::Callback(method, error);
    match request {
        InputRequest::Elicit(params) => {
            let callback = config
                .elicitation
                .as_ref()
                .ok_or(Refusal::NoCallback(method))?;
            callback(params, info)
                .await
                .map(InputResponse::Elicit)
                .map_err(refused)
        }
        InputRequest::CreateMessage(params) => {
            let callback = config
                .sampling
                .as_ref()
                .ok_or(Refusal::NoCallback(method))?;
            callback(params, info)
                .await
                .map(InputResponse::CreateMessage)
                .map_err(refused)
        }
        InputRequest::ListRoots(_) => {
            let callback = config.roots.as_ref().ok_or(Refusal::NoCallback(method))?;
            callback(info)
                .await
                .map(InputResponse::ListRoots)
                .map_err(refused)
        }
        _ => Err(Refusal::NoCallback(method)),
    }
}

impl ClientSession {
    /// What a callback is told of an ask with `id` and `meta`.
    fn request_info(&self, id: RequestId, meta: Option<RequestMeta>) -> RequestInfo {
        RequestInfo {
            id,
            cancel: CancellationToken::new(),
            session: self.clone(),
            meta,
            related_request: None,
        }
    }

    /// Answers one input request through the config's callbacks (sampling,
    /// elicitation, roots), as the session does for the server's requests
    /// in the handshake era and for the input requests of an
    /// `input_required` result in the stateless era. For a host driving
    /// the rounds itself (see [`call_tool_once`](Self::call_tool_once)):
    /// `key` is the input request's key, given to the callback as
    /// [`RequestInfo::id`].
    ///
    /// # Errors
    /// The JSON-RPC error to answer with: the callback's own refusal, or
    /// `-32601` when the config has no callback for the method.
    ///
    /// # Examples
    /// ```no_run
    /// use mcp_client::{ClientSession, Error};
    /// use mcp_client::types::{CallToolRequestParams, InputResponses, ResultOrInputRequired};
    ///
    /// # async fn run(session: &ClientSession) -> Result<(), Error> {
    /// let mut params = CallToolRequestParams::new("deploy");
    /// loop {
    ///     match session.call_tool_once(&params, Default::default()).await? {
    ///         ResultOrInputRequired::Complete(result) => break println!("{result:?}"),
    ///         ResultOrInputRequired::InputRequired(input) => {
    ///             let mut responses = InputResponses::new();
    ///             for (key, request) in input.input_requests.unwrap_or_default() {
    ///                 // Log, filter or answer some yourself; route the rest.
    ///                 match session.dispatch_input_request(key.clone(), request).await {
    ///                     Ok(response) => drop(responses.insert(key, response)),
    ///                     Err(refusal) => eprintln!("not answered: {}", refusal.message),
    ///                 }
    ///             }
    ///             params.input_responses = Some(responses);
    ///             params.request_state = input.request_state;
    ///         }
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn dispatch_input_request(
        &self,
        key: impl Into<RequestId>,
        request: InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        let info = self.request_info(key.into(), request.meta().cloned());
        answer(&self.config, request, info)
            .await
            .map_err(Refusal::into_error)
    }

    /// Answers every input request of an `input_required` result through
    /// the config's callbacks, each under its key: what the session does
    /// between the rounds of [`call_tool`](Self::call_tool),
    /// [`read_resource`](Self::read_resource) and
    /// [`get_prompt`](Self::get_prompt).
    ///
    /// # Errors
    /// [`Error::NoCallback`] when the config has no callback for a method;
    /// [`Error::InputRefused`] when a callback refused. The other requests
    /// are then not answered.
    pub async fn answer_input_requests(
        &self,
        requests: InputRequests,
    ) -> Result<InputResponses, Error> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let info = self.request_info(RequestId::from(key.clone()), request.meta().cloned());
            let response = answer(&self.config, request, info)
                .await
                .map_err(|refusal| match refusal {
                    Refusal::NoCallback(method) => Error::NoCallback { method },
                    Refusal::Callback(method, error) => Error::InputRefused { method, error },
                })?;
            responses.insert(key, response);
        }
        Ok(responses)
    }
}

/// Answers the server's requests and notifications with the config's
/// callbacks: the session connection's handler.
pub(crate) struct Callbacks {
    config: Arc<SessionConfig>,
    shared: Arc<Shared>,
    /// The FIFOs of the config's notification bindings, by method.
    bindings: HashMap<&'static str, Arc<BindingQueue>>,
    /// The tasks this client runs for the server (2025-11-25), if it does.
    host: Option<Arc<Host>>,
    /// The session the callbacks answer for, handed to each of them.
    session: OwnerSlot,
}

impl Callbacks {
    pub(crate) fn new(
        config: Arc<SessionConfig>,
        shared: Arc<Shared>,
        bindings: HashMap<&'static str, Arc<BindingQueue>>,
        host: Option<Arc<Host>>,
        session: OwnerSlot,
    ) -> Self {
        Self {
            config,
            shared,
            bindings,
            host,
            session,
        }
    }

    /// The session, for a callback's [`RequestInfo`].
    fn session(&self) -> Result<ClientSession, ErrorObject> {
        ClientSession::from_slot(&self.session, &self.shared, &self.config)
            .ok_or_else(|| ErrorObject::internal_error("the client session is closing"))
    }
}

fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the answer: {e}")))
}

impl Callbacks {
    fn host(&self) -> Result<&Arc<Host>, ErrorObject> {
        self.host
            .as_ref()
            .ok_or_else(|| ErrorObject::internal_error("this client hosts no tasks"))
    }
}

impl Handler for Callbacks {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.shared.lock().revision;
        let parsed = ServerRequest::parse(&request.method, request.params.as_ref(), revision)
            .map_err(|e| e.to_error_object())?;
        let ask = match parsed {
            ServerRequest::Ping(_) => return to_raw(&EmptyResult::new()),
            ServerRequest::CreateMessage(params) => InputRequest::CreateMessage(params),
            ServerRequest::Elicit(params) => InputRequest::Elicit(params),
            ServerRequest::ListRoots(params) => InputRequest::ListRoots(params),
            // The core tasks the server follows (2025-11-25), when hosted.
            ServerRequest::GetTask(params) if self.host.is_some() => {
                return self.host()?.get(&params.task_id).await;
            }
            ServerRequest::GetTaskPayload(params) if self.host.is_some() => {
                return self.host()?.result(&params.task_id, &cx.cancel).await;
            }
            ServerRequest::ListTasks(params) if self.host.is_some() => {
                let cursor = params.and_then(|p| p.cursor);
                return self.host()?.list(cursor.as_deref()).await;
            }
            ServerRequest::CancelTask(params) if self.host.is_some() => {
                return self.host()?.cancel(&params.task_id).await;
            }
            other => return Err(ErrorObject::method_not_found(other.method())),
        };
        // A task-augmented ask, when hosting tasks: answered with the task,
        // the callback runs on as the session's own work. Without hosting,
        // the `task` is ignored and the ask answered in the request.
        let task = match &ask {
            InputRequest::CreateMessage(params) => params.task.as_ref(),
            InputRequest::Elicit(ElicitRequestParams::Form(params)) => params.task.as_ref(),
            InputRequest::Elicit(ElicitRequestParams::Url(params)) => params.task.as_ref(),
            _ => None,
        };
        let session = self.session()?;
        let meta = ask.meta().cloned();
        if let (Some(host), Some(task)) = (&self.host, task) {
            let ttl = task.ttl;
            let method = ask.method();
            let config = self.config.clone();
            let id = cx.id.clone();
            let related_request = cx.transport.related_request.clone();
            return host
                .start(method, ttl, move |cancel| async move {
                    let info = RequestInfo {
                        id,
                        cancel,
                        session,
                        meta,
                        related_request,
                    };
                    let answer = answer(&config, ask, info).await;
                    match answer {
                        Ok(InputResponse::CreateMessage(result)) => to_object(&result),
                        Ok(InputResponse::Elicit(result)) => to_object(&result),
                        Ok(_) => Err(ErrorObject::internal_error("no answer for this request")),
                        Err(refusal) => Err(refusal.into_error()),
                    }
                })
                .await;
        }
        let info = RequestInfo {
            id: cx.id.clone(),
            cancel: cx.cancel.clone(),
            session,
            meta,
            related_request: cx.transport.related_request.clone(),
        };
        match answer(&self.config, ask, info).await {
            Ok(InputResponse::CreateMessage(result)) => to_raw(&result),
            Ok(InputResponse::Elicit(result)) => to_raw(&result),
            Ok(InputResponse::ListRoots(result)) => to_raw(&result),
            Ok(_) => Err(ErrorObject::internal_error("no answer for this request")),
            Err(refusal) => Err(refusal.into_error()),
        }
    }

    fn on_fault(&self, fault: mcp_core::Fault) {
        self.config.emit(crate::events::SessionEvent::Fault(fault));
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        cx: NotificationContext,
    ) {
        let revision = self.shared.lock().revision;
        let parsed = match ServerNotification::parse(
            &notification.method,
            notification.params.as_ref(),
            revision,
        ) {
            Ok(parsed) => parsed,
            Err(e) => {
                // The tasks extension's status notification feeds task
                // watches (and a binding, if the config has one).
                if notification.method == tasks_ext::TaskStatusNotification::NAME {
                    self.shared
                        .task_states
                        .extension(notification.params.as_ref());
                }
                // Only methods the core protocol does not define at this
                // revision reach the bindings.
                match self.bindings.get(notification.method.as_str()) {
                    Some(queue) => queue.push(notification.params),
                    None => tracing::debug!(error = %e, "ignored a notification"),
                }
                return;
            }
        };
        if let (Some(logging), ServerNotification::LoggingMessage(params)) =
            (&self.config.logging, &parsed)
        {
            logging(params.clone()).await;
        }
        match &parsed {
            ServerNotification::TaskStatus(params) => {
                self.shared.task_states.status(params.clone());
            }
            ServerNotification::ToolListChanged(_) => {
                // Output schemas may have changed with the tools.
                let mut state = self.shared.lock();
                state.output_schemas.clear();
                state.cache.invalidate("tools/");
            }
            ServerNotification::PromptListChanged(_) => {
                self.shared.lock().cache.invalidate("prompts/");
            }
            ServerNotification::ResourceListChanged(_) => {
                self.shared.lock().cache.invalidate("resources/");
            }
            _ => {}
        }
        if let Some(callback) = &self.config.notification {
            let info = crate::NotificationInfo {
                related_request: cx.transport.related_request,
            };
            callback(parsed, info).await;
        }
    }
}
