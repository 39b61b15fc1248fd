//! The edge of the streamable HTTP server on 127.0.0.1: the endpoint on its
//! path and `404` everywhere else (the OAuth discovery probes real clients
//! send before connecting, one test per probe; an `initialize` sent
//! elsewhere opens no session), the health probes beside it, and the
//! service mounted by a router of its own.

use mcp_transport::http::HttpServerConfig;

#[path = "support/raw_http.rs"]
mod raw_http;
#[path = "support/served.rs"]
mod served;
use served::{MCP_POST, Served, initialize, service};

/// A discovery probe's `GET` (with the version header the TypeScript SDK
/// sends) gets the plain `404` a client reads as "no such document", and
/// opens nothing. Under `/.well-known/` any origin may read it.
async fn probe_is_not_found(path: &str) {
    let served = Served::start(HttpServerConfig::new()).await;
    let answer = served
        .send(
            "GET",
            path,
            &[
                ("Accept", "application/json"),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            "",
        )
        .await;
    assert_eq!(answer.status, 404, "{path}: {answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(
        answer.body.contains("/mcp"),
        "names the endpoint: {answer:?}"
    );
    assert_eq!(
        answer.header("access-control-allow-origin"),
        path.contains("/.well-known/").then_some("*"),
        "{path}"
    );
    assert_eq!(served.service.session_count(), 0);
    served.stop().await;
}

#[tokio::test]
async fn the_protected_resource_metadata_probe_gets_404() {
    // RFC 9728: the root form, and the form suffixed with the endpoint path.
    probe_is_not_found("/.well-known/oauth-protected-resource").await;
    probe_is_not_found("/.well-known/oauth-protected-resource/mcp").await;
}

#[tokio::test]
async fn the_authorization_server_metadata_probe_gets_404() {
    // RFC 8414: the root form, and the path inserted after the well-known part.
    probe_is_not_found("/.well-known/oauth-authorization-server").await;
    probe_is_not_found("/.well-known/oauth-authorization-server/mcp").await;
}

#[tokio::test]
async fn the_openid_configuration_probe_gets_404() {
    // OpenID Connect Discovery: the root form, the path inserted, the path appended.
    probe_is_not_found("/.well-known/openid-configuration").await;
    probe_is_not_found("/.well-known/openid-configuration/mcp").await;
    probe_is_not_found("/mcp/.well-known/openid-configuration").await;
}

#[tokio::test]
async fn the_2025_03_26_default_endpoints_get_404() {
    // Without metadata, 2025-03-26 clients fall back to these at the root.
    let served = Served::start(HttpServerConfig::new()).await;
    for (method, path) in [
        ("GET", "/authorize"),
        ("POST", "/token"),
        ("POST", "/register"),
    ] {
        let answer = served
            .send(method, path, &[("Content-Type", "application/json")], "{}")
            .await;
        assert_eq!(answer.status, 404, "{method} {path}: {answer:?}");
    }
    assert_eq!(served.service.session_count(), 0);
    served.stop().await;
}

#[tokio::test]
async fn an_initialize_elsewhere_opens_no_session_and_at_the_endpoint_one() {
    let served = Served::start(HttpServerConfig::new()).await;
    for path in ["/nonexistent", "/", "/mcp/", "/MCP", "/mcp?x=1/"] {
        let answer = served.initialize(path, &[]).await;
        if path == "/mcp?x=1/" {
            // The query is not part of the path: this is the endpoint.
            assert_eq!(answer.status, 200, "{path}: {answer:?}");
            continue;
        }
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert!(answer.header("mcp-session-id").is_none(), "{path}");
    }
    assert_eq!(served.service.session_count(), 1);
    let answer = served.initialize("/mcp", &[]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_some());
    assert_eq!(served.service.session_count(), 2);
    served.stop().await;
}

#[tokio::test]
async fn every_method_elsewhere_gets_404() {
    let served = Served::start(HttpServerConfig::new()).await;
    for method in ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let answer = served.send(method, "/other", MCP_POST, "").await;
        assert_eq!(answer.status, 404, "{method}: {answer:?}");
    }
    served.stop().await;
}

#[tokio::test]
async fn the_health_probes_are_served_beside_the_endpoint_when_enabled() {
    let served = Served::start(HttpServerConfig::new()).await;
    assert_eq!(served.send("GET", "/livez", &[], "").await.status, 200);
    assert_eq!(served.send("GET", "/readyz", &[], "").await.status, 200);
    assert_eq!(served.send("GET", "/livez/x", &[], "").await.status, 404);
    served.stop().await;
    let served = Served::start(HttpServerConfig::new().health_probes(false)).await;
    assert_eq!(served.send("GET", "/livez", &[], "").await.status, 404);
    assert_eq!(served.send("GET", "/readyz", &[], "").await.status, 404);
    served.stop().await;
}

#[tokio::test]
async fn a_configured_path_moves_the_endpoint_and_any_path_takes_every_one() {
    let served = Served::start(HttpServerConfig::new().path("/v1/mcp")).await;
    assert_eq!(served.initialize("/v1/mcp", &[]).await.status, 200);
    let answer = served.initialize("/mcp", &[]).await;
    assert_eq!(answer.status, 404, "{answer:?}");
    assert!(
        answer.body.contains("/v1/mcp"),
        "names the endpoint: {answer:?}"
    );
    assert_eq!(served.service.session_count(), 1);
    served.stop().await;
    let served = Served::start(HttpServerConfig::new().any_path()).await;
    assert_eq!(served.initialize("/anything", &[]).await.status, 200);
    served.stop().await;
}

#[tokio::test]
async fn mounted_by_a_router_of_its_own_the_service_serves_the_routes_path() {
    // A router hands the service what its route matched (axum's
    // `route_service("/api/mcp", service)` passes the path whole); without
    // `serve`'s mark, the service takes it as the endpoint's.
    let mounted = service(HttpServerConfig::new());
    let request = http::Request::post("/api/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(initialize())))
        .expect("a request");
    let response = mounted.handle(request).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("mcp-session-id"));
    // A path set in the config holds there too.
    let strict = service(HttpServerConfig::new().path("/mcp"));
    let request = http::Request::post("/api/mcp")
        .header("host", "localhost")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .expect("a request");
    assert_eq!(strict.handle(request).await.status(), 404);
    mounted.shutdown_handle().close().await;
    strict.shutdown_handle().close().await;
}
