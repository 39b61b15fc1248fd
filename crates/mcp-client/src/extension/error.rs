//! Why an extension's claim or binding was refused at configuration.

use mcp_types::extension::InvalidExtensionId;

/// Why a claim or binding could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtensionConfigError {
    /// The extension identifier is not valid.
    #[error(transparent)]
    InvalidId(#[from] InvalidExtensionId),
    /// A claim takes a core `resultType`.
    #[error(
        "the claim of `{extension}` takes the core resultType `{result_type}`; give the extension's own shape a resultType of its own"
    )]
    CoreResultType {
        /// The extension.
        extension: &'static str,
        /// The core result type it tried to claim.
        result_type: &'static str,
    },
    /// Two claims take the same `resultType`.
    #[error("resultType `{result_type}` is already claimed; each shape needs its own resultType")]
    DuplicateClaim {
        /// The result type.
        result_type: &'static str,
    },
    /// Two bindings for one notification method.
    #[error("notification `{method}` is already bound; bind each method once")]
    DuplicateBinding {
        /// The method.
        method: &'static str,
    },
}
