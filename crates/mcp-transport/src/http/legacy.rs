//! The HTTP+SSE transport of revision 2024-11-05, client side, for servers
//! that predate streamable HTTP: a GET opens an SSE stream whose first
//! `endpoint` event names the URL to POST messages to; every server message
//! arrives on that stream.

use std::fmt;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use mcp_core::{
    CancellationToken, Inbound, Outbound, Transport, TransportContext, TransportError,
    TransportReceiver, TransportSender,
};
use mcp_types::{JsonRpcMessage, RequestId};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::client::{HttpClientConfig, HttpsClient, exchange_error, hyper_client, refusal};
use super::sse::SseDecoder;
use crate::Error;

/// A connected 2024-11-05 HTTP+SSE session as a [`Transport`].
pub struct LegacySseClient {
    sender: LegacySseSender,
    receiver: LegacySseReceiver,
}

impl fmt::Debug for LegacySseClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LegacySseClient")
            .field("endpoint", &self.sender.endpoint)
            .finish_non_exhaustive()
    }
}

/// The sending half of a [`LegacySseClient`].
pub struct LegacySseSender {
    client: HttpsClient,
    endpoint: Uri,
    config: HttpClientConfig,
    shutdown: CancellationToken,
    /// Where a request's failed POST is reported; weak, so the receiver
    /// still ends when the stream's reader does.
    inbound: mpsc::WeakSender<Inbound>,
    /// The stream's reader, stopped and awaited on close.
    reader: Option<JoinHandle<()>>,
}

/// The receiving half of a [`LegacySseClient`].
pub struct LegacySseReceiver {
    rx: mpsc::Receiver<Inbound>,
    shutdown: CancellationToken,
}

impl LegacySseClient {
    /// Opens the SSE stream at `url` and waits for the server's `endpoint`
    /// event. The endpoint must be on the same origin as `url`.
    ///
    /// # Errors
    /// [`Error::Connect`] when the server cannot be reached or refuses the
    /// GET; [`Error::InvalidUrl`] for a bad URL, or when the server does not
    /// answer with an SSE stream announcing a same-origin endpoint.
    pub async fn connect(url: &str, config: HttpClientConfig) -> Result<Self, Error> {
        let invalid = |reason: String| Error::InvalidUrl {
            url: url.to_owned(),
            reason,
        };
        let unreachable = |source| Error::Connect {
            url: url.to_owned(),
            source,
        };
        let base: Uri = url.parse().map_err(|e| invalid(format!("{e}")))?;
        let client = hyper_client()?;
        let mut request = Request::builder().method(Method::GET).uri(base.clone());
        if let Some(headers) = request.headers_mut() {
            headers.extend(config.headers.clone());
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        let request = request
            .body(Full::new(Bytes::new()))
            .map_err(|e| invalid(e.to_string()))?;
        let response = client
            .request(request)
            .await
            .map_err(|e| unreachable(exchange_error(e)))?;
        if !response.status().is_success() {
            return Err(unreachable(TransportError::Http {
                status: response.status().as_u16(),
            }));
        }
        let mut body = response.into_body();
        let mut decoder = SseDecoder::new(config.max_message);
        let mut pending = Vec::new();
        let endpoint = 'found: loop {
            let frame = tokio::time::timeout(std::time::Duration::from_secs(30), body.frame())
                .await
                .map_err(|_| invalid("no `endpoint` event within 30 s".into()))?;
            let Some(Ok(frame)) = frame else {
                return Err(invalid(
                    "the SSE stream ended before the `endpoint` event".into(),
                ));
            };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            let events = decoder
                .feed(&chunk)
                .map_err(|e| invalid(format!("an SSE event exceeds {} bytes", e.limit)))?;
            let mut events = events.into_iter();
            while let Some(event) = events.next() {
                if event.event.as_deref() == Some("endpoint") {
                    pending.extend(events);
                    break 'found resolve(&base, event.data.trim()).map_err(invalid)?;
                }
            }
        };
        let (tx, rx) = mpsc::channel(256);
        let shutdown = CancellationToken::new();
        for event in pending {
            forward(&tx, &event.data).await;
        }
        let reader_shutdown = shutdown.clone();
        let inbound = tx.downgrade();
        let reader = tokio::spawn(async move {
            loop {
                let frame = tokio::select! {
                    frame = body.frame() => frame,
                    () = reader_shutdown.cancelled() => break,
                };
                let Some(Ok(frame)) = frame else { break };
                let Ok(chunk) = frame.into_data() else {
                    continue;
                };
                match decoder.feed(&chunk) {
                    Ok(events) => {
                        for event in events {
                            if event.event.as_deref().is_none_or(|e| e == "message") {
                                forward(&tx, &event.data).await;
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(limit = e.limit, "an SSE event was too large; closing");
                        break;
                    }
                }
            }
            // Dropping `tx` ends the receiver: the session is over.
        });
        Ok(Self {
            sender: LegacySseSender {
                client,
                endpoint,
                config,
                shutdown: shutdown.clone(),
                inbound,
                reader: Some(reader),
            },
            receiver: LegacySseReceiver { rx, shutdown },
        })
    }

    /// The URL messages are POSTed to.
    pub fn endpoint(&self) -> &Uri {
        &self.sender.endpoint
    }
}

async fn forward(tx: &mpsc::Sender<Inbound>, data: &str) {
    if data.trim().is_empty() {
        return;
    }
    let inbound = match JsonRpcMessage::from_slice(data.as_bytes()) {
        Ok(message) => Inbound::Message(message, TransportContext::default()),
        Err(e) => Inbound::Malformed(e),
    };
    let _ = tx.send(inbound).await;
}

/// Resolves the `endpoint` event's URL against the stream's URL, refusing
/// another origin (a server must not redirect messages elsewhere).
fn resolve(base: &Uri, endpoint: &str) -> Result<Uri, String> {
    let resolved: Uri = if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        endpoint
            .parse()
            .map_err(|e| format!("bad endpoint `{endpoint}`: {e}"))?
    } else {
        let scheme = base.scheme_str().unwrap_or("http");
        let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
        let path = if endpoint.starts_with('/') {
            endpoint.to_owned()
        } else {
            let dir = base.path().rsplit_once('/').map_or("", |(dir, _)| dir);
            format!("{dir}/{endpoint}")
        };
        format!("{scheme}://{authority}{path}")
            .parse()
            .map_err(|e| format!("bad endpoint `{endpoint}`: {e}"))?
    };
    if resolved.scheme() != base.scheme() || resolved.authority() != base.authority() {
        return Err(format!(
            "the endpoint `{endpoint}` is on another origin than the SSE stream"
        ));
    }
    Ok(resolved)
}

impl Transport for LegacySseClient {
    type Sender = LegacySseSender;
    type Receiver = LegacySseReceiver;

