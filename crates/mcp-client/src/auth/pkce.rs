//! PKCE (RFC 7636, S256 only) and the random values of an authorization.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::error::AuthError;

pub(super) fn random_token(bytes: usize) -> Result<String, AuthError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(AuthError::Randomness)?;
    Ok(URL_SAFE_NO_PAD.encode(buffer))
}

/// The S256 challenge of a PKCE `verifier`.
pub(super) fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}
