//! How one call is sent: the dispatcher's options plus what MCP adds per call.

use std::time::Duration;

use mcp_core::Progress;
use mcp_types::extension::ExtensionId;
use mcp_types::{JsonObject, LoggingLevel, RawJson, RequestId, RequestMeta};
use serde_json::value::to_raw_value;

use crate::stateless::Members;

/// How one call is sent: timeout, progress, extra headers, request id,
/// the request's `_meta`, and the log level the server should use for this
/// call only. Every typed call has a form that takes them (`*_with`, or
/// `*_once` for the calls that may ask for input); they are the Python
/// SDK's per-call keyword arguments (`read_timeout_seconds`,
/// `progress_callback`, `meta`).
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use mcp_client::RequestOptions;
/// use mcp_types::LoggingLevel;
///
/// let options = RequestOptions::new()
///     .with_timeout(Duration::from_secs(30))
///     .with_log_level(LoggingLevel::Warning)
///     .with_progress(|p| eprintln!("{}/{:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default, Debug)]
pub struct RequestOptions {
    pub(crate) dispatch: mcp_core::SendOptions,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) meta: Option<RequestMeta>,
    /// Extensions declared for this request only (2026-07-28), by id.
    pub(crate) extensions: Vec<(String, JsonObject)>,
}

impl RequestOptions {
    /// Options with no timeout (the session's default applies), no
    /// progress, no headers and no log level.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up after `timeout` and cancels the request on the wire.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.dispatch.timeout = Some(timeout);
        self
    }

    /// Asks for progress reports, delivered to `callback` on the
    /// connection's read loop (keep it short).
    #[must_use]
    pub fn with_progress(mut self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.dispatch = self.dispatch.with_progress(callback);
        self
    }

    /// Adds a header for transports that carry them (HTTP).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.dispatch = self.dispatch.with_header(name, value);
        self
    }

    /// Uses `id` as the request id instead of the next integer.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<RequestId>) -> Self {
        self.dispatch = self.dispatch.with_id(id);
        self
    }

    /// Asks for the server's log messages at `level` and above while it
    /// serves this call (`io.modelcontextprotocol/logLevel` in the request's
    /// `_meta`, 2026-07-28). Without it a stateless-era server sends this call
    /// no log messages. In the handshake era the level is session-wide:
    /// use [`ClientSession::set_logging_level`](crate::ClientSession::set_logging_level).
    #[must_use]
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sends `meta` in the request's `params._meta` (over members of the
    /// same name the params already carry). The stateless era's envelope
    /// (protocol version, client info and capabilities, log level) is the
    /// session's and wins over these; a progress token is the dispatcher's
    /// when [`with_progress`](Self::with_progress) asks for progress. A
    /// stateless-era list with `_meta` is neither read from nor kept in the
    /// session's cache.
    ///
    /// # Examples
    /// ```
    /// use mcp_client::RequestOptions;
    /// use mcp_types::RequestMeta;
    ///
    /// let options = RequestOptions::new()
    ///     .with_meta(RequestMeta::new().with_extra("com.example/tenant", "acme"));
    /// assert!(options.meta().is_some());
    /// ```
    #[must_use]
    pub fn with_meta(mut self, meta: RequestMeta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Declares extension `id` with its `settings` (`{}` for none) for this
    /// request only: in the 2026-07-28 era it is added to the client
    /// capabilities of the request's `_meta` envelope (over the config's
    /// own settings for the same id), so the server may answer this one
    /// request as the extension allows while the session's other requests
    /// stay plain. Declaring it again replaces its settings. A list with
    /// extensions of its own is neither read from nor kept in the
    /// session's cache (its answer may differ).
    ///
    /// The handshake era declares capabilities once, at `initialize`: a
    /// request with a per-request extension is refused there with
    /// [`Error::ExtensionPerRequest`](crate::Error::ExtensionPerRequest) (declare it with
    /// [`ClientConfig::extension`](crate::ClientConfig::extension) instead).
    ///
    /// A `tools/call` declaring the tasks extension
    /// ([`mcp_types::tasks_ext::EXTENSION_ID`]) accepts its task handle as
    /// a claimed result ([`ToolOutcome::Claimed`](crate::extension::ToolOutcome::Claimed))
    /// even when the config does not claim it;
    /// [`call_tool_as_task`](crate::ClientSession::call_tool_as_task) does
    /// exactly that.
    ///
    /// # Examples
    /// ```
    /// use mcp_client::RequestOptions;
    /// use mcp_types::extension::ExtensionId;
    ///
    /// let id = ExtensionId::new("com.example/search").expect("valid id");
    /// let options = RequestOptions::new().with_extension(id, Default::default());
    /// assert!(options.declares_extension("com.example/search"));
    /// ```
    #[must_use]
    pub fn with_extension(self, id: ExtensionId, settings: JsonObject) -> Self {
        self.declaring(id.as_str(), settings)
    }

    /// Whether this request declares extension `id` of its own
    /// ([`with_extension`](Self::with_extension)).
    pub fn declares_extension(&self, id: &str) -> bool {
        self.extensions.iter().any(|(known, _)| known == id)
    }

    /// Declares extension `id` (already known to be well formed) for this
    /// request.
    pub(crate) fn declaring(mut self, id: &str, settings: JsonObject) -> Self {
        self.extensions.retain(|(known, _)| known != id);
        self.extensions.push((id.to_owned(), settings));
        self
    }

    /// The `_meta` this call sends, if set.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_ref()
    }

    /// The timeout this call waits, if set.
    pub fn timeout(&self) -> Option<Duration> {
        self.dispatch.timeout
    }

    /// The per-call log level, if set.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }
}

