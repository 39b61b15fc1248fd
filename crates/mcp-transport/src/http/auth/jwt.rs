//! JWT access tokens (RFC 9068) checked against a JWKS with ring.

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self as sig, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::{Map, Value};

use super::{TokenClaims, TokenRejection, TokenVerifier, Verification};

/// Tokens longer than this are refused before any decoding.
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// A JWKS that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwksError {
    /// Not a JSON object with a `keys` array.
    #[error("the JWKS is not a JSON object with a `keys` array")]
    NotAJwks,
    /// No key of a supported kind.
    #[error(
        "the JWKS holds no usable signature key (RSA of 2048 bits or more, EC P-256 or P-384, \
         OKP Ed25519); skipped: {}",
        .skipped.join("; ")
    )]
    NoUsableKey {
        /// Why each key was skipped.
        skipped: Vec<String>,
    },
}

/// Verifies JWT access tokens (RFC 9068) against a JWKS.
///
/// Checks the signature (RS256/384/512, PS256/384/512, ES256, ES384 or
/// EdDSA with Ed25519; never `none` or HMAC), `exp` (required) and `nbf`
/// with a leeway (60 s unless set), `iss` when [configured](Self::with_issuer),
/// and that `aud` names the resource (a single trailing slash is ignored on
/// both sides). Tokens with a `crit` header are refused.
///
/// The app supplies the JWKS (fetched from the authorization server's
/// `jwks_uri`) and calls [`update_jwks`](Self::update_jwks) when it rotates.
pub struct JwtVerifier {
    keys: RwLock<Arc<[Jwk]>>,
    issuer: Option<String>,
    leeway: Duration,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.current_keys();
        f.debug_struct("JwtVerifier")
            .field(
                "keys",
                &keys.iter().map(|k| k.kid.as_deref()).collect::<Vec<_>>(),
            )
            .field("issuer", &self.issuer)
            .field("leeway", &self.leeway)
            .finish()
    }
}

impl JwtVerifier {
    /// A verifier with the signature keys of a JWKS document
    /// (`{"keys":[{"kty":"RSA","n","e","kid"}, {"kty":"EC","crv":"P-256","x","y"}, …]}`);
    /// encryption keys and keys of other kinds are skipped.
    ///
    /// # Errors
    /// [`JwksError`] when the document is not a JWKS or holds no usable key.
    pub fn from_jwks(jwks: &Value) -> Result<Self, JwksError> {
        Ok(Self {
            keys: RwLock::new(parse_jwks(jwks)?),
            issuer: None,
            leeway: Duration::from_secs(60),
        })
    }

    /// Replaces the keys with those of a newer JWKS (after the authorization
    /// server rotated its keys); returns how many keys are now in use.
    ///
    /// # Errors
    /// [`JwksError`] when the document is unusable; the old keys stay.
    pub fn update_jwks(&self, jwks: &Value) -> Result<usize, JwksError> {
        let keys = parse_jwks(jwks)?;
        let count = keys.len();
        *self.keys.write().unwrap_or_else(PoisonError::into_inner) = keys;
        Ok(count)
    }

    /// Only tokens whose `iss` is exactly `issuer`.
    #[must_use]
    pub fn with_issuer(self, issuer: impl Into<String>) -> Self {
        Self {
            issuer: Some(issuer.into()),
            ..self
        }
    }

    /// The clock skew tolerated on `exp` and `nbf` (60 s unless set).
    #[must_use]
    pub fn with_leeway(self, leeway: Duration) -> Self {
        Self { leeway, ..self }
    }

