//! Reaching one upstream: the client connection its config describes, and
//! its lists read whole (every page, bounded).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use mcp_client::{
    Client, ClientConfig, ClientSession, Fault, HttpClientConfig, Negotiation, ServerCommand,
    SessionEvent,
};
use mcp_core::TransportError;
use mcp_transport::http::Authorizer;
use mcp_transport::stdio::StderrSink;
use mcp_types::{ErrorObject, InputRequest, InputResponse, ServerNotification};
use tokio::sync::{Notify, watch};

use crate::asks::{Inflight, refuse_task_asks};
use crate::config::{EraPreference, Limits, UpstreamConfig, UpstreamTransport};
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::lists::Lists;
use crate::stderr::StderrTail;

/// Which of an upstream's lists changed since they were last read: set by
/// its notifications, taken by its supervisor.
#[derive(Debug, Default)]
pub(crate) struct ListSignals {
    dirty: AtomicU8,
    wake: Notify,
}

impl ListSignals {
    /// Marks the lists to read again and wakes the supervisor (many marks
    /// before it wakes make one read).
    pub(crate) fn mark(&self) {
        self.dirty.store(1, Ordering::Release);
        self.wake.notify_one();
    }

    /// Waits until a list changed, and takes the mark.
    pub(crate) async fn changed(&self) {
        loop {
            if self.dirty.swap(0, Ordering::AcqRel) != 0 {
                return;
            }
            self.wake.notified().await;
        }
    }
}

/// Where an upstream's requests and notifications go.
pub(crate) struct Wiring {
    /// The downstream calls in flight, to ask.
    pub(crate) inflight: Arc<Inflight>,
    /// List changes (and a session started anew), for the supervisor.
    pub(crate) signals: Arc<ListSignals>,
    /// Woken when an HTTP upstream no longer knows the session, for the
    /// supervisor to start a new one at once.
    pub(crate) lost: Arc<Notify>,
    /// The resources a stateless upstream's listen stream was acknowledged for.
    pub(crate) acked: Option<Arc<watch::Sender<BTreeSet<String>>>>,
    /// Resource updates, for the downstream side.
    pub(crate) emit: Arc<dyn Fn(GatewayEvent) + Send + Sync>,
}

/// What a callback's answer should have been, and was not.
fn mismatch(method: &str) -> ErrorObject {
    ErrorObject::internal_error(format!(
        "the gateway's client answered `{method}` with an answer of another kind"
    ))
}

/// The client config of one upstream: `base` (the gateway's name), the
/// era and limits asked for, its asks and notifications routed by
/// `wiring`.
pub(crate) fn client_config(
    name: &Arc<str>,
    upstream: &UpstreamConfig,
    limits: &Limits,
    base: ClientConfig,
    wiring: Wiring,
) -> ClientConfig {
    let Wiring {
        inflight,
        signals,
        lost,
        acked,
        emit,
    } = wiring;
    let asking = |inflight: &Arc<Inflight>| (inflight.clone(), name.clone());
    let (sampling, sampling_name) = asking(&inflight);
    let (eliciting, eliciting_name) = asking(&inflight);
    let (rooting, rooting_name) = asking(&inflight);
    let base = base
        .on_sampling(move |params, info| {
            let (inflight, name) = (sampling.clone(), sampling_name.clone());
            async move {
                refuse_task_asks(info.meta.as_ref())?;
                let related = info.related_request.as_ref();
                let request = InputRequest::CreateMessage(params);
                match inflight.ask(&name, related, request).await? {
                    InputResponse::CreateMessage(result) => Ok(result),
                    _ => Err(mismatch("sampling/createMessage")),
                }
            }
        })
        .on_elicitation(move |params, info| {
            let (inflight, name) = (eliciting.clone(), eliciting_name.clone());
            async move {
                refuse_task_asks(info.meta.as_ref())?;
                let related = info.related_request.as_ref();
                match inflight
                    .ask(&name, related, InputRequest::Elicit(params))
                    .await?
                {
                    InputResponse::Elicit(result) => Ok(result),
                    _ => Err(mismatch("elicitation/create")),
                }
            }
        })
        .on_list_roots(move |info| {
            let (inflight, name) = (rooting.clone(), rooting_name.clone());
            async move {
                refuse_task_asks(info.meta.as_ref())?;
                let related = info.related_request.as_ref();
                match inflight
                    .ask(&name, related, InputRequest::ListRoots(None))
                    .await?
                {
                    InputResponse::ListRoots(result) => Ok(result),
                    _ => Err(mismatch("roots/list")),
                }
            }
        });
    let negotiation = match upstream.era {
        EraPreference::Auto => Negotiation::Newest,
        EraPreference::Handshake => Negotiation::HandshakeOnly,
        EraPreference::Stateless => Negotiation::StatelessOnly,
    };
    let (restarted, restarted_name) = (signals.clone(), name.clone());
    let name = name.clone();
    base.negotiation(negotiation)
        .request_timeout(limits.request_timeout)
        .session_restarts(limits.restarts())
        .on_event(move |event| match event {
            // Started anew by the client (subscriptions and log level made
            // again): what the new session lists may differ.
            SessionEvent::Restarted(restart) => {
                tracing::info!(
                    upstream = %restarted_name,
                    reason = %restart.reason,
                    resubscribed = restart.resubscribed,
                    "started a new session with the upstream; reading its lists again"
                );
                restarted.mark();
            }
            // Its GET stream found the session gone: the client would
            // start a new one only at the next call.
            SessionEvent::Fault(Fault::Transport(TransportError::SessionExpired { .. })) => {
                lost.notify_one();
            }
            _ => {}
        })
        // A result is forwarded as the upstream sent it: the downstream
        // client checks it against the schema it listed; a check here
        // would cost a schema walk per call and turn a result into an error.
        .validate_tool_output(false)
        .list_limits(limits.lists)
        .on_notification_with(move |notification, info| {
            match notification {
                ServerNotification::ToolListChanged(_)
                | ServerNotification::PromptListChanged(_)
                | ServerNotification::ResourceListChanged(_) => signals.mark(),
                ServerNotification::ResourceUpdated(params) => {
                    emit(GatewayEvent::ResourceUpdated {
                        upstream: name.clone(),
                        uri: params.uri,
                    })
                }
                ServerNotification::LoggingMessage(params) => {
                    inflight.log(&name, info.related_request.as_ref(), params);
                }
                // A stateless upstream's listen stream, (re)opened.
                ServerNotification::SubscriptionsAcknowledged(params) => {
                    if let Some(acked) = &acked {
                        let uris = params.notifications.resource_subscriptions;
                        acked.send_replace(uris.unwrap_or_default().into_iter().collect());
                    }
                }
                _ => {}
            }
            std::future::ready(())
        })
}

