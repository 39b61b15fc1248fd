//! OAuth 2.1 for protected MCP servers (feature `auth`): discovery of the
//! protected resource and its authorization server, client registration
//! (pre-registered, client ID metadata document, dynamic), PKCE, resource
//! indicators, scope selection and step-up, refresh, and the `iss` checks.
//!
//! [`OAuthClient`] plugs into the HTTP transport as its
//! [`Authorizer`]; how the user signs in is an [`AuthorizationStep`]
//! (a browser in a desktop host; [`HeadlessRedirect`] in tests).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_transport::http::{AuthChallenge, AuthHeaders, AuthOutcome, Authorizer, HttpsClient};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

mod error;
mod jose;
pub use error::AuthError;
use error::redacted;
use jose::Es256Key;

/// The largest metadata or token response read, in bytes.
const MAX_RESPONSE: usize = 1024 * 1024;
/// Authorizations attempted for one resource before giving up (step-up loops).
const MAX_AUTHORIZATIONS: u32 = 3;

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

/// How the client identifies itself to authorization servers.
#[derive(Clone)]
pub struct OAuthConfig {
    client_name: String,
    redirect_uri: String,
    preregistered: Option<(String, Option<String>)>,
    metadata_document: Option<String>,
    application_type: String,
    step: Arc<dyn AuthorizationStep>,
    grant: Grant,
    dpop: bool,
    assertion_key: Option<Es256Key>,
}

/// How tokens are obtained.
#[derive(Clone)]
enum Grant {
    /// A user signs in (authorization code with PKCE).
    AuthorizationCode,
    /// Machine-to-machine with a client secret.
    ClientCredentials,
    /// A workload presents a JWT it was issued (RFC 7523).
    JwtBearer { assertion: String },
    /// Enterprise-managed: the identity provider's ID token is exchanged for
    /// an identity assertion grant (RFC 8693), then presented as a JWT bearer.
    Enterprise {
        idp_token_endpoint: String,
        idp_client_id: String,
        id_token: String,
    },
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field(
                "preregistered_client_id",
                &self.preregistered.as_ref().map(|(id, _)| id),
            )
            .field("metadata_document", &self.metadata_document)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// A client called `client_name` whose redirect URI is `redirect_uri`
    /// (localhost or https), signing in through `step`.
    pub fn new(
        client_name: impl Into<String>,
        redirect_uri: impl Into<String>,
        step: Arc<dyn AuthorizationStep>,
    ) -> Self {
        Self {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            preregistered: None,
            metadata_document: None,
            application_type: "native".into(),
            step,
            grant: Grant::AuthorizationCode,
            dpop: false,
            assertion_key: None,
        }
    }

    /// Machine-to-machine: the OAuth client credentials grant with these
    /// pre-registered credentials (`client_secret_basic`), no user and no
    /// redirect (the client credentials extension).
    pub fn client_credentials(mut self, client_id: impl Into<String>, secret: String) -> Self {
        self.preregistered = Some((client_id.into(), Some(secret)));
        self.grant = Grant::ClientCredentials;
        self
    }

    /// Machine-to-machine with a `private_key_jwt` client assertion signed
    /// by `private_key_pem` (a PKCS#8 P-256 key, ES256).
    ///
    /// # Errors
    /// When the key is not a PKCS#8 P-256 private key.
    pub fn client_credentials_jwt(
        mut self,
        client_id: impl Into<String>,
        private_key_pem: &str,
    ) -> Result<Self, AuthError> {
        self.assertion_key = Some(Es256Key::from_pem(private_key_pem)?);
        self.preregistered = Some((client_id.into(), None));
        self.grant = Grant::ClientCredentials;
        Ok(self)
    }

    /// Sender-constrained tokens (DPoP, RFC 9449) with a fresh ES256 key,
    /// when the authorization server supports them.
    pub fn dpop(mut self, enabled: bool) -> Self {
        self.dpop = enabled;
        self
    }

    /// Workload identity: present `assertion`, a JWT issued to this
    /// workload, with the JWT bearer grant (RFC 7523).
    pub fn jwt_bearer(
        mut self,
        client_id: impl Into<String>,
        assertion: impl Into<String>,
    ) -> Self {
        self.preregistered = Some((client_id.into(), None));
        self.grant = Grant::JwtBearer {
            assertion: assertion.into(),
        };
        self
    }

