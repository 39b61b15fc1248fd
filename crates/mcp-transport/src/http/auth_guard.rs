//! The OAuth 2.1 resource-server side (feature `auth-server`): bearer tokens
//! checked by a pluggable [`TokenVerifier`] before requests reach the MCP
//! endpoint, the RFC 9728 protected resource metadata document, and the
//! 401/403 challenges clients discover the authorization server from.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Request, Response, StatusCode};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};

use super::server::HttpBody;

/// What a verified access token says.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenClaims {
    /// `sub`.
    pub subject: Option<String>,
    /// The granted scopes (`scope`, space-separated in JWTs).
    pub scopes: Vec<String>,
    /// `client_id` (or `azp`), when present.
    pub client_id: Option<String>,
    /// `exp`, seconds since the epoch.
    pub expires_at: Option<u64>,
}

impl fmt::Debug for TokenClaims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenClaims")
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .field("client_id", &self.client_id)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl TokenClaims {
    /// Claims with these scopes and nothing else (for custom verifiers).
    pub fn with_scopes(scopes: Vec<String>) -> Self {
        Self {
            subject: None,
            scopes,
            client_id: None,
            expires_at: None,
        }
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenRejection {
    /// Malformed, badly signed, or from an untrusted issuer.
    #[error("the access token is invalid: {0}")]
    Invalid(String),
    /// Past its `exp`.
    #[error("the access token has expired")]
    Expired,
    /// Issued for another resource.
    #[error("the access token was issued for another resource")]
    WrongAudience,
}

/// Verified claims, or why the token is refused.
pub type Verification<'a> =
    Pin<Box<dyn Future<Output = Result<TokenClaims, TokenRejection>> + Send + 'a>>;

/// Checks access tokens: JWTs against keys ([`JwtVerifier`]), or anything
/// else an application plugs in (introspection, a database).
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`, which must have been issued for `resource`.
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a>;
}

/// Verifies ES256 JWT access tokens against a JWKS: signature, `exp`/`nbf`
/// (60 s leeway), `iss` when configured, and that `aud` names the resource.
pub struct JwtVerifier {
    keys: Vec<(Option<String>, VerifyingKey)>,
    issuer: Option<String>,
    leeway: Duration,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("keys", &self.keys.len())
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl JwtVerifier {
    /// The P-256 keys of a JWKS document (`{"keys":[{"kty":"EC","crv":"P-256","x","y","kid"}]}`);
    /// keys of other types are skipped.
    ///
    /// # Errors
    /// When the document holds no usable P-256 key.
    pub fn from_jwks(jwks: &Value) -> Result<Self, String> {
        let mut keys = Vec::new();
        for key in jwks["keys"].as_array().into_iter().flatten() {
            if key["kty"] != "EC" || key["crv"] != "P-256" {
                continue;
            }
            let coordinate = |name: &str| {
                key[name]
                    .as_str()
                    .and_then(|c| URL_SAFE_NO_PAD.decode(c).ok())
                    .filter(|c| c.len() == 32)
            };
            let (Some(x), Some(y)) = (coordinate("x"), coordinate("y")) else {
                continue;
            };
            let mut sec1 = vec![4u8];
            sec1.extend_from_slice(&x);
            sec1.extend_from_slice(&y);
            if let Ok(verifying) = VerifyingKey::from_sec1_bytes(&sec1) {
                keys.push((key["kid"].as_str().map(str::to_owned), verifying));
            }
        }
        if keys.is_empty() {
            return Err("the JWKS holds no P-256 (ES256) key".into());
        }
        Ok(Self {
            keys,
            issuer: None,
            leeway: Duration::from_secs(60),
        })
    }

    /// Only tokens whose `iss` is exactly `issuer`.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    fn check(&self, token: &str, resource: &str) -> Result<TokenClaims, TokenRejection> {
        let invalid = |why: &str| TokenRejection::Invalid(why.to_owned());
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid("not a compact JWS"));
        };
        let decode = |part: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| invalid("bad base64url"))
        };
        let header: Value =
            serde_json::from_slice(&decode(header)?).map_err(|_| invalid("bad header"))?;
        if header["alg"] != "ES256" {
            return Err(invalid("only ES256 tokens are accepted"));
        }
        let signature =
            Signature::from_slice(&decode(signature)?).map_err(|_| invalid("bad signature"))?;
        let signed = &token[..token.len() - token.rsplit('.').next().map_or(0, str::len) - 1];
        let kid = header["kid"].as_str();
        let verified = self
            .keys
            .iter()
            .filter(|(k, _)| kid.is_none() || k.as_deref() == kid || k.is_none())
            .any(|(_, key)| key.verify(signed.as_bytes(), &signature).is_ok());
        if !verified {
            return Err(invalid("the signature does not verify"));
        }
        let claims: Value =
            serde_json::from_slice(&decode(payload)?).map_err(|_| invalid("bad claims"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let leeway = self.leeway.as_secs();
        let expires_at = claims["exp"].as_u64();
        match expires_at {
            Some(exp) if exp + leeway < now => return Err(TokenRejection::Expired),
            Some(_) => {}
            None => return Err(invalid("no `exp` claim")),
        }
        if claims["nbf"].as_u64().is_some_and(|nbf| nbf > now + leeway) {
            return Err(invalid("not valid yet"));
        }
        if let Some(issuer) = &self.issuer {
            if claims["iss"].as_str() != Some(issuer.as_str()) {
                return Err(invalid("untrusted issuer"));
            }
        }
        let audience_ok = match &claims["aud"] {
            Value::String(aud) => aud == resource,
            Value::Array(auds) => auds.iter().any(|a| a.as_str() == Some(resource)),
            _ => false,
        };
        if !audience_ok {
            return Err(TokenRejection::WrongAudience);
        }
        Ok(TokenClaims {
            subject: claims["sub"].as_str().map(str::to_owned),
            scopes: claims["scope"]
                .as_str()
                .map(|s| s.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
            client_id: claims["client_id"]
                .as_str()
                .or(claims["azp"].as_str())
                .map(str::to_owned),
            expires_at,
        })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
        Box::pin(async move { self.check(token, resource) })
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
}

impl ProtectedResource {
    /// `resource` is the canonical URL of the MCP endpoint
    /// (`https://mcp.example.com/mcp`), the audience tokens must name.
    pub fn new(resource: impl Into<String>, authorization_server: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
        }
    }

    /// Scopes advertised in the metadata document.
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        scopes: I,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes a token must carry for any request (else 403 `insufficient_scope`).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        scopes: I,
    ) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The URL of the metadata document for this resource (the path form of RFC 9728).
    pub fn metadata_url(&self) -> String {
        match url_split(&self.resource) {
            Some((origin, path)) if !path.is_empty() && path != "/" => {
                format!("{origin}/.well-known/oauth-protected-resource{path}")
            }
            Some((origin, _)) => format!("{origin}/.well-known/oauth-protected-resource"),
            None => "/.well-known/oauth-protected-resource".into(),
        }
    }

    /// The RFC 9728 document.
    pub fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            document["scopes_supported"] = json!(self.scopes_supported);
        }
        document
    }
}

