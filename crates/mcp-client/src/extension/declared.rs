//! What a config declares about extensions: plain data the session reads
//! (the `capabilities.extensions` ad, the claims, the bindings).

use mcp_types::extension::ExtensionId;
use mcp_types::{JsonObject, Revision};
use serde_json::Value;

use super::bindings::Binding;
use super::claims::Claims;

/// What a config declares about extensions.
#[derive(Clone, Default)]
pub(crate) struct ExtensionConfig {
    pub(crate) declared: Vec<(ExtensionId, JsonObject)>,
    pub(crate) claims: Claims,
    pub(crate) bindings: Vec<Binding>,
}

impl ExtensionConfig {
    /// Warns of bindings that can never fire at the negotiated `revision`:
    /// only methods the core protocol does not define there reach them.
    pub(crate) fn check_bindings(&self, revision: Revision) {
        for binding in &self.bindings {
            if mcp_types::MethodInfo::lookup(binding.method, revision, mcp_types::Side::Server)
                .is_some()
            {
                tracing::warn!(
                    method = binding.method,
                    %revision,
                    "this notification binding will never fire: the core protocol defines the \
                     method at this revision, so its notifications go to on_notification"
                );
            }
        }
    }

    /// The `capabilities.extensions` ad at `revision`: every declared
    /// extension and every claim-bearing one, but those whose claims are
    /// all inactive at `revision`.
    pub(crate) fn advertised(&self, revision: Revision) -> Option<JsonObject> {
        let mut ad = JsonObject::new();
        for (id, settings) in &self.declared {
            ad.insert(id.to_string(), Value::Object(settings.clone()));
        }
        for extension in self.claims.extensions() {
            ad.entry(extension.to_owned())
                .or_insert_with(|| Value::Object(JsonObject::new()));
        }
        ad.retain(|id, _| !self.claims.all_inactive(id, revision));
        (!ad.is_empty()).then_some(ad)
    }
}
