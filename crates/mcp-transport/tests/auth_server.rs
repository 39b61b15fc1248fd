//! The OAuth resource server: every refusal a resource server owes (401,
//! 403, 400), the RFC 9728 metadata document, and tokens kept out of Debug
//! output; checked on the guard directly, around the real streamable HTTP
//! endpoint, and over TCP on 127.0.0.1. Keys are made in the test (a fixed
//! RSA key, a fresh P-256 key).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use mcp_transport::http::{
    BearerAuthLayer, BearerGuard, HttpBody, HttpServerConfig, JwtVerifier, ProtectedResource,
    ServeConfig, StreamableHttpService, TokenClaims, TokenRejection, TokenVerifier, Verification,
    serve,
};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair, RsaPublicKeyComponents};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower_layer::Layer as _;
use tower_service::Service;

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// Answers every request with its params: these tests are about the guard
/// in front of it.
struct Answering;

impl mcp_core::Handler for Answering {
    async fn handle_request(
        &self,
        request: mcp_core::IncomingRequest,
        _: mcp_core::RequestContext,
    ) -> Result<mcp_types::RawJson, mcp_types::ErrorObject> {
        Ok(request
            .params
            .unwrap_or_else(mcp_types::RawJson::empty_object))
    }

    async fn handle_notification(
        &self,
        _: mcp_core::IncomingNotification,
        _: mcp_core::NotificationContext,
    ) {
    }
}

/// The endpoint the guard protects.
fn endpoint() -> StreamableHttpService {
    StreamableHttpService::new(HttpServerConfig::new(), |opening| {
        opening.serve(Answering, mcp_core::DispatcherConfig::default())
    })
}
const ISSUER: &str = "https://as.example.com";
const METADATA_URL: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

/// A 2048-bit RSA key (PKCS#8 DER, base64), made for these tests only.
const RSA_PKCS8: &[&str] = &[
    "MIIEugIBADANBgkqhkiG9w0BAQEFAASCBKQwggSgAgEAAoIBAQCkCfPQBabfGSmeOzvgeUE7tgi5",
    "SeIWqbjlWEJcwAYeGrdqJqrp0/Mdz+nU1x7xLMordeTCEkSkG7+64G72mQnaqNXCxEzCvuURpNmE",
    "57eOgq5ZgzvS9gZbcuB37XLMD50UXudOSb9tB3v2Vn87G6SCpoA8YRon+qq9TJasCsUqCS5Fq9fY",
    "BpmmmrN56KrP56RbMtFQaW3ygPfIiHebM3aRnvQbF8ubMWgB7TqdIIVpeYbBE2VVImyle14/0sro",
    "nN2K1ZcV9ROehC1Inpa3azJ9F/eUH/43rezwbTZwEthHtFdXB+mhKxLXy3C/d9YoptLzI9B53Q9b",
    "aHOi/rDnhBYlAgMBAAECgf9HktzomluB/JJFxPkOeKZ95zwaaW8jDerrwH00Li59J15GcsvtB3Qm",
    "QRGsTJcaCoqSOMTkT0dwud4H+OU+gIflxsUX6Y7H0LZVfH6fmHsyAAZGCEmSD5O2hk+eBEnFv9cW",
    "v4UtVs0V3xSETdMCqo0Dp9WygqvNX3iGhped3+H0J/PxefCL2sEDCB0KkC/7+3OTP8OnY+8xV/1+",
    "B9GNoQrBWW+HNEdiKInrcFl2yDGTZ+mPaLDW9fBERfjmbz60Y/CS+FxCYgIJK7YzzR5FBTrGzf7p",
    "A3yI8u3IVtM63xb3aOGeSDIyPaqKpGEGg6wMSIX4/LqmzMB1qJyhbfGRiRECgYEA1dYn9Rowka36",
    "xetwTUNBgPjIMYn1W0zzxQCj30jN+7d5vSXL4fgsDN0pjiQhu13OSKR7hHIkI1xvhTu3Z1mjMrMA",
    "WIA2yeRQVSk3lCgs9034uOtmlg6DAmBa+9AsNzj96ZnnPhsROtvsQZZ1pJpaXHyTfGAGGf3/EujB",
    "LUOqTFkCgYEAxGInytq6Eec9UgBtwdLZZMzB2nCc5RPXCPyO2tKhiY5OB8wuVOyBELVufMuotm6t",
    "j8eER+ia3qbBgJx/5eAGoRHLT3okWbpAVycqOows0J6oIb9kYwHlU6/Fqdmp2ZRUOlZOtA2xpoUi",
    "hH3Sh1uFmHvPlGnCUvcryt1wroCarq0CgYBEZUVOjlvunLlTSOUYsWRoPiq6Pagu1cQ6xOOlbYIE",
    "+0CDEW3PDzP3wV2jS0dGyNBMR+ACEwggD1bURK967R7X/o0jwY7EsLRJKO/QAbGwQE5Hx3N+l5Gr",
    "1uoDFSivWRlN+J4QLVQrgWBl8hwa1AwG/QmnhIcvFSDbCXuQYM49sQKBgBLLUgOX6zbLapLud5KV",
    "GzkKX4MIQ/uoamvxv7oxbkQ72jvkzopSGAgBVRGcbAkJjpK0BXTcTfYA/4PPdm4Jgpjnmw2AIvpz",
    "WLT+iowP3joY9P5F0tWm2MuphsE6k4a/K1Bp8h5JMTc+ho8ne354w9BUCQmrFW3bOdWwW5hXtnYB",
    "AoGAe92CwqR6XnR7jNH4t4eLR5VV38oLE7bvpaQ3R+i8psW/CfdQFloclufO0MZ2uOwbnQX3Pvv4",
    "SIVN8DL9LBcRJdReyXnJmjIJAPznq9LNWrZL/2qu+zKjTe7Jb/HpelwM5Y/E5UWRjxa/dQq06BGv",
    "TTvSnuL8KpG2rCfLvKCrK10=",
];