    /// Verifies `token` for `resource` as of `now` (seconds since the Unix
    /// epoch); [`TokenVerifier::verify`] calls this with the system clock.
    ///
    /// # Errors
    /// [`TokenRejection`] saying why the token is refused.
    pub fn verify_at(
        &self,
        token: &str,
        resource: &str,
        now: u64,
    ) -> Result<TokenClaims, TokenRejection> {
        let invalid = |why: &str| TokenRejection::Invalid(why.to_owned());
        if token.len() > MAX_TOKEN_LEN {
            return Err(invalid("longer than 16 KiB"));
        }
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid(
                "not a JWT (three base64url parts separated by dots)",
            ));
        };
        let decode = |part: &str, what: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| TokenRejection::Invalid(format!("the {what} is not base64url")))
        };
        let header: Map<String, Value> = serde_json::from_slice(&decode(header, "header")?)
            .map_err(|_| invalid("the header is not a JSON object"))?;
        let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let Some(algorithm) = Algorithm::parse(alg) else {
            return Err(TokenRejection::Invalid(format!(
                "the algorithm `{}` is not accepted",
                printable(alg)
            )));
        };
        if header.contains_key("crit") {
            return Err(invalid(
                "the header has `crit` extensions this server does not know",
            ));
        }
        let signature = decode(signature, "signature")?;
        // The signed input is everything before the last dot.
        let signed = &token[..header_and_payload_len(token)];
        let kid = header.get("kid").and_then(Value::as_str);
        let keys = self.current_keys();
        let mut candidates = keys
            .iter()
            .filter(|key| kid.is_none() || key.kid.is_none() || key.kid.as_deref() == kid)
            .filter(|key| key.alg.is_none_or(|a| a == algorithm) && algorithm.fits(&key.key))
            .peekable();
        if candidates.peek().is_none() {
            return Err(invalid(
                "no key of the JWKS matches the token's `kid` and `alg`; \
                 refresh the JWKS if the authorization server rotated its keys",
            ));
        }
        if !candidates.any(|key| algorithm.verify(&key.key, signed.as_bytes(), &signature)) {
            return Err(invalid("the signature does not verify"));
        }
        let claims: Map<String, Value> = serde_json::from_slice(&decode(payload, "payload")?)
            .map_err(|_| invalid("the payload is not a JSON object"))?;
        let leeway = self.leeway.as_secs();
        let expires_at = match claims.get("exp") {
            None => return Err(invalid("no `exp` claim")),
            Some(exp) => numeric_date(exp).ok_or_else(|| invalid("`exp` is not a number"))?,
        };
        if now >= expires_at.saturating_add(leeway) {
            return Err(TokenRejection::Expired);
        }
        if let Some(nbf) = claims.get("nbf") {
            let nbf = numeric_date(nbf).ok_or_else(|| invalid("`nbf` is not a number"))?;
            if now.saturating_add(leeway) < nbf {
                return Err(invalid("not valid yet (`nbf` is in the future)"));
            }
        }
        let issuer = claims.get("iss").and_then(Value::as_str);
        if let Some(expected) = &self.issuer {
            if issuer != Some(expected.as_str()) {
                return Err(invalid("issued by an untrusted authorization server"));
            }
        }
        let audiences = strings(claims.get("aud"));
        let wanted = resource.strip_suffix('/').unwrap_or(resource);
        if !audiences
            .iter()
            .any(|a| a.strip_suffix('/').unwrap_or(a) == wanted)
        {
            return Err(TokenRejection::WrongAudience);
        }
        let scopes = match claims.get("scope") {
            Some(scope) => strings(Some(scope)),
            None => strings(claims.get("scp")),
        };
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(TokenClaims {
            subject: text("sub"),
            scopes,
            audiences,
            issuer: issuer.map(str::to_owned),
            client_id: text("client_id").or_else(|| text("azp")),
            expires_at: Some(expires_at),
            raw: claims,
        })
    }

    fn current_keys(&self) -> Arc<[Jwk]> {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Box::pin(async move { self.verify_at(token, resource, now) })
    }
}
/// A public key from a JWKS.
struct Jwk {
    kid: Option<String>,
    /// The `alg` the JWK is restricted to, if it names one we know.
    alg: Option<Algorithm>,
    key: PublicKey,
}

enum PublicKey {
    /// Big-endian modulus and exponent.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// Uncompressed SEC1 point.
    P256(Vec<u8>),
    /// Uncompressed SEC1 point.
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// The JWS algorithms accepted (RFC 7518, RFC 8037); symmetric ones never,
/// since a resource server must not hold the authorization server's secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Algorithm {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => Self::Rs256,
            "RS384" => Self::Rs384,
            "RS512" => Self::Rs512,
            "PS256" => Self::Ps256,
            "PS384" => Self::Ps384,
            "PS512" => Self::Ps512,
            "ES256" => Self::Es256,
            "ES384" => Self::Es384,
            "EdDSA" => Self::EdDsa,
            _ => return None,
        })
    }

    /// Whether `key` is of the kind this algorithm needs (no algorithm
    /// confusion between key types).
    fn fits(self, key: &PublicKey) -> bool {
        matches!(
            (self, key),
            (
                Self::Rs256 | Self::Rs384 | Self::Rs512 | Self::Ps256 | Self::Ps384 | Self::Ps512,
                PublicKey::Rsa { .. }
            ) | (Self::Es256, PublicKey::P256(_))
                | (Self::Es384, PublicKey::P384(_))
                | (Self::EdDsa, PublicKey::Ed25519(_))
        )
    }

    fn verify(self, key: &PublicKey, message: &[u8], signature: &[u8]) -> bool {
        let rsa = |params: &'static sig::RsaParameters, n: &[u8], e: &[u8]| {
            RsaPublicKeyComponents { n, e }
                .verify(params, message, signature)
                .is_ok()
        };
        let other = |algorithm: &'static dyn sig::VerificationAlgorithm, bytes: &[u8]| {
            UnparsedPublicKey::new(algorithm, bytes)
                .verify(message, signature)
                .is_ok()
        };
        match (self, key) {
            (Self::Rs256, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PKCS1_2048_8192_SHA256, n, e),
            (Self::Rs384, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PKCS1_2048_8192_SHA384, n, e),
            (Self::Rs512, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PKCS1_2048_8192_SHA512, n, e),
            (Self::Ps256, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PSS_2048_8192_SHA256, n, e),
            (Self::Ps384, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PSS_2048_8192_SHA384, n, e),
            (Self::Ps512, PublicKey::Rsa { n, e }) => rsa(&sig::RSA_PSS_2048_8192_SHA512, n, e),
            (Self::Es256, PublicKey::P256(point)) => other(&sig::ECDSA_P256_SHA256_FIXED, point),
            (Self::Es384, PublicKey::P384(point)) => other(&sig::ECDSA_P384_SHA384_FIXED, point),
            (Self::EdDsa, PublicKey::Ed25519(bytes)) => other(&sig::ED25519, bytes),
            _ => false,
        }
    }
}

