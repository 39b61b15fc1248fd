//! OAuth 2.1 for protected MCP servers (feature `auth`): discovery of the
//! protected resource and its authorization server, client registration
//! (pre-registered, client ID metadata document, dynamic), PKCE, resource
//! indicators, scope selection and step-up, refresh, and the `iss` checks.
//! A server that publishes no protected resource metadata (and names none
//! in its challenge) is a 2025-03-26 server: its authorization server is
//! found at its origin, by RFC 8414 metadata or else the default
//! `/authorize`, `/token` and `/register` endpoints.
//!
//! [`OAuthClient`] plugs into the HTTP transport as its
//! [`Authorizer`]; how the user signs in is an [`AuthorizationStep`]
//! ([`LoopbackRedirect`] in a desktop host: the browser and a 127.0.0.1
//! redirect listener; [`HeadlessRedirect`] in tests).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_transport::http::HttpsClient;

mod authorize;
mod config;
mod discovery;
mod error;
// Entry points for `fuzz/` only: not API, hidden from the docs.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod jose;
mod pkce;
mod redirect;
mod registration;
mod token;

use config::Grant;
pub use config::OAuthConfig;
use discovery::{Discovered, ServerMetadata, offline_supported, parse_challenge};
pub use error::AuthError;
use error::redacted;
use jose::Es256Key;
/// The HTTP transport's credential hook that [`OAuthClient`] implements,
/// for hosts that wrap it (keeping tokens between runs, say).
pub use mcp_transport::http::{AuthChallenge, AuthHeaders, AuthOutcome, Authorizer};
use pkce::random_token;
pub use redirect::{
    AuthorizationResponse, AuthorizationStep, Browser, HeadlessRedirect, LoopbackRedirect,
    SignInNotice, StepOutcome,
};
use registration::Registration;
use token::{Tokens, json_answer};

/// The largest metadata or token response read, in bytes.
const MAX_RESPONSE: usize = 1024 * 1024;
/// Authorizations attempted for one resource before giving up (step-up loops).
const MAX_AUTHORIZATIONS: u32 = 3;

#[derive(Default)]
struct State {
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
/// [`Authorizer`]. Tokens live in memory.
pub struct OAuthClient {
    config: OAuthConfig,
    http: HttpsClient,
    state: Mutex<State>,
    /// The DPoP key, when sender-constrained tokens are on.
    dpop: Option<Es256Key>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tokens and secrets stay out of logs.
        f.debug_struct("OAuthClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn invalid_url(
    role: &'static str,
    url: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> AuthError {
    AuthError::InvalidUrl {
        role,
        url: redacted(url),
        source: Box::new(source),
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

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> Result<(StatusCode, Bytes), AuthError> {
        let (status, _, body) = self.send_with_headers(request).await?;
        Ok((status, body))
    }

    async fn send_with_headers(
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

    async fn get_json<T: serde::de::DeserializeOwned>(
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

impl Authorizer for OAuthClient {
    fn headers(&self, method: String, url: String) -> AuthHeaders<'_> {
        Box::pin(async move {
            let expired = self
                .lock()
                .tokens
                .expires
                .is_some_and(|e| e <= Instant::now());
            if expired {
                self.refresh().await;
            }
            let (tokens, nonce) = {
                let state = self.lock();
                (state.tokens.clone(), state.rs_nonce.clone())
            };
            let Some(access) = tokens.access else {
                return Vec::new();
            };
            match (&self.dpop, tokens.dpop_bound) {
                (Some(key), true) => {
                    let proof = key.dpop_proof(&method, &url, Some(&access), nonce.as_deref());
                    let mut headers = vec![("authorization".to_owned(), format!("DPoP {access}"))];
                    if let Ok(proof) = proof {
                        headers.push(("dpop".to_owned(), proof));
                    }
                    headers
                }
                _ => vec![("authorization".to_owned(), format!("Bearer {access}"))],
            }
        })
    }

    fn challenge(&self, challenge: AuthChallenge) -> AuthOutcome<'_> {
        Box::pin(async move {
            tracing::debug!(status = challenge.status, "authorization challenge");
            // A resource server that wants a DPoP nonce: retry with it.
            if let Some(nonce) = &challenge.dpop_nonce {
                let fresh = self.lock().rs_nonce.as_deref() != Some(nonce.as_str());
                self.lock().rs_nonce = Some(nonce.clone());
                if fresh && challenge.www_authenticate.contains("use_dpop_nonce") {
                    return Ok(true);
                }
            }
            self.authorize(&challenge)
                .await
                .map_err(|e| Box::new(e) as mcp_core::BoxError)
        })
    }
}
