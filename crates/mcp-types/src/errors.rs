//! Typed `data` of the MCP error codes that define one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capabilities::ClientCapabilities;
use crate::elicitation::ElicitRequestUrlParams;
use crate::error_code::ErrorCode;
use crate::jsonrpc::ErrorObject;

/// `data` of [`ErrorCode::UNSUPPORTED_PROTOCOL_VERSION`] (-32022, 2026-07-28),
/// also used by 2025-11-25 `initialize` with -32602.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// Revisions the server supports; the client should pick one.
    pub supported: Vec<String>,
    /// The revision the client asked for.
    pub requested: String,
}

impl UnsupportedProtocolVersionData {
    /// `requested` is not among `supported`.
    pub fn new(supported: Vec<String>, requested: impl Into<String>) -> Self {
        Self {
            supported,
            requested: requested.into(),
        }
    }
    /// The -32022 error carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        error_with(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, message, &self)
    }

    /// The -32022 error for a stateless (2026-07-28) request naming
    /// `requested`, a version this crate does not speak statelessly: the
    /// data and the message list the stateless revisions it does speak.
    pub fn stateless(requested: &str) -> ErrorObject {
        let supported: Vec<String> = crate::Revision::STATELESS
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect();
        let message = format!(
            "protocol version `{requested}` is not supported; this server speaks {}",
            supported.join(", ")
        );
        Self::new(supported, requested).into_error(message)
    }
}

/// `data` of [`ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY`] (-32021,
/// 2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs, as a capabilities object
    /// (e.g. `{"sampling": {}}`).
    pub required_capabilities: ClientCapabilities,
}

impl MissingRequiredClientCapabilityData {
    /// The request needs `required_capabilities`.
    pub fn new(required_capabilities: ClientCapabilities) -> Self {
        Self {
            required_capabilities,
        }
    }
    /// The -32021 error carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        error_with(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            message,
            &self,
        )
    }
}

/// `data` of [`ErrorCode::URL_ELICITATION_REQUIRED`] (-32042, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations to complete before retrying.
    pub elicitations: Vec<ElicitRequestUrlParams>,
}

impl UrlElicitationRequiredData {
    /// These elicitations must complete first.
    pub fn new(elicitations: Vec<ElicitRequestUrlParams>) -> Self {
        Self { elicitations }
    }
    /// The -32042 error carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        error_with(ErrorCode::URL_ELICITATION_REQUIRED, message, &self)
    }

    /// Reads the elicitations a -32042 error from the peer asks for.
    ///
    /// # Errors
    /// When `error` has another code, or its `data` does not hold the
    /// elicitations.
    ///
    /// # Examples
    /// ```
    /// use mcp_types::{ElicitRequestUrlParams, UrlElicitationRequiredData};
    ///
    /// let sent = UrlElicitationRequiredData::new(vec![ElicitRequestUrlParams::new(
    ///     "Sign in to continue",
    ///     "https://example.com/sign-in",
    /// )])
    /// .into_error("sign-in required");
    /// let read = UrlElicitationRequiredData::from_error(&sent)?;
    /// assert_eq!(read.elicitations[0].url, "https://example.com/sign-in");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn from_error(error: &ErrorObject) -> Result<Self, serde_json::Error> {
        if error.code != ErrorCode::URL_ELICITATION_REQUIRED {
            return Err(serde::de::Error::custom(format_args!(
                "error {} is not {} (URL elicitation required)",
                error.code.0,
                ErrorCode::URL_ELICITATION_REQUIRED.0
            )));
        }
        match &error.data {
            Some(data) => Self::deserialize(data),
            None => Err(serde::de::Error::custom(
                "the URL elicitation error carries no `data`",
            )),
        }
    }
}

fn error_with<T: Serialize>(code: ErrorCode, message: impl Into<String>, data: &T) -> ErrorObject {
    let error = ErrorObject::new(code, message);
    // These plain structs always serialize; a failure would only drop `data`.
    match serde_json::to_value(data) {
        Ok(value) => error.with_data(value),
        Err(_) => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::SamplingCapability;
    use serde_json::json;

    #[test]
    fn data_payloads_match_the_schema() {
        let error = UnsupportedProtocolVersionData::new(vec!["2026-07-28".into()], "1999-01-01")
            .into_error("unsupported protocol version");
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "1999-01-01"}))
        );

        let error = UnsupportedProtocolVersionData::stateless("1999-01-01");
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "1999-01-01"}))
        );
        assert_eq!(
            error.message,
            "protocol version `1999-01-01` is not supported; this server speaks 2026-07-28"
        );

        let error = MissingRequiredClientCapabilityData::new(
            ClientCapabilities::new().with_sampling(SamplingCapability::new()),
        )
        .into_error("sampling required");
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );

        let data: UrlElicitationRequiredData = serde_json::from_value(json!({
            "elicitations": [{"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}]
        }))
        .unwrap();
        assert_eq!(data.elicitations[0].elicitation_id.as_deref(), Some("e"));
    }
}
