//! The registry of protocol revisions and the two eras they belong to.
//!
//! Versions are an enumerated set, never compared as strings: a string this
//! crate does not know is treated conservatively (it is at least nothing).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision this SDK knows.
///
/// Ordered by date, so `a < b` means `a` is older.
///
/// # Examples
/// ```
/// use mcp_types::{Era, Revision};
/// let r: Revision = "2025-06-18".parse().unwrap();
/// assert_eq!(r.era(), Era::Handshake);
/// assert!(r < Revision::LATEST);
/// assert!(!Revision::is_at_least("2099-01-01", Revision::V2024_11_05));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05: the base protocol; stdio and HTTP+SSE.
    V2024_11_05,
    /// 2025-03-26: OAuth, streamable HTTP, batching, tool annotations, audio.
    V2025_03_26,
    /// 2025-06-18: structured tool output, form elicitation, resource links.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, tools in sampling, tasks.
    V2025_11_25,
    /// 2026-07-28: the stateless era: no handshake, per-request `_meta`, MRTR.
    V2026_07_28,
}

/// The two protocol eras.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize`, a session per connection, server-to-client requests
    /// (2024-11-05 to 2025-11-25; the spec calls it "legacy").
    Handshake,
    /// No handshake; every request carries its own `_meta` envelope
    /// (2026-07-28 and later; the spec calls it "modern").
    Stateless,
}

impl Revision {
    /// Every known revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];
    /// The handshake-era revisions, oldest first.
    pub const HANDSHAKE: [Revision; 4] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ];
    /// The stateless-era revisions, oldest first.
    pub const STATELESS: [Revision; 1] = [Revision::V2026_07_28];
    /// The newest revision of all.
    pub const LATEST: Revision = Revision::V2026_07_28;
    /// The newest handshake-era revision.
    pub const LATEST_HANDSHAKE: Revision = Revision::V2025_11_25;
    /// The newest stateless-era revision.
    pub const LATEST_STATELESS: Revision = Revision::V2026_07_28;

    /// The version string on the wire, such as `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision a version string names, if this crate knows it.
    pub fn from_version(version: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == version)
    }

    /// The era this revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            Revision::V2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }

    /// Whether this is a handshake-era revision.
    pub const fn is_handshake(self) -> bool {
        matches!(self.era(), Era::Handshake)
    }

    /// Whether this is a stateless-era revision.
    pub const fn is_stateless(self) -> bool {
        matches!(self.era(), Era::Stateless)
    }

    /// Whether `version` names a known revision at or after `minimum`.
    ///
    /// An unknown string is never "at least" anything: a peer that names a
    /// version this SDK does not know gets no feature it cannot vouch for.
    pub fn is_at_least(version: &str, minimum: Revision) -> bool {
        Revision::from_version(version).is_some_and(|r| r >= minimum)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string this SDK does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRevision(pub String);

impl fmt::Display for UnknownRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown protocol version `{}`; known versions are {}",
            self.0,
            Revision::ALL.map(Revision::as_str).join(", ")
        )
    }
}

impl std::error::Error for UnknownRevision {}

impl FromStr for Revision {
    type Err = UnknownRevision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::from_version(s).ok_or_else(|| UnknownRevision(s.to_owned()))
    }
}

impl Serialize for Revision {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Revision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Revision {
    fn schema_name() -> Cow<'static, str> {
        "Revision".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": Revision::ALL.map(Revision::as_str),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_ordered_by_date_and_split_into_eras() {
        let mut sorted = Revision::ALL;
        sorted.sort();
        assert_eq!(sorted, Revision::ALL);
        for r in Revision::ALL {
            assert_eq!(r.as_str().parse::<Revision>(), Ok(r));
            assert_eq!(r.is_handshake(), Revision::HANDSHAKE.contains(&r));
            assert_eq!(r.is_stateless(), Revision::STATELESS.contains(&r));
        }
        assert_eq!(
            Revision::HANDSHAKE.last(),
            Some(&Revision::LATEST_HANDSHAKE)
        );
        assert_eq!(
            Revision::STATELESS.last(),
            Some(&Revision::LATEST_STATELESS)
        );
    }

    #[test]
    fn unknown_versions_are_at_least_nothing() {
        assert!(Revision::is_at_least("2025-06-18", Revision::V2025_03_26));
        assert!(!Revision::is_at_least("2025-03-26", Revision::V2025_06_18));
        // Lexically "2025-13-01" > "2025-11-25", but it is not a revision.
        assert!(!Revision::is_at_least("2025-13-01", Revision::V2024_11_05));
        assert!(!Revision::is_at_least("", Revision::V2024_11_05));
    }

    #[test]
    fn an_unknown_version_names_the_known_ones() {
        let err = "1999-01-01".parse::<Revision>().unwrap_err();
        assert!(err.to_string().contains("2026-07-28"), "{err}");
    }
}
