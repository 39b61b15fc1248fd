//! The OAuth 2.1 resource-server side (feature `auth-server`): bearer tokens
//! checked by a pluggable [`TokenVerifier`] before requests reach the MCP
//! endpoint, the RFC 9728 protected resource metadata document, and the
//! 401/403/400 challenges clients discover the authorization server from.
//!
//! Wrap the endpoint service (a [`StreamableHttpService`](super::StreamableHttpService)
//! or anything else answering `Response<HttpBody>`) in a [`BearerGuard`],
//! directly or through [`BearerAuthLayer`], and serve the result with
//! [`serve`](super::serve) or any hyper/axum stack. The guard
//! answers `GET /.well-known/oauth-protected-resource` and
//! `GET /.well-known/oauth-protected-resource/<endpoint path>` itself, without
//! a token; an app that routes these paths elsewhere can mount
//! [`ProtectedResource::metadata_response`] there instead.
//!
//! JWT access tokens are checked by [`JwtVerifier`] against a JWKS the app
//! supplies (and refreshes with [`JwtVerifier::update_jwks`]; this crate does
//! not fetch it, so it pulls in no HTTP client or TLS). Opaque tokens (RFC 7662
//! introspection, a database lookup) plug in through [`TokenVerifier`].
//!
//! Not done here: scopes per JSON-RPC method or tool (the guard does not read
//! bodies); a handler can read [`TokenClaims`] from the request extensions
//! and refuse a call itself.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{ALLOW, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use serde_json::{Map, Value, json};

use super::server::HttpBody;

mod jwt;

pub use jwt::{JwksError, JwtVerifier};

/// The well-known path prefix of RFC 9728.
const METADATA_PREFIX: &str = "/.well-known/oauth-protected-resource";

/// What a verified access token says.
///
/// [`BearerGuard`] puts this in the request's extensions; read it with
/// `request.extensions().get::<TokenClaims>()`.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenClaims {
    /// `sub`: whom the token was issued for.
    pub subject: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// `aud`: the resources the token was issued for.
    pub audiences: Vec<String>,
    /// `iss`: the authorization server that issued it.
    pub issuer: Option<String>,
    /// `client_id` (or `azp`): the OAuth client the token was issued to.
    pub client_id: Option<String>,
    /// `exp`, seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// Every claim as received, for the ones not mapped above (empty when
    /// the verifier has none).
    pub raw: Map<String, Value>,
}

impl fmt::Debug for TokenClaims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Raw claim values may hold personal data; their names are enough.
        f.debug_struct("TokenClaims")
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .field("audiences", &self.audiences)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("expires_at", &self.expires_at)
            .field("raw", &self.raw.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TokenClaims {
    /// Claims with nothing in them; fill them with the `with_` setters (for
    /// custom verifiers).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the subject.
    #[must_use]
    pub fn with_subject(self, subject: impl Into<String>) -> Self {
        Self {
            subject: Some(subject.into()),
            ..self
        }
    }

    /// Sets the granted scopes.
    #[must_use]
    pub fn with_scopes<I: IntoIterator<Item = S>, S: Into<String>>(self, scopes: I) -> Self {
        Self {
            scopes: scopes.into_iter().map(Into::into).collect(),
            ..self
        }
    }

    /// Sets the audiences.
    #[must_use]
    pub fn with_audiences<I: IntoIterator<Item = S>, S: Into<String>>(self, audiences: I) -> Self {
        Self {
            audiences: audiences.into_iter().map(Into::into).collect(),
            ..self
        }
    }

    /// Sets the client id.
    #[must_use]
    pub fn with_client_id(self, client_id: impl Into<String>) -> Self {
        Self {
            client_id: Some(client_id.into()),
            ..self
        }
    }

    /// Sets the expiry, seconds since the Unix epoch.
    #[must_use]
    pub fn with_expires_at(self, expires_at: u64) -> Self {
        Self {
            expires_at: Some(expires_at),
            ..self
        }
    }

    /// Whether every scope in `needed` was granted.
    pub fn has_scopes(&self, needed: &[String]) -> bool {
        needed.iter().all(|scope| self.scopes.contains(scope))
    }
}

/// Why a token was refused.
///
/// Messages must never contain the token itself: they are logged and sent
/// back in `error_description`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenRejection {
    /// Malformed, badly signed, not yet valid, or from an untrusted issuer.
    #[error("the access token is invalid: {0}")]
    Invalid(String),
    /// Past its `exp`.
    #[error("the access token has expired")]
    Expired,
    /// Issued for another resource.
    #[error("the access token was issued for another resource")]
    WrongAudience,
    /// The verifier could not decide (an introspection endpoint is down, say);
    /// answered with 503, so the client retries rather than re-authorizing.
    #[error("the access token could not be checked: {0}")]
    Unavailable(String),
}

