//! The client itself and what it remembers: its configuration, the HTTP
//! client it fetches with, and the state of its sign-ins (tokens, scopes,
//! registrations per issuer, DPoP nonces). The flows that change that
//! state (discovery, registration, authorization, the token endpoint) are
//! the files beside this one, each an `impl OAuthClient` block above it.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_transport::http::HttpsClient;

use super::config::OAuthConfig;
use super::error::{AuthError, invalid_url, redacted};
use super::jose::Es256Key;
use super::metadata::ServerMetadata;
use super::token::Tokens;

#[derive(Clone)]
pub(super) struct Registration {
    pub(super) client_id: String,
    pub(super) secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub(super) method: String,
}

/// The largest metadata or token response read, in bytes.
pub(super) const MAX_RESPONSE: usize = 1024 * 1024;
/// Authorizations attempted for one resource before giving up (step-up loops).
pub(super) const MAX_AUTHORIZATIONS: u32 = 3;

#[derive(Default)]
pub(super) struct State {
    pub(super) tokens: Tokens,
    /// Every scope asked for so far (step-up keeps the union).
    pub(super) scopes: BTreeSet<String>,
    /// Registrations by authorization server issuer: never reused with another.
    pub(super) registrations: HashMap<String, Registration>,
    /// The issuer the current tokens came from.
    pub(super) issuer: Option<String>,
    pub(super) authorizations: u32,
    pub(super) last_authorization: Option<Instant>,
    /// What refreshing the current tokens needs (the resource indicator is
    /// absent for a 2025-03-26 server).
    pub(super) refresh_with: Option<(ServerMetadata, Registration, Option<String>)>,
    /// The latest DPoP nonces of the authorization and resource servers.
    pub(super) as_nonce: Option<String>,
    pub(super) rs_nonce: Option<String>,
}

/// An OAuth 2.1 client for one MCP server, as the HTTP transport's
/// [`Authorizer`](mcp_transport::http::Authorizer). Tokens live in memory.
pub struct OAuthClient {
    pub(super) config: OAuthConfig,
    http: HttpsClient,
    state: Mutex<State>,
    /// The DPoP key, when sender-constrained tokens are on.
    pub(super) dpop: Option<Es256Key>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tokens and secrets stay out of logs.
        f.debug_struct("OAuthClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client with this configuration.
    ///
    /// # Errors
    /// [`AuthError::Setup`] when TLS cannot be set up;
    /// [`AuthError::KeyGeneration`] when no DPoP key can be made.
    pub fn new(config: OAuthConfig) -> Result<Arc<Self>, AuthError> {
        let dpop = if config.dpop {
            Some(Es256Key::generate()?)
        } else {
            None
        };
        Ok(Arc::new(Self {
            config,
            http: mcp_transport::http::hyper_client()?,
            state: Mutex::new(State::default()),
            dpop,
        }))
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(StatusCode, Bytes), AuthError> {
        let (status, _, body) = self.send_with_headers(request).await?;
        Ok((status, body))
    }

    pub(super) async fn send_with_headers(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(StatusCode, http::HeaderMap, Bytes), AuthError> {
        let url = redacted(&request.uri().to_string());
        let response = match self.http.request(request).await {
            Ok(response) => response,
            Err(e) => {
                let source = Box::new(e);
                return Err(AuthError::Unreachable { url, source });
            }
        };
        let status = response.status();
        let headers = response.headers().clone();
        let body = http_body_util::Limited::new(response.into_body(), MAX_RESPONSE)
            .collect()
            .await
            .map_err(|source| AuthError::Unreachable { url, source })?
            .to_bytes();
        Ok((status, headers, body))
    }

    pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<Option<T>, AuthError> {
        let request = Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| invalid_url("metadata URL", url, e))?;
        let (status, body) = self.send(request).await?;
        if !status.is_success() {
            return Ok(None);
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|source| AuthError::InvalidJson {
                url: redacted(url),
                source,
            })
    }
}
