//! ES256 JSON Web Tokens for the OAuth extensions: DPoP proofs (RFC 9449)
//! and `private_key_jwt` client assertions (RFC 7523).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::AuthError;

/// A P-256 key that signs ES256 JWTs.
#[derive(Clone)]
pub(crate) struct Es256Key {
    key: SigningKey,
}

impl std::fmt::Debug for Es256Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Es256Key { <private> }")
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Es256Key {
    /// A fresh key (DPoP keys live as long as the client).
    pub(crate) fn generate() -> Result<Self, AuthError> {
        // A random scalar below the group order: retry the rare overflow.
        for _ in 0..8 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(AuthError::Randomness)?;
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                return Ok(Self { key });
            }
        }
        Err(AuthError::KeyGeneration)
    }

    /// A key from a PKCS#8 PEM document.
    pub(crate) fn from_pem(pem: &str) -> Result<Self, AuthError> {
        SigningKey::from_pkcs8_pem(pem)
            .map(|key| Self { key })
            .map_err(|e| AuthError::InvalidKey(Box::new(e)))
    }

    /// The public key as a JWK.
    pub(crate) fn public_jwk(&self) -> Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        json!({
            "kty": "EC",
            "crv": "P-256",
            "x": point.x().map(|x| URL_SAFE_NO_PAD.encode(x)).unwrap_or_default(),
            "y": point.y().map(|y| URL_SAFE_NO_PAD.encode(y)).unwrap_or_default(),
        })
    }

    /// A compact JWS of `claims` with `header` (its `alg` set to ES256).
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> String {
        header["alg"] = Value::from("ES256");
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }

    /// A DPoP proof for one HTTP request (`htu` without query or fragment).
    pub(crate) fn dpop_proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": super::pkce::random_token(16)?,
            "htm": method,
            "htu": htu,
            "iat": now(),
        });
        if let Some(token) = access_token {
            claims["ath"] = Value::from(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = Value::from(nonce);
        }
        let header = json!({"typ": "dpop+jwt", "jwk": self.public_jwk()});
        Ok(self.sign(header, &claims))
    }

    /// A `private_key_jwt` client assertion for `audience` (the authorization
    /// server's issuer, as RFC 7523 updated by draft-ietf-oauth-rfc7523bis asks).
    pub(crate) fn client_assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, AuthError> {
        let now = now();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": super::pkce::random_token(16)?,
            "iat": now,
            "exp": now + 300,
        });
        Ok(self.sign(json!({"typ": "JWT"}), &claims))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier;

    #[test]
    fn dpop_proofs_verify_with_their_embedded_key() {
        let key = Es256Key::generate().expect("key");
        let proof = key
            .dpop_proof(
                "POST",
                "https://as.example/token?x=1",
                Some("tok"),
                Some("n-1"),
            )
            .expect("proof");
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("b64")).expect("json");
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("b64")).expect("json");
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(claims["htu"], "https://as.example/token");
        assert_eq!(claims["nonce"], "n-1");
        assert!(claims["ath"].is_string());
        let verifying = VerifyingKey::from(&key.key);
        let signature =
            Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).expect("b64")).expect("sig");
        verifying
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("valid signature");
    }
}
