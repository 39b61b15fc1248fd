//! The token endpoint's grants: code exchange, refresh, client credentials
//! and JWT bearer, and the identity assertion exchange.

use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::Value;

use super::client::{OAuthClient, Registration};
use super::error::{AuthError, invalid_url};
use super::metadata::ServerMetadata;
use super::token::{Tokens, form_body, form_encode, json_answer};

impl OAuthClient {
    pub(super) async fn token_request(
        &self,
        server: &ServerMetadata,
        registration: &Registration,
        form: Vec<(&str, String)>,
    ) -> Result<(), AuthError> {
        // A DPoP nonce demanded by the server is retried once with it.
        for _ in 0..2 {
            match self
                .token_request_once(server, registration, form.clone())
                .await?
            {
                Some(()) => return Ok(()),
                None => continue,
            }
        }
        Err(AuthError::DpopNonceLoop)
    }

    /// `Ok(None)`: the server asked for a DPoP nonce (now stored); try again.
    pub(super) async fn token_request_once(
        &self,
        server: &ServerMetadata,
        registration: &Registration,
        mut form: Vec<(&str, String)>,
    ) -> Result<Option<()>, AuthError> {
        const ENDPOINT: &str = "token endpoint";
        let mut request = Request::post(&server.token_endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json");
        if let Some(key) = &self.dpop {
            let nonce = self.lock().as_nonce.clone();
            let proof = key.dpop_proof("POST", &server.token_endpoint, None, nonce.as_deref())?;
            request = request.header("DPoP", proof);
        }
        if let Some(key) = &self.config.assertion_key {
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            form.push((
                "client_assertion",
                key.client_assertion(&registration.client_id, &server.issuer)?,
            ));
        }
        match registration.method.as_str() {
            _ if self.config.assertion_key.is_some() => {
                form.push(("client_id", registration.client_id.clone()));
            }
            "client_secret_basic" => {
                let secret = registration.secret.clone().unwrap_or_default();
                let credentials = format!(
                    "{}:{}",
                    form_encode(&registration.client_id),
                    form_encode(&secret)
                );
                request = request.header(
                    http::header::AUTHORIZATION,
                    format!("Basic {}", STANDARD.encode(credentials)),
                );
            }
            "client_secret_post" => {
                form.push(("client_id", registration.client_id.clone()));
                form.push((
                    "client_secret",
                    registration.secret.clone().unwrap_or_default(),
                ));
            }
            _ => form.push(("client_id", registration.client_id.clone())),
        }
        let body = form_body(&form);
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| invalid_url(ENDPOINT, &server.token_endpoint, e))?;
        let (status, headers, response) = self.send_with_headers(request).await?;
        if let Some(nonce) = headers
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        {
            let asked = serde_json::from_slice::<Value>(&response)
                .ok()
                .is_some_and(|v| v["error"] == "use_dpop_nonce");
            self.lock().as_nonce = Some(nonce);
            if asked {
                return Ok(None);
            }
        }
        let answer = json_answer(ENDPOINT, &server.token_endpoint, status, &response)?;
        let mut tokens = Tokens::from_answer(&answer, Instant::now())?;
        tokens.dpop_bound |= self.dpop.is_some();
        let mut state = self.lock();
        if tokens.refresh.is_none() {
            tokens.refresh = state.tokens.refresh.take();
        }
        state.tokens = tokens;
        state.issuer = Some(server.issuer.clone());
        Ok(Some(()))
    }

    /// The whole flow for a challenge: discovery, registration, the user's
    /// authorization with PKCE, and the code exchange.
    /// Trades the refresh token for new tokens; false when there is none
    /// or the server refuses it.
    pub(super) async fn refresh(&self) -> bool {
        let (refresh, with) = {
            let state = self.lock();
            (state.tokens.refresh.clone(), state.refresh_with.clone())
        };
        let (Some(refresh), Some((server, registration, resource))) = (refresh, with) else {
            return false;
        };
        let mut form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh),
        ];
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        match self.token_request(&server, &registration, form).await {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!(%error, "refresh failed; authorizing again");
                self.lock().tokens.refresh = None;
                false
            }
        }
    }
}

impl OAuthClient {
    /// RFC 8693 at the identity provider: its ID token for an identity
    /// assertion grant (ID-JAG) aimed at the MCP server's authorization server.
    pub(super) async fn identity_assertion(
        &self,
        endpoint: &str,
        client_id: &str,
        id_token: &str,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, AuthError> {
        const ENDPOINT: &str = "identity provider's token endpoint";
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("subject_token", id_token.to_owned()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
            ("audience", audience.to_owned()),
            ("resource", resource.to_owned()),
            ("client_id", client_id.to_owned()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.to_owned()));
        }
        let body = form_body(&form);
        let request = Request::post(endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| invalid_url(ENDPOINT, endpoint, e))?;
        let (status, response) = self.send(request).await?;
        let answer = json_answer(ENDPOINT, endpoint, status, &response)?;
        answer["access_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or(AuthError::MissingField {
                endpoint: ENDPOINT,
                field: "access_token",
            })
    }
}
