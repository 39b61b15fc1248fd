//! The runner: answers one client's requests with a server's registry.
//!
//! One route ([`Runner::route`]) takes every request both eras serve alike
//! from its parsed params to the registry; each era has one home around it:
//! [`handshake`] (initialize, the session's log level and subscriptions) and
//! [`stateless`] (the per-request `_meta` envelope, discover, listen, cache
//! hints). [`input`] runs handlers that ask the client, in either era;
//! [`pages`] pages every list.

mod envelope;
mod extensions;
mod forward;
mod handshake;
mod input;
mod pages;
mod stateless;
pub(crate) mod tasks;

use envelope::{check_param_headers, request_meta};
use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::{
    Handler, IncomingNotification, IncomingRequest, NotificationContext, RequestContext,
};
use mcp_types::ResultOrInputRequired;
use mcp_types::envelope::Envelope;
use mcp_types::{
    CallToolRequestParams, CallToolResult, ClientNotification, ClientRequest, CompleteReference,
    CompleteRequestParams, CompleteResult, ErrorObject, GetPromptRequestParams, GetPromptResult,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, RawJson, ReadResourceRequestParams, ReadResourceResult, RequestMeta, Revision,
};
use serde::Serialize;
use serde_json::Value;

use crate::request_state::Binding;
use crate::session::{Context, ServerSession, SessionState, StatelessRequest};

use crate::answer::*;
use crate::catalog::Snapshot;
use crate::registry::*;

/// Serves one connection (or, stateless, each request) with a registry.
#[derive(Clone)]
pub(crate) struct Runner {
    pub(crate) registry: Arc<Registry>,
    pub(crate) state: Arc<SessionState>,
    /// The connection's own tasks (list-change forwarding, callbacks): the
    /// [`ServerConnection`](crate::ServerConnection) awaits them, and each
    /// ends when the connection does.
    pub(crate) tasks: tokio_util::task::TaskTracker,
    /// The 2025-11-25 task this runner's call runs as (its asks park it in
    /// `input_required`); `None` outside a task.
    pub(crate) task: Option<Arc<crate::tasks::TaskSeat>>,
}

pub(super) fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    RawJson::from_serialize(value)
        .map_err(|e| ErrorObject::internal_error(format!("could not serialize the result: {e}")))
}

/// `request` read as a client request of `revision`: `parsed` when it was
/// read already (only the method table is asked then), else parsed now.
/// The raw params are dropped here, so a large message is held once, not
/// twice, while it is served.
fn parse_at(
    request: &mut IncomingRequest,
    parsed: Option<Box<ClientRequest>>,
    revision: Revision,
) -> Result<Box<ClientRequest>, ErrorObject> {
    let params = request.params.take();
    match parsed {
        Some(parsed) => ClientRequest::check_revision(&request.method, revision).map(|()| parsed),
        None => ClientRequest::parse(&request.method, params.as_ref(), revision).map(Box::new),
    }
    .map_err(|e| e.to_error_object())
}

/// Records the protocol revision a request is served at on its span
/// (`mcp_core::request_span`, which the dispatcher serves it in and which
/// already names the tool, prompt or resource). Never arguments or
/// credentials.
pub(super) fn record_span(revision: Revision) {
    mcp_core::record_protocol_version(&tracing::Span::current(), revision.as_str());
}

/// How a stateless-era result may be cached by the client.
#[derive(Clone, Copy)]
pub(super) enum Cache {
    /// A list: the server's list cache hints.
    List,
    /// A resource read: the server's read cache hints.
    Read,
    /// Not cacheable.
    None,
}

/// Who sent the request being served, and so where what is known of the
/// client lives: in the session (handshake era), or in the request's own
/// checked envelope (stateless era).
#[derive(Clone)]
pub(crate) enum Requester {
    /// A client of this session.
    Session,
    /// A stateless request, its client's envelope.
    Stateless(Arc<StatelessRequest>),
}

/// The answer to `tools/call` or `prompts/get` before it is serialized.
pub(super) type Answer<R> = Result<ResultOrInputRequired<R>, ErrorObject>;

