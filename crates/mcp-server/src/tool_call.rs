//! A `tools/call` as an extension's interceptor sees it ([`ToolCall`]) and
//! how the interceptor answers it ([`CallOutcome`]); public as
//! [`crate::extension::ToolCall`] and [`crate::extension::CallOutcome`].
//!
//! The call hands itself on through [`CallChain`], which the runner
//! implements: this file sits below the registry that stores interceptors
//! (which take a `ToolCall`), and the registry below the runner, so the
//! call names the runner only through that trait.

use std::sync::Arc;

use mcp_core::{BoxFuture, CancellationToken, RequestContext};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ErrorObject, JsonObject, ResultOrInputRequired, Tool,
};

use crate::session::Context;

/// What a [`ToolCall`] is handed on to: the runner serving it, for the
/// client it serves.
pub(crate) trait CallChain: Send + Sync {
    /// The tool `name` as registered, if this client can see it.
    fn visible_tool(&self, name: &str) -> Option<&Tool>;

    /// Runs the next interceptor after `call.next`, or the tool.
    fn call_next(&self, call: ToolCall) -> BoxFuture<Result<CallOutcome, ErrorObject>>;
}

/// How an interceptor answers a `tools/call`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// Moved once per call, never stored in bulk: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum CallOutcome {
    /// The tool's own answer (a result, or a request for input).
    Tool(ResultOrInputRequired<CallToolResult>),
    /// A result of the extension's own shape (for example a task handle
    /// with `"resultType": "task"`), sent as given; at 2026-07-28 it gets
    /// `resultType: "complete"` only if it names none.
    Extension(JsonObject),
}

/// A `tools/call` on its way to the tool, as an interceptor sees it.
/// [`proceed`](Self::proceed) hands it on. It owns what it needs (no
/// borrow of the request), so an interceptor may run it later in a task it
/// owns; a clone runs the same call again (`proceed` consumes it).
#[derive(Clone)]
pub struct ToolCall {
    /// The runner serving the call, with its client.
    pub(crate) chain: Arc<dyn CallChain>,
    pub(crate) cx: RequestContext,
    pub(crate) params: Box<CallToolRequestParams>,
    /// The index of the next interceptor to run.
    pub(crate) next: usize,
    /// Whether the request in `cx` carries this call, so its routing
    /// headers must agree with the arguments; a call run again from what
    /// an extension kept ([`ToolCall::rerun`]) is not that request's (its
    /// own request's headers were checked when it was first made).
    pub(crate) carried: bool,
}

/// Where an extension's request method is served: what
/// [`ToolCall::rerun`] needs to run a call there.
#[derive(Clone)]
pub(crate) struct CallSite {
    pub(crate) chain: Arc<dyn CallChain>,
    pub(crate) cx: RequestContext,
    /// The index of the extension serving the request.
    pub(crate) extension: usize,
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.params.name)
            .finish_non_exhaustive()
    }
}

impl ToolCall {
    /// The call's params as the client sent them.
    pub fn params(&self) -> &CallToolRequestParams {
        &self.params
    }

    /// The called tool's name.
    pub fn name(&self) -> &str {
        &self.params.name
    }

    /// The called tool as registered (`None` if no such tool is visible to
    /// this client, which `proceed` answers with `-32602`).
    pub fn tool(&self) -> Option<&Tool> {
        self.chain.visible_tool(&self.params.name)
    }

    /// The params to run the tool with, for an interceptor that changes
    /// them (drops its own `_meta` keys, say) before proceeding.
    pub fn params_mut(&mut self) -> &mut CallToolRequestParams {
        &mut self.params
    }

    /// Runs the tool under `cancel` instead of the request's own token:
    /// for an interceptor that lets the tool outlive the request (a task)
    /// and cancels it itself.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cx.cancel = cancel;
        self
    }

    /// A `tools/call` of `params` run again from what an extension kept of
    /// an earlier call (a task's record, say), served in the context of
    /// the extension request `cx` belongs to: the same owner, principal and
    /// era as that request. It enters the interceptor chain after the
    /// extension's own interceptor, as the earlier call's `proceed` did, so
    /// any process of the server can resume a call another began. Its
    /// arguments are not checked against this request's routing headers
    /// (the earlier call's were). `None` when `cx` is not the context of
    /// an extension's request method.
    pub fn rerun(cx: &Context, params: CallToolRequestParams) -> Option<Self> {
        let site: &CallSite = cx.call_site()?;
        Some(Self {
            chain: site.chain.clone(),
            cx: site.cx.clone(),
            params: Box::new(params),
            next: site.extension + 1,
            carried: false,
        })
    }

    /// Hands the call on: to the next extension's interceptor, then to the tool.
    ///
    /// # Errors
    /// The protocol error of the tool or of a later interceptor (an unknown
    /// tool is `-32602`).
    pub async fn proceed(self) -> Result<CallOutcome, ErrorObject> {
        let chain = self.chain.clone();
        chain.call_next(self).await
    }
}