/// Signs test tokens with an RSA and a P-256 key.
struct Signer {
    rsa: RsaKeyPair,
    ec: EcdsaKeyPair,
    rng: SystemRandom,
}

impl Signer {
    fn new() -> Self {
        let rng = SystemRandom::new();
        let der = STANDARD.decode(RSA_PKCS8.concat()).expect("base64");
        let rsa = RsaKeyPair::from_pkcs8(&der).expect("an RSA key");
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("a P-256 key");
        let ec = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .expect("a P-256 key");
        Self { rsa, ec, rng }
    }

    fn jwks(&self) -> Value {
        let rsa = RsaPublicKeyComponents::<Vec<u8>>::from(self.rsa.public());
        let point = self.ec.public_key().as_ref();
        json!({"keys": [
            {"kty": "RSA", "kid": "rsa-1", "use": "sig",
             "n": URL_SAFE_NO_PAD.encode(&rsa.n), "e": URL_SAFE_NO_PAD.encode(&rsa.e)},
            {"kty": "EC", "crv": "P-256", "kid": "ec-1", "alg": "ES256",
             "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65])},
        ]})
    }

    /// A compact JWS of `claims` with `alg` (RS256, PS256 or ES256).
    fn token(&self, alg: &str, claims: &Value) -> String {
        let kid = if alg == "ES256" { "ec-1" } else { "rsa-1" };
        let header = json!({"alg": alg, "kid": kid, "typ": "at+jwt"});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = match alg {
            "ES256" => self
                .ec
                .sign(&self.rng, input.as_bytes())
                .expect("sign")
                .as_ref()
                .to_vec(),
            _ => {
                let padding: &'static dyn signature::RsaEncoding = if alg == "PS256" {
                    &signature::RSA_PSS_SHA256
                } else {
                    &signature::RSA_PKCS1_SHA256
                };
                let mut out = vec![0; self.rsa.public().modulus_len()];
                self.rsa
                    .sign(padding, &self.rng, input.as_bytes(), &mut out)
                    .expect("sign");
                out
            }
        };
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

fn claims(audience: &str, exp: u64, scope: &str) -> Value {
    json!({
        "iss": ISSUER, "sub": "alice", "aud": audience, "exp": exp,
        "scope": scope, "client_id": "client-7",
    })
}

fn verifier(signer: &Signer) -> JwtVerifier {
    JwtVerifier::from_jwks(&signer.jwks())
        .expect("jwks")
        .with_issuer(ISSUER)
}

fn resource(required: &[&str]) -> ProtectedResource {
    ProtectedResource::new(RESOURCE, ISSUER)
        .with_scopes_supported(["mcp:read", "mcp:write"])
        .with_required_scopes(required.iter().copied())
        .with_resource_name("Test MCP server")
}

/// The protected endpoint: records the claims it was handed, answers 200.
#[derive(Clone, Default)]
struct Echo {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Service<Request<()>> for Echo {
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<()>) -> Self::Future {
        // Everything a handler could print about the request.
        let debug = format!(
            "{:?} {:?}",
            request.extensions(),
            request.extensions().get::<TokenClaims>()
        );
        self.seen.lock().expect("lock").push(debug);
        let claims = request.extensions().get::<TokenClaims>().cloned();
        Box::pin(async move {
            let mut response = Response::new(HttpBody::empty());
            if let Some(claims) = claims {
                let subject = claims.subject.unwrap_or_default();
                let scopes = claims.scopes.join(" ");
                let audiences = claims.audiences.join(" ");
                let client = claims.client_id.unwrap_or_default();
                for (name, value) in [
                    ("x-subject", subject),
                    ("x-scopes", scopes),
                    ("x-audiences", audiences),
                    ("x-client", client),
                ] {
                    response
                        .headers_mut()
                        .insert(name, value.parse().expect("header"));
                }
            }
            Ok(response)
        })
    }
}

fn guard(signer: &Signer, required: &[&str]) -> BearerGuard<Echo> {
    BearerGuard::new(
        Echo::default(),
        resource(required),
        Arc::new(verifier(signer)),
    )
}

async fn send(guard: &mut BearerGuard<Echo>, authorization: &[&str]) -> Response<HttpBody> {
    let mut request = Request::post("/mcp");
    for value in authorization {
        request = request.header("authorization", *value);
    }
    guard
        .call(request.body(()).expect("request"))
        .await
        .expect("infallible")
}

fn www_authenticate(response: &Response<HttpBody>) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

async fn body_json(response: Response<HttpBody>) -> Value {
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    serde_json::from_slice(&body).expect("json")
}

#[tokio::test]
async fn a_request_without_a_token_is_challenged_with_the_metadata_url_and_scope() {
    let mut guard = guard(&Signer::new(), &["mcp:read"]);
    for authorization in [&[][..], &["Basic dXNlcjpwYXNz"][..]] {
        let response = send(&mut guard, authorization).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let challenge = www_authenticate(&response);
        assert!(challenge.starts_with("Bearer "), "{challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
            "{challenge}"
        );
        assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");
        // RFC 6750 §3.1: no error code when no bearer credentials were sent.
        assert!(!challenge.contains("error="), "{challenge}");
    }
}

#[tokio::test]
async fn a_malformed_authorization_header_is_a_bad_request() {
    let mut guard = guard(&Signer::new(), &["mcp:read"]);
    for authorization in [
        &["Bearer"][..],
        &["Bearer a b"][..],
        &["Bearer tok\"en"][..],
        &["Bearer abc", "Bearer def"][..],
    ] {
        let response = send(&mut guard, authorization).await;
        assert_eq!(
            response.status(),
            StatusCode::BAD_REQUEST,
            "{authorization:?}"
        );
        let challenge = www_authenticate(&response);
        assert!(
            challenge.contains("error=\"invalid_request\""),
            "{challenge}"
        );
        assert!(challenge.contains("resource_metadata="), "{challenge}");
    }
}

#[tokio::test]
async fn an_expired_token_is_invalid() {
    let signer = Signer::new();
    let mut guard = guard(&signer, &["mcp:read"]);
    for alg in ["RS256", "ES256"] {
        let expired = signer.token(alg, &claims(RESOURCE, now() - 3600, "mcp:read"));
        let response = send(&mut guard, &[&format!("Bearer {expired}")]).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let challenge = www_authenticate(&response);
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        assert!(challenge.contains("expired"), "{challenge}");
        assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
            "{challenge}"
        );
    }
}

#[tokio::test]
async fn a_token_for_another_resource_is_invalid() {
    let signer = Signer::new();
    let mut guard = guard(&signer, &[]);
    let foreign = signer.token(
        "RS256",
        &claims("https://other.example.com/mcp", now() + 3600, "mcp:read"),
    );
    let response = send(&mut guard, &[&format!("Bearer {foreign}")]).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = www_authenticate(&response);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("another resource"), "{challenge}");
}