impl Runner {
    fn session(&self, cx: &RequestContext, requester: &Requester) -> ServerSession {
        let session = ServerSession::new(cx.peer.clone(), self.state.clone())
            .with_changes(self.registry.changes.clone())
            .with_task(self.task.clone());
        match requester {
            Requester::Session => session,
            Requester::Stateless(request) => session.for_stateless_request(request.clone()),
        }
    }

    fn context(
        &self,
        cx: &RequestContext,
        requester: &Requester,
        meta: Option<Arc<RequestMeta>>,
    ) -> Context {
        Context::new(
            self.session(cx, requester),
            cx.id.clone(),
            cx.cancel.clone(),
            meta,
            cx.transport.clone(),
        )
        .with_state(self.registry.state.clone())
    }

    /// The requests both eras serve alike, from parsed params to the
    /// registry; the era shapes the result ([`Runner::shape`]).
    ///
    /// The request and the params passed down are boxed: each async layer
    /// keeps what it was given in its future, and a request's whole future
    /// is moved (copied) into its task before it runs, so params held by
    /// value in every layer made that copy several kilobytes per request.
    async fn route(
        &self,
        request: Box<ClientRequest>,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Result<RawJson, ErrorObject> {
        match *request {
            ClientRequest::ListTools(params) => self.shape(
                requester,
                &self.list::<ListToolsResult>(&params, requester)?,
                Cache::List,
            ),
            ClientRequest::ListResources(params) => self.shape(
                requester,
                &self.list::<ListResourcesResult>(&params, requester)?,
                Cache::List,
            ),
            ClientRequest::ListResourceTemplates(params) => self.shape(
                requester,
                &self.list::<ListResourceTemplatesResult>(&params, requester)?,
                Cache::List,
            ),
            ClientRequest::ListPrompts(params) => self.shape(
                requester,
                &self.list::<ListPromptsResult>(&params, requester)?,
                Cache::List,
            ),
            ClientRequest::CallTool(params) => {
                match self
                    .call_intercepted(Box::new(params), cx, requester)
                    .await?
                {
                    crate::tool_call::CallOutcome::Tool(answer) => {
                        self.shape(requester, &answer, Cache::None)
                    }
                    crate::tool_call::CallOutcome::Extension(result) => {
                        self.shape(requester, &result, Cache::None)
                    }
                }
            }
            ClientRequest::ReadResource(params) => {
                match self.read_resource(Box::new(params), cx, requester).await? {
                    ResultOrInputRequired::Complete(result) => {
                        self.shape(requester, &result, Cache::Read)
                    }
                    input_required => self.shape(requester, &input_required, Cache::None),
                }
            }
            ClientRequest::GetPrompt(params) => self.shape(
                requester,
                &self.get_prompt(Box::new(params), cx, requester).await?,
                Cache::None,
            ),
            ClientRequest::Complete(params) => self.shape(
                requester,
                &self.complete(Box::new(params), cx, requester).await?,
                Cache::None,
            ),
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    /// A result as the era sends it: as it is in the handshake era; stamped
    /// with `resultType`, cache hints and the server's identity statelessly.
    fn shape<T: Serialize>(
        &self,
        requester: &Requester,
        result: &T,
        cache: Cache,
    ) -> Result<RawJson, ErrorObject> {
        match requester {
            Requester::Session => to_raw(result),
            Requester::Stateless(_) => {
                let hints = match cache {
                    Cache::List => Some(self.registry.list_cache),
                    Cache::Read => Some(self.registry.read_cache),
                    Cache::None => None,
                };
                self.stamp(result, hints)
            }
        }
    }

    /// Runs tool `params.name`; `carried` when the request in `cx` carries
    /// the call (its routing headers are checked against the arguments).
    pub(super) async fn call_tool(
        &self,
        params: Box<CallToolRequestParams>,
        cx: &RequestContext,
        requester: &Requester,
        carried: bool,
    ) -> Answer<CallToolResult> {
        // The tool as the catalog holds it now: one removed while this call
        // runs stays until it ends. Only the entry is kept across the call,
        // not the snapshot (the call's future holds what it did before).
        let entry = {
            let catalog = self.registry.catalog.snapshot();
            let Some(&index) = catalog
                .tool_index
                .get(&params.name)
                .filter(|&&i| self.is_active(catalog.tools[i].owner, requester))
            else {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown tool `{}`",
                    params.name
                )));
            };
            catalog.tools[index].clone()
        };
        mcp_core::record_target_name(&tracing::Span::current(), "tools/call", &params.name);
        if let (Requester::Stateless(_), true) = (requester, carried) {
            check_param_headers(
                &entry.param_headers,
                params.arguments.as_ref(),
                &cx.transport.headers,
            )?;
        }
        let retry = (params.input_responses, params.request_state);
        let principal = cx.transport.principal.as_deref();
        let arguments = params.arguments;
        let recorded = self.registry.recorded;
        let span = tracing::Span::current();
        if recorded.tool_arguments && !span.is_disabled() {
            let json = serde_json::to_string(&arguments).unwrap_or_default();
            mcp_core::record_tool_arguments(&span, &json);
        }
        let bind = || Binding::new("tools/call", &params.name, arguments.as_ref(), principal);
        let answer = self
            .run_asking(
                cx,
                requester,
                params.meta.map(Arc::new),
                retry,
                &params.name,
                bind,
                |context| (entry.call)(arguments.as_ref(), context),
            )
            .await;
        if recorded.tool_results && !span.is_disabled() {
            if let Ok(ResultOrInputRequired::Complete(result)) = &answer {
                let json = serde_json::to_string(result).unwrap_or_default();
                mcp_core::record_tool_result(&span, &json);
            }
        }
        answer
    }

