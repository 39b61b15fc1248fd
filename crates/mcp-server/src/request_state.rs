//! `requestState` integrity: the state a handler hands out in an
//! input-required result comes back from the client, so it is sealed with an
//! HMAC that any server instance sharing the key can verify.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const VERSION: &str = "v1";

/// Seals and opens `requestState` values.
#[derive(Clone)]
pub(crate) struct StateSealer {
    key: Vec<u8>,
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSealer { key: <redacted> }")
    }
}

impl StateSealer {
    /// A sealer with this key (share it across instances behind a load balancer).
    pub(crate) fn new(key: Vec<u8>) -> Self {
        Self { key }
    }

    /// A sealer with a random key: state sealed by this process only.
    pub(crate) fn random() -> Self {
        let mut key = vec![0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // Without randomness the state could be forged; refuse to run.
            panic!("the operating system's random number generator is unavailable");
        }
        Self { key }
    }

    fn mac(&self, binding: &str, state: &[u8]) -> HmacSha256 {
        // Any key length is valid for HMAC.
        let mut mac = match HmacSha256::new_from_slice(&self.key) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC accepts keys of any length"),
        };
        mac.update(VERSION.as_bytes());
        mac.update(&[0]);
        mac.update(binding.as_bytes());
        mac.update(&[0]);
        mac.update(state);
        mac
    }

    /// `state` sealed for the request `binding` names (method and target),
    /// so that it cannot be replayed on another tool or prompt.
    pub(crate) fn seal(&self, binding: &str, state: &str) -> String {
        let tag = self.mac(binding, state.as_bytes()).finalize().into_bytes();
        format!(
            "{VERSION}.{}.{}",
            URL_SAFE_NO_PAD.encode(state),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The state inside `sealed`, if it was sealed by this key for `binding`.
    pub(crate) fn open(&self, binding: &str, sealed: &str) -> Option<String> {
        let mut parts = sealed.split('.');
        let (Some(VERSION), Some(state), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let state = URL_SAFE_NO_PAD.decode(state).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.mac(binding, &state).verify_slice(&tag).ok()?;
        String::from_utf8(state).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_only_unchanged_with_the_same_key_and_binding() {
        let sealer = StateSealer::new(b"key".to_vec());
        let sealed = sealer.seal("tools/call:book", "step=2");
        assert_eq!(
            sealer.open("tools/call:book", &sealed).as_deref(),
            Some("step=2")
        );
        assert!(
            sealer.open("tools/call:other", &sealed).is_none(),
            "bound to the tool"
        );
        assert!(
            sealer
                .open("tools/call:book", &format!("{sealed}-TAMPERED"))
                .is_none()
        );
        assert!(
            StateSealer::new(b"other".to_vec())
                .open("tools/call:book", &sealed)
                .is_none()
        );
        assert!(sealer.open("tools/call:book", "garbage").is_none());
        let another_instance = StateSealer::new(b"key".to_vec());
        assert!(another_instance.open("tools/call:book", &sealed).is_some());
    }
}