/// `https://host:port/path` into (`https://host:port`, `/path`).
fn url_split(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    match url[after_scheme..].find('/') {
        Some(slash) => Some((&url[..after_scheme + slash], &url[after_scheme + slash..])),
        None => Some((url, "")),
    }
}

/// Requires a valid bearer token in front of an MCP endpoint service, and
/// serves the protected resource metadata document itself.
///
/// Verified [`TokenClaims`] are put in the request's extensions.
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

impl<S> BearerGuard<S> {
    /// Guards `inner` for `resource`, checking tokens with `verifier`.
    pub fn new(inner: S, resource: ProtectedResource, verifier: Arc<dyn TokenVerifier>) -> Self {
        Self {
            inner,
            resource: Arc::new(resource),
            verifier,
        }
    }
}

fn challenge(
    status: StatusCode,
    resource: &ProtectedResource,
    error: Option<(&str, &str)>,
    scopes: &[String],
) -> Response<HttpBody> {
    let mut value = format!("Bearer resource_metadata=\"{}\"", resource.metadata_url());
    if !scopes.is_empty() {
        value.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
    }
    if let Some((code, description)) = error {
        value.push_str(&format!(
            ", error=\"{code}\", error_description=\"{}\"",
            description.replace('"', "'")
        ));
    }
    let body = json!({"error": error.map_or("unauthorized", |(c, _)| c)}).to_string();
    let mut response = Response::new(HttpBody::full(body));
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
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
            if request
                .uri()
                .path()
                .starts_with("/.well-known/oauth-protected-resource")
            {
                let mut response = Response::new(HttpBody::full(resource.metadata().to_string()));
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                return Ok(response);
            }
            let header = request
                .headers()
                .get(AUTHORIZATION)
                .map(|v| v.to_str().unwrap_or(""));
            let token = match header {
                None => {
                    return Ok(challenge(
                        StatusCode::UNAUTHORIZED,
                        &resource,
                        None,
                        &resource.required_scopes,
                    ));
                }
                Some(value) => match value.split_once(' ') {
                    Some((scheme, token))
                        if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
                    {
                        token.trim().to_owned()
                    }
                    _ => {
                        let mut response = challenge(
                            StatusCode::BAD_REQUEST,
                            &resource,
                            Some((
                                "invalid_request",
                                "the Authorization header must be `Bearer <token>`",
                            )),
                            &[],
                        );
                        *response.status_mut() = StatusCode::BAD_REQUEST;
                        return Ok(response);
                    }
                },
            };
            let claims = match verifier.verify(&token, &resource.resource).await {
                Ok(claims) => claims,
                Err(rejection) => {
                    tracing::debug!(%rejection, "refused an access token");
                    return Ok(challenge(
                        StatusCode::UNAUTHORIZED,
                        &resource,
                        Some(("invalid_token", &rejection.to_string())),
                        &resource.required_scopes,
                    ));
                }
            };
            let missing = resource
                .required_scopes
                .iter()
                .any(|needed| !claims.scopes.contains(needed));
            if missing {
                return Ok(challenge(
                    StatusCode::FORBIDDEN,
                    &resource,
                    Some(("insufficient_scope", "the token lacks a required scope")),
                    &resource.required_scopes,
                ));
            }
            request.extensions_mut().insert(claims);
            inner.call(request).await
        })
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
    }
}
