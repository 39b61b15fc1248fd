//! A protected MCP server and its authorization server in one in-process
//! HTTP server on 127.0.0.1 (as in `mcp-client`'s auth tests): protected
//! resource metadata, authorization server metadata, dynamic registration,
//! an authorization endpoint that approves at once (redirecting with a
//! code), a token endpoint that checks PKCE, and `/mcp` behind a bearer
//! check.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use mcp_server::{Context, NoArguments, Server};
use mcp_transport::http::{HttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[derive(Default)]
struct Record {
    /// code -> PKCE challenge
    codes: HashMap<String, String>,
    tokens: HashSet<String>,
    authorizations: usize,
    issued: usize,
}

struct Fixture {
    base: String,
    record: Mutex<Record>,
    mcp: StreamableHttpService,
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
        self.fixture.record().tokens.clear();
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

fn json_response(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
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
    ) -> Response<Full<Bytes>> {
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
            "/.well-known/oauth-protected-resource/mcp"
            | "/.well-known/oauth-protected-resource" => json_response(
                StatusCode::OK,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
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
                record.tokens.insert(token.clone());
                json_response(
                    StatusCode::OK,
                    json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
                )
            }
            // The body is buffered here, so no GET stream is offered.
            "/mcp" if request.method() == http::Method::GET => {
                json_response(StatusCode::METHOD_NOT_ALLOWED, json!({}))
            }
            "/mcp" => {
                let authorized = request
                    .headers()
                    .get(http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .is_some_and(|token| self.record().tokens.contains(token));
                if !authorized {
                    let mut response = Response::new(Full::new(Bytes::new()));
                    *response.status_mut() = StatusCode::UNAUTHORIZED;
                    let challenge = format!(
                        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                    );
                    response.headers_mut().insert(
                        http::header::WWW_AUTHENTICATE,
                        challenge.parse().expect("header"),
                    );
                    return response;
                }
                let (parts, body) = request.into_parts();
                let body = body.collect().await.expect("body").to_bytes();
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
        .tool(
            "whoami",
            "Says hello",
            |_: NoArguments, _cx: Context| async move { "hello" },
        )
        .build()
        .expect("server");
    let mcp = server.streamable_http_service(HttpServerConfig::new().json_response(true));
    let fixture = Arc::new(Fixture {
        base,
        record: Mutex::default(),
        mcp,
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
