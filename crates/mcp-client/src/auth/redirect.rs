//! How the user signs in: the authorization step a host provides (a browser
//! on a desktop; [`HeadlessRedirect`] in tests) and what it hands back.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use mcp_transport::http::HttpsClient;
use url::Url;

use super::*;

/// Where the authorization code comes back: the redirect's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`, if the user or the server refused.
    pub error: Option<String>,
}

/// What an [`AuthorizationStep`] returns: the redirect's parameters, or why
/// signing in did not complete (an application's own failure goes in
/// [`AuthError::Step`]).
pub type StepOutcome<'a> =
    Pin<Box<dyn Future<Output = Result<AuthorizationResponse, AuthError>> + Send + 'a>>;

/// Sends the user to the authorization URL and returns what came back to
/// the redirect URI.
pub trait AuthorizationStep: Send + Sync + fmt::Debug + 'static {
    /// Opens `url` (a browser, a device prompt…) and waits for the redirect.
    fn authorize(&self, url: Url) -> StepOutcome<'_>;
}

/// Follows the authorization URL without a user: fetches it and reads the
/// redirect's `Location` (for tests and authorization servers that
/// auto-approve).
#[derive(Debug)]
pub struct HeadlessRedirect {
    client: HttpsClient,
}

impl HeadlessRedirect {
    /// A headless step on its own HTTP client.
    ///
    /// # Errors
    /// When TLS cannot be set up.
    pub fn new() -> Result<Self, mcp_transport::Error> {
        Ok(Self {
            client: mcp_transport::http::hyper_client()?,
        })
    }
}

impl AuthorizationStep for HeadlessRedirect {
    fn authorize(&self, url: Url) -> StepOutcome<'_> {
        Box::pin(async move {
            let request = Request::get(url.as_str())
                .body(Full::new(Bytes::new()))
                .map_err(|e| invalid_url("authorization endpoint", url.as_str(), e))?;
            let response =
                self.client
                    .request(request)
                    .await
                    .map_err(|e| AuthError::Unreachable {
                        url: redacted(url.as_str()),
                        source: Box::new(e),
                    })?;
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(AuthError::NoRedirect {
                    status: response.status().as_u16(),
                })?;
            let redirect = Url::parse(location)
                .or_else(|_| url.join(location))
                .map_err(|_| AuthError::InvalidRedirect)?;
            let mut answer = AuthorizationResponse {
                code: None,
                state: None,
                iss: None,
                error: None,
            };
            for (key, value) in redirect.query_pairs() {
                match key.as_ref() {
                    "code" => answer.code = Some(value.into_owned()),
                    "state" => answer.state = Some(value.into_owned()),
                    "iss" => answer.iss = Some(value.into_owned()),
                    "error" => answer.error = Some(value.into_owned()),
                    _ => {}
                }
            }
            Ok(answer)
        })
    }
}