fn parse_jwks(jwks: &Value) -> Result<Arc<[Jwk]>, JwksError> {
    let entries = jwks
        .get("keys")
        .and_then(Value::as_array)
        .ok_or(JwksError::NotAJwks)?;
    let mut keys = Vec::new();
    let mut skipped = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match parse_jwk(entry) {
            Ok(key) => keys.push(key),
            Err(why) => skipped.push(format!("key {index}: {why}")),
        }
    }
    if keys.is_empty() {
        return Err(JwksError::NoUsableKey { skipped });
    }
    if !skipped.is_empty() {
        tracing::debug!(?skipped, "skipped JWKS keys");
    }
    Ok(keys.into())
}

fn parse_jwk(entry: &Value) -> Result<Jwk, String> {
    let text = |name: &str| entry.get(name).and_then(Value::as_str);
    let bytes = |name: &str| {
        text(name)
            .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
            .ok_or_else(|| format!("`{name}` is missing or not base64url"))
    };
    if text("use").is_some_and(|u| u != "sig") {
        return Err("not a signature key (`use` is not `sig`)".into());
    }
    let key = match (text("kty"), text("crv")) {
        (Some("RSA"), _) => {
            let n = bytes("n")?;
            let e = bytes("e")?;
            let significant = n.iter().skip_while(|b| **b == 0).count();
            if significant < 256 {
                return Err("RSA modulus shorter than 2048 bits".into());
            }
            PublicKey::Rsa { n, e }
        }
        (Some("EC"), Some(curve @ ("P-256" | "P-384"))) => {
            let size = if curve == "P-256" { 32 } else { 48 };
            let (x, y) = (bytes("x")?, bytes("y")?);
            if x.len() != size || y.len() != size {
                return Err(format!("{curve} coordinates must be {size} bytes"));
            }
            let mut point = Vec::with_capacity(1 + 2 * size);
            point.push(4);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            if curve == "P-256" {
                PublicKey::P256(point)
            } else {
                PublicKey::P384(point)
            }
        }
        (Some("OKP"), Some("Ed25519")) => {
            let x = bytes("x")?;
            if x.len() != 32 {
                return Err("Ed25519 keys must be 32 bytes".into());
            }
            PublicKey::Ed25519(x)
        }
        (kty, crv) => {
            return Err(format!(
                "unsupported key type {} {}",
                printable(kty.unwrap_or("(none)")),
                printable(crv.unwrap_or(""))
            ));
        }
    };
    let alg = match text("alg") {
        None => None,
        Some(name) => {
            let alg = Algorithm::parse(name)
                .ok_or_else(|| format!("unsupported `alg` {}", printable(name)))?;
            if !alg.fits(&key) {
                return Err(format!("`alg` {name} does not fit the key type"));
            }
            Some(alg)
        }
    };
    Ok(Jwk {
        kid: text("kid").map(str::to_owned),
        alg,
        key,
    })
}

/// The length of `header.payload` in a compact JWS with three parts.
fn header_and_payload_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

/// A JWT NumericDate (RFC 7519 §2): non-negative seconds, possibly
/// fractional; fractions are dropped.
fn numeric_date(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            // Saturating float-to-int conversion.
            .map(|f| f as u64)
    })
}

/// A string claim as one item, a space-separated string as its words when
/// it is a scope claim, an array as its strings.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// At most 64 visible ASCII characters of peer-supplied text, for messages.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numeric_dates_may_be_fractional_but_not_negative() {
        assert_eq!(numeric_date(&json!(10)), Some(10));
        assert_eq!(numeric_date(&json!(10.7)), Some(10));
        assert_eq!(numeric_date(&json!(-1)), None);
        assert_eq!(numeric_date(&json!("10")), None);
        assert_eq!(numeric_date(&json!(1e300)), Some(u64::MAX));
    }

    #[test]
    fn a_jwks_without_usable_keys_says_why() {
        let error = JwtVerifier::from_jwks(&json!({"keys": [{"kty": "oct", "k": "AAAA"}]}))
            .expect_err("no usable key");
        assert!(
            error.to_string().contains("unsupported key type oct"),
            "{error}"
        );
        assert_eq!(
            JwtVerifier::from_jwks(&json!([])).expect_err("not a jwks"),
            JwksError::NotAJwks
        );
    }
}
