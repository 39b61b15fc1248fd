//! The gateway as one MCP server: the merged catalog registered in the
//! server's run-time [`Catalog`](mcp_server::Catalog) (one group, replaced
//! whole at each change, so clients of both eras hear of each changed
//! list once), each handler forwarding its request to the upstream the
//! catalog routed it to: progress and log messages reported back,
//! cancellation passed on (the handler's future is dropped, and with it
//! the upstream call), asks answered by this call's client
//! ([`crate::asks`]). Resource
//! subscriptions are made upstream once per URI, their updates announced
//! downstream.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};

use mcp_client::RequestOptions;
use mcp_core::CancellationToken;
use mcp_server::types::{CompleteRequestParams, Completion, ErrorObject, ResourceContents};
use mcp_server::{
    Args, CompletionError, Context, PromptError, Registrations, ResourceError, Server,
    ServerBuilder, ToolDefinition, ToolError, Uri,
};
use mcp_types::{CallToolResult, GetPromptResult, JsonObject, TaskSupport, Tool};
use tokio::sync::{broadcast, mpsc};

use crate::asks::{Ran, Relayed};
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::naming::{Route, shown};
use crate::router::Router;
use crate::tasks;

/// The catalog group the gateway's entries live in.
pub(crate) const GROUP: &str = "gateway";

/// Downstream subscribers per URI: the upstream is subscribed while any
/// is.
#[derive(Default)]
struct Subscribers(Mutex<HashMap<String, Followed>>);

/// One URI's downstream subscribers, and whether the upstream follows it
/// for them (a subscription upstream that failed is tried again by the
/// next subscriber).
#[derive(Default)]
struct Followed {
    subscribers: usize,
    upstream: bool,
}

impl Subscribers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Followed>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one more; whether the upstream is yet to be subscribed.
    fn add(&self, uri: &str) -> bool {
        let mut followed = self.lock();
        let entry = followed.entry(uri.to_owned()).or_default();
        entry.subscribers += 1;
        !entry.upstream
    }

    /// The upstream follows `uri` now (unless every subscriber left
    /// meanwhile: then whether it must be unsubscribed again).
    fn subscribed(&self, uri: &str) -> bool {
        match self.lock().get_mut(uri) {
            Some(entry) => {
                entry.upstream = true;
                false
            }
            None => true,
        }
    }

    /// Counts one less; whether it was the last and the upstream follows
    /// the URI (to be unsubscribed).
    fn remove(&self, uri: &str) -> bool {
        let mut followed = self.lock();
        let Some(entry) = followed.get_mut(uri) else {
            return false;
        };
        entry.subscribers = entry.subscribers.saturating_sub(1);
        if entry.subscribers > 0 {
            return false;
        }
        followed.remove(uri).is_some_and(|entry| entry.upstream)
    }
}

/// Builds the server from `builder`, its catalog filled with the gateway's
/// entries as they are now.
///
/// # Errors
/// [`Error::Server`] when the server cannot be built or filled.
pub(crate) fn build(router: &Router, builder: ServerBuilder) -> Result<Server, Error> {
    let subscribers = Arc::new(Subscribers::default());
    let (on, off) = (
        (router.clone(), subscribers.clone()),
        (router.clone(), subscribers),
    );
    let completer = router.clone();
    let server = builder
        .dynamic()
        .on_subscribe(move |uri, _session| {
            let (router, subscribers) = on.clone();
            async move {
                if !subscribers.add(&uri) {
                    return;
                }
                let upstream = match router.owner(&uri) {
                    Ok(upstream) => upstream,
                    Err(error) => {
                        return tracing::warn!(uri = %shown(&uri), "could not subscribe upstream: {error}");
                    }
                };
                match router.subscribe(&upstream, &uri).await {
                    // The last subscriber left while it was made: undone.
                    Ok(()) if subscribers.subscribed(&uri) => {
                        if let Err(error) = router.unsubscribe(&upstream, &uri).await {
                            tracing::warn!(uri = %shown(&uri), "could not unsubscribe upstream: {error}");
                        }
                    }
                    Ok(()) => {}
                    // The next subscriber tries again.
                    Err(error) => tracing::warn!(uri = %shown(&uri), "could not subscribe upstream: {error}"),
                }
            }
        })
        .on_unsubscribe(move |uri, _session| {
            let (router, subscribers) = off.clone();
            async move {
                if subscribers.remove(&uri) {
                    if let Ok(upstream) = router.owner(&uri) {
                        if let Err(error) = router.unsubscribe(&upstream, &uri).await {
                            tracing::warn!(uri = %shown(&uri), "could not unsubscribe upstream: {error}");
                        }
                    }
                }
            }
        })
        .completion(move |params: CompleteRequestParams, cx: Context| {
            let router = completer.clone();
            async move { complete(&router, params, cx).await }
        })
        .build()
        .map_err(Error::Server)?;
    fill(router, &server)?;
    Ok(server)
}

