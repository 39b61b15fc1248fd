//! Following a stateless (2026-07-28) upstream's changes: it announces list
//! changes and resource updates only on a `subscriptions/listen` stream the
//! client keeps open, so the gateway keeps one open per upstream, asking
//! for the lists it declares `listChanged` for and the resources
//! subscribed to through the gateway. The stream's notifications reach
//! the same callbacks as a handshake-era upstream's.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use mcp_client::{ClientSession, RequestOptions};
use mcp_core::backoff::{Backoff, BackoffConfig};
use mcp_types::methods::SubscriptionsListen;
use mcp_types::{ErrorCode, ErrorObject, SubscriptionFilter, SubscriptionsListenRequestParams};
use tokio::sync::watch;

use crate::upstream::ListSignals;

/// How long one listen stream is asked to stay open before it is opened
/// anew (a stream that ends sooner is opened again too).
const STREAM_SPAN: Duration = Duration::from_secs(3600);

/// A stream shorter than this counts as a failure for pacing.
const SHORT_STREAM: Duration = Duration::from_secs(1);

/// Whether a listen request's error says the upstream will not listen at
/// all (it has no such method, or refuses these params): not asked again
/// until the subscriptions change. Any other error (a server shutting
/// down answers its 503 with -32603) is retried at the paced rate, as a
/// stream that broke: else an upstream restarted gracefully would be
/// followed no more.
fn refused_for_good(error: &ErrorObject) -> bool {
    matches!(
        error.code,
        ErrorCode::METHOD_NOT_FOUND | ErrorCode::INVALID_PARAMS | ErrorCode::INVALID_REQUEST
    )
}

/// Keeps a listen stream open on `session` for as long as this future
/// lives, with the resource URIs `subscriptions` holds (opened anew when
/// they change). Each time a stream ends, the lists are read again (a
/// change between two streams is not lost). A server that refuses to
/// listen is not asked again until the subscriptions change.
pub(crate) async fn follow(
    name: &str,
    session: &ClientSession,
    mut subscriptions: watch::Receiver<BTreeSet<String>>,
    signals: &ListSignals,
) {
    let capabilities = session.server_capabilities().unwrap_or_default();
    let tools = capabilities
        .tools
        .is_some_and(|c| c.list_changed == Some(true));
    let prompts = capabilities
        .prompts
        .is_some_and(|c| c.list_changed == Some(true));
    let resources = capabilities
        .resources
        .is_some_and(|c| c.list_changed == Some(true));
    let mut pace = Backoff::new(BackoffConfig::new());
    loop {
        let uris: Vec<String> = subscriptions.borrow_and_update().iter().cloned().collect();
        if !(tools || prompts || resources) && uris.is_empty() {
            if subscriptions.changed().await.is_err() {
                return std::future::pending().await;
            }
            continue;
        }
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = tools.then_some(true);
        filter.prompts_list_changed = prompts.then_some(true);
        filter.resources_list_changed = resources.then_some(true);
        filter.resource_subscriptions = (!uris.is_empty()).then_some(uris);
        let params = SubscriptionsListenRequestParams::new(filter);
        let options = RequestOptions::new().with_timeout(STREAM_SPAN);
        let opened = Instant::now();
        let ended = tokio::select! {
            ended = session.request::<SubscriptionsListen>(&params, options) => Some(ended),
            changed = subscriptions.changed() => {
                if changed.is_err() {
                    return std::future::pending().await;
                }
                None
            }
        };
        let Some(ended) = ended else {
            // Opened anew with the new subscriptions.
            continue;
        };
        match ended {
            Err(error) if error.remote().is_some_and(refused_for_good) => {
                tracing::warn!(upstream = %name, "the upstream refused to listen: {error}");
                if subscriptions.changed().await.is_err() {
                    return std::future::pending().await;
                }
                continue;
            }
            Err(error) if !error.is_timeout() => {
                tracing::debug!(upstream = %name, "the listen stream ended: {error}");
            }
            _ => {}
        }
        signals.mark();
        if opened.elapsed() < SHORT_STREAM {
            let wait = pace
                .next(Instant::now(), None)
                .unwrap_or(STREAM_SPAN.min(Duration::from_secs(60)));
            tokio::time::sleep(wait).await;
        } else {
            pace.succeeded();
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{ErrorCode, ErrorObject};

    use super::refused_for_good;

    #[test]
    fn only_a_refusal_of_the_method_or_its_params_stops_listening() {
        for code in [
            ErrorCode::METHOD_NOT_FOUND,
            ErrorCode::INVALID_PARAMS,
            ErrorCode::INVALID_REQUEST,
        ] {
            assert!(refused_for_good(&ErrorObject::new(code, "no")), "{code:?}");
        }
        for code in [ErrorCode::INTERNAL_ERROR, ErrorCode(-32000)] {
            assert!(
                !refused_for_good(&ErrorObject::new(code, "later")),
                "{code:?}"
            );
        }
    }
}