    /// Enterprise-managed authorization: exchange the identity provider's
    /// `id_token` at `idp_token_endpoint` for an identity assertion, then
    /// redeem it with these credentials at the MCP server's authorization server.
    pub fn enterprise_managed(
        mut self,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: impl Into<String>,
        client_id: impl Into<String>,
        secret: Option<String>,
    ) -> Self {
        self.preregistered = Some((client_id.into(), secret));
        self.grant = Grant::Enterprise {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            id_token: id_token.into(),
        };
        self
    }

    /// Credentials registered with the authorization server beforehand
    /// (used first).
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.preregistered = Some((client_id.into(), secret));
        self
    }

    /// The https URL of this client's metadata document, used as its
    /// `client_id` where the server supports client ID metadata documents.
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// `native` (default) or `web`, sent with dynamic registration.
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.application_type = kind.into();
        self
    }
}

#[derive(Debug, Clone, Deserialize)]
struct ResourceMetadata {
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    scopes_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    client_id_metadata_document_supported: bool,
    #[serde(default)]
    authorization_response_iss_parameter_supported: bool,
}

#[derive(Clone)]
struct Registration {
    client_id: String,
    secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    method: String,
}

#[derive(Clone, Default)]
struct Tokens {
    access: Option<String>,
    refresh: Option<String>,
    expires: Option<Instant>,
    /// `DPoP` for sender-constrained tokens, else `Bearer`.
    dpop_bound: bool,
}

#[derive(Default)]
struct State {
    tokens: Tokens,
    /// Every scope asked for so far (step-up keeps the union).
    scopes: BTreeSet<String>,
    /// Registrations by authorization server issuer: never reused with another.
    registrations: HashMap<String, Registration>,
    /// The issuer the current tokens came from.
    issuer: Option<String>,
    authorizations: u32,
    last_authorization: Option<Instant>,
    /// What refreshing the current tokens needs.
    refresh_with: Option<(ServerMetadata, Registration, String)>,
    /// The latest DPoP nonces of the authorization and resource servers.
    as_nonce: Option<String>,
    rs_nonce: Option<String>,
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

/// A `WWW-Authenticate: Bearer` challenge's parameters.
#[derive(Debug, Default, PartialEq, Eq)]
struct Bearer {
    resource_metadata: Option<String>,
    scope: Option<String>,
    error: Option<String>,
}

fn parse_challenge(header: &str) -> Bearer {
    let mut bearer = Bearer::default();
    let Some(start) = header.to_ascii_lowercase().find("bearer") else {
        return bearer;
    };
    let mut rest = &header[start + "bearer".len()..];
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            value = quoted[..end].to_owned();
            rest = quoted.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        match key.as_str() {
            "resource_metadata" => bearer.resource_metadata = Some(value),
            "scope" => bearer.scope = Some(value),
            "error" => bearer.error = Some(value),
            _ => {}
        }
    }
    bearer
}

fn random_token(bytes: usize) -> Result<String, AuthError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(AuthError::Randomness)?;
    Ok(URL_SAFE_NO_PAD.encode(buffer))
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

