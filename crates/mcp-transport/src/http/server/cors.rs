//! CORS for browser clients: which pages on other origins may call the MCP
//! endpoint, with which request headers, and which response headers they
//! may read. Built on tower-http's `Cors`, kept out of the public API.
//!
//! The headers are MCP's, as [`mcp_types::routing`] lists them for both
//! eras ([`request_headers`](routing::request_headers),
//! [`response_headers`](routing::response_headers)), and `Mcp-Param-*`,
//! one per argument a tool marks with `x-mcp-header`
//! ([`is_param_header`](routing::is_param_header)). An
//! `Access-Control-Allow-Headers` list has no prefix wildcard, so a
//! preflight is answered with the headers it asks for, filtered: MCP's, any
//! `Mcp-Param-*`, and the extras configured; for an origin not on the list
//! nothing is mirrored at all. A page on an allowed origin thus sends every
//! header MCP defines, and none other.
//!
//! Documents under `/.well-known/` (the OAuth protected resource metadata a
//! `BearerGuard` publishes, and the `404`s of the others) are public,
//! readable from any origin with their own CORS headers: the layer passes
//! them through untouched.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::header::{ACCESS_CONTROL_REQUEST_HEADERS, HeaderName, HeaderValue, ORIGIN};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use mcp_types::{Era, routing};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, ExposeHeaders, MaxAge};

use super::edge::is_well_known;
use crate::Error;

/// The methods of the MCP endpoint (a preflight's own `OPTIONS` needs no
/// grant).
const METHODS: [Method; 3] = [Method::GET, Method::POST, Method::DELETE];

/// Read besides MCP's response headers: the wait a `429` of the
/// dispatcher's rate limit (feature `rate-limit`) asks for.
const RETRY_AFTER: &str = "retry-after";

/// The request extension with which a [`CorsService`] marks what it passes
/// on, so that the service's own CORS does not run on it again: behind its
/// own layer, and behind an outer one of the same rules (given to
/// [`HttpServerConfig::cors`](super::HttpServerConfig::cors) too, for the Origin check), whose grant then
/// stands alone.
#[derive(Debug, Clone, Copy)]
pub(super) struct Applied;

/// Who may call the MCP endpoint from a web page on another origin:
/// [`HttpServerConfig::cors`](super::HttpServerConfig::cors) for the service itself, or
/// [`layer`](Self::layer) for a stack of your own.
///
/// Granted to the listed origins only (exact, no wildcard): the methods
/// GET, POST and DELETE; the request headers MCP defines in both eras
/// ([`routing::request_headers`]: `Content-Type`, `Accept`,
/// `Authorization`, `MCP-Protocol-Version`, `Mcp-Session-Id`,
/// `Last-Event-ID`, `Mcp-Method`, `Mcp-Name`, `traceparent`, `tracestate`),
/// any `Mcp-Param-*`, and those of [`allow_headers`](Self::allow_headers);
/// readable, the response headers a client reads
/// ([`routing::response_headers`]: `Mcp-Session-Id`,
/// `MCP-Protocol-Version`, `WWW-Authenticate`) and `Retry-After`.
/// Preflights are answered `204` without reaching the endpoint's handler,
/// and cached by the browser for [`max_age`](Self::max_age).
///
/// The Origin check against DNS rebinding agrees with this list: see
/// [`HttpServerConfig::cors`](super::HttpServerConfig::cors).
///
/// # Examples
/// ```
/// # use mcp_transport::http::{CorsConfig, HttpServerConfig};
/// # fn main() -> Result<(), mcp_transport::Error> {
/// let cors = CorsConfig::new(["http://localhost:5173"])?;
/// let config = HttpServerConfig::new().cors(cors);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct CorsConfig {
    /// Lowercase `scheme://host[:port]`.
    origins: Vec<String>,
    credentials: bool,
    max_age: Duration,
    /// Lowercase.
    extra_headers: Vec<String>,
}