#[tokio::test]
async fn forged_unsigned_and_foreign_issuer_tokens_are_invalid() {
    let signer = Signer::new();
    let mut guard = guard(&signer, &[]);
    let good = claims(RESOURCE, now() + 3600, "mcp:read");

    // Signed by a key the JWKS does not hold.
    let stranger = Signer::new();
    let forged = stranger.token("ES256", &good);
    // `alg: none`, and HS256 keyed with the public RSA modulus (alg confusion).
    let body = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none"}).to_string()),
        URL_SAFE_NO_PAD.encode(good.to_string())
    );
    let unsigned = format!("{body}.");
    let hs256 = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "kid": "rsa-1"}).to_string()),
        URL_SAFE_NO_PAD.encode(good.to_string()),
        URL_SAFE_NO_PAD.encode([0u8; 32])
    );
    // A valid signature over altered claims.
    let signed = signer.token("RS256", &good);
    let mut parts: Vec<&str> = signed.split('.').collect();
    let altered = URL_SAFE_NO_PAD.encode(claims(RESOURCE, now() + 3600, "mcp:admin").to_string());
    parts[1] = &altered;
    let tampered = parts.join(".");
    // Another issuer.
    let mut other_issuer = good.clone();
    other_issuer["iss"] = json!("https://evil.example.com");
    let other_issuer = signer.token("RS256", &other_issuer);
    // Not valid yet.
    let mut early = good.clone();
    early["nbf"] = json!(now() + 3600);
    let early = signer.token("ES256", &early);

    for token in [
        forged,
        unsigned,
        hs256,
        tampered,
        other_issuer,
        early,
        "abc".into(),
    ] {
        let response = send(&mut guard, &[&format!("Bearer {token}")]).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token}");
        assert!(www_authenticate(&response).contains("error=\"invalid_token\""));
    }
}

