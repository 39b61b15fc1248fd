//! Getting started: `initialize` (handshake era) and `server/discover`
//! (2026-07-28).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::common::Implementation;
use crate::meta::{RequestMeta, ResultMeta};
use crate::result::{CacheScope, ResultType};

/// Params of `initialize` (handshake era).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeRequestParams {
    /// The newest revision the client supports.
    pub protocol_version: String,
    /// What the client supports (boxed: these params are a variant of
    /// [`ClientRequest`](crate::ClientRequest), which every request is
    /// parsed into, and the largest one would set the size of all).
    pub capabilities: Box<ClientCapabilities>,
    /// The client software.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl InitializeRequestParams {
    /// Offers `protocol_version` with these capabilities and identity.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: protocol_version.into(),
            capabilities: Box::new(capabilities),
            client_info,
            meta: None,
        }
    }
}

setters!(InitializeRequestParams { with_meta(meta: RequestMeta) });

/// The result of `initialize` (handshake era).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The revision the server will speak; the client disconnects if it
    /// cannot.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// The server software.
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl InitializeResult {
    /// Agrees on `protocol_version` with these capabilities and identity.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: protocol_version.into(),
            capabilities,
            server_info,
            instructions: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(InitializeResult {
    with_instructions(instructions: String),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

/// The result of `server/discover` (2026-07-28): versions, capabilities and
/// guidance, cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// Revisions the server speaks; the client picks one.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this result, in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::ttl_ms"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached result.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::cache_scope"
    )]
    pub cache_scope: Option<CacheScope>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl DiscoverResult {
    /// Advertises `supported_versions` and `capabilities`.
    pub fn new(supported_versions: Vec<String>, capabilities: ServerCapabilities) -> Self {
        Self {
            supported_versions,
            capabilities,
            instructions: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
        }
    }
}

setters!(DiscoverResult {
    with_instructions(instructions: String),
    with_ttl_ms(ttl_ms: u64),
    with_cache_scope(cache_scope: CacheScope),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});
