//! The client's hook for credentials: an [`Authorizer`] adds them to each
//! HTTP request and renews them when the server challenges. `mcp-client`'s
//! OAuth client implements it; this crate knows no OAuth.

use std::future::Future;
use std::pin::Pin;

use mcp_core::BoxError;

/// What a server's 401 or 403 said.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header values, comma-joined.
    pub www_authenticate: String,
    /// The MCP endpoint that answered.
    pub url: String,
    /// The `DPoP-Nonce` header, when the server sent one.
    pub dpop_nonce: Option<String>,
}

/// The headers an [`Authorizer`] adds to one request, as (name, value) pairs.
pub type AuthHeaders<'a> = Pin<Box<dyn Future<Output = Vec<(String, String)>> + Send + 'a>>;

/// The outcome of answering a challenge: `Ok(true)` retries the request
/// with the new credentials, `Ok(false)` gives the server's response back,
/// `Err` fails the request with [`mcp_core::TransportError::Auth`] carrying
/// the error (the implementor's own type, boxed, so callers can downcast it).
pub type AuthOutcome<'a> = Pin<Box<dyn Future<Output = Result<bool, BoxError>> + Send + 'a>>;

/// Supplies credentials for HTTP requests and obtains new ones when the
/// server challenges (OAuth: `mcp-client`'s `auth` feature implements it).
pub trait Authorizer: Send + Sync + std::fmt::Debug + 'static {
    /// The headers that authorize the next request (`Authorization`, and
    /// `DPoP` for sender-constrained tokens), given its method and URL.
    fn headers(&self, method: String, url: String) -> AuthHeaders<'_>;

    /// The server answered 401 or 403: get (new) credentials. See
    /// [`AuthOutcome`]. The error's message must not contain a token or
    /// secret: it reaches the caller and, often, logs.
    fn challenge(&self, challenge: AuthChallenge) -> AuthOutcome<'_>;
}