#[tokio::test]
async fn a_token_without_the_required_scope_gets_insufficient_scope() {
    let signer = Signer::new();
    let mut guard = guard(&signer, &["mcp:read", "mcp:write"]);
    let read_only = signer.token("RS256", &claims(RESOURCE, now() + 3600, "mcp:read"));
    let response = send(&mut guard, &[&format!("Bearer {read_only}")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = www_authenticate(&response);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp:read mcp:write\""),
        "{challenge}"
    );
    assert!(
        challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
        "{challenge}"
    );
}

#[tokio::test]
async fn a_valid_token_reaches_the_endpoint_with_its_claims() {
    let signer = Signer::new();
    let mut guard = guard(&signer, &["mcp:read"]);
    for alg in ["RS256", "PS256", "ES256"] {
        let mut claims = claims(RESOURCE, now() + 3600, "mcp:read mcp:write");
        claims["aud"] = json!(["https://elsewhere.example.com", RESOURCE]);
        let good = signer.token(alg, &claims);
        let response = send(&mut guard, &[&format!("Bearer {good}")]).await;
        assert_eq!(response.status(), StatusCode::OK, "{alg}");
        assert_eq!(response.headers()["x-subject"], "alice");
        assert_eq!(response.headers()["x-scopes"], "mcp:read mcp:write");
        assert_eq!(
            response.headers()["x-audiences"],
            format!("https://elsewhere.example.com {RESOURCE}")
        );
        assert_eq!(response.headers()["x-client"], "client-7");
    }
}