    async fn read_resource(
        &self,
        params: Box<ReadResourceRequestParams>,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Answer<ReadResourceResult> {
        let uri = params.uri;
        let catalog = self.registry.catalog.snapshot();
        let (read, variables) = if let Some(&i) = catalog
            .resource_index
            .get(&uri)
            .filter(|&&i| self.is_active(catalog.resources[i].owner, requester))
        {
            (&catalog.resources[i].read, BTreeMap::new())
        } else if let Some((entry, variables)) = catalog
            .templates
            .iter()
            .filter(|t| self.is_active(t.owner, requester))
            .find_map(|t| t.matcher.match_uri(&uri).map(|v| (t, v)))
        {
            (&entry.read, variables)
        } else {
            let era = match requester {
                Requester::Session => mcp_types::Era::Handshake,
                Requester::Stateless(_) => mcp_types::Era::Stateless,
            };
            return Err(ErrorObject::resource_not_found(&uri, era));
        };
        let principal = cx.transport.principal.as_deref();
        let bind = || Binding::new("resources/read", &uri, None, principal);
        let target = uri.clone();
        let request = ResourceRequest {
            uri: uri.clone(),
            variables,
        };
        let retry = (params.input_responses, params.request_state);
        self.run_asking(
            cx,
            requester,
            params.meta.map(Arc::new),
            retry,
            &target,
            bind,
            |context| {
                let contents = read(request.clone(), context);
                async move {
                    Ok(ResultOrInputRequired::Complete(ReadResourceResult::new(
                        contents.await?,
                    )))
                }
            },
        )
        .await
    }

    async fn get_prompt(
        &self,
        params: Box<GetPromptRequestParams>,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Answer<GetPromptResult> {
        let catalog = self.registry.catalog.snapshot();
        let Some(&index) = catalog.prompt_index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown prompt `{}`",
                params.name
            )));
        };
        let entry = &catalog.prompts[index];
        mcp_core::record_target_name(&tracing::Span::current(), "prompts/get", &params.name);
        let arguments = params.arguments.unwrap_or_default();
        let missing: Vec<&str> = entry
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "prompt `{}` needs the argument(s) {}",
                params.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let retry = (params.input_responses, params.request_state);
        let principal = cx.transport.principal.as_deref();
        let bind = || {
            let object: JsonObject = arguments
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            Binding::new("prompts/get", &params.name, Some(&object), principal)
        };
        self.run_asking(
            cx,
            requester,
            params.meta.map(Arc::new),
            retry,
            &params.name,
            bind,
            |context| (entry.get)(arguments.clone(), context),
        )
        .await
    }

    async fn complete(
        &self,
        params: Box<CompleteRequestParams>,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Result<CompleteResult, ErrorObject> {
        let Some(complete) = &self.registry.completion else {
            return Err(ErrorObject::method_not_found("completion/complete"));
        };
        match &params.reference {
            CompleteReference::Prompt(p)
                if !self
                    .registry
                    .catalog
                    .snapshot()
                    .prompt_index
                    .contains_key(&p.name) =>
            {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown prompt `{}`",
                    p.name
                )));
            }
            _ => {}
        }
        let context = self.context(cx, requester, params.meta.clone().map(Arc::new));
        let completion = complete(*params, context).await?;
        Ok(CompleteResult::new(completion))
    }

    /// Whether `uri` names a resource `requester`'s client can read in
    /// `catalog`: as `resources/read` finds it, an inactive extension's
    /// resources and templates left out.
    fn subscribe_target_exists(
        &self,
        catalog: &Snapshot,
        uri: &str,
        requester: &Requester,
    ) -> bool {
        catalog
            .resource_index
            .get(uri)
            .is_some_and(|&i| self.is_active(catalog.resources[i].owner, requester))
            || catalog
                .templates
                .iter()
                .filter(|t| self.is_active(t.owner, requester))
                .any(|t| t.matcher.match_uri(uri).is_some())
    }
}