impl CorsConfig {
    /// CORS for pages on `origins`, each `scheme://host[:port]` exactly as
    /// browsers send it in `Origin` (compared without regard to case);
    /// without credentials, preflights cached for 10 minutes.
    ///
    /// # Errors
    /// [`Error::InvalidOrigin`] for an origin that is not `scheme://host[:port]`
    /// (a path, even `/`, a wildcard `*`, or `null`: the origin of every
    /// sandboxed frame and local file, which no server should trust).
    pub fn new<I, S>(origins: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for origin in origins {
            let origin = parse_origin(origin.as_ref())?;
            if !list.contains(&origin) {
                list.push(origin);
            }
        }
        Ok(Self {
            origins: list,
            credentials: false,
            max_age: Duration::from_secs(600),
            extra_headers: Vec::new(),
        })
    }

    /// Whether pages may send credentials (cookies, TLS client certificates)
    /// with their calls (default no): `Access-Control-Allow-Credentials:
    /// true`. A bearer token in `Authorization` needs no such grant; turn it
    /// on only for an endpoint that authenticates by cookie, whose every
    /// listed origin is then trusted with the user's session.
    pub fn allow_credentials(mut self, allow: bool) -> Self {
        self.credentials = allow;
        self
    }

    /// How long a browser may reuse a preflight's answer (default 10 min;
    /// browsers cap it, Chromium at 2 h). A page sends one preflight per
    /// distinct set of headers, so per tool with `Mcp-Param-*` headers.
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Request headers to allow besides MCP's (a tenant header your own
    /// layer reads, say).
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] for a name that is not a valid header name.
    pub fn allow_headers<I, S>(mut self, headers: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for name in headers {
            let name = name.as_ref();
            let parsed =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| Error::InvalidHeader {
                    name: name.to_owned(),
                })?;
            let name = parsed.as_str().to_owned();
            if !self.extra_headers.contains(&name) {
                self.extra_headers.push(name);
            }
        }
        Ok(self)
    }

    /// The origins granted (lowercase).
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether a page on `origin` is granted.
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// Whether a page may send header `name` (any case): one MCP defines,
    /// an `Mcp-Param-*`, or an extra one.
    pub fn allows_header(&self, name: &str) -> bool {
        let name = name.trim();
        let is = |listed: &&str| listed.eq_ignore_ascii_case(name);
        mcp_request_headers().any(|h| is(&h))
            || self.extra_headers.iter().any(|h| is(&h.as_str()))
            || routing::is_param_header(name)
    }

    /// These rules as a tower layer, for a stack of your own: wrap the
    /// outermost service of the MCP endpoint (outside a `BearerGuard`, whose
    /// refusals must carry the CORS headers for a page to read them). Give the same rules to [`HttpServerConfig::cors`](super::HttpServerConfig::cors)
    /// too, so that the Origin check accepts these origins: behind this
    /// layer the service's own CORS steps aside.
    pub fn layer(&self) -> CorsLayer {
        let config = Arc::new(self.clone());
        let granted = config.clone();
        let mut tower = tower_http::cors::CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin.to_str().is_ok_and(|o| granted.allows_origin(o))
            }))
            .allow_methods(AllowMethods::list(METHODS))
            // Mirrors what `CorsService` left of the requested headers.
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers(ExposeHeaders::list(
                exposed_headers().map(HeaderName::from_static),
            ))
            .max_age(MaxAge::exact(self.max_age));
        if self.credentials {
            tower = tower.allow_credentials(true);
        }
        CorsLayer {
            rules: Arc::new(Rules { config, tower }),
        }
    }

    /// Leaves only the requested headers this grants in a preflight's
    /// `Access-Control-Request-Headers`, and none for an origin it does not
    /// grant, so that mirroring them grants no more.
    fn filter_requested_headers(&self, headers: &mut HeaderMap) {
        if !headers.contains_key(ACCESS_CONTROL_REQUEST_HEADERS) {
            return;
        }
        let granted = headers
            .get(ORIGIN)
            .and_then(|o| o.to_str().ok())
            .is_some_and(|o| self.allows_origin(o));
        let kept = if granted {
            headers
                .get_all(ACCESS_CONTROL_REQUEST_HEADERS)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|name| !name.is_empty() && self.allows_header(name))
                .map(str::to_ascii_lowercase)
                .collect::<Vec<_>>()
                .join(",")
        } else {
            String::new()
        };
        headers.remove(ACCESS_CONTROL_REQUEST_HEADERS);
        // Visible ASCII by construction (names that passed `to_str`).
        if let Ok(value) = HeaderValue::from_str(&kept) {
            if !kept.is_empty() {
                headers.insert(ACCESS_CONTROL_REQUEST_HEADERS, value);
            }
        }
    }
}