/// Keeps `server`'s catalog in step with the gateway's until `cancel`,
/// and announces the upstreams' resource updates.
pub(crate) async fn keep_in_step(
    router: Router,
    server: Server,
    mut events: broadcast::Receiver<GatewayEvent>,
    cancel: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            () = cancel.cancelled() => break,
            event = events.recv() => event,
        };
        match event {
            // A listener that fell behind may have missed a change.
            Ok(GatewayEvent::CatalogChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                if let Err(error) = fill(&router, &server) {
                    tracing::error!("the gateway's catalog could not be served: {error}");
                }
            }
            Ok(GatewayEvent::ResourceUpdated { uri, .. }) => {
                server.list_changes().resource_updated(uri);
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
}

/// Replaces the server's gateway group with the merged catalog.
fn fill(router: &Router, server: &Server) -> Result<(), Error> {
    let merged = router.board.merged();
    let mut registrations = Registrations::new();
    // Each handler holds its router and route behind one `Arc`: a call
    // clones the pointer, not the route's name.
    for (route, tool) in &merged.tools {
        let tasked = runs_as_task_upstream(tool);
        let to = Arc::new((router.clone(), route.clone()));
        registrations.register(ToolDefinition::raw(
            tool.clone(),
            move |Args(arguments): Args<JsonObject>, cx: Context| {
                let to = to.clone();
                async move { call_tool(&to.0, &to.1, tasked, arguments, cx).await }
            },
        ));
    }
    for (route, prompt) in &merged.prompts {
        let to = Arc::new((router.clone(), route.clone()));
        registrations.prompt_with(
            prompt.clone(),
            move |arguments: BTreeMap<String, String>, cx: Context| {
                let to = to.clone();
                async move { get_prompt(&to.0, &to.1, arguments, cx).await }
            },
        );
    }
    for (upstream, resource) in &merged.resources {
        registrations.resource(resource.clone(), reader(router, upstream));
    }
    for (upstream, template) in &merged.templates {
        registrations.resource_template(template.clone(), reader(router, upstream));
    }
    server
        .catalog()
        .replace_group(GROUP, registrations)
        .map_err(Error::Server)
}

/// What a resource handler of the gateway returns.
type Read =
    std::pin::Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send>>;

/// A resource handler reading from `upstream`.
fn reader(
    router: &Router,
    upstream: &Arc<str>,
) -> impl Fn(Uri, Context) -> Read + Clone + Send + Sync + 'static {
    let (router, upstream) = (router.clone(), upstream.clone());
    move |Uri(uri): Uri, cx: Context| {
        let (router, upstream) = (router.clone(), upstream.clone());
        Box::pin(async move {
            let (options, tracking) = forwarding(&router, &cx);
            let read = router.read_resource(&upstream, &uri, options);
            match forward(&router, &upstream, cx, read, tracking).await {
                Ran::Done(Ok(result)) => Ok(result.contents),
                Ran::Done(Err(error)) => Err(ResourceError::protocol(error_object(&error))),
                Ran::AwaitingInput => Err(ResourceError::new(AWAITING)),
            }
        })
    }
}

/// What a handler returns while its client is asked for input (the
/// server answers `input_required` instead).
const AWAITING: &str = "awaiting the client's input";

