//! Why an OAuth flow failed.
//!
//! Messages never contain a token, secret, authorization code or the
//! `state` value: they reach callers and logs.

use mcp_core::BoxError;

/// What went wrong obtaining credentials for a protected server.
///
/// It reaches the caller of a request inside
/// [`mcp_core::TransportError::Auth`]; [`crate::Error::auth`] digs it out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// An authorization or metadata server could not be reached, or broke
    /// off its answer.
    #[error("could not reach {url}: {source}; check the network and that the server is running")]
    Unreachable {
        /// The URL, without its query.
        url: String,
        /// What the HTTP stack reported.
        #[source]
        source: BoxError,
    },
    /// A URL taken from configuration or metadata is not usable.
    #[error("the {role} `{url}` is not a usable URL: {source}")]
    InvalidUrl {
        /// What the URL is for ("issuer", "token endpoint", ...).
        role: &'static str,
        /// The URL, without its query.
        url: String,
        /// What the parser reported.
        #[source]
        source: BoxError,
    },
    /// A server answered with something that is not the JSON expected.
    #[error("{url} did not answer with the expected JSON: {source}")]
    InvalidJson {
        /// The URL, without its query.
        url: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A server refused a registration or token request.
    #[error(
        "the {endpoint} refused the request: HTTP {status}{}; check the client's credentials and \
         registration",
        .error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default()
    )]
    Refused {
        /// Which endpoint ("token endpoint", ...).
        endpoint: &'static str,
        /// The HTTP status.
        status: u16,
        /// The OAuth `error` code it sent (`invalid_grant`, ...), if any.
        error: Option<String>,
    },
    /// A server's answer lacks a field the flow needs.
    #[error("the {endpoint}'s answer has no `{field}`; the server is not OAuth 2.1 compliant")]
    MissingField {
        /// Which endpoint.
        endpoint: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// No protected resource metadata (RFC 9728) was found for the server.
    #[error(
        "no protected resource metadata found for {server}; the server must publish \
         /.well-known/oauth-protected-resource"
    )]
    NoResourceMetadata {
        /// The MCP server's URL.
        server: String,
    },
    /// The protected resource metadata names no authorization server.
    #[error("the protected resource metadata of {resource} names no authorization server")]
    NoAuthorizationServer {
        /// The resource.
        resource: String,
    },
    /// The server's challenge names protected resource metadata on another
    /// origin than the server's own: it was not fetched (a server could
    /// otherwise make its clients send requests wherever it likes).
    #[error(
        "the server at {server} points its `resource_metadata` at {url}, on another origin \
         (scheme, host and port); refusing to fetch it: a server's protected resource metadata \
         must be served from its own origin (ask the server's operator to fix its \
         WWW-Authenticate challenge)"
    )]
    ForeignResourceMetadata {
        /// The metadata URL the challenge named, without its query.
        url: String,
        /// The MCP server's URL.
        server: String,
    },
    /// A URL the trust chain hands the client (an issuer named by the
    /// protected resource metadata, an endpoint named by the authorization
    /// server's metadata) breaks the rules for its role: it was neither
    /// fetched nor opened.
    #[error(
        "the {role} `{url}` {reason}; refusing to use it: the server's metadata must name an \
         http(s) URL there (ask the server's operator to fix it)"
    )]
    UnusableUrl {
        /// What the URL is for ("issuer", "token endpoint", ...).
        role: &'static str,
        /// The URL, without its query.
        url: String,
        /// What is wrong with it ("is not an http(s) URL", "has a query", ...).
        reason: &'static str,
    },
    /// The metadata describes another server than the one being accessed
    /// (RFC 8707, RFC 9728).
    #[error("the protected resource metadata is for `{resource}`, not for {server}; refusing")]
    ForeignResource {
        /// The resource the metadata names.
        resource: String,
        /// The server being accessed.
        server: String,
    },
    /// No authorization server metadata (RFC 8414 or OpenID discovery).
    #[error("no authorization server metadata found for issuer `{issuer}`")]
    NoServerMetadata {
        /// The issuer.
        issuer: String,
    },
    /// Authorization server metadata names another issuer than the one it
    /// was fetched for.
    #[error(
        "the authorization server metadata at {url} names issuer `{found}`, not `{expected}`; \
         refusing to use it"
    )]
    MetadataIssuerMismatch {
        /// Where the metadata came from.
        url: String,
        /// The issuer it was fetched for.
        expected: String,
        /// The issuer it names.
        found: String,
    },
    /// The authorization server does not offer PKCE with S256.
    #[error("the authorization server `{issuer}` does not advertise PKCE S256; refusing")]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// No way to register this client with the authorization server.
    #[error(
        "the authorization server `{issuer}` offers no way to register this client: configure \
         pre-registered credentials or a client metadata document"
    )]
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// The authorization endpoint answered without redirecting back
    /// (a headless step cannot sign a user in).
    #[error(
        "the authorization endpoint answered HTTP {status} without a redirect; a user must sign \
         in: use an AuthorizationStep that opens a browser"
    )]
    NoRedirect {
        /// The HTTP status.
        status: u16,
    },
    /// The redirect's `Location` is not a URL (it is not repeated here:
    /// it may carry the authorization code).
    #[error("the authorization endpoint redirected to something that is not a URL")]
    InvalidRedirect,
    /// The authorization response's `state` is not the one sent (a forged
    /// or replayed response).
    #[error("the authorization response's state does not match the request; refusing")]
    StateMismatch,
    /// The authorization response came from another issuer (RFC 9207).
    #[error("the authorization response came from issuer `{found}`, not `{expected}`; refusing")]
    ResponseIssuerMismatch {
        /// The authorization server's issuer.
        expected: String,
        /// The `iss` the response carried.
        found: String,
    },
    /// The authorization server promised an `iss` parameter (RFC 9207) and
    /// the response has none.
    #[error(
        "the authorization server `{issuer}` promises an `iss` parameter and the response has \
         none; refusing"
    )]
    MissingResponseIssuer {
        /// The issuer.
        issuer: String,
    },
    /// The user or the authorization server refused the authorization.
    #[error("the authorization was refused: {error}; the user must approve access to continue")]
    Denied {
        /// The OAuth `error` code of the redirect (`access_denied`, ...).
        error: String,
    },
    /// The authorization response carries neither a code nor an error.
    #[error("the authorization response has no code")]
    NoCode,
    /// The token endpoint kept asking for a new DPoP nonce.
    #[error("the token endpoint kept demanding a new DPoP nonce; giving up")]
    DpopNonceLoop,
    /// The server kept refusing fresh tokens.
    #[error(
        "gave up after {limit} authorizations; the server keeps refusing the token (check the \
         scopes it asks for)"
    )]
    TooManyAuthorizations {
        /// The number of authorizations tried.
        limit: u32,
    },
    /// The private key for `private_key_jwt` is not usable.
    #[error("the private key is not a PKCS#8 P-256 key: {0}; give an ES256 key in PEM form")]
    InvalidKey(#[source] BoxError),
    /// No key could be generated (DPoP).
    #[error("could not generate a P-256 key; the system's random source failed")]
    KeyGeneration,
    /// The system's random source failed (PKCE verifier, `state`, `jti`).
    #[error("the system's random source failed: {0}")]
    Randomness(#[source] getrandom::Error),
    /// The HTTP client for the OAuth flow could not be set up.
    #[error(transparent)]
    Setup(#[from] mcp_transport::Error),
    /// The loopback redirect listener of
    /// [`LoopbackRedirect`](super::LoopbackRedirect) could not be bound or
    /// failed.
    #[error("the sign-in redirect listener on 127.0.0.1 failed: {0}")]
    Listener(#[source] std::io::Error),
    /// The user did not finish signing in within the step's time limit.
    #[error(
        "nobody signed in within {seconds} s; open the printed URL in a browser and sign in, \
         or raise the sign-in timeout"
    )]
    SignInTimedOut {
        /// The limit, in seconds.
        seconds: u64,
    },
    /// An [`AuthorizationStep`](super::AuthorizationStep) of the
    /// application failed (the browser could not be opened, the user closed
    /// it, ...).
    #[error("signing in did not complete: {0}")]
    Step(#[source] BoxError),
}

/// `url` without its query and fragment, fit for a message: a query may
/// hold `state` or a code.
pub(crate) fn redacted(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or(url).to_owned()
}

/// A URL that does not parse, named by its role, redacted.
pub(super) fn invalid_url(
    role: &'static str,
    url: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> AuthError {
    AuthError::InvalidUrl {
        role,
        url: redacted(url),
        source: Box::new(source),
    }
}
