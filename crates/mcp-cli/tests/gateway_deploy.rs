//! `mcp gateway` deployed: the `mcp` binary run as a child process with
//! the config file's `gateway` section and the deploy flags, in front of
//! a real upstream process (this test binary, run with
//! `--deploy-role=upstream`: the project's demo server over stdio, plus
//! `grow` (adds a tool) and `touch` (announces an update of
//! `file:///readme`)), driven over raw HTTP on 127.0.0.1:
//! - the bearer guard: no token 401 with its challenge, a signed token
//!   served, a token for another audience or without the scope refused,
//!   the health probes open;
//! - the rate limit: the request past the burst refused with the
//!   limiter's error;
//! - bad deploy settings refused naming their key, a Redis password never
//!   printed;
//! - with feature `redis`: two replicas on one real redis-server serve
//!   one handshake-era session as one (a call, an upstream's sampling ask
//!   answered through the other replica, a list change and a resource
//!   update reaching the client's stream on the other replica).
//!
//! `harness = false`: `cargo test -p mcp-cli --test gateway_deploy --
//! <filter>` runs the checks whose names contain `<filter>`.

mod announced;
#[path = "../../mcp-server/tests/common/mod.rs"]
mod common;
#[path = "../../mcp-transport/tests/support/raw_http.rs"]
mod raw_http;
mod support;

#[cfg(feature = "redis")]
#[path = "../../mcp-transport/tests/support/redis_server.rs"]
mod redis_server;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use announced::{Announced, MCP};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
#[cfg(feature = "redis")]
use common::read_until;
use common::{read_all, request, status};
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use serde_json::{Value, json};
use tokio::process::Command;

const ROLE: &str = "--deploy-role=upstream";
/// The audience tokens must name.
const RESOURCE: &str = "https://gateway.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";
/// How long a gateway may take to serve.
const START_WITHIN: Duration = Duration::from_secs(60);

/// Every check, by name.
fn checks() -> Vec<(&'static str, support::Check)> {
    let every: &[(&str, support::Check)] = support::checks![
        bearer_guard_refuses_and_serves,
        rate_limit_refuses_past_the_burst,
        bad_deploy_settings_are_refused_by_key,
        http_limits_apply,
    ];
    let every = every.to_vec();
    #[cfg(feature = "otel")]
    let every = {
        let otel: &[(&str, support::Check)] =
            support::checks![the_trace_context_reaches_the_upstream];
        [every.as_slice(), otel].concat()
    };
    #[cfg(feature = "redis")]
    let every = {
        let redis: &[(&str, support::Check)] =
            support::checks![two_replicas_on_one_redis_serve_one_session];
        [every.as_slice(), redis].concat()
    };
    every
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == ROLE) {
        upstream();
        return ExitCode::SUCCESS;
    }
    support::main(&checks())
}

// ---------------------------------------------------------------------------
// The upstream.

static UPSTREAM: OnceLock<mcp_server::Server> = OnceLock::new();

/// The demo server over stdio, with `grow` and `touch`.
fn upstream() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let server = mcp_examples::demo_builder()
            .list_changed(true)
            .dynamic()
            .tool("grow", "Adds the tool `grown`", || async {
                let mut grown = mcp_server::Registrations::new();
                grown.tool("grown", "Grown by `grow`", || async { "grown" });
                if let Some(server) = UPSTREAM.get() {
                    server
                        .catalog()
                        .replace_group("grown", grown)
                        .expect("registered");
                }
                "grew"
            })
            .tool("touch", "Announces an update of file:///readme", || async {
                // To every subscriber, in either era.
                if let Some(server) = UPSTREAM.get() {
                    server.list_changes().resource_updated("file:///readme");
                }
                "touched"
            })
            .tool(
                "traceparent",
                "Says the trace context its request came with",
                |cx: mcp_server::Context| async move {
                    let meta = cx.meta().and_then(|m| m.extra.get("traceparent"));
                    meta.and_then(Value::as_str).unwrap_or("none").to_owned()
                },
            )
            .build()
            .expect("the upstream builds");
        let _ = UPSTREAM.set(server.clone());
        server
            .serve_stdio(mcp_server::shutdown_signal())
            .await
            .expect("served");
    });
}

