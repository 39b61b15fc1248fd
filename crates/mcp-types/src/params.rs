//! Params shared by many requests: the bare `_meta` carrier and pagination.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Cursor;
use crate::meta::RequestMeta;

/// Params of a request that takes nothing but `_meta` (schema
/// `RequestParams`; 2026-07-28 requires `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl RequestParams {
    /// Params with no `_meta`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(RequestParams { with_meta(meta: RequestMeta) });

/// Params of a paginated list request (schema `PaginatedRequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// Where to resume, as handed out in a previous `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl PaginatedRequestParams {
    /// The first page.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(PaginatedRequestParams {
    with_cursor(cursor: Cursor),
    with_meta(meta: RequestMeta),
});
