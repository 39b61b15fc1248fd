//! `requestState` sealing: the state a handler hands out in an
//! input-required result (2026-07-28) comes back from the client, so it is
//! encrypted and authenticated (AES-256-GCM), expires, and is bound to the
//! request it was issued for: method, tool or prompt name, a digest of the
//! arguments, and the authenticated principal when there is one. A state
//! copied from one call is refused on another call, with other arguments,
//! for another user, or after its time to live.
//!
//! A token is `base64url(version ‖ key id ‖ nonce ‖ AES-256-GCM(payload))`,
//! with the version and key id as associated data; the payload is
//! `expiry (ms since the Unix epoch, big-endian) ‖ SHA-256(method, name) ‖
//! SHA-256(canonical arguments) ‖ SHA-256(principal) ‖ state`. The binding
//! sits inside the sealed payload rather than in the associated data so that
//! a refusal can say which check failed.
//!
//! Keys are derived with HKDF-SHA256 from the configured secrets. The first
//! key seals; every key opens, so replicas can rotate a secret: deploy the
//! new one second (opens only), then first, then drop the old one.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_types::JsonObject;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::digest::{Context as Digest, SHA256};
use ring::hkdf::{HKDF_SHA256, KeyType, Salt};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::Value;

/// The token format this module writes and reads.
const VERSION: u8 = 1;
const KEY_ID_LEN: usize = 8;
const HEADER_LEN: usize = 1 + KEY_ID_LEN + NONCE_LEN;
const DIGEST_LEN: usize = 32;
const TAG_LEN: usize = 16;
/// Expiry and the three binding digests, before the handler's state.
const PAYLOAD_PREFIX: usize = 8 + 3 * DIGEST_LEN;
/// The HKDF salt: separates these keys from any other use of the secret.
const HKDF_SALT: &[u8] = b"mcp-server requestState";

/// How long a sealed state is accepted by default: long enough for a person
/// to answer an elicitation, short enough that a leaked state soon dies.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(10 * 60);

/// What a sealed state is bound to: the request it was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    target: [u8; DIGEST_LEN],
    arguments: [u8; DIGEST_LEN],
    principal: [u8; DIGEST_LEN],
}

impl Binding {
    /// The binding of a `method` call of `name` (a tool or prompt) with
    /// `arguments` (as the request carries them, without what the
    /// input-required round trip adds), by `principal` when one is known.
    pub(crate) fn new(
        method: &str,
        name: &str,
        arguments: Option<&JsonObject>,
        principal: Option<&str>,
    ) -> Self {
        let mut target = Digest::new(&SHA256);
        target.update(method.as_bytes());
        target.update(&[0]);
        target.update(name.as_bytes());
        let mut canonical = Digest::new(&SHA256);
        match arguments {
            Some(arguments) => canonical_object(arguments, &mut canonical),
            // Absent arguments are the empty object.
            None => canonical.update(b"{}"),
        }
        let mut who = Digest::new(&SHA256);
        match principal {
            None => who.update(&[0]),
            Some(principal) => {
                who.update(&[1]);
                who.update(principal.as_bytes());
            }
        }
        Self {
            target: finish(target),
            arguments: finish(canonical),
            principal: finish(who),
        }
    }
}

fn finish(digest: Digest) -> [u8; DIGEST_LEN] {
    let mut out = [0; DIGEST_LEN];
    out.copy_from_slice(digest.finish().as_ref());
    out
}

/// Feeds `value` as canonical JSON (object keys sorted, no whitespace), so
/// the same arguments digest the same whatever order the client sent them in.
fn canonical(value: &Value, digest: &mut Digest) {
    match value {
        Value::Object(object) => canonical_object(object, digest),
        Value::Array(items) => {
            digest.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    digest.update(b",");
                }
                canonical(item, digest);
            }
            digest.update(b"]");
        }
        scalar => write_json(scalar, digest),
    }
}

/// Feeds `value`'s compact JSON without an intermediate string.
fn write_json<T: serde::Serialize + ?Sized>(value: &T, digest: &mut Digest) {
    struct Writer<'a>(&'a mut Digest);
    impl std::io::Write for Writer<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing a `Value` or a string to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(Writer(digest), value);
}

