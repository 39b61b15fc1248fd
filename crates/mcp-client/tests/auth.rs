//! The OAuth client against a small authorization server and protected MCP
//! server running in the test, on 127.0.0.1.

#![cfg(feature = "auth")]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_client::auth::{
    AuthError, AuthorizationStep, HeadlessRedirect, OAuthClient, OAuthConfig, StepOutcome,
};
use mcp_client::{Client, ClientConfig};
use mcp_server::Server;
use mcp_transport::http::{HttpClientConfig, HttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// How the test authorization server behaves.
#[derive(Default, Clone)]
struct Behaviour {
    /// The path-suffixed metadata URL answers 404 and the challenge names none.
    prm_at_root_only: bool,
    /// The metadata's `resource` is another server.
    foreign_resource: bool,
    /// The redirect carries another issuer.
    wrong_iss: bool,
    /// Access tokens work once, then the server calls them expired.
    single_use_tokens: bool,
    /// The user declines: the redirect carries `error=access_denied`.
    deny: bool,
    /// A 2025-03-26 server: no protected resource metadata anywhere and
    /// none named in the challenge.
    no_prm: bool,
    /// No authorization server metadata either (the 2025-03-26 default
    /// endpoints are all there is).
    no_as_metadata: bool,
    /// The challenge names protected resource metadata that answers 404.
    broken_prm_hint: bool,
    /// The challenge names this URL as its protected resource metadata.
    prm_hint: Option<String>,
    /// The protected resource metadata names this authorization server.
    issuer: Option<String>,
    /// The authorization server metadata names this authorization endpoint.
    authorization_endpoint: Option<String>,
}

#[derive(Default)]
struct Record {
    authorize_calls: Vec<HashMap<String, String>>,
    token_calls: Vec<HashMap<String, String>>,
    /// access token -> (scopes, uses left)
    tokens: HashMap<String, (String, u32)>,
    challenges: HashMap<String, (String, String)>,
    issued: u32,
}

struct Fixture {
    base: String,
    behaviour: Behaviour,
    record: Mutex<Record>,
    mcp: StreamableHttpService,
}

fn json_response(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        "application/json".parse().expect("header"),
    );
    response
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

impl Fixture {
    fn challenge(
        &self,
        status: StatusCode,
        scope: &str,
        error: Option<&str>,
    ) -> Response<Full<Bytes>> {
        let mut value = String::from("Bearer ");
        if let Some(hint) = &self.behaviour.prm_hint {
            value.push_str(&format!("resource_metadata=\"{hint}\", "));
        } else if !self.behaviour.prm_at_root_only && !self.behaviour.no_prm {
            value.push_str(&format!(
                "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", ",
                self.base
            ));
        }
        value.push_str(&format!("scope=\"{scope}\""));
        if let Some(error) = error {
            value.push_str(&format!(", error=\"{error}\""));
        }
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = status;
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            value.parse().expect("header"),
        );
        response
    }

    async fn handle(
        self: Arc<Self>,
        request: Request<hyper::body::Incoming>,
    ) -> Response<Full<Bytes>> {
        let path = request.uri().path().to_owned();
        let query: HashMap<String, String> = request
            .uri()
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        let b = &self.behaviour;
        match path.as_str() {
            "/.well-known/oauth-protected-resource/mcp"
                if b.prm_at_root_only || b.no_prm || b.broken_prm_hint =>
            {
                json_response(StatusCode::NOT_FOUND, json!({}))
            }
            "/.well-known/oauth-protected-resource" if b.no_prm || b.broken_prm_hint => {
                json_response(StatusCode::NOT_FOUND, json!({}))
            }
            "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration"
                if b.no_as_metadata =>
            {
                json_response(StatusCode::NOT_FOUND, json!({}))
            }
            "/.well-known/oauth-protected-resource/mcp"
            | "/.well-known/oauth-protected-resource" => {
                let resource = if b.foreign_resource {
                    "https://evil.example.com/mcp".to_owned()
                } else {
                    format!("{}/mcp", self.base)
                };
                let issuer = b.issuer.clone().unwrap_or_else(|| self.base.clone());
                json_response(
                    StatusCode::OK,
                    json!({
                        "resource": resource,
                        "authorization_servers": [issuer],
                        "scopes_supported": ["mcp:read", "mcp:write"]
                    }),
                )
            }
            "/.well-known/oauth-authorization-server" => json_response(
                StatusCode::OK,
                json!({
                    "issuer": self.base,
                    "authorization_endpoint": b.authorization_endpoint.clone()
                        .unwrap_or_else(|| format!("{}/authorize", self.base)),
                    "token_endpoint": format!("{}/token", self.base),
                    "registration_endpoint": format!("{}/register", self.base),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": true,
                    "scopes_supported": ["mcp:read", "mcp:write", "offline_access"]
                }),
            ),
            "/register" => {
                json_response(StatusCode::CREATED, json!({"client_id": "dynamic-client"}))
            }
            "/authorize" => {
                let code = format!(
                    "code-{}",
                    self.record.lock().expect("lock").authorize_calls.len()
                );
                let challenge = query.get("code_challenge").cloned().unwrap_or_default();
                let scope = query.get("scope").cloned().unwrap_or_default();
                {
                    let mut record = self.record.lock().expect("lock");
                    record.challenges.insert(code.clone(), (challenge, scope));
                    record.authorize_calls.push(query.clone());
                }
                let iss = if b.wrong_iss {
                    "https://impostor.example.com".to_owned()
                } else {
                    self.base.clone()
                };
                let mut redirect = url::Url::parse(&query["redirect_uri"]).expect("redirect uri");
                if b.deny {
                    redirect
                        .query_pairs_mut()
                        .append_pair("error", "access_denied");
                }
                redirect
                    .query_pairs_mut()
                    .append_pair("code", &code)
                    .append_pair(
                        "state",
                        query.get("state").map(String::as_str).unwrap_or(""),
                    )
                    .append_pair("iss", &iss);
                let mut response = Response::new(Full::new(Bytes::new()));
                *response.status_mut() = StatusCode::FOUND;
                response.headers_mut().insert(
                    http::header::LOCATION,
                    redirect.as_str().parse().expect("header"),
                );
                response
            }
            "/token" => {
                let body = request
                    .into_body()
                    .collect()
                    .await
                    .expect("body")
                    .to_bytes();
                let params = form(&body);
                let mut record = self.record.lock().expect("lock");
                record.token_calls.push(params.clone());
                let scope = match params.get("grant_type").map(String::as_str) {
                    Some("authorization_code") => {
                        let Some((challenge, scope)) = record.challenges.remove(&params["code"])
                        else {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                json!({"error": "invalid_grant"}),
                            );
                        };
                        let verifier = params.get("code_verifier").cloned().unwrap_or_default();
                        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                            .encode(Sha256::digest(verifier.as_bytes()));
                        if computed != challenge {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                json!({"error": "invalid_grant"}),
                            );
                        }
                        scope
                    }
                    Some("refresh_token") => "mcp:read mcp:write".to_owned(),
                    _ => {
                        return json_response(
                            StatusCode::BAD_REQUEST,
                            json!({"error": "unsupported_grant_type"}),
                        );
                    }
                };
                record.issued += 1;
                let token = format!("access-{}", record.issued);
                let uses = if b.single_use_tokens { 1 } else { u32::MAX };
                record.tokens.insert(token.clone(), (scope, uses));
                json_response(
                    StatusCode::OK,
                    json!({"access_token": token, "token_type": "Bearer",
                           "refresh_token": format!("refresh-{}", record.issued), "expires_in": 3600}),
                )
            }
            // This fixture buffers bodies, so it offers no GET stream.
            "/mcp" if request.method() == http::Method::GET => {
                json_response(StatusCode::METHOD_NOT_ALLOWED, json!({}))
            }
            "/mcp" => {
                let token = request
                    .headers()
                    .get(http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(str::to_owned);
                let scope = {
                    let mut record = self.record.lock().expect("lock");
                    match token.and_then(|t| record.tokens.get_mut(&t).map(|e| (e, t))) {
                        Some(((scope, uses), _)) if *uses > 0 => {
                            *uses -= 1;
                            Some(scope.clone())
                        }
                        Some(_) => None,
                        None => None,
                    }
                };
                let Some(scope) = scope else {
                    return self.challenge(
                        StatusCode::UNAUTHORIZED,
                        "mcp:read",
                        Some("invalid_token"),
                    );
                };
                // Calling a tool needs mcp:write: step-up.
                let (parts, body) = request.into_parts();
                let body = body.collect().await.expect("body").to_bytes();
                let is_call = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .is_some_and(|v| v["method"] == "tools/call");
                if is_call && !scope.split(' ').any(|s| s == "mcp:write") {
                    return self.challenge(
                        StatusCode::FORBIDDEN,
                        "mcp:write",
                        Some("insufficient_scope"),
                    );
                }
                let response = self
                    .mcp
                    .handle(Request::from_parts(parts, Full::new(body)))
                    .await;
                let (parts, body) = response.into_parts();
                let bytes = body
                    .collect()
                    .await
                    .map(|c| c.to_bytes())
                    .unwrap_or_default();
                Response::from_parts(parts, Full::new(bytes))
            }
            _ => json_response(StatusCode::NOT_FOUND, json!({})),
        }
    }
}

