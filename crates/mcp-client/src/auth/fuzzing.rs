//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`), over
//! the readers of what an authorization server or a protected resource
//! sends: the `WWW-Authenticate` challenge, the metadata documents and the
//! token endpoint's answer. Not API: hidden from the docs, no stability
//! promise, off by default; only `fuzz/` turns the feature on.

use std::time::Instant;

use http::StatusCode;
use url::Url;

use super::metadata::{self, ResourceMetadata, ServerMetadata};
use super::token::{Tokens, json_answer};

/// A `WWW-Authenticate` challenge's `resource_metadata`, `scope` and `error`.
pub fn parse_challenge(header: &str) -> [Option<String>; 3] {
    let bearer = metadata::parse_challenge(header);
    [bearer.resource_metadata, bearer.scope, bearer.error]
}

/// Reads protected resource metadata (RFC 9728) and checks its `resource`
/// against `server_url`, as discovery does.
///
/// # Errors
/// Why the document or its resource was refused.
pub fn read_resource_metadata(body: &[u8], server_url: &str) -> Result<Vec<String>, String> {
    let server = Url::parse(server_url).map_err(|e| e.to_string())?;
    let metadata: ResourceMetadata = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let resource = metadata
        .resource
        .unwrap_or_else(|| server.as_str().to_owned());
    metadata::check_resource(&resource, &server).map_err(|e| e.to_string())?;
    Ok(metadata.authorization_servers)
}

/// Reads authorization server metadata (RFC 8414); whether it offers
/// `offline_access`.
///
/// # Errors
/// Why the document was refused.
pub fn read_server_metadata(body: &[u8]) -> Result<bool, String> {
    let metadata: ServerMetadata = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    Ok(metadata::offline_supported(&metadata))
}

/// What a token endpoint's answer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAnswer {
    /// The access token.
    pub access: Option<String>,
    /// The refresh token.
    pub refresh: Option<String>,
    /// Whether an expiry was known.
    pub expires: bool,
    /// Whether the token is DPoP-bound.
    pub dpop_bound: bool,
}

/// Reads a token endpoint's answer: `status` and `body` as received.
///
/// # Errors
/// The refusal or the unreadable answer.
pub fn read_token_answer(status: u16, body: &[u8]) -> Result<TokenAnswer, String> {
    let status = StatusCode::from_u16(status).map_err(|e| e.to_string())?;
    let answer = json_answer("token endpoint", "https://as.example/token", status, body)
        .map_err(|e| e.to_string())?;
    let tokens = Tokens::from_answer(&answer, Instant::now()).map_err(|e| e.to_string())?;
    Ok(TokenAnswer {
        access: tokens.access,
        refresh: tokens.refresh,
        expires: tokens.expires.is_some(),
        dpop_bound: tokens.dpop_bound,
    })
}