/// Connects to `upstream` and negotiates; a process's stderr lines go to
/// `tail`; `authorizer` signs an HTTP upstream in.
///
/// # Errors
/// [`Error::Config`] for a header the HTTP client refuses (named, its value
/// not shown); [`Error::Upstream`] when connecting or negotiating fails.
pub(crate) async fn connect(
    name: &Arc<str>,
    upstream: &UpstreamConfig,
    config: ClientConfig,
    authorizer: Option<Arc<dyn Authorizer>>,
    tail: Arc<StderrTail>,
) -> Result<Client, Error> {
    let failed = |source| Error::Upstream {
        upstream: name.to_string(),
        source,
    };
    match &upstream.transport {
        UpstreamTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut spawn = ServerCommand::new(command)
                .args(args)
                .stderr(StderrSink::Lines(Arc::new(move |line| tail.push(line))));
            for (key, value) in env {
                spawn = spawn.env(key, value);
            }
            if let Some(cwd) = cwd {
                spawn = spawn.current_dir(cwd);
            }
            Client::connect_stdio(spawn, config).await.map_err(failed)
        }
        UpstreamTransport::Http { url, headers } => {
            let mut http = HttpClientConfig::new();
            for (key, value) in headers {
                http = http.header(key, value).map_err(|_| Error::Config {
                    entry: name.to_string(),
                    field: "headers",
                    problem: format!(
                        "has a header `{key}` whose name or value HTTP does not allow"
                    ),
                })?;
            }
            if let Some(authorizer) = authorizer {
                http = http.authorizer(authorizer);
            }
            Client::connect_http_with(url, http, config)
                .await
                .map_err(failed)
        }
    }
}

/// Every list the upstream declares (tools, prompts, resources and
/// templates), all pages, within the client's
/// [`ListLimits`](mcp_client::ListLimits).
///
/// # Errors
/// The client's error when a list cannot be read.
pub(crate) async fn fetch_lists(session: &ClientSession) -> Result<Lists, mcp_client::Error> {
    let capabilities = session.server_capabilities().unwrap_or_default();
    let mut lists = Lists::new();
    if capabilities.tools.is_some() {
        lists.tools = session.list_all_tools().await?;
    }
    if capabilities.prompts.is_some() {
        lists.prompts = session.list_all_prompts().await?;
    }
    if capabilities.resources.is_some() {
        lists.resources = session.list_all_resources().await?;
        lists.templates = session.list_all_resource_templates().await?;
    }
    Ok(lists)
}