    fn network_transport(&self) -> Option<&'static str> {
        Some("tcp")
    }

    fn split(self) -> (LegacySseSender, LegacySseReceiver) {
        (self.sender, self.receiver)
    }
}

impl TransportSender for LegacySseSender {
    async fn send(&mut self, outbound: Outbound) -> Result<(), TransportError> {
        if self.shutdown.is_cancelled() {
            return Err(TransportError::Closed);
        }
        let body = Bytes::from(outbound.message.to_vec()?);
        let request_id = match &outbound.message {
            JsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // A refused POST fails its own request, not the session: the SSE
        // stream (and every other request) is still fine.
        if let Err(error) = self.post(body, request_id.as_ref()).await {
            match (request_id, self.inbound.upgrade()) {
                (Some(id), Some(inbound)) => {
                    let _ = inbound.send(Inbound::RequestFailed { id, error }).await;
                }
                _ => tracing::warn!(%error, "a message to the legacy SSE server was not delivered"),
            }
        }
        Ok(())
    }

    async fn close(&mut self) {
        self.shutdown.cancel();
        if let Some(reader) = self.reader.take() {
            // Aborted rather than left to notice the cancellation: it may be
            // waiting to hand over a message nobody reads any more. Awaited,
            // so no task outlives the transport.
            reader.abort();
            let _ = reader.await;
        }
    }
}

impl LegacySseSender {
    /// POSTs one message; the answer comes on the SSE stream, unless the
    /// server refuses the POST with its JSON-RPC error for `request_id`,
    /// which is delivered as that answer.
    async fn post(
        &self,
        body: Bytes,
        request_id: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.endpoint.clone();
        let headers = request.headers_mut();
        headers.extend(self.config.headers.clone());
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let response = self.client.request(request).await.map_err(exchange_error)?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let refused = TransportError::Http {
            status: status.as_u16(),
        };
        let limited = http_body_util::Limited::new(response.into_body(), self.config.max_message);
        let bytes = limited
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let answer = request_id.and_then(|id| refusal(&bytes, id));
        match (answer, self.inbound.upgrade()) {
            (Some(answer), Some(inbound)) => {
                let context = TransportContext::default();
                let _ = inbound.send(Inbound::Message(answer, context)).await;
                Ok(())
            }
            _ => Err(refused),
        }
    }
}

impl TransportReceiver for LegacySseReceiver {
    async fn recv(&mut self) -> Option<Inbound> {
        tokio::select! {
            message = self.rx.recv() => message,
            () = self.shutdown.cancelled() => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_against_the_stream_url_on_the_same_origin_only() {
        let base: Uri = "http://localhost:8000/sse".parse().expect("uri");
        assert_eq!(
            resolve(&base, "/messages?session_id=1")
                .expect("ok")
                .to_string(),
            "http://localhost:8000/messages?session_id=1"
        );
        assert_eq!(
            resolve(&base, "messages").expect("ok").to_string(),
            "http://localhost:8000/messages"
        );
        assert!(resolve(&base, "http://evil.example.com/messages").is_err());
        assert!(resolve(&base, "http://localhost:8000/m").is_ok());
    }
}
