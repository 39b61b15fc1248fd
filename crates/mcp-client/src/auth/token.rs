//! The token endpoint: code exchange, refresh, client credentials and JWT
//! bearer grants, the identity assertion exchange, and reading its answers.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use serde_json::Value;

use super::*;

#[derive(Clone, Default)]
pub(super) struct Tokens {
    pub(super) access: Option<String>,
    pub(super) refresh: Option<String>,
    pub(super) expires: Option<Instant>,
    /// `DPoP` for sender-constrained tokens, else `Bearer`.
    pub(super) dpop_bound: bool,
}

impl Tokens {
    /// The tokens in a token endpoint's successful JSON answer, received
    /// at `now`. An `expires_in` too far away to represent is no known
    /// expiry: the server's number must not panic the client.
    ///
    /// # Errors
    /// [`AuthError::MissingField`] without an `access_token` string.
    pub(super) fn from_answer(answer: &Value, now: Instant) -> Result<Tokens, AuthError> {
        let access = answer["access_token"]
            .as_str()
            .ok_or(AuthError::MissingField {
                endpoint: "token endpoint",
                field: "access_token",
            })?
            .to_owned();
        Ok(Tokens {
            access: Some(access),
            refresh: answer["refresh_token"].as_str().map(str::to_owned),
            expires: answer["expires_in"]
                .as_u64()
                .and_then(|s| now.checked_add(Duration::from_secs(s))),
            dpop_bound: answer["token_type"]
                .as_str()
                .is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
        })
    }
}

/// The JSON answer of a registration or token request to `url`. A refusal
/// keeps the OAuth `error` code of its body when it has a plausible one
/// (never the rest of the body).
pub(super) fn json_answer(
    endpoint: &'static str,
    url: &str,
    status: StatusCode,
    body: &[u8],
) -> Result<Value, AuthError> {
    let parsed = serde_json::from_slice::<Value>(body);
    if !status.is_success() {
        let error = parsed
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned))
            .filter(|e| e.len() <= 64 && e.bytes().all(|b| b.is_ascii_graphic()));
        return Err(AuthError::Refused {
            endpoint,
            status: status.as_u16(),
            error,
        });
    }
    parsed.map_err(|source| AuthError::InvalidJson {
        url: redacted(url),
        source,
    })
}

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

/// An `application/x-www-form-urlencoded` body.
fn form_body(pairs: &[(&str, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

pub(super) fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_bodies_encode_every_value() {
        let body = form_body(&[
            ("grant_type", "refresh_token".to_owned()),
            ("scope", "a b&c=d/é".to_owned()),
        ]);
        assert_eq!(body, "grant_type=refresh_token&scope=a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(form_encode("id:1"), "id%3A1");
    }

    /// Found by the `oauth` fuzz target: `Instant + Duration` panicked on
    /// an `expires_in` past what an `Instant` can hold.
    #[test]
    fn an_expires_in_too_far_away_is_no_expiry_not_a_panic() {
        let now = Instant::now();
        let answer = serde_json::json!({"access_token": "a", "expires_in": u64::MAX});
        let tokens = Tokens::from_answer(&answer, now).expect("an access token");
        assert_eq!(tokens.access.as_deref(), Some("a"));
        assert_eq!(tokens.expires, None);
        let answer =
            serde_json::json!({"access_token": "a", "expires_in": 60, "token_type": "DPoP"});
        let tokens = Tokens::from_answer(&answer, now).expect("an access token");
        assert_eq!(tokens.expires, Some(now + Duration::from_secs(60)));
        assert!(tokens.dpop_bound);
        let missing = Tokens::from_answer(&serde_json::json!({"expires_in": 1}), now);
        assert!(matches!(
            missing,
            Err(AuthError::MissingField {
                field: "access_token",
                ..
            })
        ));
    }
}