// ---------------------------------------------------------------------------
// The gateway.

/// Writes the config file: the upstream `demo` and this `gateway`
/// section.
fn write_config(dir: &Path, gateway: Value) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    let config = json!({
        "mcpServers": {"demo": {"command": exe, "args": [ROLE]}},
        "gateway": gateway,
    });
    let path = dir.join("gateway.json");
    std::fs::write(&path, config.to_string()).expect("the config");
    path
}

/// A running `mcp gateway`, killed (by its PID, through its handle) when
/// dropped.
struct Running {
    /// Held: killed when dropped.
    _server: Announced,
    addr: SocketAddr,
}

/// `mcp gateway --config CONFIG --listen 127.0.0.1:0 EXTRA...`, once it
/// serves and its upstream is ready.
async fn gateway(config: &Path, extra: &[&str]) -> Running {
    gateway_with_env(config, extra, &[]).await
}

/// [`gateway`] with `env` set.
async fn gateway_with_env(config: &Path, extra: &[&str], env: &[(&str, &str)]) -> Running {
    let config = config.to_str().expect("a UTF-8 path");
    let mut args = vec!["gateway", "--config", config, "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let prefix = "mcp gateway: serving http://";
    let server = Announced::start_with_env(Path::new(MCP), &args, env, prefix).await;
    let addr = server
        .url
        .trim_end_matches("/mcp")
        .parse::<SocketAddr>()
        .unwrap_or_else(|e| panic!("{}: {e}", server.url));
    let deadline = tokio::time::Instant::now() + START_WITHIN;
    loop {
        let probe = raw_http::request(addr, "GET", "/readyz", &[], "").await;
        if probe.status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ready: {probe:?}\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Running {
        _server: server,
        addr,
    }
}

/// `mcp gateway ARGS` that must fail: its exit code and stderr.
async fn refused(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(args)
        .stdin(Stdio::null())
        .output();
    let out = tokio::time::timeout(START_WITHIN, out)
        .await
        .expect("it exits")
        .expect("mcp runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `initialize` of a handshake-era client that answers sampling and
/// elicitation.
fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "deploy-test", "version": "1"}
    }})
    .to_string()
}

/// The session id of an `initialize` answer.
fn session_of(answer: &str) -> String {
    answer
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("a session id: {answer}"))
}

/// Opens a handshake-era session on `addr` (with `extra` headers): its
/// id.
async fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let answer = read_all(request(addr, "POST", extra, &initialize()).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let session = session_of(&answer);
    let mut headers = in_session(&session);
    headers.extend_from_slice(extra);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = read_all(request(addr, "POST", &headers, &initialized.to_string()).await).await;
    assert_eq!(status(&answer), 202, "{answer}");
    session
}