fn canonical_object(object: &JsonObject, digest: &mut Digest) {
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort_unstable();
    digest.update(b"{");
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            digest.update(b",");
        }
        write_json(key.as_str(), digest);
        digest.update(b":");
        if let Some(value) = object.get(key) {
            canonical(value, digest);
        }
    }
    digest.update(b"}");
}

/// Why a `requestState` was refused. The messages name the check that
/// failed and never echo the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not base64url, or too short to be a sealed state.
    Malformed,
    /// Written in a format version this server does not read.
    Version,
    /// Sealed with a key this server does not hold.
    UnknownKey,
    /// Decryption failed: the state was altered.
    Altered,
    /// Its time to live has passed.
    Expired,
    /// Issued for another method, tool or prompt.
    OtherTarget,
    /// Issued for other arguments.
    OtherArguments,
    /// Issued to another principal (or with none, or to none).
    OtherPrincipal,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Malformed => {
                "requestState is malformed: it is not a state this server issued; send it back \
                 exactly as received"
            }
            Self::Version => {
                "requestState has a format version this server does not read; start the request \
                 again without it"
            }
            Self::UnknownKey => {
                "requestState was sealed with a key this server does not hold (rotated out, or \
                 another deployment's); start the request again without it"
            }
            Self::Altered => "requestState failed authentication: it was altered",
            Self::Expired => "requestState has expired; start the request again without it",
            Self::OtherTarget => "requestState was issued for another method, tool or prompt",
            Self::OtherArguments => "requestState was issued for different arguments",
            Self::OtherPrincipal => "requestState was issued to another principal",
        })
    }
}

struct Key {
    id: [u8; KEY_ID_LEN],
    aead: LessSafeKey,
}

/// An HKDF output length (ring wants a `KeyType` to expand to).
struct Len(usize);

impl KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

impl Key {
    fn derive(secret: &[u8]) -> Self {
        let prk = Salt::new(HKDF_SHA256, HKDF_SALT).extract(secret);
        // Both lengths are far below HKDF-SHA256's limit of 255 blocks.
        let aead = match prk.expand(&[b"aes-256-gcm key"], &AES_256_GCM) {
            Ok(okm) => LessSafeKey::new(UnboundKey::from(okm)),
            Err(_) => unreachable!("32 bytes are within HKDF-SHA256's output limit"),
        };
        let mut id = [0; KEY_ID_LEN];
        let filled = prk
            .expand(&[b"key id"], Len(KEY_ID_LEN))
            .and_then(|okm| okm.fill(&mut id));
        if filled.is_err() {
            unreachable!("8 bytes are within HKDF-SHA256's output limit");
        }
        Self { id, aead }
    }
}

/// The states of the random key warning.
struct RandomKeyWarning;

impl RandomKeyWarning {
    /// Not where replicas exist: no warning.
    const SILENT: u8 = 0;
    /// Served over HTTP: warn at the first seal.
    const ARMED: u8 = 1;
    /// Warned.
    const GIVEN: u8 = 2;
}

