//! Roots: the directories and files a client lets servers work on
//! (`roots/list`; an input request in 2026-07-28).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::meta::{Meta, ResultMeta};
use crate::result::ResultType;

/// A root the server may operate on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Root {
    /// The root's URI; `file://` for now.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// The root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
            meta: None,
        }
    }
}

setters!(Root {
    with_name(name: String),
    with_meta(meta: Meta),
});

/// The client's answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result (handshake era; gone in 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ListRootsResult {
    /// These roots.
    pub fn new(roots: Vec<Root>) -> Self {
        Self {
            roots,
            result_type: None,
            meta: None,
        }
    }
}

setters!(ListRootsResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});