/// Verified claims, or why the token is refused.
pub type Verification<'a> =
    Pin<Box<dyn Future<Output = Result<TokenClaims, TokenRejection>> + Send + 'a>>;

/// Checks access tokens: JWTs against keys ([`JwtVerifier`]), or anything
/// else an application plugs in (RFC 7662 introspection, a database).
///
/// # Examples
/// A verifier for opaque tokens looked up in a table:
///
/// ```
/// use std::collections::HashMap;
/// use mcp_transport::http::{TokenClaims, TokenRejection, TokenVerifier, Verification};
///
/// struct Table(HashMap<String, TokenClaims>);
///
/// impl TokenVerifier for Table {
///     fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
///         Box::pin(async move {
///             let claims = self.0.get(token).ok_or_else(|| {
///                 TokenRejection::Invalid("unknown token".into())
///             })?;
///             if !claims.audiences.iter().any(|a| a == resource) {
///                 return Err(TokenRejection::WrongAudience);
///             }
///             Ok(claims.clone())
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`, which must have been issued for `resource` (the
    /// canonical URI of this MCP server, RFC 8707).
    ///
    /// The token is a secret: do not log it or put it in a rejection.
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a>;
}

impl<V: TokenVerifier + ?Sized> TokenVerifier for Arc<V> {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
        (**self).verify(token, resource)
    }
}

/// This server as an OAuth protected resource: its identifier, its
/// authorization servers, and the scopes every request needs.
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
}

impl ProtectedResource {
    /// `resource` is the canonical URI of the MCP endpoint
    /// (`https://mcp.example.com/mcp`: no fragment, preferably no trailing
    /// slash), the audience tokens must name; `authorization_server` is the
    /// issuer URL of the authorization server clients get tokens from.
    pub fn new(resource: impl Into<String>, authorization_server: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            resource_name: None,
            resource_documentation: None,
        }
    }

    /// Adds another authorization server to the metadata document.
    #[must_use]
    pub fn with_authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Scopes advertised in the metadata document (the required scopes
    /// unless set).
    #[must_use]
    pub fn with_scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(
        self,
        scopes: I,
    ) -> Self {
        Self {
            scopes_supported: scopes.into_iter().map(Into::into).collect(),
            ..self
        }
    }

    /// Scopes a token must carry for any request (else 403
    /// `insufficient_scope`); also named in every challenge.
    #[must_use]
    pub fn with_required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        self,
        scopes: I,
    ) -> Self {
        Self {
            required_scopes: scopes.into_iter().map(Into::into).collect(),
            ..self
        }
    }

    /// A human-readable name, `resource_name` in the metadata document.
    #[must_use]
    pub fn with_resource_name(self, name: impl Into<String>) -> Self {
        Self {
            resource_name: Some(name.into()),
            ..self
        }
    }

    /// A URL of documentation for developers, `resource_documentation`.
    #[must_use]
    pub fn with_resource_documentation(self, url: impl Into<String>) -> Self {
        Self {
            resource_documentation: Some(url.into()),
            ..self
        }
    }

    /// The canonical URI tokens must be issued for.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes every request needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The absolute URL of the metadata document (the path-suffixed form of
    /// RFC 9728 §3.1), sent as `resource_metadata` in challenges.
    pub fn metadata_url(&self) -> String {
        match url_split(&self.resource) {
            Some((origin, _)) => format!("{origin}{}", self.metadata_path()),
            None => self.metadata_path(),
        }
    }

    /// The path of the metadata document:
    /// `/.well-known/oauth-protected-resource` plus the resource's path.
    pub fn metadata_path(&self) -> String {
        match url_split(&self.resource) {
            Some((_, path)) if !path.is_empty() && path != "/" => {
                format!(
                    "{METADATA_PREFIX}{}",
                    path.strip_suffix('/').unwrap_or(path)
                )
            }
            _ => METADATA_PREFIX.to_owned(),
        }
    }

    /// The RFC 9728 document.
    pub fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        let scopes = if self.scopes_supported.is_empty() {
            &self.required_scopes
        } else {
            &self.scopes_supported
        };
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        if let Some(name) = &self.resource_name {
            document["resource_name"] = json!(name);
        }
        if let Some(url) = &self.resource_documentation {
            document["resource_documentation"] = json!(url);
        }
        document
    }

    /// A 200 response with the metadata document, for apps that route the
    /// well-known paths themselves. Any origin may read it (CORS), since
    /// browser-based clients discover the authorization server from it.
    pub fn metadata_response(&self) -> Response<HttpBody> {
        let mut response = Response::new(HttpBody::full(self.metadata().to_string()));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        response
    }

    /// Whether `path` is where this resource's metadata document is served:
    /// the path-suffixed form, or the root form.
    fn is_metadata_path(&self, path: &str) -> bool {
        path == METADATA_PREFIX || path == self.metadata_path()
    }
}