impl Handler for Runner {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        mut cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        // The era was decided where the request entered (its transport read
        // its envelope); a transport that did not is read here, the same way.
        let envelope = match &cx.transport.envelope {
            Some(envelope) => envelope.clone(),
            None => mcp_types::envelope::read(&request.method, request.params.as_ref(), None),
        };
        let revision = match envelope? {
            Envelope::Handshake => None,
            Envelope::Stateless(revision) => Some(revision),
        };
        if request.method == "initialize" {
            return self.handshake(request, None, cx).await;
        }
        // One typed parse serves both eras; a stateless request's client is
        // read from the parsed `_meta`.
        // Boxed: it is held across the awaits below, and the future of a
        // request is moved (copied) whole before it runs.
        // A transport that parsed the request to read its envelope hands
        // the parse down (held once, so taken without a copy of the tree).
        let parsed = match cx.transport.parsed.take() {
            Some(parsed) => Some(Box::new(
                Arc::try_unwrap(parsed).unwrap_or_else(|shared| (*shared).clone()),
            )),
            None => ClientRequest::parse_any_revision(&request.method, request.params.as_ref())
                .map(Box::new)
                .ok(),
        };
        let Some(revision) = revision else {
            return self.handshake(request, parsed, cx).await;
        };
        // What the typed parse refuses (an extension's method, params that
        // do not fit) has its `_meta` read on its own. The parsed `_meta` is
        // borrowed, and a read one dropped here: the future below holds only
        // the client it was read into.
        let client = match &parsed {
            Some(parsed) => envelope::client_of(revision, parsed.meta()),
            None => envelope::client_of(revision, request_meta(request.params.as_ref()).as_ref()),
        }?;
        self.stateless(request, parsed, cx, client).await
    }

    /// `initialize` is answered before anything the client pipelined
    /// behind it is taken up, so `notifications/initialized` and the first
    /// requests see the session it opened, in order.
    fn is_barrier(&self, method: &str) -> bool {
        method == "initialize"
    }

    async fn handle_notification(
        &self,
        notification: IncomingNotification,
        cx: NotificationContext,
    ) {
        let revision = self.state.revision().unwrap_or(Revision::LATEST_HANDSHAKE);
        match ClientNotification::parse(
            &notification.method,
            notification.params.as_ref(),
            revision,
        ) {
            Ok(ClientNotification::Initialized(_)) => self.state.mark_initialized(),
            Ok(ClientNotification::RootsListChanged(_)) => {
                if let Some(callback) = &self.registry.roots_list_changed {
                    let session = ServerSession::new(cx.peer.clone(), self.state.clone())
                        .with_changes(self.registry.changes.clone());
                    // Its own task (the callback may wait on requests to the
                    // client), owned by the connection and cancelled with it.
                    let callback = callback(session);
                    let closed = cx.peer.clone();
                    self.tasks.spawn(async move {
                        tokio::select! {
                            () = callback => {}
                            () = closed.closed() => {}
                        }
                    });
                }
            }
            Ok(other) => tracing::debug!(method = other.method(), "notification"),
            Err(e) => {
                if !self.extension_notification(&notification, &cx).await {
                    tracing::debug!(error = %e, "ignored a notification");
                }
            }
        }
    }
}

