//! Streamable HTTP: the server (feature `http-server`) and the client
//! (feature `http-client`).
//!
//! [`StreamableHttpService`] is a `tower::Service` for the MCP endpoint:
//! sessions with `Mcp-Session-Id`, POST answered with JSON or SSE, the GET
//! stream, DELETE, resumption with `Last-Event-ID` from an [`EventStore`],
//! Host/Origin checks against DNS rebinding and a body size limit.
//! [`serve`] runs it on a TCP listener with hyper.
//!
//! With feature `auth-server`, `BearerGuard` (or `BearerAuthLayer`) makes
//! the endpoint an OAuth 2.1 resource server: bearer tokens checked by a
//! `TokenVerifier` such as `JwtVerifier`, and the RFC 9728 metadata document
//! of a `ProtectedResource`.

#[cfg(feature = "auth-server")]
mod auth;
#[cfg(feature = "http-client")]
mod authorizer;
#[cfg(feature = "http-client")]
mod client;
#[cfg(feature = "http-client")]
mod legacy;
#[cfg(feature = "http-server")]
mod server;
#[cfg_attr(
    not(all(feature = "http-server", feature = "http-client")),
    allow(dead_code)
)]
mod sse;

pub use mcp_types::routing::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};

#[cfg(feature = "http-server")]
pub use crate::store::{EventStore, InMemoryEventStore};
#[cfg(feature = "auth-server")]
pub use auth::{
    BearerAuthLayer, BearerGuard, JwksError, JwtVerifier, ProtectedResource, TokenClaims,
    TokenRejection, TokenVerifier, Verification,
};
#[cfg(feature = "http-client")]
pub use authorizer::{AuthChallenge, AuthHeaders, AuthOutcome, Authorizer};
#[cfg(feature = "http-client")]
pub use client::{
    HttpClientConfig, HttpClientReceiver, HttpClientSender, HttpsClient, StreamableHttpClient,
    hyper_client,
};
#[cfg(feature = "http-client")]
pub use legacy::{LegacySseClient, LegacySseReceiver, LegacySseSender};
// The fuzz targets' entry points (`fuzz/`): not API, hidden from the docs.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use server::fuzzing;
#[cfg(feature = "http-server")]
pub use server::{
    CorsConfig, CorsLayer, CorsService, DEFAULT_ALLOWED_HOSTS, DEFAULT_PATH, Health, HttpBody,
    HttpServerConfig, LIVENESS_PATH, Opening, PeerAddr, READINESS_PATH, Readiness, Responding,
    ServeConfig, ServiceStats, ShutdownHandle, StreamableHttpService, serve,
};
