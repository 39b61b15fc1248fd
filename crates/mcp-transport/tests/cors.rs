//! CORS at the streamable HTTP endpoint on 127.0.0.1, as a browser page on
//! another origin meets it: the preflight answered without the handler, the
//! session id readable, a page on another origin refused, the Origin check
//! and the CORS list agreeing, and a `BearerGuard`'s `401` readable when
//! the rules also wrap the whole stack as a tower layer.

use std::sync::Arc;

use mcp_transport::http::{
    CorsConfig, HttpServerConfig, ProtectedResource, TokenClaims, TokenRejection, TokenVerifier,
    Verification,
};

#[path = "support/raw_http.rs"]
mod raw_http;
#[path = "support/served.rs"]
mod served;
use raw_http::Answer;
use served::Served;

const PAGE: &str = "http://localhost:5173";

fn cors() -> CorsConfig {
    CorsConfig::new([PAGE]).expect("a valid origin")
}

/// The preflight a browser sends before an MCP POST from `origin`.
async fn preflight(served: &Served, origin: &str) -> Answer {
    served
        .send(
            "OPTIONS",
            "/mcp",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "content-type,mcp-protocol-version",
                ),
            ],
            "",
        )
        .await
}

/// An `initialize` POST from a page on `origin`.
async fn initialize_from(served: &Served, origin: &str) -> Answer {
    served.initialize("/mcp", &[("Origin", origin)]).await
}

/// How many times header `name` appears.
fn count(answer: &Answer, name: &str) -> usize {
    answer
        .head
        .lines()
        .filter(|line| {
            line.split_once(':')
                .is_some_and(|(key, _)| key.eq_ignore_ascii_case(name))
        })
        .count()
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_opens_a_session_and_reads_its_id() {
    let served = Served::start(HttpServerConfig::new().cors(cors())).await;
    let answer = preflight(&served, PAGE).await;
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), Some(PAGE));
    assert_eq!(
        answer.header("access-control-allow-headers"),
        Some("content-type,mcp-protocol-version")
    );
    assert_eq!(served.service.session_count(), 0, "no handler reached");
    let answer = initialize_from(&served, PAGE).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), Some(PAGE));
    let exposed = answer
        .header("access-control-expose-headers")
        .expect("exposed headers");
    assert!(exposed.contains("mcp-session-id"), "{exposed}");
    assert!(answer.header("mcp-session-id").is_some());
    assert_eq!(served.service.session_count(), 1);
    served.stop().await;
}

#[tokio::test]
async fn a_page_on_another_origin_gets_no_grant_and_is_refused() {
    let served = Served::start(HttpServerConfig::new().cors(cors())).await;
    let answer = preflight(&served, "http://evil.example").await;
    assert_eq!(answer.header("access-control-allow-origin"), None);
    assert_eq!(answer.header("access-control-allow-headers"), None);
    // An allowed host on another port is another page: with CORS on, the
    // Origin check takes only the listed origins.
    for origin in ["http://evil.example", "http://localhost:8080"] {
        let answer = initialize_from(&served, origin).await;
        assert_eq!(answer.status, 403, "{origin}: {answer:?}");
        assert_eq!(answer.header("access-control-allow-origin"), None);
    }
    assert_eq!(served.service.session_count(), 0);
    served.stop().await;
}

#[tokio::test]
async fn without_cors_a_preflight_is_not_answered_and_localhost_pages_pass_the_origin_check() {
    let served = Served::start(HttpServerConfig::new()).await;
    let answer = preflight(&served, PAGE).await;
    assert_eq!(answer.status, 405, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), None);
    // As before CORS existed: an Origin whose host is allowed passes.
    let answer = initialize_from(&served, "http://localhost:8080").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), None);
    served.stop().await;
}

#[tokio::test]
async fn the_origin_check_and_the_cors_list_are_one_list() {
    let config = HttpServerConfig::new()
        .allowed_origins(["https://app.example.com"])
        .cors(cors());
    let served = Served::start(config).await;
    for origin in [PAGE, "https://app.example.com"] {
        let answer = initialize_from(&served, origin).await;
        assert_eq!(answer.status, 200, "{origin}: {answer:?}");
        assert_eq!(answer.header("access-control-allow-origin"), Some(origin));
    }
    served.stop().await;
}

/// Accepts the token `good`.
struct Good;

impl TokenVerifier for Good {
    fn verify<'a>(&'a self, token: &'a str, _: &'a str) -> Verification<'a> {
        let verdict = if token == "good" {
            Ok(TokenClaims::new().with_subject("page"))
        } else {
            Err(TokenRejection::Invalid("not the test token".into()))
        };
        Box::pin(std::future::ready(verdict))
    }
}

#[tokio::test]
async fn in_front_of_a_bearer_guard_the_challenge_is_readable_and_granted_once() {
    let resource = ProtectedResource::new("http://127.0.0.1/mcp", "http://127.0.0.1:9/as");
    let config = HttpServerConfig::new().cors(cors());
    let served = Served::guarded(config, cors(), resource, Arc::new(Good)).await;
    let answer = preflight(&served, PAGE).await;
    assert_eq!(
        answer.status, 204,
        "the preflight needs no token: {answer:?}"
    );
    let answer = initialize_from(&served, PAGE).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), Some(PAGE));
    let exposed = answer
        .header("access-control-expose-headers")
        .expect("exposed headers");
    assert!(exposed.contains("www-authenticate"), "{exposed}");
    assert!(answer.header("www-authenticate").is_some());
    let headers = [("Origin", PAGE), ("Authorization", "Bearer good")];
    let answer = served.initialize("/mcp", &headers).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    // The service's own CORS stepped aside for the layer's.
    assert_eq!(
        count(&answer, "access-control-allow-origin"),
        1,
        "{answer:?}"
    );
    assert_eq!(count(&answer, "access-control-expose-headers"), 1);
    served.stop().await;
}

/// A discovery probe reaching the service with CORS on (mounted by a router
/// that hands it every path, or with `any_path`) is a `404` anyone may read:
/// under `/.well-known/` CORS steps aside, and the service must not take
/// the path for its endpoint (it once sent it through its CORS again, until
/// the stack overflowed and the process aborted).
#[tokio::test]
async fn with_cors_a_well_known_probe_is_not_found_however_the_service_is_reached() {
    let probe = "/.well-known/oauth-authorization-server";
    for config in [
        HttpServerConfig::new().cors(cors()),
        HttpServerConfig::new().cors(cors()).any_path(),
    ] {
        let mounted = served::service(config.clone());
        let request = http::Request::get(probe)
            .header("host", "localhost")
            .header("origin", PAGE)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .expect("a request");
        let response = mounted.handle(request).await;
        assert_eq!(response.status(), 404);
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        mounted.shutdown_handle().close().await;
        let served = Served::start(config).await;
        let answer = served.send("GET", probe, &[("Origin", PAGE)], "").await;
        assert_eq!(answer.status, 404, "{answer:?}");
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
        served.stop().await;
    }
}
