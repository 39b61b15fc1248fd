//! The bearer-token guard: every refusal a resource server owes, and the
//! metadata document, checked on the guard itself (no network).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use mcp_transport::http::{BearerGuard, HttpBody, JwtVerifier, ProtectedResource, TokenClaims};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use tower_service::Service;

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://as.example.com";

/// The protected endpoint: answers with the verified subject.
#[derive(Clone)]
struct Echo;

impl Service<Request<()>> for Echo {
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<()>) -> Self::Future {
        let subject = request
            .extensions()
            .get::<TokenClaims>()
            .and_then(|c| c.subject.clone())
            .unwrap_or_default();
        Box::pin(async move {
            let mut response = Response::new(HttpBody::empty());
            response
                .headers_mut()
                .insert("x-subject", subject.parse().expect("header"));
            Ok(response)
        })
    }
}

fn signing_key() -> SigningKey {
    SigningKey::from_slice(&[7u8; 32]).expect("a valid scalar")
}

fn jwks(key: &SigningKey) -> Value {
    let point = key.verifying_key().to_encoded_point(false);
    json!({"keys": [{
        "kty": "EC", "crv": "P-256", "kid": "k1",
        "x": URL_SAFE_NO_PAD.encode(point.x().expect("x")),
        "y": URL_SAFE_NO_PAD.encode(point.y().expect("y")),
    }]})
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

fn token(key: &SigningKey, claims: Value) -> String {
    let header = json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt"});
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn claims(audience: &str, exp: u64, scope: &str) -> Value {
    json!({"iss": ISSUER, "sub": "alice", "aud": audience, "exp": exp, "scope": scope})
}

fn guard(key: &SigningKey, required: &[&str]) -> BearerGuard<Echo> {
    let verifier = JwtVerifier::from_jwks(&jwks(key))
        .expect("jwks")
        .issuer(ISSUER);
    let resource = ProtectedResource::new(RESOURCE, ISSUER)
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(required.iter().copied());
    BearerGuard::new(Echo, resource, Arc::new(verifier))
}

async fn send(guard: &mut BearerGuard<Echo>, authorization: Option<&str>) -> Response<HttpBody> {
    let mut request = Request::post("/mcp");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
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

#[tokio::test]
async fn a_request_without_a_token_is_challenged_with_the_metadata_url() {
    let mut guard = guard(&signing_key(), &["mcp:read"]);
    let response = send(&mut guard, None).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = www_authenticate(&response);
    assert!(
        challenge.contains(
            "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
        ),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");
}

#[tokio::test]
async fn expired_and_foreign_tokens_are_invalid() {
    let key = signing_key();
    let mut guard = guard(&key, &[]);
    let expired = token(&key, claims(RESOURCE, now() - 3600, "mcp:read"));
    let response = send(&mut guard, Some(&format!("Bearer {expired}"))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(www_authenticate(&response).contains("error=\"invalid_token\""));
    assert!(www_authenticate(&response).contains("expired"));

    let foreign = token(
        &key,
        claims("https://other.example.com/mcp", now() + 3600, "mcp:read"),
    );
    let response = send(&mut guard, Some(&format!("Bearer {foreign}"))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(www_authenticate(&response).contains("another resource"));

    let other_key = SigningKey::from_slice(&[9u8; 32]).expect("scalar");
    let forged = token(&other_key, claims(RESOURCE, now() + 3600, "mcp:read"));
    let response = send(&mut guard, Some(&format!("Bearer {forged}"))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    let response = send(&mut guard, Some("Basic dXNlcjpwYXNz")).await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "not a bearer token"
    );
}

#[tokio::test]
async fn a_token_without_the_required_scope_gets_insufficient_scope() {
    let key = signing_key();
    let mut guard = guard(&key, &["mcp:read", "mcp:write"]);
    let read_only = token(&key, claims(RESOURCE, now() + 3600, "mcp:read"));
    let response = send(&mut guard, Some(&format!("Bearer {read_only}"))).await;
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
}

#[tokio::test]
async fn a_valid_token_reaches_the_endpoint_with_its_claims() {
    let key = signing_key();
    let mut guard = guard(&key, &["mcp:read"]);
    let good = token(&key, claims(RESOURCE, now() + 3600, "mcp:read mcp:write"));
    let response = send(&mut guard, Some(&format!("Bearer {good}"))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-subject"], "alice");
}

#[tokio::test]
async fn the_metadata_document_is_served_without_a_token() {
    let mut guard = guard(&signing_key(), &["mcp:read"]);
    let request = Request::get("/.well-known/oauth-protected-resource/mcp")
        .body(())
        .expect("request");
    let response = guard.call(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let document: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(document["resource"], RESOURCE);
    assert_eq!(document["authorization_servers"], json!([ISSUER]));
    assert_eq!(
        document["scopes_supported"],
        json!(["mcp:read", "mcp:write"])
    );
}

#[test]
fn claims_debug_output_holds_no_token() {
    let claims = TokenClaims::with_scopes(vec!["mcp:read".into()]);
    let debug = format!("{claims:?}");
    assert!(debug.contains("mcp:read"));
}