/// The request headers MCP defines in either era (some twice).
fn mcp_request_headers() -> impl Iterator<Item = &'static str> {
    routing::request_headers(Era::Handshake).chain(routing::request_headers(Era::Stateless))
}

/// The response headers a page may read: MCP's in either era, each once,
/// and `Retry-After`.
fn exposed_headers() -> impl Iterator<Item = &'static str> {
    let handshake = routing::response_headers(Era::Handshake);
    let stateless = routing::response_headers(Era::Stateless);
    handshake
        .iter()
        .chain(stateless.iter().filter(|h| !handshake.contains(h)))
        .copied()
        .chain([RETRY_AFTER])
}

/// `origin` as browsers serialize it, lowercase; `Err` says what is wrong.
fn parse_origin(origin: &str) -> Result<String, Error> {
    let invalid = |reason| {
        Err(Error::InvalidOrigin {
            origin: origin.to_owned(),
            reason,
        })
    };
    if origin == "*" {
        return invalid("a wildcard grants every web page; list the origins instead");
    }
    if origin.eq_ignore_ascii_case("null") {
        return invalid("`null` is the origin of every sandboxed frame and local file");
    }
    let Some((scheme, authority)) = origin.split_once("://") else {
        return invalid("it has no `://` after its scheme");
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok {
        return invalid("its scheme is not a URL scheme");
    }
    if authority.is_empty() {
        return invalid("it has no host");
    }
    if authority.contains(['/', '?', '#']) {
        return invalid("an origin has no path, query or fragment (not even a trailing `/`)");
    }
    if authority.contains('@') {
        return invalid("an origin has no user name or password");
    }
    if !authority.bytes().all(|b| b.is_ascii_graphic()) {
        return invalid("it is not visible ASCII (write an international name in punycode)");
    }
    Ok(origin.to_ascii_lowercase())
}

/// Makes the Origin check and the CORS grant one list: with CORS on, the
/// origins accepted are the CORS origins and the `allowed_origins`, and
/// each of those is granted CORS. An `allowed_origins` entry that is not
/// an origin stays accepted but cannot be granted, and is reported.
pub(super) fn agree(cors: &mut CorsConfig, allowed_origins: &mut Option<Vec<String>>) {
    for listed in allowed_origins.iter().flatten() {
        match parse_origin(listed) {
            Ok(origin) if !cors.origins.contains(&origin) => cors.origins.push(origin),
            Ok(_) => {}
            Err(error) => tracing::warn!(
                %error,
                "an allowed origin is accepted by the Origin check but cannot be granted CORS"
            ),
        }
    }
    let mut accepted = allowed_origins.take().unwrap_or_default();
    for origin in &cors.origins {
        if !accepted.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
            accepted.push(origin.clone());
        }
    }
    *allowed_origins = Some(accepted);
}

struct Rules {
    config: Arc<CorsConfig>,
    tower: tower_http::cors::CorsLayer,
}

/// A tower layer granting browser pages on the listed origins CORS (see
/// [`CorsConfig`]); from [`CorsConfig::layer`].
#[derive(Clone)]
pub struct CorsLayer {
    rules: Arc<Rules>,
}

impl std::fmt::Debug for CorsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CorsLayer")
            .field(&self.rules.config)
            .finish()
    }
}

impl<S> tower_layer::Layer<S> for CorsLayer {
    type Service = CorsService<S>;

    fn layer(&self, inner: S) -> CorsService<S> {
        CorsService {
            cors: self.rules.tower.layer(inner),
            rules: self.rules.clone(),
        }
    }
}

/// A service behind a [`CorsLayer`]: preflights answered `204` without
/// reaching it, its answers marked with the grant.
pub struct CorsService<S> {
    cors: tower_http::cors::Cors<S>,
    rules: Arc<Rules>,
}

impl<S: Clone> Clone for CorsService<S> {
    fn clone(&self) -> Self {
        Self {
            cors: self.cors.clone(),
            rules: self.rules.clone(),
        }
    }
}

impl<S> std::fmt::Debug for CorsService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorsService")
            .field("config", &self.rules.config)
            .finish_non_exhaustive()
    }
}

