//! Where each request goes: routed by the merged catalog to the upstream
//! that serves it, under the name the upstream knows, over its live
//! session.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_client::{ClientSession, RequestOptions};
use mcp_types::{
    CallToolResult, CompleteArgument, CompleteReference, CompleteResult, GetPromptResult,
    JsonObject, ReadResourceResult,
};

use crate::asks::Inflight;
use crate::board::Board;
use crate::config::Limits;
use crate::error::Error;
use crate::naming::Route;
use crate::task_table::UpstreamTasks;

/// The gateway's shared parts, for its own calls and its downstream
/// server's handlers.
#[derive(Clone)]
pub(crate) struct Router {
    pub(crate) board: Arc<Board>,
    pub(crate) inflight: Arc<Inflight>,
    pub(crate) limits: Limits,
    /// The upstream tasks followed for downstream tasks.
    pub(crate) tasks: Arc<UpstreamTasks>,
}

impl Router {
    /// Where the downstream tool `name` goes.
    pub(crate) fn tool(&self, name: &str) -> Result<Route, Error> {
        self.board
            .merged()
            .tool(name)
            .cloned()
            .ok_or_else(|| not_found("tool", name))
    }

    /// Where the downstream prompt `name` goes.
    pub(crate) fn prompt(&self, name: &str) -> Result<Route, Error> {
        self.board
            .merged()
            .prompt(name)
            .cloned()
            .ok_or_else(|| not_found("prompt", name))
    }

    /// The upstream that owns the resource `uri`.
    pub(crate) fn owner(&self, uri: &str) -> Result<Arc<str>, Error> {
        self.board
            .merged()
            .resource_owner(uri)
            .cloned()
            .ok_or_else(|| not_found("resource", uri))
    }

    /// Where a completion goes: the upstream, and the reference under its
    /// names (a prompt's renamed back; a template's as it is).
    pub(crate) fn completion(
        &self,
        reference: CompleteReference,
    ) -> Result<(Arc<str>, CompleteReference), Error> {
        match reference {
            CompleteReference::Prompt(mut prompt) => {
                let route = self.prompt(&prompt.name)?;
                prompt.name = route.name;
                Ok((route.upstream, CompleteReference::Prompt(prompt)))
            }
            CompleteReference::Resource(template) => {
                let owner = self.board.merged().template_owner(&template.uri).cloned();
                let upstream =
                    owner.ok_or_else(|| not_found("resource template", &template.uri))?;
                Ok((upstream, CompleteReference::Resource(template)))
            }
            other => Err(not_found("completion reference", &format!("{other:?}"))),
        }
    }

    /// The live session of `upstream`.
    pub(crate) fn session(&self, upstream: &Arc<str>) -> Result<ClientSession, Error> {
        self.board.session(upstream)
    }

    /// Calls the tool `route` names on its upstream.
    pub(crate) async fn call_tool(
        &self,
        route: &Route,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let session = self.session(&route.upstream)?;
        let arguments = arguments.unwrap_or_default();
        let answer = session
            .call_tool_with(&route.name, arguments, options)
            .await;
        answer.map_err(|source| self.forwarded(&route.upstream, source))
    }

    /// Gets the prompt `route` names from its upstream.
    pub(crate) async fn get_prompt(
        &self,
        route: &Route,
        arguments: BTreeMap<String, String>,
        options: RequestOptions,
    ) -> Result<GetPromptResult, Error> {
        let session = self.session(&route.upstream)?;
        let answer = session
            .get_prompt_with(&route.name, arguments, options)
            .await;
        answer.map_err(|source| self.forwarded(&route.upstream, source))
    }

    /// Reads `uri` from `upstream`.
    pub(crate) async fn read_resource(
        &self,
        upstream: &Arc<str>,
        uri: &str,
        options: RequestOptions,
    ) -> Result<ReadResourceResult, Error> {
        let session = self.session(upstream)?;
        let answer = session.read_resource_with(uri, options).await;
        answer.map_err(|source| self.forwarded(upstream, source))
    }

    /// Subscribes to `uri` at `upstream`: `resources/subscribe` in the
    /// handshake era (made again in each new session), its listen stream's
    /// filter in the stateless era.
    pub(crate) async fn subscribe(&self, upstream: &Arc<str>, uri: &str) -> Result<(), Error> {
        let session = self.session(upstream)?;
        // Counted first: a session that replaces this one meanwhile
        // subscribes too.
        self.board.follow(upstream, uri, true);
        if session.is_stateless() {
            // Subscribed once the upstream acknowledged a stream with it.
            let acked = self.board.acked(upstream).map(|acked| acked.subscribe());
            let Some(mut acked) = acked else {
                return Ok(());
            };
            let waiting = acked.wait_for(|uris| uris.contains(uri));
            return match tokio::time::timeout(self.limits.request_timeout, waiting).await {
                Ok(Ok(_)) => Ok(()),
                _ => Err(Error::Unavailable {
                    upstream: upstream.to_string(),
                    state: format!("it did not acknowledge a subscription to `{uri}`"),
                }),
            };
        }
        let answer = session.subscribe_resource(uri).await;
        answer.map_err(|source| {
            self.board.follow(upstream, uri, false);
            self.forwarded(upstream, source)
        })
    }

    /// Ends the subscription to `uri` at `upstream`.
    pub(crate) async fn unsubscribe(&self, upstream: &Arc<str>, uri: &str) -> Result<(), Error> {
        let session = self.session(upstream)?;
        self.board.follow(upstream, uri, false);
        if session.is_stateless() {
            return Ok(());
        }
        let answer = session.unsubscribe_resource(uri).await;
        answer.map_err(|source| self.forwarded(upstream, source))
    }

    /// Completes at `upstream`, `reference` already under its names.
    pub(crate) async fn complete(
        &self,
        upstream: &Arc<str>,
        reference: CompleteReference,
        argument: CompleteArgument,
        context: Option<BTreeMap<String, String>>,
        options: RequestOptions,
    ) -> Result<CompleteResult, Error> {
        let session = self.session(upstream)?;
        let answer = session
            .complete_with(reference, argument, context, options)
            .await;
        answer.map_err(|source| self.forwarded(upstream, source))
    }

    /// Tells `upstream`'s supervisor when `source` says the upstream
    /// forgot the gateway's HTTP session, to start a new one at once.
    pub(crate) fn notice_lost_session(&self, upstream: &Arc<str>, source: &mcp_client::Error) {
        if source.is_session_expired() {
            self.board.session_lost(upstream);
        }
    }

    /// The error of a forwarded request: the upstream lost mid-call (its
    /// connection, or its HTTP session: its supervisor is told, to start
    /// a new one at once), or its own.
    pub(crate) fn forwarded(&self, upstream: &Arc<str>, source: mcp_client::Error) -> Error {
        self.notice_lost_session(upstream, &source);
        let lost = source.is_connection_closed() || source.is_session_expired();
        let upstream = upstream.to_string();
        if lost {
            Error::UpstreamLost { upstream, source }
        } else {
            Error::Upstream { upstream, source }
        }
    }
}

fn not_found(kind: &'static str, name: &str) -> Error {
    Error::NotFound {
        kind,
        name: name.into(),
    }
}
