//! The handshake era (2024-11-05 to 2025-11-25): `initialize`, and what a
//! session keeps (its log level and subscriptions); everything else takes
//! the shared route.

use mcp_core::{IncomingRequest, RequestContext};
use mcp_types::method::Method as _;
use mcp_types::{
    ClientRequest, EmptyResult, ErrorObject, InitializeRequestParams, InitializeResult, RawJson,
    Revision,
};

use super::forward::{Advertised, forward};
use super::{Requester, Runner, record_span, to_raw};
use crate::session::ServerSession;
use crate::tasks::TaskFeed;

impl Runner {
    pub(super) fn initialize(
        &self,
        params: InitializeRequestParams,
    ) -> Result<RawJson, ErrorObject> {
        let revision = Revision::from_version(&params.protocol_version)
            .filter(|r| r.is_handshake())
            .unwrap_or(Revision::LATEST_HANDSHAKE);
        tracing::debug!(
            client = %params.client_info.name,
            requested = %params.protocol_version,
            answered = %revision,
            "initialize"
        );
        super::record_span(revision);
        self.state.set_client(params, revision);
        let r = &self.registry;
        let mut capabilities = self.registry.capabilities();
        // The core `tasks` capability exists in 2025-11-25 only (the
        // 2026-07-28 extension replaces it).
        if r.tasks.is_some() && revision >= Revision::V2025_11_25 {
            capabilities.tasks = Some(crate::tasks::core_capability());
        }
        let mut result = InitializeResult::new(revision.as_str(), capabilities, r.info.clone());
        result.instructions = r.instructions.clone();
        to_raw(&result)
    }

    /// Starts forwarding the server's list changes to this session (once per
    /// connection), subscribed before `initialize` is answered (or when a
    /// session another server minted is restored).
    /// `owner` is whose tasks the session is told about.
    pub(crate) fn forward_changes(&self, peer: &mcp_core::Peer, owner: String) {
        if !self.state.claim_forwarding() {
            return;
        }
        let changes = self.registry.changes.subscribe();
        // Not tied to the `initialize` request: over HTTP, the session's
        // notifications go on its GET stream.
        let session = ServerSession::new(peer.unrelated(), self.state.clone())
            .with_changes(self.registry.changes.clone());
        let advertised = Advertised::from(&self.registry.capabilities());
        // `notifications/tasks/status` exists at 2025-11-25 only, like the
        // core `tasks` capability.
        let tasks = match (&self.registry.tasks, self.state.revision()) {
            (Some(engine), Some(revision)) if revision >= Revision::V2025_11_25 => {
                Some(TaskFeed::new(engine.clone(), owner))
            }
            _ => None,
        };
        let state = self.state.clone();
        let initialized = Box::pin(async move { state.initialized().await });
        let Some(unsubscribe) = self.registry.on_unsubscribe.clone() else {
            self.tasks
                .spawn(forward(changes, session, advertised, tasks, initialized));
            return;
        };
        // When the session ends, the unsubscription hook hears of what it
        // still followed (only where there is a hook: every idle session
        // keeps this task).
        let (state, ended) = (self.state.clone(), session.clone());
        self.tasks.spawn(async move {
            forward(changes, session, advertised, tasks, initialized).await;
            for uri in state.take_hooked() {
                unsubscribe(uri, ended.clone()).await;
            }
        });
    }

