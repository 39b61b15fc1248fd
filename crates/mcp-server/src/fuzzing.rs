//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`), over
//! the `requestState` sealer, which is internal to this crate. Not API:
//! hidden from the docs, no stability promise, off by default; only `fuzz/`
//! turns the feature on.

use std::time::SystemTime;

use mcp_types::JsonObject;

use crate::request_state;

/// What a sealed state is bound to: the request it was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding(request_state::Binding);

impl Binding {
    /// The binding of a `method` call of `name` with `arguments`, by
    /// `principal`.
    pub fn new(
        method: &str,
        name: &str,
        arguments: Option<&JsonObject>,
        principal: Option<&str>,
    ) -> Self {
        Self(request_state::Binding::new(
            method, name, arguments, principal,
        ))
    }
}

/// Seals and opens `requestState` values.
#[derive(Debug, Clone)]
pub struct StateSealer(request_state::StateSealer);

impl StateSealer {
    /// Seals with `current`, opens what `current` or `previous` sealed.
    pub fn new(current: &[u8], previous: &[&[u8]]) -> Self {
        Self(request_state::StateSealer::new(current, previous))
    }

    /// `state` sealed for `binding` at `now`.
    pub fn seal_at(&self, binding: &Binding, state: &str, now: SystemTime) -> String {
        self.0.seal_at(&binding.0, state, now)
    }

    /// The state inside `sealed` if it opens for `binding` at `now`.
    ///
    /// # Errors
    /// The refusal's message.
    pub fn open_at(
        &self,
        binding: &Binding,
        sealed: &str,
        now: SystemTime,
    ) -> Result<String, String> {
        self.0
            .open_at(&binding.0, sealed, now)
            .map_err(|refusal| refusal.to_string())
    }
}
