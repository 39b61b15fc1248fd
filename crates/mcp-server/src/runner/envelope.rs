//! What a stateless (2026-07-28) request says of itself, read without the
//! runner: its `_meta` (one borrowed scan), its client's envelope, and the
//! agreement of its `Mcp-Param-*` headers with the arguments they repeat.
//! Pure functions, below both the route (mod.rs) and the era's home
//! (stateless.rs), which call them.

use std::sync::Arc;

use mcp_types::{ErrorCode, ErrorObject, JsonObject, RawJson, RequestMeta, Revision};
use serde_json::value::RawValue;

use crate::entries::ParamHeader;
use crate::session::StatelessRequest;

/// A request's `params._meta`, unparsed: one borrowed scan of the params.
fn raw_meta(params: Option<&RawJson>) -> Option<&str> {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "_meta", default, borrow)]
        meta: Option<&'a RawValue>,
    }
    Some(params?.parse::<Probe<'_>>().ok()?.meta?.get())
}

/// A request's (or notification's) `params._meta`, typed.
pub(crate) fn request_meta(params: Option<&RawJson>) -> Option<RequestMeta> {
    serde_json::from_str(raw_meta(params)?).ok()
}

/// The client of a stateless request at `revision` (its transport read the
/// envelope and checked the version): who it is and what it can do, from
/// its `_meta`. Shared (the `Arc`s of `RequestMeta`), since the parsed
/// request keeps its `_meta` for the handler's context.
///
/// Read before the request's future goes on, so that the future holds one
/// pointer to it, not the copy.
///
/// # Errors
/// No `clientCapabilities` the types can read.
pub(crate) fn client_of(
    revision: Revision,
    meta: Option<&RequestMeta>,
) -> Result<Arc<StatelessRequest>, ErrorObject> {
    let Some(capabilities) = meta.and_then(|m| m.client_capabilities.as_ref()) else {
        return Err(ErrorObject::invalid_params(format!(
            "`params._meta` must carry `{}` at protocol version {revision}",
            mcp_types::meta::CLIENT_CAPABILITIES
        )));
    };
    Ok(Arc::new(StatelessRequest {
        revision,
        capabilities: capabilities.clone(),
        client_info: meta.and_then(|m| m.client_info.clone()),
        log_level: meta.and_then(|m| m.log_level),
    }))
}

/// SEP-2243: over HTTP, each `x-mcp-header` argument of a stateless
/// `tools/call` travels as `Mcp-Param-*` too, and the two must agree; a
/// header without its value, a value without its header, or an undecodable
/// header is `-32020`.
pub(crate) fn check_param_headers(
    annotated: &[ParamHeader],
    arguments: Option<&JsonObject>,
    headers: &mcp_core::Headers,
) -> Result<(), ErrorObject> {
    // Nothing to check for a tool without annotations; only HTTP requests
    // carry routing headers (stdio and memory do not).
    if annotated.is_empty() || headers.get(mcp_types::routing::METHOD_HEADER).is_none() {
        return Ok(());
    }
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    let mismatch = |why: String| Err(ErrorObject::new(ErrorCode::HEADER_MISMATCH, why));
    for ParamHeader { header, name, path } in annotated {
        let body = mcp_types::routing::lookup(arguments, path).filter(|v| !v.is_null());
        match (headers.get(name), body) {
            (None, None) => {}
            (None, Some(_)) => {
                return mismatch(format!(
                    "argument `{}` is set but the Mcp-Param-{header} header is missing",
                    path.join(".")
                ));
            }
            (Some(_), None) => {
                return mismatch(format!(
                    "the Mcp-Param-{header} header is set but argument `{}` is not",
                    path.join(".")
                ));
            }
            (Some(raw), Some(value)) => {
                let Some(decoded) = mcp_types::routing::decode_header_value(raw.trim()) else {
                    return mismatch(format!(
                        "the Mcp-Param-{header} header is not valid `=?base64?…?=` UTF-8"
                    ));
                };
                if !mcp_types::routing::header_matches(&decoded, value) {
                    return mismatch(format!(
                        "the Mcp-Param-{header} header differs from argument `{}`",
                        path.join(".")
                    ));
                }
            }
        }
    }
    Ok(())
}