impl<S, B, R> tower_service::Service<Request<B>> for CorsService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.cors.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if is_well_known(request.uri().path()) {
            return Box::pin(self.cors.get_mut().call(request));
        }
        let preflight = request.method() == Method::OPTIONS;
        if preflight {
            self.rules
                .config
                .filter_requested_headers(request.headers_mut());
        }
        request.extensions_mut().insert(Applied);
        let answer = self.cors.call(request);
        Box::pin(async move {
            let mut response = answer.await?;
            if preflight {
                // tower-http answers 200; a preflight's answer has no body.
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tower_layer::Layer as _;
    use tower_service::Service as _;

    use super::*;
    use crate::http::HttpServerConfig;

    const PAGE: &str = "http://localhost:5173";

    /// Answers `200` with an empty body, counting the calls that reach it.
    #[derive(Clone, Default)]
    struct Counted(Arc<AtomicUsize>);

    impl tower_service::Service<Request<()>> for Counted {
        type Response = Response<String>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<String>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            self.0.fetch_add(1, Ordering::Relaxed);
            std::future::ready(Ok(Response::new(String::new())))
        }
    }

    /// `request` through the rules of `cors`; the answer and how many calls
    /// reached the endpoint.
    async fn through(cors: &CorsConfig, request: Request<()>) -> (Response<String>, usize) {
        let endpoint = Counted::default();
        let calls = endpoint.0.clone();
        let mut service = cors.layer().layer(endpoint);
        let response = match service.call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        (response, calls.load(Ordering::Relaxed))
    }

    fn preflight(origin: &str, method: &str, headers: &str) -> Request<()> {
        Request::options("/mcp")
            .header("origin", origin)
            .header("access-control-request-method", method)
            .header("access-control-request-headers", headers)
            .body(())
            .expect("a request")
    }

    fn cors() -> CorsConfig {
        CorsConfig::new([PAGE]).expect("valid")
    }

    /// The names of a comma-separated header, lowercase.
    fn listed(response: &Response<String>, name: &str) -> Vec<String> {
        response
            .headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty())
            .collect()
    }

    #[tokio::test]
    async fn an_allowed_origins_preflight_gets_204_with_the_mcp_headers_and_no_handler() {
        let asked = "content-type,accept,mcp-protocol-version,mcp-session-id,last-event-id";
        let (response, calls) = through(&cors(), preflight(PAGE, "POST", asked)).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(calls, 0, "a preflight never reaches the endpoint");
        assert_eq!(response.headers()["access-control-allow-origin"], PAGE);
        let methods = listed(&response, "access-control-allow-methods");
        assert_eq!(methods, ["get", "post", "delete"]);
        assert_eq!(
            listed(&response, "access-control-allow-headers"),
            asked.split(',').collect::<Vec<_>>()
        );
        assert_eq!(response.headers()["access-control-max-age"], "600");
        assert!(listed(&response, "vary").contains(&"origin".to_owned()));
    }

    #[tokio::test]
    async fn another_origins_preflight_gets_no_grant() {
        let request = preflight("http://evil.example", "POST", "content-type,mcp-session-id");
        let (response, calls) = through(&cors(), request).await;
        assert_eq!(calls, 0);
        let headers = response.headers();
        assert!(!headers.contains_key("access-control-allow-origin"));
        assert!(!headers.contains_key("access-control-allow-headers"));
        assert!(!headers.contains_key("access-control-allow-credentials"));
        // Nor does an allowed host on another port count: origins are exact.
        let request = preflight("http://localhost:5174", "POST", "content-type");
        let (response, _) = through(&cors(), request).await;
        assert!(
            !response
                .headers()
                .contains_key("access-control-allow-origin")
        );
    }

    #[tokio::test]
    async fn credentials_are_granted_only_when_allowed_and_never_with_a_wildcard() {
        let (response, _) = through(&cors(), preflight(PAGE, "POST", "authorization")).await;
        assert!(
            !response
                .headers()
                .contains_key("access-control-allow-credentials")
        );
        let with = cors().allow_credentials(true);
        let (response, _) = through(&with, preflight(PAGE, "POST", "authorization")).await;
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-credentials"], "true");
        assert_eq!(headers["access-control-allow-origin"], PAGE, "never `*`");
        assert!(matches!(
            CorsConfig::new(["*"]),
            Err(Error::InvalidOrigin { .. })
        ));
    }

    #[tokio::test]
    async fn an_answer_exposes_the_headers_a_client_reads() {
        let request = Request::post("/mcp")
            .header("origin", PAGE)
            .body(())
            .expect("a request");
        let (response, calls) = through(&cors(), request).await;
        assert_eq!(calls, 1);
        assert_eq!(response.headers()["access-control-allow-origin"], PAGE);
        let exposed = listed(&response, "access-control-expose-headers");
        for name in [
            "mcp-session-id",
            "mcp-protocol-version",
            "www-authenticate",
            "retry-after",
        ] {
            assert!(exposed.iter().any(|e| e == name), "{name} in {exposed:?}");
        }
    }

    #[tokio::test]
    async fn a_stateless_preflight_gets_the_routing_and_param_headers_and_no_others() {
        let asked = "content-type,mcp-protocol-version,mcp-method,mcp-name,\
                     mcp-param-region,traceparent,tracestate,x-evil,cookie";
        let (response, _) = through(&cors(), preflight(PAGE, "POST", asked)).await;
        let allowed = listed(&response, "access-control-allow-headers");
        assert_eq!(
            allowed,
            [
                "content-type",
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
                "mcp-param-region",
                "traceparent",
                "tracestate"
            ]
        );
    }

    #[tokio::test]
    async fn well_known_documents_pass_through_with_their_own_grant() {
        let request = Request::get("/.well-known/oauth-protected-resource/mcp")
            .header("origin", "http://anyone.example")
            .body(())
            .expect("a request");
        let (response, calls) = through(&cors(), request).await;
        assert_eq!(calls, 1);
        assert!(
            !response
                .headers()
                .contains_key("access-control-allow-origin")
        );
        assert!(!response.headers().contains_key("vary"));
    }

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        for good in [
            "http://localhost:5173",
            "https://app.example.com",
            "HTTP://LOCALHOST:5173",
            "chrome-extension://abcdefghijklmnop",
            "http://[::1]:8080",
        ] {
            let parsed = parse_origin(good).unwrap_or_else(|e| panic!("{good}: {e}"));
            assert_eq!(parsed, good.to_ascii_lowercase());
        }
        for bad in [
            "*",
            "null",
            "localhost:5173",
            "http://",
            "http://localhost:5173/",
            "http://localhost/app",
            "http://user@localhost",
            "1http://x",
            "http://bücher.example",
        ] {
            assert!(
                matches!(parse_origin(bad), Err(Error::InvalidOrigin { .. })),
                "{bad} was accepted"
            );
        }
    }

    #[test]
    fn the_headers_allowed_are_mcps_and_the_extras() {
        let cors = CorsConfig::new(["http://localhost:5173"])
            .and_then(|c| c.allow_headers(["X-Tenant"]))
            .expect("valid");
        for name in [
            "Content-Type",
            "mcp-session-id",
            "MCP-Protocol-Version",
            "Mcp-Method",
            "Mcp-Name",
            "Mcp-Param-Region",
            "traceparent",
            "x-tenant",
        ] {
            assert!(cors.allows_header(name), "{name}");
        }
        for name in ["x-other", "Mcp-Param-", "cookie", "mcp-paramregion"] {
            assert!(!cors.allows_header(name), "{name}");
        }
        assert!(
            CorsConfig::new(["http://a"])
                .and_then(|c| c.allow_headers(["bad header"]))
                .is_err()
        );
    }

    #[test]
    fn the_cors_list_and_allowed_origins_become_one_list() {
        let cors = CorsConfig::new(["http://localhost:5173"]).expect("valid");
        let mut config = HttpServerConfig::new()
            .allowed_origins(["https://app.example.com", "not an origin"])
            .cors(cors);
        let cors = config.cors.as_mut().expect("cors");
        agree(cors, &mut config.allowed_origins);
        let accepted = config.allowed_origins.clone().expect("a list");
        assert!(accepted.iter().any(|o| o == "http://localhost:5173"));
        assert!(accepted.iter().any(|o| o == "https://app.example.com"));
        let granted = config.cors.as_ref().expect("cors").origins().to_vec();
        assert_eq!(
            granted,
            ["http://localhost:5173", "https://app.example.com"]
        );
    }
}