/// `params` with the members of `meta` added to its `_meta`, over those of
/// the same name it already has. As in stateless stamping, only the top
/// level of the params and of their `_meta` is parsed: the arguments are
/// passed on as the text they already are.
pub(crate) fn merge_meta(
    params: Option<RawJson>,
    meta: &RequestMeta,
) -> Result<RawJson, serde_json::Error> {
    let added = to_raw_value(meta)?;
    let added: Members<'_> = serde_json::from_str(added.get())?;
    let mut object: Members<'_> = match &params {
        Some(raw) => raw.parse()?,
        None => Members::new(),
    };
    let mut merged: Members<'_> = match object.get("_meta") {
        Some(existing) => serde_json::from_str(existing.get()).map_err(|_| {
            serde::ser::Error::custom(
                "the params' `_meta` is not an object, so no member can be added to it",
            )
        })?,
        None => Members::new(),
    };
    merged.extend(added);
    let merged_meta = to_raw_value(&merged)?;
    object.insert("_meta".into(), &merged_meta);
    RawJson::from_serialize(&object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn meta_is_merged_over_the_params_own() {
        let params = RawJson::from_serialize(&json!({"uri": "a", "_meta": {"k": 1, "keep": 2}}))
            .expect("json");
        let meta = RequestMeta::new().with_extra("k", 3);
        let merged: Value = merge_meta(Some(params), &meta)
            .expect("merged")
            .parse()
            .expect("json");
        assert_eq!(merged, json!({"uri": "a", "_meta": {"k": 3, "keep": 2}}));
        let merged: Value = merge_meta(None, &meta)
            .expect("merged")
            .parse()
            .expect("json");
        assert_eq!(merged, json!({"_meta": {"k": 3}}));
        // The rest of the params passes as the text it is.
        let params = RawJson::from_string(r#"{"arguments":{"deep":[1, {"x": 2.50}]}}"#.into())
            .expect("json");
        let merged = merge_meta(Some(params), &meta).expect("merged");
        assert!(
            merged.get().contains(r#"{"deep":[1, {"x": 2.50}]}"#),
            "{}",
            merged.get()
        );
        let params = RawJson::from_serialize(&json!({"_meta": [1]})).expect("json");
        let refused = merge_meta(Some(params), &meta).expect_err("not an object");
        assert!(refused.to_string().contains("not an object"), "{refused}");
    }
}
