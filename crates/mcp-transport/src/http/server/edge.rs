//! The edge of the service: which requests reach the MCP endpoint at all.
//!
//! In order: the health probes (`/livez`, `/readyz`, see `health`) are
//! answered first, when enabled; a request to any path other than the
//! endpoint's gets `404`, so that discovery probes
//! (`/.well-known/oauth-authorization-server`, …) read "nothing here" and an
//! `initialize` there opens no session; at the endpoint, CORS (when
//! configured, see `cors`) answers preflights and marks the answers; then
//! the Host/Origin check and the method's handler.
//!
//! Which path is the endpoint's: the one set with [`HttpServerConfig::path`](super::HttpServerConfig::path);
//! without one, [`DEFAULT_PATH`] when [`serve`](super::serve) serves the
//! service as the whole server (it marks each request with [`Whole`]), and
//! any path when the service is mounted in a router of your own (the
//! router's route has chosen the path already, so mounting keeps working
//! whatever the route). Documents published beside the endpoint by a layer
//! in front of the service (the protected resource metadata of a
//! `BearerGuard`) are answered by that layer before the service sees the
//! request.

use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Request, Response, StatusCode};

use super::body::HttpBody;

/// The conventional path of the MCP endpoint: where the service serves MCP
/// when [`serve`](super::serve) runs it and no [`HttpServerConfig::path`](super::HttpServerConfig::path)
/// is set.
pub const DEFAULT_PATH: &str = "/mcp";

/// Whether `path` is where public documents live (RFC 8615's
/// `/.well-known/`, or under an issuer's path as OpenID Connect Discovery
/// appends it): never the MCP endpoint, and readable from any origin, a
/// `404` there too.
pub(crate) fn is_well_known(path: &str) -> bool {
    path.contains("/.well-known/")
}

/// The request extension with which [`serve`](super::serve) marks the
/// requests it hands the service: the service is the whole server, so the
/// endpoint is at [`DEFAULT_PATH`] unless configured.
#[derive(Debug, Clone, Copy)]
pub(super) struct Whole;

/// Which paths are the endpoint's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum EndpointPath {
    /// [`DEFAULT_PATH`] served whole, any path mounted.
    Default,
    /// This path, however served.
    Exactly(String),
    /// Every path.
    Any,
}

/// Whether `request` is for the MCP endpoint. A path under `/.well-known/`
/// never is, whatever the configuration: CORS passes those on untouched
/// (see `cors`), so one reaching the endpoint would go through the
/// service's own CORS again and again.
pub(super) fn is_endpoint<B>(endpoint: &EndpointPath, request: &Request<B>) -> bool {
    let path = request.uri().path();
    if is_well_known(path) {
        return false;
    }
    match endpoint {
        EndpointPath::Exactly(endpoint) => endpoint == path,
        EndpointPath::Any => true,
        EndpointPath::Default => {
            request.extensions().get::<Whole>().is_none() || path == DEFAULT_PATH
        }
    }
}

/// The answer to a request for any other path: `404`, saying where the
/// endpoint is (a client sent there by a wrong URL learns the right one; a
/// probe learns nothing it could not read in the client's configuration).
/// Under `/.well-known/`, readable from any origin like the documents there,
/// so that a browser client's discovery probe reads the `404` instead of
/// failing on CORS.
pub(super) fn not_found(endpoint: &EndpointPath, path: &str) -> Response<HttpBody> {
    let endpoint = match endpoint {
        EndpointPath::Exactly(endpoint) => endpoint.as_str(),
        EndpointPath::Default | EndpointPath::Any => DEFAULT_PATH,
    };
    tracing::debug!(path, endpoint, "not the MCP endpoint: 404");
    let text = format!(
        "Not Found: this server's MCP endpoint is {endpoint} \
         (HttpServerConfig::path sets another)\n"
    );
    let mut response = Response::new(HttpBody::full(text));
    *response.status_mut() = StatusCode::NOT_FOUND;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if is_well_known(path) {
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::HttpServerConfig;

    fn request(path: &str, whole: bool) -> Request<()> {
        let mut request = Request::get(path).body(()).expect("a request");
        if whole {
            request.extensions_mut().insert(Whole);
        }
        request
    }

    #[test]
    fn served_whole_the_default_endpoint_is_slash_mcp_exactly() {
        let config = HttpServerConfig::new();
        assert!(is_endpoint(&config.path, &request("/mcp", true)));
        for other in [
            "/",
            "/mcp/",
            "/MCP",
            "/mcpx",
            "/nonexistent",
            "/.well-known/x",
        ] {
            assert!(!is_endpoint(&config.path, &request(other, true)), "{other}");
        }
    }

    #[test]
    fn mounted_the_default_endpoint_is_where_the_router_put_it() {
        let config = HttpServerConfig::new();
        for path in ["/mcp", "/", "/api/v1/mcp"] {
            assert!(is_endpoint(&config.path, &request(path, false)), "{path}");
        }
    }

    #[test]
    fn a_set_path_holds_however_served_and_any_path_takes_all() {
        let config = HttpServerConfig::new().path("v1/mcp");
        for whole in [true, false] {
            assert!(is_endpoint(&config.path, &request("/v1/mcp", whole)));
            assert!(!is_endpoint(&config.path, &request("/mcp", whole)));
        }
        let config = HttpServerConfig::new().any_path();
        assert!(is_endpoint(&config.path, &request("/", true)));
        assert!(is_endpoint(
            &config.path,
            &request("/anything/at/all", true)
        ));
    }

    #[test]
    fn a_well_known_path_is_never_the_endpoint() {
        let path = "/.well-known/oauth-authorization-server";
        for config in [
            HttpServerConfig::new(),
            HttpServerConfig::new().any_path(),
            HttpServerConfig::new().path(path),
        ] {
            for whole in [true, false] {
                assert!(
                    !is_endpoint(&config.path, &request(path, whole)),
                    "{config:?}"
                );
            }
        }
    }

    #[test]
    fn not_found_names_the_endpoint_and_is_public_under_well_known() {
        let response = not_found(&HttpServerConfig::new().path("/v2").path, "/x");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert!(
            response
                .headers()
                .get(ACCESS_CONTROL_ALLOW_ORIGIN)
                .is_none()
        );
        let probe = not_found(
            &HttpServerConfig::new().path,
            "/.well-known/oauth-authorization-server",
        );
        assert_eq!(probe.headers()[ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    }
}