fn in_session(session: &str) -> Vec<(&str, &str)> {
    vec![
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
}

/// The first JSON-RPC message in `text` (an SSE or JSON body) with
/// `needle` in it.
fn message_with(text: &str, needle: &str) -> Value {
    text.match_indices("{\"")
        .filter_map(|(start, _)| {
            serde_json::Deserializer::from_str(&text[start..])
                .into_iter::<Value>()
                .next()?
                .ok()
        })
        .find(|message| message.to_string().contains(needle))
        .unwrap_or_else(|| panic!("no message with {needle}: {text}"))
}

// ---------------------------------------------------------------------------
// Tokens.

/// An Ed25519 key, its JWKS, and tokens it signs.
struct Signer(Ed25519KeyPair);

impl Signer {
    fn new() -> Self {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("a key");
        Self(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("the key"))
    }

    fn jwks(&self) -> Value {
        json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA",
                         "x": URL_SAFE_NO_PAD.encode(self.0.public_key().as_ref())}]})
    }

    /// A token for `audience` granting `scope`, valid for ten minutes.
    fn token(&self, audience: &str, scope: &str) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"});
        let claims = json!({"iss": ISSUER, "sub": "alice", "aud": audience, "scope": scope,
                            "exp": now + 600, "iat": now, "client_id": "deploy-test"});
        let signing = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.0.sign(signing.as_bytes());
        format!("{signing}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

// ---------------------------------------------------------------------------
// The checks.

/// The bearer guard from the config file: no token 401 with its
/// challenge, a valid token served, another audience or a missing scope
/// refused; the metadata and the probes answered without a token.
async fn bearer_guard_refuses_and_serves() {
    let dir = support::TempDir::new("mcp-gateway-deploy-auth");
    let signer = Signer::new();
    std::fs::write(dir.path().join("jwks.json"), signer.jwks().to_string()).expect("jwks");
    let config = write_config(
        dir.path(),
        json!({"auth": {"jwks": "jwks.json", "issuer": ISSUER, "resource": RESOURCE,
                        "scopes": ["mcp"]}}),
    );
    let running = gateway(&config, &[]).await;
    let addr = running.addr;

    let answer = read_all(request(addr, "POST", &[], &initialize()).await).await;
    assert_eq!(status(&answer), 401, "{answer}");
    let challenge = answer
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("www-authenticate:"))
        .unwrap_or_else(|| panic!("a challenge: {answer}"));
    assert!(
        challenge.contains("resource_metadata=") && challenge.contains("oauth-protected-resource"),
        "{challenge}"
    );

    let path = "/.well-known/oauth-protected-resource/mcp";
    let metadata = raw_http::request(addr, "GET", path, &[], "").await;
    assert_eq!(metadata.status, 200, "{metadata:?}");
    let document = metadata.json();
    assert_eq!(document["resource"], RESOURCE, "{document}");
    assert_eq!(document["authorization_servers"][0], ISSUER, "{document}");

    let probe = raw_http::request(addr, "GET", "/livez", &[], "").await;
    assert_eq!(probe.status, 200, "liveness needs no token: {probe:?}");
    let probe = raw_http::request(addr, "GET", "/readyz", &[], "").await;
    assert_eq!(probe.status, 200, "readiness needs no token: {probe:?}");
    // Only the probes themselves (GET or HEAD) pass without a token.
    let posted = raw_http::request(addr, "POST", "/livez", &[], &initialize()).await;
    assert_eq!(posted.status, 401, "a POST to a probe's path: {posted:?}");

    let bearer = format!("Bearer {}", signer.token(RESOURCE, "mcp"));
    let auth = [("Authorization", bearer.as_str())];
    let session = open_session(addr, &auth).await;
    let mut headers = in_session(&session);
    headers.extend_from_slice(&auth);
    let echo = call(1, "demo_echo", json!({"text": "behind the guard"}));
    let answer = read_all(request(addr, "POST", &headers, &echo).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("behind the guard"), "{answer}");

    let elsewhere = format!(
        "Bearer {}",
        signer.token("https://other.example.com/mcp", "mcp")
    );
    let answer = read_all(
        request(
            addr,
            "POST",
            &[("Authorization", &elsewhere)],
            &initialize(),
        )
        .await,
    )
    .await;
    assert_eq!(status(&answer), 401, "another audience: {answer}");
    assert!(answer.contains("invalid_token"), "{answer}");

    let unscoped = format!("Bearer {}", signer.token(RESOURCE, "other"));
    let answer =
        read_all(request(addr, "POST", &[("Authorization", &unscoped)], &initialize()).await).await;
    assert_eq!(status(&answer), 403, "no `mcp` scope: {answer}");
    assert!(answer.contains("insufficient_scope"), "{answer}");
    drop(running);
}