/// A listener on a free loopback port, and its `http://` base URL.
async fn loopback() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let port = listener.local_addr().expect("addr").port();
    (listener, format!("http://127.0.0.1:{port}"))
}

/// How many times the fixture's authorization endpoint was visited.
fn authorizations(fixture: &Fixture) -> usize {
    fixture.record.lock().expect("lock").authorize_calls.len()
}

async fn start(behaviour: Behaviour) -> Arc<Fixture> {
    let (listener, base) = loopback().await;
    let server = Server::builder("protected", "1")
        .tool("whoami", "Says hello", || async move { "hello" })
        .build()
        .expect("server");
    let mcp = server.streamable_http_service(HttpServerConfig::new().json_response(true));
    let fixture = Arc::new(Fixture {
        base,
        behaviour,
        record: Mutex::new(Record::default()),
        mcp,
    });
    let serving = fixture.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                break;
            };
            let fixture = serving.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let fixture = fixture.clone();
                    async move { Ok::<_, Infallible>(fixture.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    fixture
}

/// A host on another origin (its own port): counts every request it
/// receives and answers each with `body`.
struct Foreign {
    base: String,
    hits: Arc<AtomicUsize>,
    body: Arc<Mutex<Value>>,
}

impl Foreign {
    async fn start() -> Self {
        let (listener, base) = loopback().await;
        let hits = Arc::new(AtomicUsize::new(0));
        let body = Arc::new(Mutex::new(json!({})));
        let (counting, answering) = (hits.clone(), body.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (hits, body) = (counting.clone(), answering.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |_request| {
                        hits.fetch_add(1, Ordering::SeqCst);
                        let body = body.lock().expect("lock").clone();
                        async move { Ok::<_, Infallible>(json_response(StatusCode::OK, body)) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { base, hits, body }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn oauth() -> Arc<OAuthClient> {
    let step = Arc::new(HeadlessRedirect::new().expect("tls"));
    OAuthClient::new(OAuthConfig::new(
        "test-client",
        "http://localhost:9/callback",
        step,
    ))
    .expect("client")
}

async fn connect(
    fixture: &Fixture,
    authorizer: Arc<OAuthClient>,
) -> Result<Client, mcp_client::Error> {
    let http = HttpClientConfig::new().authorizer(authorizer);
    let config = ClientConfig::new("c", "1").protocol_version(mcp_types::Revision::V2025_11_25);
    Client::connect_http_with(&format!("{}/mcp", fixture.base), http, config).await
}

#[tokio::test]
async fn the_whole_flow_with_pkce_resource_indicators_and_step_up() {
    let fixture = start(Behaviour::default()).await;
    let client = connect(&fixture, oauth()).await.expect("authorized");
    let result = client
        .call_tool("whoami", json!({}))
        .await
        .expect("stepped up and called");
    assert_eq!(result.content[0].as_text(), Some("hello"));
    let record = fixture.record.lock().expect("lock");
    assert_eq!(
        record.authorize_calls.len(),
        2,
        "first authorization, then step-up"
    );
    let first = &record.authorize_calls[0];
    assert_eq!(first["code_challenge_method"], "S256");
    assert_eq!(first["resource"], format!("{}/mcp", fixture.base));
    assert_eq!(first["client_id"], "dynamic-client");
    let step_up: Vec<&str> = record.authorize_calls[1]["scope"].split(' ').collect();
    assert!(
        step_up.contains(&"mcp:read") && step_up.contains(&"mcp:write"),
        "{step_up:?}"
    );
    assert!(
        record
            .token_calls
            .iter()
            .all(|t| t["resource"] == format!("{}/mcp", fixture.base)),
        "the resource goes to the token endpoint too"
    );
}

#[tokio::test]
async fn metadata_discovery_falls_back_to_the_root_document() {
    let fixture = start(Behaviour {
        prm_at_root_only: true,
        ..Default::default()
    })
    .await;
    let client = connect(&fixture, oauth()).await.expect("authorized");
    client.list_all_tools().await.expect("listed");
}

#[tokio::test]
async fn a_2025_03_26_server_without_resource_metadata_is_found_at_its_origin() {
    let fixture = start(Behaviour {
        no_prm: true,
        ..Default::default()
    })
    .await;
    let client = connect(&fixture, oauth()).await.expect("authorized");
    client.list_all_tools().await.expect("listed");
    let record = fixture.record.lock().expect("lock");
    assert_eq!(record.authorize_calls.len(), 1);
    // A 2025-03-26 authorization server predates resource indicators.
    assert!(!record.authorize_calls[0].contains_key("resource"));
    assert!(
        record
            .token_calls
            .iter()
            .all(|t| !t.contains_key("resource"))
    );
}

#[tokio::test]
async fn a_2025_03_26_server_without_any_metadata_uses_the_default_endpoints() {
    let fixture = start(Behaviour {
        no_prm: true,
        no_as_metadata: true,
        ..Default::default()
    })
    .await;
    let client = connect(&fixture, oauth()).await.expect("authorized");
    client.list_all_tools().await.expect("listed");
    let record = fixture.record.lock().expect("lock");
    assert_eq!(record.authorize_calls.len(), 1, "/authorize at the origin");
    assert_eq!(record.authorize_calls[0]["client_id"], "dynamic-client");
    assert_eq!(record.authorize_calls[0]["code_challenge_method"], "S256");
    assert_eq!(record.token_calls.len(), 1, "/token at the origin");
}

#[tokio::test]
async fn a_challenge_naming_missing_metadata_is_not_taken_for_a_2025_03_26_server() {
    let fixture = start(Behaviour {
        broken_prm_hint: true,
        ..Default::default()
    })
    .await;
    let Err(error) = connect(&fixture, oauth()).await else {
        panic!("a server whose named metadata is missing must be refused");
    };
    assert!(
        matches!(error.auth(), Some(AuthError::NoResourceMetadata { .. })),
        "{error:?}"
    );
    assert_eq!(authorizations(&fixture), 0, "nobody was sent to sign in");
}

#[tokio::test]
async fn an_expired_token_is_refreshed_without_a_new_authorization() {
    let fixture = start(Behaviour {
        single_use_tokens: true,
        ..Default::default()
    })
    .await;
    let client = connect(&fixture, oauth()).await.expect("authorized");
    client
        .list_all_tools()
        .await
        .expect("listed after a refresh");
    let record = fixture.record.lock().expect("lock");
    assert!(
        record
            .token_calls
            .iter()
            .any(|t| t["grant_type"] == "refresh_token"),
        "a refresh grant was used"
    );
    assert_eq!(record.authorize_calls.len(), 1, "no second sign-in");
}

#[tokio::test]
async fn a_wrong_issuer_in_the_redirect_stops_the_code_exchange() {
    let fixture = start(Behaviour {
        wrong_iss: true,
        ..Default::default()
    })
    .await;
    let error = connect(&fixture, oauth()).await.err().expect("refused");
    assert!(error.to_string().contains("issuer"), "{error}");
    assert!(
        matches!(
            error.auth(),
            Some(AuthError::ResponseIssuerMismatch { found, .. }) if found == "https://impostor.example.com"
        ),
        "{error:?}"
    );
    assert!(
        error.remote().is_none(),
        "the server sent no error: {error}"
    );
    assert!(
        fixture.record.lock().expect("lock").token_calls.is_empty(),
        "the code was not redeemed"
    );
}

#[tokio::test]
async fn metadata_for_another_resource_is_refused_before_authorizing() {
    let fixture = start(Behaviour {
        foreign_resource: true,
        ..Default::default()
    })
    .await;
    let error = connect(&fixture, oauth()).await.err().expect("refused");
    assert!(error.to_string().contains("evil.example.com"), "{error}");
    assert!(
        matches!(error.auth(), Some(AuthError::ForeignResource { .. })),
        "{error:?}"
    );
    assert_eq!(authorizations(&fixture), 0, "nobody was sent to sign in");
}

#[tokio::test]
async fn resource_metadata_on_another_origin_is_refused_before_any_request() {
    // The challenge points at metadata on another port: another origin.
    let foreign = Foreign::start().await;
    let hint = format!("{}/.well-known/oauth-protected-resource/mcp", foreign.base);
    let fixture = start(Behaviour {
        prm_hint: Some(hint),
        ..Default::default()
    })
    .await;
    // What the foreign host would answer passes every later check: only
    // its origin tells it apart.
    *foreign.body.lock().expect("lock") = json!({
        "resource": format!("{}/mcp", fixture.base),
        "authorization_servers": [fixture.base],
    });
    let error = connect(&fixture, oauth()).await.err().expect("refused");
    assert!(
        matches!(
            error.auth(),
            Some(AuthError::ForeignResourceMetadata { url, .. }) if url.starts_with(&foreign.base)
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("origin"), "{error}");
    assert_eq!(foreign.hits(), 0, "the foreign host got no request");
    assert_eq!(authorizations(&fixture), 0, "nobody was sent to sign in");
}

#[tokio::test]
async fn an_issuer_with_a_query_is_refused_before_any_request() {
    // RFC 8414: an issuer identifier has no query or fragment.
    let foreign = Foreign::start().await;
    let fixture = start(Behaviour {
        issuer: Some(format!("{}/tenant?next=/admin", foreign.base)),
        ..Default::default()
    })
    .await;
    let error = connect(&fixture, oauth()).await.err().expect("refused");
    assert!(
        matches!(
            error.auth(),
            Some(AuthError::UnusableUrl { role: "issuer", .. })
        ),
        "{error:?}"
    );
    assert_eq!(foreign.hits(), 0, "the named issuer got no request");
}

#[tokio::test]
async fn an_authorization_endpoint_that_is_not_http_is_never_opened() {
    // The browser would be handed whatever the metadata names.
    let fixture = start(Behaviour {
        authorization_endpoint: Some("file:///etc/passwd".into()),
        ..Default::default()
    })
    .await;
    let step = Arc::new(RecordingStep::default());
    let config = OAuthConfig::new("test-client", "http://localhost:9/callback", step.clone());
    let authorizer = OAuthClient::new(config).expect("client");
    let error = connect(&fixture, authorizer).await.err().expect("refused");
    assert!(
        matches!(
            error.auth(),
            Some(AuthError::UnusableUrl {
                role: "authorization endpoint",
                ..
            })
        ),
        "{error:?}"
    );
    assert_eq!(
        step.opened.lock().expect("lock").as_slice(),
        &[] as &[String],
        "nothing was handed to the browser"
    );
    let record = fixture.record.lock().expect("lock");
    assert!(record.authorize_calls.is_empty() && record.token_calls.is_empty());
}

/// A sign-in step that records the URLs it is asked to open (a browser
/// would open them) and signs nobody in.
#[derive(Debug, Default)]
struct RecordingStep {
    opened: Mutex<Vec<String>>,
}

impl AuthorizationStep for RecordingStep {
    fn authorize(&self, url: url::Url) -> StepOutcome<'_> {
        self.opened.lock().expect("lock").push(url.to_string());
        Box::pin(async { Err(AuthError::Step("nobody signs in here".into())) })
    }
}

#[tokio::test]
async fn tokens_stay_out_of_debug_output() {
    let fixture = start(Behaviour::default()).await;
    let authorizer = oauth();
    let client = connect(&fixture, authorizer.clone())
        .await
        .expect("authorized");
    client.list_all_tools().await.expect("listed");
    let debug = format!("{authorizer:?}");
    assert!(!debug.contains("access-"), "{debug}");
    assert!(!debug.contains("refresh-"), "{debug}");
}

#[tokio::test]
async fn a_declined_authorization_reaches_the_caller_as_a_typed_auth_error() {
    let fixture = start(Behaviour {
        deny: true,
        ..Default::default()
    })
    .await;
    let error = connect(&fixture, oauth()).await.err().expect("refused");
    assert!(
        matches!(error.auth(), Some(AuthError::Denied { error }) if error == "access_denied"),
        "{error:?}"
    );
    assert!(error.is_transport(), "{error}");
    assert!(
        error.remote().is_none(),
        "the server sent no error: {error}"
    );
    assert!(!error.is_connection_closed(), "{error}");
    assert!(
        fixture.record.lock().expect("lock").token_calls.is_empty(),
        "no code was redeemed"
    );
}

#[tokio::test]
async fn a_refused_token_request_names_the_oauth_error_and_never_the_secret() {
    let fixture = start(Behaviour::default()).await;
    let secret = "s3cr3t-client-secret".to_owned();
    let step = Arc::new(HeadlessRedirect::new().expect("tls"));
    // The fixture's token endpoint knows no client credentials grant.
    let config = OAuthConfig::new("test-client", "http://localhost:9/callback", step)
        .client_credentials("machine", secret.clone());
    let authorizer = OAuthClient::new(config).expect("client");
    let error = connect(&fixture, authorizer).await.err().expect("refused");
    assert!(
        matches!(
            error.auth(),
            Some(AuthError::Refused { status: 400, error: Some(code), .. }) if code == "unsupported_grant_type"
        ),
        "{error:?}"
    );
    assert!(!error.to_string().contains(&secret), "{error}");
    assert!(!format!("{error:?}").contains(&secret), "{error:?}");
}

#[test]
fn a_key_that_is_not_p256_pkcs8_is_a_typed_error() {
    let step = Arc::new(HeadlessRedirect::new().expect("tls"));
    let error = OAuthConfig::new("c", "http://localhost:9/callback", step)
        .client_credentials_jwt(
            "machine",
            "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----",
        )
        .expect_err("refused");
    assert!(matches!(error, AuthError::InvalidKey(_)), "{error:?}");
    assert!(!error.to_string().contains("nope"), "{error}");
}