/// Requires a valid bearer token in front of an MCP endpoint service, and
/// serves the protected resource metadata document itself.
///
/// - No `Authorization` header, or one of another scheme: 401 with
///   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`.
/// - A token the verifier refuses: 401 with `error="invalid_token"`.
/// - A valid token lacking a required scope: 403 with
///   `error="insufficient_scope"` and every required scope.
/// - A malformed bearer header (no token, characters outside RFC 6750's
///   `b64token`, several `Authorization` headers): 400 `invalid_request`.
/// - A verifier that cannot decide ([`TokenRejection::Unavailable`]): 503.
/// - Any other `/.well-known/` document (the authorization server metadata
///   or OpenID configuration clients probe for): 404, without a token.
///
/// Otherwise the verified [`TokenClaims`] are put in the request's
/// extensions and the request goes to the inner service. Tokens are never
/// logged.
///
/// # Examples
/// ```
/// # use std::sync::Arc;
/// # use mcp_transport::http::*;
/// # struct Echo;
/// # impl mcp_core::Handler for Echo {
/// #     async fn handle_request(&self, r: mcp_core::IncomingRequest, _: mcp_core::RequestContext)
/// #         -> Result<mcp_types::RawJson, mcp_types::ErrorObject> {
/// #         Ok(r.params.unwrap_or_else(mcp_types::RawJson::empty_object))
/// #     }
/// #     async fn handle_notification(&self, _: mcp_core::IncomingNotification,
/// #         _: mcp_core::NotificationContext) {}
/// # }
/// # fn guard(jwks: &serde_json::Value) -> Result<(), JwksError> {
/// let endpoint = StreamableHttpService::new(HttpServerConfig::new(), |opening| {
///     opening.serve(Echo, mcp_core::DispatcherConfig::default())
/// });
/// let verifier = JwtVerifier::from_jwks(jwks)?.with_issuer("https://as.example.com");
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp", "https://as.example.com")
///     .with_required_scopes(["mcp"]);
/// let service = BearerGuard::new(endpoint, resource, Arc::new(verifier));
/// // serve(listener, service, ServeConfig::new(), shutdown).await
/// # Ok(()) }
/// ```
pub struct BearerGuard<S> {
    inner: S,
    resource: Arc<ProtectedResource>,
    verifier: Arc<dyn TokenVerifier>,
}

impl<S: Clone> Clone for BearerGuard<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            resource: self.resource.clone(),
            verifier: self.verifier.clone(),
        }
    }
}

impl<S> fmt::Debug for BearerGuard<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerGuard")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl<S> BearerGuard<S> {
    /// Guards `inner` for `resource`, checking tokens with `verifier`.
    pub fn new(inner: S, resource: ProtectedResource, verifier: Arc<dyn TokenVerifier>) -> Self {
        Self {
            inner,
            resource: Arc::new(resource),
            verifier,
        }
    }

    /// The protected resource this guard answers for.
    pub fn resource(&self) -> &ProtectedResource {
        &self.resource
    }
}

