//! What a gateway tells whoever serves its catalog downstream: the catalog
//! changed, an upstream's resource was updated. (An upstream's log
//! messages go to the call they came in the course of, not here:
//! [`crate::asks`].)

use std::sync::Arc;

/// Something that happened upstream, for the downstream side
/// ([`Gateway::events`](crate::Gateway::events)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum GatewayEvent {
    /// The merged catalog's entries changed (an upstream connected, its
    /// lists changed, or it left): read [`Gateway::catalog`](crate::Gateway::catalog) again.
    CatalogChanged,
    /// An upstream connected (the first time, or again after a restart).
    UpstreamUp {
        /// Its name.
        upstream: Arc<str>,
    },
    /// An upstream's connection ended; the gateway restarts it.
    UpstreamDown {
        /// Its name.
        upstream: Arc<str>,
    },
    /// An upstream sent `notifications/resources/updated`.
    ResourceUpdated {
        /// Its name.
        upstream: Arc<str>,
        /// The resource's URI (URIs are not renamed).
        uri: String,
    },
}
