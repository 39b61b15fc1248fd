//! A protected MCP server and its authorization server in one in-process
//! HTTP server on 127.0.0.1: authorization server metadata, dynamic
//! registration, an authorization endpoint that approves at once
//! (redirecting with a code) and a token endpoint that checks PKCE; every
//! other path goes to the SDK's own `BearerGuard` (protected resource
//! metadata, the challenge, the bearer check) in front of `/mcp`.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt as _;
use mcp_server::Server;
use mcp_transport::http::{
    BearerGuard, HttpBody, HttpServerConfig, ProtectedResource, StreamableHttpService, TokenClaims,
    TokenRejection, TokenVerifier, Verification,
};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower_service::Service as _;

#[derive(Default)]
struct Record {
    /// code -> PKCE challenge
    codes: HashMap<String, String>,
    authorizations: usize,
    issued: usize,
}

/// The access tokens issued and not revoked: what the guard accepts.
#[derive(Clone, Default)]
struct Issued(Arc<Mutex<HashSet<String>>>);

impl Issued {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TokenVerifier for Issued {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
        Box::pin(async move {
            if self.lock().contains(token) {
                Ok(TokenClaims::new().with_audiences([resource]))
            } else {
                Err(TokenRejection::Invalid(
                    "not issued here, or revoked".into(),
                ))
            }
        })
    }
}

struct Fixture {
    base: String,
    record: Mutex<Record>,
    issued: Issued,
    guarded: BearerGuard<StreamableHttpService>,
}

/// The running servers.
pub struct AuthServer {
    fixture: Arc<Fixture>,
    task: tokio::task::JoinHandle<()>,
}

impl AuthServer {
    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.fixture.base)
    }

    /// How many times a user approved at the authorization endpoint.
    pub fn authorizations(&self) -> usize {
        self.fixture.record().authorizations
    }

    /// Every issued token stops working.
    pub fn revoke_all(&self) {
        self.fixture.issued.lock().clear();
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

fn json_response(status: StatusCode, body: Value) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody::full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

impl Fixture {
    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn handle(
        self: Arc<Self>,
        request: Request<hyper::body::Incoming>,
    ) -> Response<HttpBody> {
        let query: HashMap<String, String> = request
            .uri()
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        let base = &self.base;
        match request.uri().path() {
            "/.well-known/oauth-authorization-server" => json_response(
                StatusCode::OK,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": true
                }),
            ),
            "/register" => json_response(StatusCode::CREATED, json!({"client_id": "cli-client"})),
            "/authorize" => {
                let code = {
                    let mut record = self.record();
                    record.authorizations += 1;
                    let code = format!("code-{}", record.authorizations);
                    let challenge = query.get("code_challenge").cloned().unwrap_or_default();
                    record.codes.insert(code.clone(), challenge);
                    code
                };
                let Some(redirect) = query.get("redirect_uri") else {
                    return json_response(StatusCode::BAD_REQUEST, json!({}));
                };
                let mut redirect = url::Url::parse(redirect).expect("redirect uri");
                redirect
                    .query_pairs_mut()
                    .append_pair("code", &code)
                    .append_pair(
                        "state",
                        query.get("state").map(String::as_str).unwrap_or(""),
                    )
                    .append_pair("iss", base);
                let mut response = Response::new(HttpBody::empty());
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
                let form: HashMap<String, String> =
                    url::form_urlencoded::parse(&body).into_owned().collect();
                let mut record = self.record();
                let challenge = form.get("code").and_then(|c| record.codes.remove(c));
                let verifier = form.get("code_verifier").cloned().unwrap_or_default();
                let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(verifier.as_bytes()));
                if challenge.as_deref() != Some(computed.as_str()) {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_grant"}),
                    );
                }
                record.issued += 1;
                let token = format!("secret-access-token-{}", record.issued);
                self.issued.lock().insert(token.clone());
                json_response(
                    StatusCode::OK,
                    json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
                )
            }
            _ => {
                let mut guarded = self.guarded.clone();
                match guarded.call(request).await {
                    Ok(response) => response,
                    Err(infallible) => match infallible {},
                }
            }
        }
    }
}

/// Starts the servers.
pub async fn start() -> AuthServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let base = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    let server = Server::builder("protected", "1")
        .tool("whoami", "Says hello", || async move { "hello" })
        .build()
        .expect("server");
    let mcp = server.streamable_http_service(HttpServerConfig::new());
    let issued = Issued::default();
    let resource = ProtectedResource::new(format!("{base}/mcp"), base.clone());
    let guarded = BearerGuard::new(mcp, resource, Arc::new(issued.clone()));
    let fixture = Arc::new(Fixture {
        base,
        record: Mutex::default(),
        issued,
        guarded,
    });
    let serving = fixture.clone();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            let fixture = serving.clone();
            connections.spawn(async move {
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
    AuthServer { fixture, task }
}

/// The test's browser: GETs `url`, and follows redirects (up to five) the
/// way a browser would, ending at the CLI's loopback listener.
pub async fn browse(url: &str) {
    let mut url = url::Url::parse(url).expect("a URL");
    for _ in 0..5 {
        let (status, location) = get(&url).await;
        match location {
            Some(location) if (300..400).contains(&status) => {
                url = url.join(&location).expect("a redirect URL");
            }
            _ => {
                assert_eq!(status, 200, "the browser ended at {url} with {status}");
                return;
            }
        }
    }
    panic!("too many redirects");
}

/// One plain HTTP/1.1 GET: the status and the `Location`.
async fn get(url: &url::Url) -> (u16, Option<String>) {
    let host = url.host_str().expect("a host");
    let port = url.port_or_known_default().expect("a port");
    let mut stream = tokio::net::TcpStream::connect((host, port))
        .await
        .expect("connected");
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut response = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        stream.read_to_end(&mut response),
    )
    .await
    .expect("answered in time")
    .expect("read");
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let location = text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status, location)
}
