//! Client extensions (SEP-2133): declaring them, result claims and
//! notification bindings.
//!
//! - **Declaring.** [`ClientConfig::extension`](crate::ClientConfig::extension) lists an extension (by its
//!   validated identifier, with its settings) under the client's
//!   `capabilities.extensions`, in `initialize` and in every stateless
//!   request's `_meta`. [`ClientSession::server_supports_extension`](crate::ClientSession::server_supports_extension) says
//!   whether the server listed it too.
//! - **Result claims.** An extension whose `tools/call` results have their
//!   own shape (a task handle with `"resultType": "task"`, say) describes
//!   that shape as a Rust type implementing [`ResultClaim`] and registers it
//!   with [`ClientConfig::claim`](crate::ClientConfig::claim). A claim is active from its
//!   [`ResultClaim::SINCE`] revision on; an extension all of whose claims
//!   are inactive at the negotiated revision is not advertised (the client
//!   never announces result shapes it would reject). A claimed result is
//!   parsed into the claim's type: [`ClientSession::call_tool_claimed`](crate::ClientSession::call_tool_claimed)
//!   returns it as [`ToolOutcome::Claimed`]; plain
//!   [`call_tool`](crate::ClientSession::call_tool) refuses it with
//!   [`Error::UnexpectedClaimedResult`](crate::Error::UnexpectedClaimedResult), which carries the parsed value.
//! - **Notification bindings.** [`ClientConfig::bind_notification`](crate::ClientConfig::bind_notification) hands a
//!   notification method the core protocol does not define at the
//!   negotiated revision (a vendor notification) to a typed handler. Each
//!   binding has its own bounded FIFO, drained by a task the session owns,
//!   so a slow handler never stalls the connection's reader and may itself
//!   send requests; when the FIFO is full the oldest notification is
//!   dropped (logged at `warn`).
//!
//! The config's methods live with [`ClientConfig`](crate::ClientConfig) and
//! the session's with its calls; this module holds the parts they share.
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

pub(crate) mod bindings;
pub(crate) mod claims;
pub(crate) mod declared;
pub(crate) mod error;

pub use bindings::DEFAULT_BINDING_QUEUE;
pub use claims::{ClaimedResult, ResultClaim, ToolOutcome};
pub use error::ExtensionConfigError;