/// Seals and opens `requestState` values. Cheap to clone.
#[derive(Clone)]
pub(crate) struct StateSealer {
    /// The first seals; all open.
    keys: Arc<[Key]>,
    ttl: Duration,
    rng: SystemRandom,
    /// Set when the key is a random one: whether to warn, once, that
    /// replicas cannot open each other's state (see [`RandomKeyWarning`]).
    random_key_warning: Option<Arc<AtomicU8>>,
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSealer")
            .field("keys", &self.keys.len())
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl StateSealer {
    /// A sealer that seals with `current` and also opens what `previous`
    /// sealed (share them across instances behind a load balancer).
    pub(crate) fn new(current: &[u8], previous: &[&[u8]]) -> Self {
        let keys = std::iter::once(current)
            .chain(previous.iter().copied())
            .map(Key::derive)
            .collect();
        Self {
            keys,
            ttl: DEFAULT_TTL,
            rng: SystemRandom::new(),
            random_key_warning: None,
        }
    }

    /// A sealer with a random key: state sealed by this process only.
    pub(crate) fn random() -> Self {
        let rng = SystemRandom::new();
        let mut secret = [0u8; 32];
        if rng.fill(&mut secret).is_err() {
            // Without randomness the state could be forged; refuse to run.
            panic!("the operating system's random number generator is unavailable");
        }
        let mut sealer = Self::new(&secret, &[]);
        sealer.random_key_warning = Some(Arc::new(AtomicU8::new(RandomKeyWarning::SILENT)));
        sealer
    }

    /// Warns, the first time a state is sealed, that the key is this
    /// process's own (if it is): called where replicas can exist, by the
    /// HTTP service. A stdio server has one client and one process, so
    /// the warning would not apply there.
    #[cfg(any(feature = "http", test))]
    pub(crate) fn warn_of_random_key(&self) {
        self.move_random_key_warning(RandomKeyWarning::SILENT, RandomKeyWarning::ARMED);
    }

    /// Moves the random key warning from `from` to `to`; `true` if it was
    /// at `from` (a shared key has no warning to move).
    fn move_random_key_warning(&self, from: u8, to: u8) -> bool {
        self.random_key_warning.as_ref().is_some_and(|warning| {
            warning
                .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        })
    }

    /// Whether the random key warning was given.
    #[cfg(test)]
    fn warned_of_random_key(&self) -> bool {
        self.random_key_warning
            .as_ref()
            .is_some_and(|w| w.load(Ordering::Relaxed) == RandomKeyWarning::GIVEN)
    }

    /// The same keys, with states valid for `ttl`.
    pub(crate) fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long a sealed state is accepted.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// `state` sealed for `binding` now.
    pub(crate) fn seal(&self, binding: &Binding, state: &str) -> String {
        if self.move_random_key_warning(RandomKeyWarning::ARMED, RandomKeyWarning::GIVEN) {
            tracing::warn!(
                "requestState is sealed with a random key of this process: other replicas \
                 cannot open it; give every replica the same key with \
                 `ServerBuilder::request_state_key`"
            );
        }
        self.seal_at(binding, state, SystemTime::now())
    }

    /// The state inside `sealed` if it opens for `binding` now.
    pub(crate) fn open(&self, binding: &Binding, sealed: &str) -> Result<String, Refusal> {
        self.open_at(binding, sealed, SystemTime::now())
    }

    /// `state` sealed for `binding` at `now`, valid for the sealer's TTL.
    pub(crate) fn seal_at(&self, binding: &Binding, state: &str, now: SystemTime) -> String {
        let key = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        if self.rng.fill(&mut nonce).is_err() {
            // A repeated nonce would reveal the key stream: refuse to seal.
            panic!("the operating system's random number generator is unavailable");
        }
        let expires = millis(now).saturating_add(duration_ms(self.ttl));
        let mut token = Vec::with_capacity(HEADER_LEN + PAYLOAD_PREFIX + state.len() + TAG_LEN);
        token.push(VERSION);
        token.extend_from_slice(&key.id);
        token.extend_from_slice(&nonce);
        let mut payload = Vec::with_capacity(PAYLOAD_PREFIX + state.len() + TAG_LEN);
        payload.extend_from_slice(&expires.to_be_bytes());
        payload.extend_from_slice(&binding.target);
        payload.extend_from_slice(&binding.arguments);
        payload.extend_from_slice(&binding.principal);
        payload.extend_from_slice(state.as_bytes());
        let sealed = key.aead.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(&token[..1 + KEY_ID_LEN]),
            &mut payload,
        );
        if sealed.is_err() {
            unreachable!("AES-GCM seals any payload under 64 GiB");
        }
        token.extend_from_slice(&payload);
        URL_SAFE_NO_PAD.encode(token)
    }

