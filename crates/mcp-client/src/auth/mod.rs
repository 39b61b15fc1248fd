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

use std::time::Instant;

mod authorize;
mod client;
mod config;
mod discovery;
mod error;
// Entry points for `fuzz/` only: not API, hidden from the docs.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod grants;
mod jose;
mod metadata;
mod pkce;
mod redirect;
mod registration;
mod token;

pub use client::OAuthClient;
pub use config::OAuthConfig;
pub use error::AuthError;
/// The HTTP transport's credential hook that [`OAuthClient`] implements,
/// for hosts that wrap it (keeping tokens between runs, say).
pub use mcp_transport::http::{AuthChallenge, AuthHeaders, AuthOutcome, Authorizer};
pub use redirect::{
    AuthorizationResponse, AuthorizationStep, Browser, HeadlessRedirect, LoopbackRedirect,
    SignInNotice, StepOutcome,
};

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