/// Whether the upstream runs `tool` as a task when asked
/// (`execution.taskSupport` `optional` or `required`).
fn runs_as_task_upstream(tool: &Tool) -> bool {
    let support = tool.execution.as_ref().and_then(|e| e.task_support);
    matches!(support, Some(TaskSupport::Optional | TaskSupport::Required))
}

/// Calls the tool `route` names; `tasked` when its upstream runs it as a
/// task: a call of the gateway's own task is then passed through, if the
/// upstream serves tasks ([`crate::tasks`]).
async fn call_tool(
    router: &Router,
    route: &Route,
    tasked: bool,
    arguments: JsonObject,
    cx: Context,
) -> Result<CallToolResult, ToolError> {
    if tasked && tasks::runs_as_task(&cx) {
        let session = router
            .session(&route.upstream)
            .map_err(|error| ToolError::new(error.to_string()))?;
        if tasks::runs_tool_tasks(&session) {
            // The task fails (a JSON-RPC error) rather than completes
            // with an error result: it did not run to its end upstream.
            let passed = tasks::pass_through(router, route, &session, arguments).await;
            return passed.map_err(|error| ToolError::protocol(error_object(&error)));
        }
    }
    let (options, tracking) = forwarding(router, &cx);
    let call = router.call_tool(route, Some(arguments), options);
    match forward(router, &route.upstream, cx, call, tracking).await {
        Ran::Done(Ok(result)) => Ok(result),
        Ran::Done(Err(error)) => Err(tool_error(error)),
        Ran::AwaitingInput => Err(ToolError::new(AWAITING)),
    }
}

/// The upstream's protocol error as it sent it; anything else is for the
/// model to read, naming the upstream.
fn tool_error(error: Error) -> ToolError {
    match remote(&error) {
        Some(remote) => ToolError::protocol(remote.clone()),
        None => ToolError::new(error.to_string()),
    }
}

async fn get_prompt(
    router: &Router,
    route: &Route,
    arguments: BTreeMap<String, String>,
    cx: Context,
) -> Result<GetPromptResult, PromptError> {
    let (options, tracking) = forwarding(router, &cx);
    let get = router.get_prompt(route, arguments, options);
    match forward(router, &route.upstream, cx, get, tracking).await {
        Ran::Done(Ok(result)) => Ok(result),
        Ran::Done(Err(error)) => Err(PromptError::protocol(error_object(&error))),
        Ran::AwaitingInput => Err(PromptError::new(AWAITING)),
    }
}

async fn complete(
    router: &Router,
    params: CompleteRequestParams,
    cx: Context,
) -> Result<Completion, CompletionError> {
    let not_routed = |error: Error| CompletionError::protocol(error_object(&error));
    let (upstream, reference) = router.completion(params.reference).map_err(not_routed)?;
    let context = params.context.and_then(|context| context.arguments);
    let (options, tracking) = forwarding(router, &cx);
    let call = router.complete(&upstream, reference, params.argument, context, options);
    match forward(router, &upstream, cx, call, tracking).await {
        Ran::Done(Ok(result)) => Ok(result.completion),
        Ran::Done(Err(error)) => Err(CompletionError::protocol(error_object(&error))),
        Ran::AwaitingInput => Err(CompletionError::new(AWAITING)),
    }
}

/// What follows one forwarded request: the id it goes under, the queue of
/// its progress reports and log messages.
struct Tracking {
    /// The number of the id it goes under ([`Inflight::request_id`](crate::asks::Inflight::request_id)).
    ticket: u64,
    relay: mpsc::Sender<Relayed>,
    relayed: mpsc::Receiver<Relayed>,
}