    /// The state inside `sealed` if it opens for `binding` at `now`.
    pub(crate) fn open_at(
        &self,
        binding: &Binding,
        sealed: &str,
        now: SystemTime,
    ) -> Result<String, Refusal> {
        let token = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| Refusal::Malformed)?;
        if token.len() < HEADER_LEN + PAYLOAD_PREFIX + TAG_LEN {
            return Err(Refusal::Malformed);
        }
        if token[0] != VERSION {
            return Err(Refusal::Version);
        }
        let (header, ciphertext) = token.split_at(HEADER_LEN);
        let key = self
            .keys
            .iter()
            .find(|k| k.id[..] == header[1..1 + KEY_ID_LEN])
            .ok_or(Refusal::UnknownKey)?;
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&header[1 + KEY_ID_LEN..]);
        let mut payload = ciphertext.to_vec();
        let payload = key
            .aead
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&header[..1 + KEY_ID_LEN]),
                &mut payload,
            )
            .map_err(|_| Refusal::Altered)?;
        let (prefix, state) = payload.split_at(PAYLOAD_PREFIX);
        let mut expires = [0u8; 8];
        expires.copy_from_slice(&prefix[..8]);
        if millis(now) >= u64::from_be_bytes(expires) {
            return Err(Refusal::Expired);
        }
        let digests = &prefix[8..];
        if digests[..DIGEST_LEN] != binding.target {
            return Err(Refusal::OtherTarget);
        }
        if digests[DIGEST_LEN..2 * DIGEST_LEN] != binding.arguments {
            return Err(Refusal::OtherArguments);
        }
        if digests[2 * DIGEST_LEN..] != binding.principal {
            return Err(Refusal::OtherPrincipal);
        }
        // Authenticated, so these are the bytes `seal` took from a `&str`.
        String::from_utf8(state.to_vec()).map_err(|_| Refusal::Altered)
    }
}