#[cfg(test)]
impl Runner {
    /// A runner of `server`'s registry with a session of its own, for the
    /// runner's unit tests.
    pub(crate) fn standalone(server: &crate::Server) -> Self {
        Runner {
            registry: server.registry.clone(),
            state: Arc::new(SessionState::default()),
            tasks: tokio_util::task::TaskTracker::new(),
            task: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Args, Server};
    use mcp_core::{Connection, DispatcherConfig};
    use schemars::JsonSchema;

    /// A subscriber that keeps every span's fields and tracks the entered
    /// span, so `Span::current()` works (one thread: a current-thread runtime).
    #[derive(Clone, Default)]
    struct Capture(Arc<std::sync::Mutex<Captured>>);

    #[derive(Default)]
    struct Captured {
        spans: Vec<(
            &'static tracing::Metadata<'static>,
            BTreeMap<String, String>,
        )>,
        entered: Vec<u64>,
    }

    impl Capture {
        fn lock(&self) -> std::sync::MutexGuard<'_, Captured> {
            self.0.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// The fields of every `mcp.request` span whose `mcp.method.name` is `method`.
        fn requests(&self, method: &str) -> Vec<BTreeMap<String, String>> {
            self.lock()
                .spans
                .iter()
                .filter(|(meta, fields)| {
                    meta.name() == "mcp.request"
                        && fields.get("mcp.method.name").map(String::as_str) == Some(method)
                })
                .map(|(_, fields)| fields.clone())
                .collect()
        }
    }

    struct Fields<'a>(&'a mut BTreeMap<String, String>);