/// A tower `Layer` that wraps services in a [`BearerGuard`].
#[derive(Clone)]
pub struct BearerAuthLayer {
    resource: Arc<ProtectedResource>,
    verifier: Arc<dyn TokenVerifier>,
}

impl fmt::Debug for BearerAuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuthLayer")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl BearerAuthLayer {
    /// Guards services for `resource`, checking tokens with `verifier`.
    pub fn new(resource: ProtectedResource, verifier: Arc<dyn TokenVerifier>) -> Self {
        Self {
            resource: Arc::new(resource),
            verifier,
        }
    }
}

impl<S> tower_layer::Layer<S> for BearerAuthLayer {
    type Service = BearerGuard<S>;

    fn layer(&self, inner: S) -> BearerGuard<S> {
        BearerGuard {
            inner,
            resource: self.resource.clone(),
            verifier: self.verifier.clone(),
        }
    }
}

impl<S, B> tower_service::Service<Request<B>> for BearerGuard<S>
where
    S: tower_service::Service<Request<B>, Response = Response<HttpBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let resource = self.resource.clone();
        let verifier = self.verifier.clone();
        // The clone is the one driven to readiness (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let path = request.uri().path();
            if resource.is_metadata_path(path) {
                return Ok(metadata_answer(&resource, request.method()));
            }
            if super::server::is_well_known(path) {
                // Discovery probes for documents this resource does not
                // publish (authorization server metadata, OpenID
                // configuration): "none here", readable from any origin,
                // never a challenge a client could take for a login.
                let mut response = plain(StatusCode::NOT_FOUND, "not_found", "no such document");
                response.headers_mut().insert(
                    http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
                    HeaderValue::from_static("*"),
                );
                return Ok(response);
            }
            let token = match bearer_token(&request) {
                Credentials::Missing => {
                    return Ok(challenge(StatusCode::UNAUTHORIZED, &resource, None));
                }
                Credentials::Malformed(why) => {
                    return Ok(challenge(
                        StatusCode::BAD_REQUEST,
                        &resource,
                        Some(("invalid_request", why)),
                    ));
                }
                Credentials::Bearer(token) => token,
            };
            let claims = match verifier.verify(&token, resource.resource()).await {
                Ok(claims) => claims,
                Err(rejection @ TokenRejection::Unavailable(_)) => {
                    tracing::warn!(%rejection, "could not check an access token");
                    return Ok(plain(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "temporarily_unavailable",
                        &rejection.to_string(),
                    ));
                }
                Err(rejection) => {
                    tracing::debug!(%rejection, "refused an access token");
                    return Ok(challenge(
                        StatusCode::UNAUTHORIZED,
                        &resource,
                        Some(("invalid_token", &rejection.to_string())),
                    ));
                }
            };
            if !claims.has_scopes(resource.required_scopes()) {
                tracing::debug!(
                    subject = ?claims.subject,
                    granted = ?claims.scopes,
                    "refused an access token lacking a required scope"
                );
                return Ok(challenge(
                    StatusCode::FORBIDDEN,
                    &resource,
                    Some((
                        "insufficient_scope",
                        "the access token lacks a required scope",
                    )),
                ));
            }
            request.extensions_mut().insert(claims);
            inner.call(request).await
        })
    }
}

enum Credentials {
    Missing,
    Malformed(&'static str),
    Bearer(String),
}

/// The bearer token of a request (RFC 6750 §2.1).
fn bearer_token<B>(request: &Request<B>) -> Credentials {
    let mut values = request.headers().get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Credentials::Missing;
    };
    if values.next().is_some() {
        return Credentials::Malformed("send exactly one Authorization header");
    }
    let Ok(value) = value.to_str() else {
        return Credentials::Malformed("the Authorization header is not visible ASCII");
    };
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme is no bearer credential at all (RFC 6750 §3.1):
        // challenge, so the client can discover how to get a token.
        return Credentials::Missing;
    }
    let token = rest.trim_matches(' ');
    if token.is_empty() {
        return Credentials::Malformed("the Authorization header must be `Bearer <token>`");
    }
    let body = token.trim_end_matches('=');
    let is_b64token = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !is_b64token {
        return Credentials::Malformed("the bearer token has characters RFC 6750 does not allow");
    }
    Credentials::Bearer(token.to_owned())
}