/// The JSON answer of a registration or token request to `url`. A refusal
/// keeps the OAuth `error` code of its body when it has a plausible one
/// (never the rest of the body).
fn json_answer(
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

    /// RFC 9728: the challenge's URL, else the path form, else the root.
    async fn resource_metadata(
        &self,
        server: &Url,
        hinted: Option<&str>,
    ) -> Result<ResourceMetadata, AuthError> {
        let mut candidates = Vec::new();
        if let Some(hint) = hinted {
            candidates.push(hint.to_owned());
        }
        let origin = server.origin().ascii_serialization();
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(format!(
                "{origin}/.well-known/oauth-protected-resource{path}"
            ));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
        for candidate in candidates {
            if let Some(metadata) = self.get_json::<ResourceMetadata>(&candidate).await? {
                return Ok(metadata);
            }
        }
        Err(AuthError::NoResourceMetadata {
            server: redacted(server.as_str()),
        })
    }

    /// RFC 8414 and OpenID discovery, in the spec's order, with the issuer check.
    async fn server_metadata(&self, issuer: &str) -> Result<ServerMetadata, AuthError> {
        let url = Url::parse(issuer).map_err(|e| invalid_url("issuer", issuer, e))?;
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let candidates = if path.is_empty() {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server"),
                format!("{origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server{path}"),
                format!("{origin}/.well-known/openid-configuration{path}"),
                format!("{origin}{path}/.well-known/openid-configuration"),
            ]
        };
        for candidate in candidates {
            if let Some(metadata) = self.get_json::<ServerMetadata>(&candidate).await? {
                if metadata.issuer != issuer {
                    return Err(AuthError::MetadataIssuerMismatch {
                        url: candidate,
                        expected: issuer.to_owned(),
                        found: metadata.issuer,
                    });
                }
                return Ok(metadata);
            }
        }
        Err(AuthError::NoServerMetadata {
            issuer: issuer.to_owned(),
        })
    }

    async fn register(
        &self,
        server: &ServerMetadata,
        scopes: &str,
    ) -> Result<Registration, AuthError> {
        if let Some(existing) = self.lock().registrations.get(&server.issuer) {
            return Ok(existing.clone());
        }
        let methods = server
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| vec!["client_secret_basic".into()]);
        let registration = if let Some((id, secret)) = &self.config.preregistered {
            let method = if secret.is_none() {
                "none"
            } else if methods.iter().any(|m| m == "client_secret_basic") {
                "client_secret_basic"
            } else {
                "client_secret_post"
            };
            Registration {
                client_id: id.clone(),
                secret: secret.clone(),
                method: method.into(),
            }
        } else if let (true, Some(document)) = (
            server.client_id_metadata_document_supported,
            &self.config.metadata_document,
        ) {
            Registration {
                client_id: document.clone(),
                secret: None,
                method: "none".into(),
            }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.dynamic_registration(endpoint, server, scopes).await?
        } else {
            return Err(AuthError::NoRegistration {
                issuer: server.issuer.clone(),
            });
        };
        self.lock()
            .registrations
            .insert(server.issuer.clone(), registration.clone());
        Ok(registration)
    }

    async fn dynamic_registration(
        &self,
        endpoint: &str,
        server: &ServerMetadata,
        scopes: &str,
    ) -> Result<Registration, AuthError> {
        let offline = offline_supported(server);
        let mut grant_types = vec!["authorization_code"];
        if offline {
            grant_types.push("refresh_token");
        }
        let methods = server
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_default();
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| methods.is_empty() || methods.iter().any(|s| s == m))
            .unwrap_or("client_secret_basic");
        let mut body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self.config.application_type,
        });
        if !scopes.is_empty() {
            body["scope"] = Value::from(scopes);
        }
        const ENDPOINT: &str = "registration endpoint";
        let request = Request::post(endpoint)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| invalid_url(ENDPOINT, endpoint, e))?;
        let (status, response) = self.send(request).await?;
        let registered = json_answer(ENDPOINT, endpoint, status, &response)?;
        let client_id = registered["client_id"]
            .as_str()
            .ok_or(AuthError::MissingField {
                endpoint: ENDPOINT,
                field: "client_id",
            })?
            .to_owned();
        let secret = registered["client_secret"].as_str().map(str::to_owned);
        let method = registered["token_endpoint_auth_method"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| {
                if secret.is_some() {
                    "client_secret_basic"
                } else {
                    "none"
                }
                .to_owned()
            });
        Ok(Registration {
            client_id,
            secret,
            method,
        })
    }

    async fn token_request(
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
    async fn token_request_once(
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
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{k}={}", form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
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
        let tokens = json_answer(ENDPOINT, &server.token_endpoint, status, &response)?;
        let access = tokens["access_token"]
            .as_str()
            .ok_or(AuthError::MissingField {
                endpoint: ENDPOINT,
                field: "access_token",
            })?
            .to_owned();
        let mut state = self.lock();
        let dpop_bound = tokens["token_type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"));
        state.tokens = Tokens {
            dpop_bound: dpop_bound || self.dpop.is_some(),
            access: Some(access),
            refresh: tokens["refresh_token"]
                .as_str()
                .map(str::to_owned)
                .or(state.tokens.refresh.take()),
            expires: tokens["expires_in"]
                .as_u64()
                .map(|s| Instant::now() + Duration::from_secs(s)),
        };
        state.issuer = Some(server.issuer.clone());
        Ok(Some(()))
    }

    /// The whole flow for a challenge: discovery, registration, the user's
    /// authorization with PKCE, and the code exchange.
    /// Trades the refresh token for new tokens; false when there is none
    /// or the server refuses it.
    async fn refresh(&self) -> bool {
        let (refresh, with) = {
            let state = self.lock();
            (state.tokens.refresh.clone(), state.refresh_with.clone())
        };
        let (Some(refresh), Some((server, registration, resource))) = (refresh, with) else {
            return false;
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh),
            ("resource", resource),
        ];
        match self.token_request(&server, &registration, form).await {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!(%error, "refresh failed; authorizing again");
                self.lock().tokens.refresh = None;
                false
            }
        }
    }

    async fn authorize(&self, challenge: &AuthChallenge) -> Result<bool, AuthError> {
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
        let resource = self
            .resource_metadata(&server_url, bearer.resource_metadata.as_deref())
            .await?;
        let resource_id = resource
            .resource
            .clone()
            .unwrap_or_else(|| challenge.url.clone());
        check_resource(&resource_id, &server_url)?;
        let issuer = resource
            .authorization_servers
            .first()
            .ok_or_else(|| AuthError::NoAuthorizationServer {
                resource: resource_id.clone(),
            })?
            .clone();
        let server = self.server_metadata(&issuer).await?;
        if !server
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(AuthError::PkceUnsupported { issuer });
        }
        // Scopes: the challenge, else what the resource supports; step-up
        // keeps everything asked for before.
        let mut requested: BTreeSet<String> = match (&bearer.scope, &resource.scopes_supported) {
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
                        &resource_id,
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
            form.push(("resource", resource_id.clone()));
            if !scope.is_empty() {
                form.push(("scope", scope));
            }
            self.token_request(&server, &registration, form).await?;
            return Ok(true);
        }

        let verifier = random_token(48)?;
        let challenge_value = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
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
                .append_pair("state", &state_value)
                .append_pair("resource", &resource_id);
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
        self.token_request(
            &server,
            &registration,
            vec![
                ("grant_type", "authorization_code".into()),
                ("code", code),
                ("redirect_uri", self.config.redirect_uri.clone()),
                ("code_verifier", verifier),
                ("resource", resource_id.clone()),
            ],
        )
        .await?;
        self.lock().refresh_with = Some((server, registration, resource_id));
        Ok(true)
    }
}