    impl tracing::field::Visit for Fields<'_> {
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            self.0.insert(field.name().to_owned(), value.to_owned());
        }
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.0.insert(field.name().to_owned(), format!("{value:?}"));
        }
    }

    impl tracing::Subscriber for Capture {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, attributes: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            let mut captured = self.lock();
            let mut fields = BTreeMap::new();
            attributes.record(&mut Fields(&mut fields));
            captured.spans.push((attributes.metadata(), fields));
            tracing::span::Id::from_u64(captured.spans.len() as u64)
        }
        fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
            let mut captured = self.lock();
            let index = usize::try_from(span.into_u64() - 1).expect("an index");
            values.record(&mut Fields(&mut captured.spans[index].1));
        }
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, span: &tracing::span::Id) {
            self.lock().entered.push(span.into_u64());
        }
        fn exit(&self, span: &tracing::span::Id) {
            let mut captured = self.lock();
            if let Some(at) = captured
                .entered
                .iter()
                .rposition(|&id| id == span.into_u64())
            {
                captured.entered.remove(at);
            }
        }
        fn current_span(&self) -> tracing_core::span::Current {
            let captured = self.lock();
            match captured.entered.last() {
                Some(&id) => {
                    let index = usize::try_from(id - 1).expect("an index");
                    tracing_core::span::Current::new(
                        tracing::span::Id::from_u64(id),
                        captured.spans[index].0,
                    )
                }
                None => tracing_core::span::Current::none(),
            }
        }
    }

    struct NoRequests;

    impl Handler for NoRequests {
        async fn handle_request(
            &self,
            request: IncomingRequest,
            _: RequestContext,
        ) -> Result<RawJson, ErrorObject> {
            Err(ErrorObject::method_not_found(&request.method))
        }
        async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
    }

    #[derive(serde::Deserialize, JsonSchema)]
    struct Echo {
        message: String,
    }

    /// A server with one `echo` tool; `opt_in` records arguments and results.
    fn echo_server(opt_in: bool) -> Server {
        Server::builder("spans", "1")
            .tool("echo", "Echoes", |Args(echo): Args<Echo>| async move {
                echo.message
            })
            .record_tool_arguments(opt_in)
            .record_tool_results(opt_in)
            .build()
            .expect("server")
    }

    /// Serves `echo` statelessly, `initialize` at 2025-06-18, then `echo` in
    /// that session, and returns what the spans recorded.
    fn spans_of_calls(server: &Server) -> Capture {
        let capture = Capture::default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        tracing::subscriber::with_default(capture.clone(), || {
            // Other tests' threads, with no subscriber, may have met these
            // callsites first and cached "never interested": ask again.
            tracing::callsite::rebuild_interest_cache();
            runtime.block_on(async {
                let (client_end, server_end) = mcp_core::MemoryTransport::pair(16);
                let runner = Runner::standalone(server);
                let served = Connection::start(server_end, runner, DispatcherConfig::default());
                let client = Connection::start(client_end, NoRequests, DispatcherConfig::default());
                let call = |method: &'static str, params: Value| {
                    let peer = client.peer().clone();
                    async move {
                        let params = RawJson::from_serialize(&params).expect("params");
                        let answer = peer.request(method, Some(params), Default::default());
                        tokio::time::timeout(std::time::Duration::from_secs(10), answer)
                            .await
                            .expect("in time")
                            .expect("answered")
                    }
                };
                let meta = serde_json::json!({
                    mcp_types::meta::PROTOCOL_VERSION: "2026-07-28",
                    mcp_types::meta::CLIENT_CAPABILITIES: {},
                });
                let echo = serde_json::json!({
                    "name": "echo",
                    "arguments": {"message": "a secret argument"},
                });
                let mut stateless = echo.clone();
                stateless["_meta"] = meta;
                call("tools/call", stateless).await;
                // The handshake era: the session's negotiated revision.
                call(
                    "initialize",
                    serde_json::json!({
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "spans", "version": "1"},
                    }),
                )
                .await;
                call("tools/call", echo).await;
                client.shutdown().await;
                served.shutdown().await;
            });
        });
        capture
    }

    #[test]
    fn tool_arguments_and_results_are_recorded_only_when_opted_in() {
        let capture = spans_of_calls(&echo_server(true));
        let calls = capture.requests("tools/call");
        assert_eq!(calls.len(), 2, "{calls:?}");
        for call in &calls {
            let arguments = call.get("gen_ai.tool.call.arguments").expect("arguments");
            assert!(arguments.contains("a secret argument"), "{arguments}");
            let result = call.get("gen_ai.tool.call.result").expect("result");
            assert!(result.contains("a secret argument"), "{result}");
        }
    }

    #[test]
    fn a_served_request_records_its_revision_and_name_on_its_span() {
        let capture = spans_of_calls(&echo_server(false));
        let field = |fields: &BTreeMap<String, String>, name: &str| fields.get(name).cloned();
        let calls = capture.requests("tools/call");
        assert_eq!(calls.len(), 2, "{calls:?}");
        for (call, revision) in calls.iter().zip(["2026-07-28", "2025-06-18"]) {
            assert_eq!(field(call, "gen_ai.tool.name").as_deref(), Some("echo"));
            assert_eq!(field(call, "otel.name").as_deref(), Some("tools/call echo"));
            assert_eq!(
                field(call, "gen_ai.operation.name").as_deref(),
                Some("execute_tool")
            );
            assert_eq!(
                field(call, "mcp.protocol.version").as_deref(),
                Some(revision)
            );
            assert!(
                !call.values().any(|v| v.contains("secret")),
                "no arguments in the span: {call:?}"
            );
        }
        let initialize = capture.requests("initialize");
        assert_eq!(initialize.len(), 1, "{initialize:?}");
        assert_eq!(
            field(&initialize[0], "mcp.protocol.version").as_deref(),
            Some("2025-06-18")
        );
    }
}