#[tokio::test]
async fn the_layer_builds_the_same_guard() {
    let signer = Signer::new();
    let layer = BearerAuthLayer::new(resource(&[]), Arc::new(verifier(&signer)));
    let mut guard = layer.layer(Echo::default());
    assert_eq!(
        send(&mut guard, &[]).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let good = signer.token("ES256", &claims(RESOURCE, now() + 3600, ""));
    assert_eq!(
        send(&mut guard, &[&format!("Bearer {good}")])
            .await
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn the_metadata_document_is_served_without_a_token_at_both_paths() {
    let mut guard = guard(&Signer::new(), &["mcp:read"]);
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let request = Request::get(path).body(()).expect("request");
        let response = guard.call(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(
            body_json(response).await,
            json!({
                "resource": RESOURCE,
                "authorization_servers": [ISSUER],
                "scopes_supported": ["mcp:read", "mcp:write"],
                "bearer_methods_supported": ["header"],
                "resource_name": "Test MCP server",
            })
        );
    }
    let other = Request::get("/.well-known/oauth-protected-resource/other")
        .body(())
        .expect("request");
    assert_eq!(
        guard.call(other).await.expect("infallible").status(),
        StatusCode::NOT_FOUND
    );
    let post = Request::post("/.well-known/oauth-protected-resource/mcp")
        .body(())
        .expect("request");
    assert_eq!(
        guard.call(post).await.expect("infallible").status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn any_page_may_read_the_metadata_document_with_the_version_header() {
    let mut guard = guard(&Signer::new(), &["mcp:read"]);
    let preflight = Request::options("/.well-known/oauth-protected-resource/mcp")
        .header("origin", "http://localhost:5173")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "mcp-protocol-version")
        .body(())
        .expect("request");
    let response = guard.call(preflight).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let headers = response.headers();
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(
        headers["access-control-allow-headers"],
        "mcp-protocol-version"
    );
    assert!(!headers.contains_key("access-control-allow-credentials"));
}

#[tokio::test]
async fn discovery_probes_for_other_documents_get_404_without_a_token() {
    let mut guard = guard(&Signer::new(), &["mcp:read"]);
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-authorization-server/mcp",
        "/.well-known/openid-configuration",
        "/.well-known/openid-configuration/mcp",
        "/mcp/.well-known/openid-configuration",
    ] {
        let request = Request::get(path).body(()).expect("request");
        let response = guard.call(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(
            !response.headers().contains_key("www-authenticate"),
            "{path}"
        );
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
    }
}

#[tokio::test]
async fn tokens_stay_out_of_debug_output() {
    let signer = Signer::new();
    let echo = Echo::default();
    let seen = echo.seen.clone();
    let mut guard = BearerGuard::new(echo, resource(&["mcp:read"]), Arc::new(verifier(&signer)));
    let good = signer.token("RS256", &claims(RESOURCE, now() + 3600, "mcp:read"));
    let expired = signer.token("RS256", &claims(RESOURCE, now() - 3600, "mcp:read"));
    assert_eq!(
        send(&mut guard, &[&format!("Bearer {good}")])
            .await
            .status(),
        StatusCode::OK
    );
    let verifier = verifier(&signer);
    let accepted = verifier.verify(&good, RESOURCE).await.expect("valid");
    let rejected = verifier
        .verify(&expired, RESOURCE)
        .await
        .expect_err("expired");
    assert_eq!(rejected, TokenRejection::Expired);
    let mut printed = vec![
        format!("{guard:?}"),
        format!("{verifier:?}"),
        format!("{accepted:?}"),
        format!("{rejected:?} {rejected}"),
    ];
    printed.extend(seen.lock().expect("lock").iter().cloned());
    assert_eq!(printed.len(), 5, "the endpoint saw the request");
    let signature = good.rsplit('.').next().expect("signature");
    for text in &printed {
        assert!(!text.contains(&good), "{text}");
        assert!(!text.contains(signature), "{text}");
    }
    assert!(printed[2].contains("alice"), "{}", printed[2]);
}

#[tokio::test]
async fn the_real_endpoint_is_guarded() {
    let signer = Signer::new();
    let endpoint = endpoint();
    let mut guard = BearerGuard::new(
        endpoint,
        resource(&["mcp:read"]),
        Arc::new(verifier(&signer)),
    );
    let request = |token: Option<&str>| {
        let mut request = Request::delete("/mcp").header("host", "127.0.0.1");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .expect("request")
    };
    let response = guard.call(request(None)).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // With a token the endpoint itself answers: a DELETE needs a session.
    let good = signer.token("ES256", &claims(RESOURCE, now() + 3600, "mcp:read"));
    let response = guard.call(request(Some(&good))).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("www-authenticate").is_none());
    let body = body_json(response).await;
    assert!(body.to_string().contains("Mcp-Session-Id"), "{body}");
}

/// One HTTP/1.1 exchange on a fresh connection: the status and the raw head.
async fn exchange(address: std::net::SocketAddr, head: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    (status, answer)
}

#[tokio::test]
async fn over_tcp_the_challenge_and_the_document_reach_the_client() {
    let signer = Signer::new();
    let endpoint = endpoint();
    let service = BearerGuard::new(
        endpoint,
        resource(&["mcp:read"]),
        Arc::new(verifier(&signer)),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, service, ServeConfig::new(), async {
        let _ = stopped.await;
    }));

    let run = async {
        let (status, answer) = exchange(
            address,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 401, "{answer}");
        let challenge = answer
            .lines()
            .find(|line| {
                line.to_ascii_lowercase()
                    .starts_with("www-authenticate: bearer ")
            })
            .unwrap_or_default();
        assert!(
            challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
            "{answer}"
        );
        let (status, answer) = exchange(
            address,
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert!(
            answer.contains("\"authorization_servers\":[\"https://as.example.com\"]"),
            "{answer}"
        );
    };
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the exchanges finish in time");
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops")
        .expect("no panic")
        .expect("no accept error");
}

/// A verifier whose backend is down.
struct Down;

impl TokenVerifier for Down {
    fn verify<'a>(&'a self, _token: &'a str, _resource: &'a str) -> Verification<'a> {
        Box::pin(async {
            Err(TokenRejection::Unavailable(
                "introspection timed out".into(),
            ))
        })
    }
}

#[tokio::test]
async fn a_verifier_that_cannot_decide_gets_a_retry_not_a_challenge() {
    let mut guard = BearerGuard::new(Echo::default(), resource(&[]), Arc::new(Down));
    let response = send(&mut guard, &["Bearer opaque-token"]).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().get("www-authenticate").is_none());
}

#[tokio::test]
async fn rotated_keys_are_picked_up_by_update_jwks() {
    let signer = Signer::new();
    let mut jwks = signer.jwks();
    let all = jwks.clone();
    jwks["keys"]
        .as_array_mut()
        .expect("keys")
        .retain(|k| k["kty"] == "EC");
    let verifier = JwtVerifier::from_jwks(&jwks).expect("jwks");
    let token = signer.token("RS256", &claims(RESOURCE, now() + 3600, "mcp:read"));
    let refused = verifier
        .verify(&token, RESOURCE)
        .await
        .expect_err("unknown key");
    assert!(
        refused.to_string().contains("refresh the JWKS"),
        "{refused}"
    );
    assert_eq!(verifier.update_jwks(&all), Ok(2));
    let accepted = verifier.verify(&token, RESOURCE).await.expect("known key");
    assert_eq!(accepted.subject.as_deref(), Some("alice"));
    assert!(verifier.update_jwks(&json!({"keys": []})).is_err());
    assert!(
        verifier.verify(&token, RESOURCE).await.is_ok(),
        "old keys stay"
    );
}
