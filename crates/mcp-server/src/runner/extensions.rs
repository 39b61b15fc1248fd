//! The runner's side of extensions (SEP-2133): which extensions are active
//! for the client being served, the `tools/call` interceptor chain, and the
//! routing of extension request and notification methods.

use std::sync::Arc;

use mcp_core::{
    BoxFuture, IncomingNotification, IncomingRequest, NotificationContext, RequestContext,
};
use mcp_types::{CallToolRequestParams, ErrorObject, RawJson, Tool};

use super::envelope::request_meta;
use super::{Cache, Requester, Runner};
use crate::catalog::Snapshot;
use crate::session::{ServerSession, declares};
use crate::tool_call::{CallChain, CallOutcome, CallSite, ToolCall};

impl Runner {
    /// Whether the client being served declared extension `id`: in
    /// `initialize`, or in this stateless request's `_meta`.
    fn client_declares(&self, requester: &Requester, id: &str) -> bool {
        match requester {
            Requester::Stateless(request) => declares(&request.capabilities, id),
            Requester::Session => self.state.client_declares_extension(id),
        }
    }

    /// Whether the things extension number `index` contributes exist for
    /// this client.
    fn extension_active(&self, index: usize, requester: &Requester) -> bool {
        self.registry.extensions.get(index).is_some_and(|e| {
            !e.client_must_declare || self.client_declares(requester, e.id.as_str())
        })
    }

    /// Whether an item owned by `owner` (`None`: the server's own) exists
    /// for this client.
    pub(super) fn is_active(&self, owner: Option<usize>, requester: &Requester) -> bool {
        owner.is_none_or(|index| self.extension_active(index, requester))
    }

    /// For each registered extension, whether it is active for this client.
    pub(super) fn active_extensions(&self, requester: &Requester) -> Vec<bool> {
        (0..self.registry.extensions.len())
            .map(|index| self.extension_active(index, requester))
            .collect()
    }

    /// The tool `name` as `catalog` holds it, if this client can see it.
    pub(crate) fn visible_tool<'a>(
        &self,
        catalog: &'a Snapshot,
        name: &str,
        requester: &Requester,
    ) -> Option<&'a Tool> {
        let &index = catalog.tool_index.get(name)?;
        let entry = &catalog.tools[index];
        self.is_active(entry.owner, requester)
            .then_some(&entry.tool)
    }

    /// `tools/call` through the extensions' interceptors, then the tool.
    pub(super) async fn call_intercepted(
        &self,
        params: Box<CallToolRequestParams>,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Result<CallOutcome, ErrorObject> {
        if self
            .registry
            .extensions
            .iter()
            .all(|e| e.interceptor.is_none())
        {
            return self
                .call_tool(params, cx, requester, true)
                .await
                .map(CallOutcome::Tool);
        }
        // On the heap: the chain of interceptors is a large future, and
        // this one nests in the future of every call (copied whole when it
        // is boxed), with or without interceptors.
        Box::pin(self.call_next(
            ToolCall {
                chain: self.chain(requester),
                cx: cx.clone(),
                params,
                next: 0,
                carried: true,
            },
            requester,
        ))
        .await
    }

    /// This runner serving `requester`, as a call is handed on to it.
    fn chain(&self, requester: &Requester) -> Arc<dyn CallChain> {
        Arc::new(Served {
            runner: self.clone(),
            requester: requester.clone(),
            catalog: self.registry.catalog.snapshot(),
        })
    }

    /// Runs the next interceptor after `call.next`, or the tool.
    async fn call_next(
        &self,
        mut call: ToolCall,
        requester: &Requester,
    ) -> Result<CallOutcome, ErrorObject> {
        let next = self
            .registry
            .extensions
            .iter()
            .enumerate()
            .skip(call.next)
            .find_map(|(index, e)| e.interceptor.clone().map(|i| (index, i)));
        match next {
            Some((index, interceptor)) => {
                call.next = index + 1;
                let meta = call.params.meta.clone().map(std::sync::Arc::new);
                let context = self.context(&call.cx, requester, meta);
                interceptor(call, context).await
            }
            None => self
                .call_tool(call.params, &call.cx, requester, call.carried)
                .await
                .map(CallOutcome::Tool),
        }
    }

    /// An extension's request method, if `request` names one and the
    /// client may use that extension; `None` leaves the request to the
    /// core protocol (which answers `-32601` for a method it does not know).
    pub(super) async fn extension_request(
        &self,
        request: &mut IncomingRequest,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Option<Result<RawJson, ErrorObject>> {
        let &index = self
            .registry
            .extension_requests
            .get(request.method.as_str())?;
        if !self.extension_active(index, requester) {
            return None;
        }
        let served = self.registry.extensions[index]
            .requests
            .get(request.method.as_str())?
            .clone();
        let params = request.params.take();
        let meta = request_meta(params.as_ref());
        let context = self
            .context(cx, requester, meta.map(std::sync::Arc::new))
            .with_call_site(CallSite {
                chain: self.chain(requester),
                cx: cx.clone(),
                extension: index,
            });
        let result = match (served.handle)(params, context).await {
            Ok(result) => result,
            Err(error) => return Some(Err(error)),
        };
        let cache = if served.cacheable {
            Cache::List
        } else {
            Cache::None
        };
        // The raw result is shaped as it is: no `Value` built to be thrown away.
        Some(self.shape(requester, &result, cache))
    }

    /// Delivers an extension's notification method to its handler when the
    /// client may use that extension; whether it was one.
    pub(super) async fn extension_notification(
        &self,
        notification: &IncomingNotification,
        cx: &NotificationContext,
    ) -> bool {
        let Some(&index) = self
            .registry
            .extension_notifications
            .get(notification.method.as_str())
        else {
            return false;
        };
        let entry = &self.registry.extensions[index];
        let per_request = request_meta(notification.params.as_ref())
            .and_then(|meta| meta.client_capabilities)
            .is_some_and(|capabilities| declares(&capabilities, entry.id.as_str()));
        let active = !entry.client_must_declare
            || per_request
            || self.state.client_declares_extension(entry.id.as_str());
        let Some(handler) = entry.notifications.get(notification.method.as_str()) else {
            return false;
        };
        if !active {
            return false;
        }
        let session = ServerSession::new(cx.peer.clone(), self.state.clone())
            .with_changes(self.registry.changes.clone());
        handler(notification.params.clone(), session).await;
        true
    }
}

/// A runner serving one client: what a [`ToolCall`] is handed on to.
struct Served {
    runner: Runner,
    requester: Requester,
    /// The catalog as the call began, which its interceptors see.
    catalog: Arc<Snapshot>,
}

impl CallChain for Served {
    fn visible_tool(&self, name: &str) -> Option<&Tool> {
        self.runner
            .visible_tool(&self.catalog, name, &self.requester)
    }

    fn call_next(&self, call: ToolCall) -> BoxFuture<Result<CallOutcome, ErrorObject>> {
        let (runner, requester) = (self.runner.clone(), self.requester.clone());
        Box::pin(async move { runner.call_next(call, &requester).await })
    }
}