/// One forwarded request's options: sent under an id of the gateway's
/// (how an upstream's ask or log message over HTTP finds its call), its
/// progress reports (asked for only when `cx`'s client asked for them)
/// handed to a bounded queue, and, to a stateless upstream, asking for log
/// messages at the level `cx`'s client asked for (a handshake-era upstream
/// is set to `debug` once, when it connects; the downstream client's level
/// filters either way).
fn forwarding(router: &Router, cx: &Context) -> (RequestOptions, Tracking) {
    // At least 1: a zero from a hand-built `Limits` would panic here.
    let (relay, relayed) = mpsc::channel(router.limits.relay_queue.max(1));
    let (ticket, id) = router.inflight.request_id();
    let mut options = RequestOptions::new().with_id(id);
    if cx.progress_token().is_some() {
        let progress = relay.clone();
        options = options.with_progress(move |report| {
            let _ = progress.try_send(Relayed::Progress(report));
        });
    }
    if let Some(level) = cx.session().log_threshold() {
        options = options.with_log_level(level);
    }
    let tracking = Tracking {
        ticket,
        relay,
        relayed,
    };
    (options, tracking)
}

/// Runs `work` for the downstream call `cx` to `upstream` (its asks
/// answered by `cx`'s client), passing the upstream's progress and log
/// messages on to `cx` meanwhile.
async fn forward<T>(
    router: &Router,
    upstream: &Arc<str>,
    cx: Context,
    work: impl Future<Output = T>,
    Tracking {
        ticket,
        relay,
        mut relayed,
    }: Tracking,
) -> Ran<T> {
    let reporter = cx.clone();
    let call = router.inflight.run(upstream, ticket, (cx, relay), work);
    tokio::pin!(call);
    let ran = loop {
        tokio::select! {
            biased;
            Some(message) = relayed.recv() => pass_on(&reporter, message).await,
            ran = &mut call => break ran,
        }
    };
    // What the upstream sent before its answer, still queued.
    while let Ok(message) = relayed.try_recv() {
        pass_on(&reporter, message).await;
    }
    ran
}

/// Passes one progress report or log message on (a client that asked for
/// no progress is sent none; a log message below the client's level is not
/// sent).
async fn pass_on(cx: &Context, message: Relayed) {
    let passed = match message {
        Relayed::Progress(progress) => {
            let message = progress.message.as_deref();
            cx.report_progress(progress.progress, progress.total, message)
                .await
        }
        Relayed::Log(params) => {
            let logger = params.logger.as_deref();
            cx.session()
                .send_log_message(params.level, params.data, logger)
                .await
        }
    };
    if let Err(error) = passed {
        tracing::debug!("a progress report or log message was not passed on: {error}");
    }
}

/// The upstream's own JSON-RPC error, when it answered with one.
fn remote(error: &Error) -> Option<&ErrorObject> {
    match error {
        Error::Upstream { source, .. } => source.remote(),
        _ => None,
    }
}

/// The JSON-RPC error a forwarded request is answered with: the
/// upstream's own, else an internal error saying what happened.
fn error_object(error: &Error) -> ErrorObject {
    match (remote(error), error) {
        (Some(remote), _) => remote.clone(),
        (None, Error::NotFound { .. }) => ErrorObject::invalid_params(error.to_string()),
        (None, _) => ErrorObject::internal_error(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::Subscribers;

    #[test]
    fn a_failed_upstream_subscription_is_tried_again_by_the_next_subscriber() {
        let subscribers = Subscribers::default();
        assert!(subscribers.add("a://x"), "the first subscribes upstream");
        // Its upstream subscription failed: nothing marked.
        assert!(subscribers.add("a://x"), "the next tries again");
        assert!(!subscribers.subscribed("a://x"));
        assert!(!subscribers.add("a://x"), "followed now: no third try");
        assert!(!subscribers.remove("a://x"));
        assert!(!subscribers.remove("a://x"));
        assert!(
            subscribers.remove("a://x"),
            "the last one unsubscribes upstream"
        );
        assert!(!subscribers.remove("a://x"), "nothing left to count");
    }

    #[test]
    fn a_subscription_made_after_every_subscriber_left_is_undone() {
        let subscribers = Subscribers::default();
        assert!(subscribers.add("a://y"));
        // The subscriber leaves while the upstream subscription is made:
        // nothing to unsubscribe yet.
        assert!(!subscribers.remove("a://y"));
        assert!(subscribers.subscribed("a://y"), "made for no one: undo it");
    }
}
