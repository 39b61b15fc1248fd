//! Client extensions (SEP-2133): declaring them, result claims and
//! notification bindings.
//!
//! - **Declaring.** [`ClientConfig::extension`] lists an extension (by its
//!   validated identifier, with its settings) under the client's
//!   `capabilities.extensions`, in `initialize` and in every stateless
//!   request's `_meta`. [`ClientSession::server_supports_extension`] says
//!   whether the server listed it too.
//! - **Result claims.** An extension whose `tools/call` results have their
//!   own shape (a task handle with `"resultType": "task"`, say) describes
//!   that shape as a Rust type implementing [`ResultClaim`] and registers it
//!   with [`ClientConfig::claim`]. A claim is active from its
//!   [`ResultClaim::SINCE`] revision on; an extension all of whose claims
//!   are inactive at the negotiated revision is not advertised (the client
//!   never announces result shapes it would reject). A claimed result is
//!   parsed into the claim's type: [`ClientSession::call_tool_claimed`]
//!   returns it as [`ToolOutcome::Claimed`]; plain
//!   [`call_tool`](ClientSession::call_tool) refuses it with
//!   [`Error::UnexpectedClaimedResult`], which carries the parsed value.
//! - **Notification bindings.** [`ClientConfig::bind_notification`] hands a
//!   notification method the core protocol does not define at the
//!   negotiated revision (a vendor notification) to a typed handler. Each
//!   binding has its own bounded FIFO, drained by a task the session owns,
//!   so a slow handler never stalls the connection's reader and may itself
//!   send requests; when the FIFO is full the oldest notification is
//!   dropped (logged at `warn`).
//!
//! # Examples
//! ```
//! use mcp_client::extension::ResultClaim;
//! use mcp_client::ClientConfig;
//! use mcp_client::types::Revision;
//!
//! #[derive(serde::Deserialize)]
//! struct Receipt { receipt: String }
//!
//! impl ResultClaim for Receipt {
//!     const EXTENSION: &'static str = "com.example/receipts";
//!     const RESULT_TYPE: &'static str = "receipt";
//!     const SINCE: Revision = Revision::V2026_07_28;
//! }
//!
//! let config = ClientConfig::new("host", "1.0.0").claim::<Receipt>().unwrap();
//! let ad = config.capabilities_at(Revision::V2026_07_28);
//! assert!(ad.extensions.unwrap().contains_key("com.example/receipts"));
//! // At a revision where the claim is inactive, the extension is not advertised.
//! assert!(config.capabilities_at(Revision::V2025_11_25).extensions.is_none());
//! ```

use std::future::Future;
use std::sync::Arc;

use mcp_types::JsonObject;
use mcp_types::extension::{ExtensionId, InvalidExtensionId};
use mcp_types::method::NotificationMethod;

use crate::{ClientConfig, ClientSession, Error, RequestOptions};

pub(crate) mod bindings;
pub(crate) mod claims;
pub(crate) mod declared;
mod error;

pub use bindings::DEFAULT_BINDING_QUEUE;
use bindings::{Binding, BindingFn};
pub use claims::{ClaimedResult, ResultClaim, ToolOutcome};
pub use error::ExtensionConfigError;

impl ClientConfig {
    /// Declares extension `id` with its `settings` (`{}` for none) under
    /// `capabilities.extensions`.
    ///
    /// # Errors
    /// [`InvalidExtensionId`] when `id` is not `vendor.prefix/name`.
    pub fn extension(
        mut self,
        id: impl Into<String>,
        settings: JsonObject,
    ) -> Result<Self, InvalidExtensionId> {
        let id = ExtensionId::new(id)?;
        self.settings
            .extensions
            .declared
            .retain(|(known, _)| *known != id);
        self.settings.extensions.declared.push((id, settings));
        Ok(self)
    }

    /// Accepts `tools/call` results of claim type `T` (and advertises its
    /// extension where the claim is active).
    ///
    /// # Errors
    /// [`ExtensionConfigError`] for an invalid identifier, a core or
    /// already claimed `resultType`.
    pub fn claim<T: ResultClaim>(mut self) -> Result<Self, ExtensionConfigError> {
        self.settings.extensions.claims.add::<T>()?;
        Ok(self)
    }

    /// Hands notification method `M` (one the core protocol does not define
    /// at the negotiated revision) to `handler`, through a FIFO of
    /// [`DEFAULT_BINDING_QUEUE`] notifications.
    ///
    /// # Errors
    /// [`ExtensionConfigError::DuplicateBinding`] when `M` is already bound.
    pub fn bind_notification<M, F, Fut>(self, handler: F) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.bind_notification_with_capacity::<M, F, Fut>(DEFAULT_BINDING_QUEUE, handler)
    }

    /// As [`bind_notification`](Self::bind_notification), with a FIFO of
    /// `capacity` notifications (at least 1).
    ///
    /// # Errors
    /// As [`bind_notification`](Self::bind_notification).
    pub fn bind_notification_with_capacity<M, F, Fut>(
        mut self,
        capacity: usize,
        handler: F,
    ) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if self
            .settings
            .extensions
            .bindings
            .iter()
            .any(|b| b.method == M::NAME)
        {
            return Err(ExtensionConfigError::DuplicateBinding { method: M::NAME });
        }
        let handler = Arc::new(handler);
        let handler: BindingFn = Arc::new(move |params| {
            let handler = handler.clone();
            Box::pin(async move {
                match mcp_types::parse_params::<M>(params.as_ref()) {
                    Ok(params) => handler(params).await,
                    Err(e) => tracing::warn!(
                        method = M::NAME,
                        error = %e,
                        "dropped a bound notification whose params do not fit"
                    ),
                }
            })
        });
        self.settings.extensions.bindings.push(Binding {
            method: M::NAME,
            handler,
            capacity: capacity.max(1),
        });
        Ok(self)
    }
}

impl ClientSession {
    /// Whether the server listed extension `id` under
    /// `capabilities.extensions` (once negotiated).
    pub fn server_supports_extension(&self, id: &str) -> bool {
        self.server_capabilities()
            .and_then(|c| c.extensions)
            .is_some_and(|e| e.contains_key(id))
    }

    /// Calls a tool, accepting results of the config's
    /// [claims](ClientConfig::claim) as [`ToolOutcome::Claimed`].
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool), but for claimed results.
    pub async fn call_tool_claimed(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: RequestOptions,
    ) -> Result<ToolOutcome, Error> {
        match self.call_tool_with(name, arguments, options).await {
            Ok(result) => Ok(ToolOutcome::Complete(result)),
            Err(Error::UnexpectedClaimedResult { result }) => Ok(ToolOutcome::Claimed(result)),
            Err(e) => Err(e),
        }
    }
}