/// A 401/403/400 with the `WWW-Authenticate: Bearer` challenge of RFC 6750
/// §3 and RFC 9728 §5.1.
fn challenge(
    status: StatusCode,
    resource: &ProtectedResource,
    error: Option<(&str, &str)>,
) -> Response<HttpBody> {
    let mut params = Vec::new();
    if let Some((code, description)) = error {
        params.push(format!("error=\"{code}\""));
        params.push(format!("error_description=\"{}\"", quotable(description)));
    }
    if !resource.required_scopes.is_empty() && status != StatusCode::BAD_REQUEST {
        params.push(format!(
            "scope=\"{}\"",
            quotable(&resource.required_scopes.join(" "))
        ));
    }
    params.push(format!(
        "resource_metadata=\"{}\"",
        quotable(&resource.metadata_url())
    ));
    let value = format!("Bearer {}", params.join(", "));
    let (code, description) = error.unwrap_or(("unauthorized", "an access token is required"));
    let mut response = plain(status, code, description);
    // `quotable` leaves only visible ASCII and spaces, so this cannot fail.
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// The answer at the metadata path.
fn metadata_answer(resource: &ProtectedResource, method: &Method) -> Response<HttpBody> {
    if *method == Method::GET {
        return resource.metadata_response();
    }
    if *method == Method::HEAD {
        let mut response = resource.metadata_response();
        *response.body_mut() = HttpBody::empty();
        return response;
    }
    if *method == Method::OPTIONS {
        let mut response = Response::new(HttpBody::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let headers = response.headers_mut();
        headers.insert(
            http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            http::header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, HEAD, OPTIONS"),
        );
        // Browser clients send the version header with their discovery
        // requests (the TypeScript SDK does, and retries without it).
        headers.insert(
            http::header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(mcp_types::routing::PROTOCOL_VERSION_HEADER),
        );
        headers.insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
        return response;
    }
    let mut response = plain(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "the metadata document is read with GET",
    );
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
    response
}

/// A JSON error body `{"error", "error_description"}` with `status`.
fn plain(status: StatusCode, code: &str, description: &str) -> Response<HttpBody> {
    let body = json!({"error": code, "error_description": description}).to_string();
    let mut response = Response::new(HttpBody::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Text safe inside a quoted-string of an auth-param (RFC 6750 §3 allows
/// %x20-21 / %x23-5B / %x5D-7E): other characters become `?`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

/// `https://host:port/path?query` into (`https://host:port`, `/path`).
fn url_split(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let url = &url[..end.max(after_scheme)];
    match url[after_scheme..].find('/') {
        Some(slash) => Some((&url[..after_scheme + slash], &url[after_scheme + slash..])),
        None => Some((url, "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_uses_the_path_form() {
        let resource =
            ProtectedResource::new("https://mcp.example.com/mcp", "https://as.example.com");
        assert_eq!(
            resource.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = ProtectedResource::new("https://mcp.example.com", "https://as.example.com");
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        let slash = ProtectedResource::new("https://mcp.example.com/", "https://as.example.com");
        assert_eq!(slash.metadata_path(), METADATA_PREFIX);
    }

    #[test]
    fn a_bearer_header_is_parsed_strictly() {
        let with = |value: &str| {
            let request = Request::get("/mcp")
                .header(AUTHORIZATION, value)
                .body(())
                .expect("request");
            bearer_token(&request)
        };
        assert!(
            matches!(with("Bearer abc.def-_~+/=="), Credentials::Bearer(t) if t == "abc.def-_~+/==")
        );
        assert!(matches!(with("bearer  abc"), Credentials::Bearer(t) if t == "abc"));
        assert!(matches!(with("Basic dXNlcjpwYXNz"), Credentials::Missing));
        assert!(matches!(with("Bearer"), Credentials::Malformed(_)));
        assert!(matches!(with("Bearer "), Credentials::Malformed(_)));
        assert!(matches!(with("Bearer a b"), Credentials::Malformed(_)));
        assert!(matches!(with("Bearer a=b"), Credentials::Malformed(_)));
        assert!(matches!(with("Bearer ==="), Credentials::Malformed(_)));
    }

    #[test]
    fn challenge_text_cannot_break_the_header() {
        assert_eq!(quotable("a \"b\"\n\\c é"), "a 'b'?'c ?");
    }
}