impl OAuthClient {
    /// RFC 8693 at the identity provider: its ID token for an identity
    /// assertion grant (ID-JAG) aimed at the MCP server's authorization server.
    async fn identity_assertion(
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
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{k}={}", form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
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

/// Whether the authorization server lists `offline_access`, the only case
/// where asking for it (and for refresh tokens) is allowed.
fn offline_supported(server: &ServerMetadata) -> bool {
    server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
}

/// RFC 8707 / RFC 9728: the metadata's resource must be the server being
/// accessed (same origin, and a prefix of its path).
fn check_resource(resource: &str, server: &Url) -> Result<(), AuthError> {
    let parsed = Url::parse(resource).map_err(|e| invalid_url("resource", resource, e))?;
    let same_origin = parsed.origin() == server.origin();
    let path_ok = server
        .path()
        .starts_with(parsed.path().trim_end_matches('/'));
    if same_origin && path_ok {
        Ok(())
    } else {
        Err(AuthError::ForeignResource {
            resource: redacted(resource),
            server: redacted(server.as_str()),
        })
    }
}

fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quoted_and_bare_values() {
        let bearer = parse_challenge(
            r#"Bearer resource_metadata="https://s/.well-known/oauth-protected-resource", scope="a b", error=insufficient_scope"#,
        );
        assert_eq!(
            bearer.resource_metadata.as_deref(),
            Some("https://s/.well-known/oauth-protected-resource")
        );
        assert_eq!(bearer.scope.as_deref(), Some("a b"));
        assert_eq!(bearer.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(parse_challenge("Basic realm=x"), Bearer::default());
    }

    #[test]
    fn the_resource_must_be_the_server_being_accessed() {
        let server = Url::parse("http://localhost:3000/mcp").expect("url");
        assert!(check_resource("http://localhost:3000/mcp", &server).is_ok());
        assert!(check_resource("http://localhost:3000", &server).is_ok());
        assert!(check_resource("https://evil.example.com/mcp", &server).is_err());
        assert!(check_resource("http://localhost:3000/other", &server).is_err());
    }
}