fn millis(time: SystemTime) -> u64 {
    duration_ms(time.duration_since(UNIX_EPOCH).unwrap_or_default())
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arguments(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            _ => panic!("an object"),
        }
    }

    fn book(city: &str, principal: Option<&str>) -> Binding {
        Binding::new(
            "tools/call",
            "book",
            Some(&arguments(json!({"city": city, "nights": 2}))),
            principal,
        )
    }

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000 + seconds)
    }

    #[test]
    fn a_sealed_state_opens_for_its_own_request_until_it_expires() {
        let sealer = StateSealer::new(b"key", &[]).with_ttl(Duration::from_secs(60));
        let binding = book("Paris", Some("alice"));
        let sealed = sealer.seal_at(&binding, "step=2", at(0));
        assert_eq!(
            sealer.open_at(&binding, &sealed, at(59)).as_deref(),
            Ok("step=2")
        );
        assert_eq!(
            sealer.open_at(&binding, &sealed, at(60)),
            Err(Refusal::Expired)
        );
        let another_instance = StateSealer::new(b"key", &[]);
        assert!(another_instance.open_at(&binding, &sealed, at(1)).is_ok());
    }

    #[test]
    fn a_tampered_state_is_refused_as_altered() {
        let sealer = StateSealer::new(b"key", &[]);
        let binding = book("Paris", None);
        let sealed = sealer.seal_at(&binding, "step=2", at(0));
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).expect("base64url");
        for i in [HEADER_LEN, bytes.len() / 2, bytes.len() - 1] {
            let mut altered = bytes.clone();
            altered[i] ^= 1;
            assert_eq!(
                sealer.open_at(&binding, &URL_SAFE_NO_PAD.encode(altered), at(1)),
                Err(Refusal::Altered),
                "byte {i}"
            );
        }
        // The nonce is authenticated too.
        bytes[1 + KEY_ID_LEN] ^= 1;
        assert_eq!(
            sealer.open_at(&binding, &URL_SAFE_NO_PAD.encode(&bytes), at(1)),
            Err(Refusal::Altered)
        );
        assert_eq!(
            sealer.open_at(&binding, "garbage!", at(1)),
            Err(Refusal::Malformed)
        );
        assert_eq!(
            sealer.open_at(&binding, "c2hvcnQ", at(1)),
            Err(Refusal::Malformed)
        );
        let mut other_version = URL_SAFE_NO_PAD.decode(&sealed).expect("base64url");
        other_version[0] = 9;
        assert_eq!(
            sealer.open_at(&binding, &URL_SAFE_NO_PAD.encode(other_version), at(1)),
            Err(Refusal::Version)
        );
    }

    #[test]
    fn a_state_replayed_on_another_request_is_refused() {
        let sealer = StateSealer::new(b"key", &[]);
        let sealed = sealer.seal_at(&book("Paris", Some("alice")), "step=2", at(0));
        let refused = |binding: Binding| sealer.open_at(&binding, &sealed, at(1));
        assert_eq!(
            refused(book("Rome", Some("alice"))),
            Err(Refusal::OtherArguments)
        );
        assert_eq!(
            refused(book("Paris", Some("bob"))),
            Err(Refusal::OtherPrincipal)
        );
        assert_eq!(refused(book("Paris", None)), Err(Refusal::OtherPrincipal));
        let other_tool = Binding::new(
            "tools/call",
            "cancel",
            Some(&arguments(json!({"city": "Paris", "nights": 2}))),
            Some("alice"),
        );
        assert_eq!(refused(other_tool), Err(Refusal::OtherTarget));
        let prompt = Binding::new(
            "prompts/get",
            "book",
            Some(&arguments(json!({"city": "Paris", "nights": 2}))),
            Some("alice"),
        );
        assert_eq!(refused(prompt), Err(Refusal::OtherTarget));
    }

    #[test]
    fn arguments_bind_by_content_not_by_key_order() {
        let a = arguments(json!({"a": 1, "b": {"y": [1, {"q": true, "p": null}], "x": "s"}}));
        let b = arguments(json!({"b": {"x": "s", "y": [1, {"p": null, "q": true}]}, "a": 1}));
        assert_eq!(
            Binding::new("tools/call", "t", Some(&a), None),
            Binding::new("tools/call", "t", Some(&b), None)
        );
        assert_eq!(
            Binding::new("tools/call", "t", None, None),
            Binding::new("tools/call", "t", Some(&JsonObject::new()), None)
        );
        let c = arguments(json!({"a": 1, "b": {"y": [{"q": true, "p": null}, 1], "x": "s"}}));
        assert_ne!(
            Binding::new("tools/call", "t", Some(&a), None),
            Binding::new("tools/call", "t", Some(&c), None),
            "array order matters"
        );
    }

    #[test]
    fn keys_rotate_old_ones_open_until_removed() {
        let binding = book("Paris", None);
        let old = StateSealer::new(b"old secret", &[]);
        let sealed = old.seal_at(&binding, "step=2", at(0));
        let rotated = StateSealer::new(b"new secret", &[b"old secret"]);
        assert_eq!(
            rotated.open_at(&binding, &sealed, at(1)).as_deref(),
            Ok("step=2")
        );
        // The new key seals; the old deployment (still holding only the old
        // key) cannot open it, and the rotated one can.
        let fresh = rotated.seal_at(&binding, "step=3", at(1));
        assert_eq!(
            old.open_at(&binding, &fresh, at(2)),
            Err(Refusal::UnknownKey)
        );
        assert!(rotated.open_at(&binding, &fresh, at(2)).is_ok());
        let retired = StateSealer::new(b"new secret", &[]);
        assert_eq!(
            retired.open_at(&binding, &sealed, at(1)),
            Err(Refusal::UnknownKey)
        );
    }

    #[test]
    fn a_sealed_state_is_not_readable_and_never_repeats() {
        let sealer = StateSealer::new(b"key", &[]);
        let binding = book("Paris", Some("alice"));
        let secret = "the-answer-was-yes-confirm-booking-4242";
        let first = sealer.seal_at(&binding, secret, at(0));
        let second = sealer.seal_at(&binding, secret, at(0));
        assert_ne!(first, second, "a fresh nonce per seal");
        let bytes = URL_SAFE_NO_PAD.decode(&first).expect("base64url");
        let text = String::from_utf8_lossy(&bytes);
        for plain in [secret, "confirm", "Paris", "alice", "book"] {
            assert!(!text.contains(plain), "`{plain}` readable in the token");
            assert!(!first.contains(plain), "`{plain}` readable in the token");
        }
    }

    #[test]
    fn a_random_key_is_warned_of_only_where_replicas_exist() {
        let binding = Binding::new("tools/call", "t", None, None);
        let stdio = StateSealer::random();
        stdio.seal(&binding, "s");
        assert!(!stdio.warned_of_random_key(), "one process, one client");
        let http = StateSealer::random();
        http.warn_of_random_key();
        assert!(!http.warned_of_random_key(), "nothing sealed yet");
        http.seal(&binding, "s");
        assert!(http.warned_of_random_key());
        let shared = StateSealer::new(&[7; 32], &[]);
        shared.warn_of_random_key();
        shared.seal(&binding, "s");
        assert!(
            !shared.warned_of_random_key(),
            "a shared key needs no warning"
        );
    }
}
