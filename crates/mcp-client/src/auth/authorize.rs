//! One authorization: from a challenge to a token, through discovery,
//! registration, the user's sign-in (with PKCE and `state`) and the code
//! exchange, with step-up and the attempt limit.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use mcp_transport::http::AuthChallenge;
use url::Url;

use super::client::{MAX_AUTHORIZATIONS, OAuthClient};
use super::config::Grant;
use super::error::{AuthError, invalid_url};
use super::metadata::{Discovered, offline_supported, parse_challenge};
use super::pkce::{self, random_token};

impl OAuthClient {
    pub(super) async fn authorize(&self, challenge: &AuthChallenge) -> Result<bool, AuthError> {
        let bearer = parse_challenge(&challenge.www_authenticate);
        if challenge.status == 401 && self.refresh().await {
            return Ok(true);
        }
        let server_url =
            Url::parse(&challenge.url).map_err(|e| invalid_url("server URL", &challenge.url, e))?;
        {
            let mut state = self.lock();
            // The attempt budget guards against loops, not against the
            // occasional re-authorization of a long-lived client.
            if state
                .last_authorization
                .is_some_and(|t| t.elapsed() > Duration::from_secs(300))
            {
                state.authorizations = 0;
            }
            state.last_authorization = Some(Instant::now());
            state.authorizations += 1;
            if state.authorizations > MAX_AUTHORIZATIONS {
                return Err(AuthError::TooManyAuthorizations {
                    limit: MAX_AUTHORIZATIONS,
                });
            }
        }
        let Discovered {
            resource: resource_id,
            scopes_supported,
            server,
        } = self
            .discover(&server_url, bearer.resource_metadata.as_deref())
            .await?;
        let issuer = server.issuer.clone();
        if !server
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(AuthError::PkceUnsupported { issuer });
        }
        // Scopes: the challenge, else what the resource supports; step-up
        // keeps everything asked for before.
        let mut requested: BTreeSet<String> = match (&bearer.scope, &scopes_supported) {
            (Some(scope), _) => scope.split_whitespace().map(str::to_owned).collect(),
            (None, Some(supported)) => supported.iter().cloned().collect(),
            (None, None) => BTreeSet::new(),
        };
        {
            let mut state = self.lock();
            if challenge.status == 403 && bearer.error.as_deref() == Some("insufficient_scope") {
                requested.extend(state.scopes.iter().cloned());
            }
            let interactive = matches!(self.config.grant, Grant::AuthorizationCode);
            if offline_supported(&server) && !requested.is_empty() && interactive {
                requested.insert("offline_access".into());
            }
            state.scopes.extend(requested.iter().cloned());
        }
        let scope = requested.into_iter().collect::<Vec<_>>().join(" ");
        let registration = self.register(&server, &scope).await?;
        let jwt_bearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";
        let mut form = match &self.config.grant {
            Grant::AuthorizationCode => Vec::new(),
            Grant::ClientCredentials => vec![("grant_type", "client_credentials".to_owned())],
            Grant::JwtBearer { assertion } => vec![
                ("grant_type", jwt_bearer.to_owned()),
                ("assertion", assertion.clone()),
            ],
            Grant::Enterprise {
                idp_token_endpoint,
                idp_client_id,
                id_token,
            } => {
                let assertion = self
                    .identity_assertion(
                        idp_token_endpoint,
                        idp_client_id,
                        id_token,
                        &server.issuer,
                        resource_id.as_deref().unwrap_or(&challenge.url),
                        &scope,
                    )
                    .await?;
                vec![
                    ("grant_type", jwt_bearer.to_owned()),
                    ("assertion", assertion),
                ]
            }
        };
        if !form.is_empty() {
            if let Some(resource) = &resource_id {
                form.push(("resource", resource.clone()));
            }
            if !scope.is_empty() {
                form.push(("scope", scope));
            }
            self.token_request(&server, &registration, form).await?;
            return Ok(true);
        }

        let verifier = random_token(48)?;
        let challenge_value = pkce::s256_challenge(&verifier);
        let state_value = random_token(24)?;
        let mut url = Url::parse(&server.authorization_endpoint).map_err(|e| {
            invalid_url("authorization endpoint", &server.authorization_endpoint, e)
        })?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("code_challenge", &challenge_value)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state_value);
            if let Some(resource) = &resource_id {
                query.append_pair("resource", resource);
            }
            if !scope.is_empty() {
                query.append_pair("scope", &scope);
            }
        }
        let answer = self.config.step.authorize(url).await?;
        if answer.state.as_deref() != Some(state_value.as_str()) {
            return Err(AuthError::StateMismatch);
        }
        // RFC 9207: compared exactly, before the code is redeemed.
        match answer.iss {
            Some(iss) if iss != server.issuer => {
                return Err(AuthError::ResponseIssuerMismatch {
                    expected: server.issuer,
                    found: iss,
                });
            }
            None if server.authorization_response_iss_parameter_supported => {
                return Err(AuthError::MissingResponseIssuer {
                    issuer: server.issuer,
                });
            }
            _ => {}
        }
        if let Some(error) = answer.error {
            return Err(AuthError::Denied { error });
        }
        let code = answer.code.ok_or(AuthError::NoCode)?;
        let mut form = vec![
            ("grant_type", "authorization_code".into()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", verifier),
        ];
        if let Some(resource) = &resource_id {
            form.push(("resource", resource.clone()));
        }
        self.token_request(&server, &registration, form).await?;
        self.lock().refresh_with = Some((server, registration, resource_id));
        Ok(true)
    }
}