/// `--rate-per-minute 3 --burst 3`: three requests of one client served,
/// the fourth refused with the limiter's error (HTTP 429, Retry-After).
async fn rate_limit_refuses_past_the_burst() {
    let dir = support::TempDir::new("mcp-gateway-deploy-rate");
    let config = write_config(dir.path(), json!({"rateLimit": {"perSecond": 1000}}));
    // The flags override the file's keys.
    let running = gateway(&config, &["--rate-per-minute", "3", "--burst", "3"]).await;
    let addr = running.addr;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "demo_echo"),
    ];
    let mut answers = Vec::new();
    for id in 1..=4 {
        let mut body: Value =
            serde_json::from_str(&call(id, "demo_echo", json!({"text": "hi"}))).expect("json");
        body["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        answers.push(read_all(request(addr, "POST", &headers, &body.to_string()).await).await);
    }
    for answer in &answers[..3] {
        assert_eq!(status(answer), 200, "within the limit: {answer}");
    }
    let refused = &answers[3];
    assert_eq!(status(refused), 429, "past the limit: {refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after:"),
        "{refused}"
    );
    let error = message_with(refused, "too many requests");
    assert_eq!(error["error"]["data"]["limit"], "rate", "{error}");
    drop(running);
}

/// `maxBody` and `maxSessions` from the file: a larger body is refused
/// with 413; a second session evicts the first, idle one.
async fn http_limits_apply() {
    let dir = support::TempDir::new("mcp-gateway-deploy-limits");
    let config = write_config(dir.path(), json!({"maxBody": 2048, "maxSessions": 1}));
    let running = gateway(&config, &[]).await;
    let addr = running.addr;
    let first = open_session(addr, &[]).await;
    let echo = |text: &str| call(1, "demo_echo", json!({ "text": text }));
    let headers = in_session(&first);
    let answer = read_all(request(addr, "POST", &headers, &echo("small")).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let large = "x".repeat(4096);
    let answer = read_all(request(addr, "POST", &headers, &echo(&large)).await).await;
    assert_eq!(status(&answer), 413, "a body over maxBody: {answer}");
    let second = open_session(addr, &[]).await;
    let answer = read_all(request(addr, "POST", &in_session(&second), &echo("b")).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let answer = read_all(request(addr, "POST", &headers, &echo("a")).await).await;
    assert_eq!(
        status(&answer),
        404,
        "the first session was evicted (maxSessions 1): {answer}"
    );
    drop(running);
}

/// Bad values are refused before anything starts, naming their key and
/// flag (exit code 2); a Redis URL's password is never printed.
async fn bad_deploy_settings_are_refused_by_key() {
    let dir = support::TempDir::new("mcp-gateway-deploy-bad");
    let listen = ["--listen", "127.0.0.1:0"];
    let config = write_config(dir.path(), json!({"rateLimit": {"perSecond": 0}}));
    let config = config.to_str().expect("a UTF-8 path");
    // Files the settings refuse: a secret too short, a JWKS too large.
    let short_key = dir.path().join("short.key");
    std::fs::write(&short_key, "only 20 bytes long!!\n").expect("the key");
    let short_key = short_key.to_str().expect("a UTF-8 path");
    let huge_jwks = dir.path().join("huge.json");
    std::fs::write(&huge_jwks, " ".repeat(1024 * 1024 + 1)).expect("the JWKS");
    let huge_jwks = huge_jwks.to_str().expect("a UTF-8 path");
    // 21 bytes, 20 once the trailing newline is dropped.
    let key_refused = format!(
        "gateway.stateKeyFile (--state-key-file) {short_key} holds 20 bytes; \
         a secret needs at least 32"
    );
    let jwks_refused =
        format!("gateway.auth.jwks (--jwks) {huge_jwks} is larger than 1048576 bytes");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--config", config],
            "gateway.rateLimit.perSecond (--rate-per-second) must be at least 1",
        ),
        (
            &["--burst", "5"],
            "gateway.rateLimit.perSecond (--rate-per-second) is missing",
        ),
        (
            &["--jwks", "jwks.json"],
            "gateway.auth.issuer (--issuer) is missing",
        ),
        (
            &[
                "--jwks",
                "nowhere.json",
                "--issuer",
                ISSUER,
                "--resource",
                RESOURCE,
            ],
            "gateway.auth.jwks (--jwks) cannot read nowhere.json",
        ),
        (
            &["--max-body", "0"],
            "gateway.maxBody (--max-body) must be at least 1",
        ),
        (&["--state-key-file", short_key], &key_refused),
        (
            &[
                "--jwks",
                huge_jwks,
                "--issuer",
                ISSUER,
                "--resource",
                RESOURCE,
            ],
            &jwks_refused,
        ),
        (
            &["--redis", "http://:s3cret@x"],
            "gateway.redis.url (--redis) `http://***@x` is not a Redis URL",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--url", "http://127.0.0.1:9/mcp", "gateway"];
        if args.first() == Some(&"--config") {
            all = vec!["gateway"];
        }
        all.extend_from_slice(args);
        all.extend_from_slice(&listen);
        let (code, stderr) = refused(&all).await;
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{args:?}: {stderr}");
    }
    // Without --listen, an HTTP-only setting is a mistake.
    let (code, stderr) = refused(&[
        "--url",
        "http://127.0.0.1:9/mcp",
        "gateway",
        "--stdio-out",
        "--max-sessions",
        "5",
    ])
    .await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("add --listen"), "{stderr}");
    // A Redis nobody serves: refused (built with Redis: unreachable, exit
    // 3; without: exit 2), the password not shown.
    let (code, stderr) = refused(&[
        "--url",
        "http://127.0.0.1:9/mcp",
        "gateway",
        "--listen",
        "127.0.0.1:0",
        "--redis",
        "redis://:s3cret@127.0.0.1:9",
    ])
    .await;
    assert!(code == 2 || code == 3, "{code}: {stderr}");
    // The `mcp` under test is built with this test's features.
    if cfg!(feature = "redis") {
        assert_eq!(code, 3, "Redis unreachable: {stderr}");
        assert!(
            stderr.contains("connecting to the Redis at redis://***@127.0.0.1:9"),
            "{stderr}"
        );
    } else {
        assert_eq!(code, 2, "a build without Redis: {stderr}");
        assert!(stderr.contains("built without Redis"), "{stderr}");
    }
    assert!(stderr.contains("redis://***@127.0.0.1:9"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

/// With feature `otel` and `OTEL_EXPORTER_OTLP_ENDPOINT` set (to a port
/// nothing listens on: the export fails, the propagation does not), the
/// trace context of a downstream request reaches the upstream: the same
/// trace, under a span of the gateway's own.
#[cfg(feature = "otel")]
async fn the_trace_context_reaches_the_upstream() {
    let dir = support::TempDir::new("mcp-gateway-deploy-trace");
    let config = write_config(dir.path(), json!({}));
    let running = gateway_with_env(
        &config,
        &[],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")],
    )
    .await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = format!("00-{trace}-00f067aa0ba902b7-01");
    let session = open_session(running.addr, &[]).await;
    let mut body: Value =
        serde_json::from_str(&call(1, "demo_traceparent", json!({}))).expect("json");
    body["params"]["_meta"] = json!({"traceparent": parent});
    let answer = read_all(
        request(
            running.addr,
            "POST",
            &in_session(&session),
            &body.to_string(),
        )
        .await,
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    let result = message_with(&answer, "\"result\"");
    let received = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text: {result}"));
    assert!(
        received.starts_with(&format!("00-{trace}-")),
        "the upstream is in the client's trace: {received}"
    );
    assert_ne!(
        received, parent,
        "the upstream's parent is the gateway's span, not the client's"
    );
    drop(running);
}

/// Two `mcp gateway` replicas on one redis-server serve one handshake-era
/// session as one: opened on A, continued on B.
#[cfg(feature = "redis")]
async fn two_replicas_on_one_redis_serve_one_session() {
    let redis = redis_server::RedisServer::start();
    let dir = support::TempDir::new("mcp-gateway-deploy-replicas");
    std::fs::write(
        dir.path().join("state.key"),
        "a secret both replicas share, 32 bytes and more\n",
    )
    .expect("the state key");
    let config = write_config(
        dir.path(),
        json!({"redis": {"url": redis.url(), "prefix": "gateway-test"},
               "stateKeyFile": "state.key"}),
    );
    let a = gateway(&config, &[]).await;
    let b = gateway(&config, &[]).await;
    let session = open_session(a.addr, &[]).await;
    let headers = in_session(&session);

    // A call on the other replica.
    let echo = call(1, "demo_echo", json!({"text": "served by b"}));
    let answer = read_all(request(b.addr, "POST", &headers, &echo).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("served by b"), "{answer}");

    // The client's stream on B; subscribed through A.
    let mut stream = request(b.addr, "GET", &headers, "").await;
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, "200 OK").await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                           "params": {"uri": "file:///readme"}});
    let answer = read_all(request(a.addr, "POST", &headers, &subscribe.to_string()).await).await;
    assert!(answer.contains("\"result\""), "{answer}");
    // A's upstream announces an update: it reaches the stream on B.
    let touch = call(3, "demo_touch", json!({}));
    let answer = read_all(request(a.addr, "POST", &headers, &touch).await).await;
    assert!(answer.contains("touched"), "{answer}");
    read_until(&mut stream, &mut seen, "notifications/resources/updated").await;
    assert!(seen.contains("file:///readme"), "{seen}");
    // A's upstream grows a tool: the change reaches the stream on B.
    let grow = call(4, "demo_grow", json!({}));
    let answer = read_all(request(a.addr, "POST", &headers, &grow).await).await;
    assert!(answer.contains("grew"), "{answer}");
    read_until(&mut stream, &mut seen, "notifications/tools/list_changed").await;

    // An upstream's sampling ask, from a call on A, answered through B.
    let sample = call(5, "demo_sample", json!({"prompt": "hello?"}));
    let mut asking = request(a.addr, "POST", &headers, &sample).await;
    let mut text = String::new();
    read_until(&mut asking, &mut text, "sampling/createMessage").await;
    let asked = message_with(&text, "sampling/createMessage");
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "model": "test",
        "content": {"type": "text", "text": "answered through b"}}});
    let routed = read_all(request(b.addr, "POST", &headers, &reply.to_string()).await).await;
    assert_eq!(status(&routed), 202, "{routed}");
    read_until(&mut asking, &mut text, "answered through b").await;
    assert!(text.contains("\"id\":5"), "the call's result: {text}");

    // A stateless client asked for input by A answers through B: B opens
    // the `requestState` A sealed (the replicas share stateKeyFile).
    let asked = stateless_call(a.addr, 6, "demo_ask_name", json!({})).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let (key, _) = result["inputRequests"]
        .as_object()
        .and_then(|requests| requests.iter().next())
        .unwrap_or_else(|| panic!("an input request: {asked}"));
    let retry = json!({
        "inputResponses": {key.as_str(): {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": result["requestState"],
    });
    let answered = stateless_call(b.addr, 7, "demo_ask_name", retry).await;
    assert!(answered.to_string().contains("hi Ada"), "{answered}");
    drop((a, b));
}

/// A 2026-07-28 `tools/call` of `name` on `addr` (a client that answers
/// elicitation), `extra` merged into its params: the answer.
#[cfg(feature = "redis")]
async fn stateless_call(addr: SocketAddr, id: u64, name: &str, extra: Value) -> Value {
    let mut body: Value = serde_json::from_str(&call(id, name, json!({}))).expect("json");
    body["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    });
    if let (Some(params), Value::Object(extra)) = (body["params"].as_object_mut(), extra) {
        params.extend(extra);
    }
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    let answer = read_all(request(addr, "POST", &headers, &body.to_string()).await).await;
    assert_eq!(status(&answer), 200, "{answer}");
    message_with(&answer, "\"result\"")
}