    /// `resources/subscribe` (`subscribe`) or `resources/unsubscribe` of
    /// `uri`: the session's subscriptions changed and stored, and the hook
    /// told when it was not (or was) told of `uri` for this session yet.
    async fn subscription(
        &self,
        uri: String,
        subscribe: bool,
        cx: &RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let hook = if subscribe {
            let catalog = self.registry.catalog.snapshot();
            if !self.subscribe_target_exists(&catalog, &uri, &Requester::Session) {
                // `resources/subscribe` exists in the handshake era only.
                return Err(ErrorObject::resource_not_found(
                    &uri,
                    mcp_types::Era::Handshake,
                ));
            }
            let max = self.registry.max_subscriptions;
            if !self.state.subscribe(uri.clone(), max) {
                return Err(ErrorObject::invalid_params(format!(
                    "this session follows {max} resources already, the most it may: \
                     unsubscribe from one first"
                )));
            }
            self.registry
                .on_subscribe
                .as_ref()
                .filter(|_| self.state.hook(&uri))
        } else {
            self.state.unsubscribe(&uri);
            self.registry
                .on_unsubscribe
                .as_ref()
                .filter(|_| self.state.unhook(&uri))
        };
        self.state.persist().await?;
        if let Some(hook) = hook {
            hook(uri, self.session(cx, &Requester::Session)).await;
        }
        to_raw(&EmptyResult::new())
    }

    /// A request of the handshake era; `parsed` is the request already
    /// read ([`ClientRequest::parse_any_revision`]), if it was.
    pub(super) async fn handshake(
        &self,
        request: IncomingRequest,
        parsed: Option<Box<ClientRequest>>,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.state.revision();
        // Any request but these after `initialize` (an extension's too,
        // served below before the typed parse) tells that the client sent
        // `notifications/initialized`.
        let method = request.method.as_str();
        if revision.is_some()
            && method != mcp_types::methods::Initialize::NAME
            && method != mcp_types::methods::Ping::NAME
        {
            self.state.request_after_initialize();
        }
        let mut request = request;
        if revision.is_some()
            && !self.registry.extension_requests.is_empty()
            && !self.is_core_tasks_request(&request.method)
        {
            if let Some(answer) = self
                .extension_request(&mut request, &cx, &Requester::Session)
                .await
            {
                return answer;
            }
        }
        let parsed = super::parse_at(
            &mut request,
            parsed,
            revision.unwrap_or(Revision::LATEST_HANDSHAKE),
        )?;
        if let Some(revision) = revision {
            record_span(revision);
        }
        let requester = Requester::Session;
        match *parsed {
            ClientRequest::Initialize(params) => {
                cx.peer.begin_session(mcp_core::SessionSide::Server);
                let result = self.initialize(params);
                if result.is_ok() {
                    if let Some(revision) = self.state.revision() {
                        cx.peer.settle_session(revision.as_str());
                    }
                    self.forward_changes(&cx.peer, self.task_owner(&cx));
                    // Stored before the answer: the client's next request
                    // may reach another server.
                    self.state.persist().await?;
                }
                result
            }
            ClientRequest::Ping(_) => to_raw(&EmptyResult::new()),
            _ if revision.is_none() => Err(ErrorObject::invalid_request(format!(
                "`{}` before initialization: send `initialize` first",
                request.method
            ))),
            // On the heap: a rare request, whose hooks' futures would
            // otherwise make every request's future larger.
            ClientRequest::Subscribe(params) => {
                Box::pin(self.subscription(params.uri, true, &cx)).await
            }
            ClientRequest::Unsubscribe(params) => {
                Box::pin(self.subscription(params.uri, false, &cx)).await
            }
            ClientRequest::SetLevel(params) => {
                self.state.set_log_level(params.level);
                self.state.persist().await?;
                to_raw(&EmptyResult::new())
            }
            // 2025-11-25 core tasks, when the server runs tasks.
            ClientRequest::CallTool(params) if self.is_core_task_call(&params) => {
                self.core_task_call(Box::new(params), &cx).await
            }
            ClientRequest::GetTask(params) => self.core_get_task(&params.task_id, &cx).await,
            ClientRequest::GetTaskPayload(params) => {
                self.core_task_result(&params.task_id, &cx).await
            }
            ClientRequest::ListTasks(params) => {
                let cursor = params.and_then(|p| p.cursor);
                self.core_list_tasks(cursor.as_deref(), &cx).await
            }
            ClientRequest::CancelTask(params) => self.core_cancel_task(&params.task_id, &cx).await,
            // Nothing was moved out of the box: it goes on as it is.
            _ => self.route(parsed, &cx, &requester).await,
        }
    }
}
