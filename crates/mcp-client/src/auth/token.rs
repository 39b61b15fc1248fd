//! What the token endpoint answers: the tokens it grants (kept in the
//! client's state) read from its JSON, and the form encoding of requests.

use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::Value;

use super::error::{AuthError, redacted};

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

/// An `application/x-www-form-urlencoded` body.
pub(super) fn form_body(pairs: &[(&str, String)]) -> String {
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
