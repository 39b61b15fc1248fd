//! Extension identifiers (SEP-2133).
//!
//! An extension is named `{vendor-prefix}/{extension-name}`: the prefix is a
//! reverse-DNS name the vendor controls (`io.modelcontextprotocol`,
//! `com.example`), the name says which of its extensions. Both peers list
//! the extensions they support under `capabilities.extensions`, keyed by
//! identifier, each with its settings object (`{}` for none); an extension
//! is in use on a connection when both sides list it.
//!
//! [`ExtensionId`] is the validated identifier; the rule is pure, so it
//! lives here and both the client and the server apply the same one.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// The Skills extension (SEP-2640).
pub const SKILLS: &str = "io.modelcontextprotocol/skills";
/// The MCP Apps extension (interactive user interfaces).
pub const UI: &str = "io.modelcontextprotocol/ui";
/// The Tasks extension (SEP-2663).
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The longest identifier accepted, in bytes.
pub const MAX_EXTENSION_ID_LEN: usize = 255;

/// A validated extension identifier, such as `io.modelcontextprotocol/skills`.
///
/// # Examples
/// ```
/// use mcp_types::extension::ExtensionId;
/// let id = ExtensionId::new("com.example/weather-alerts").unwrap();
/// assert_eq!(id.vendor(), "com.example");
/// assert_eq!(id.name(), "weather-alerts");
/// assert!(ExtensionId::new("weather").is_err());
/// assert!(ExtensionId::new("example/weather").is_err(), "one label is no reverse-DNS prefix");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct ExtensionId(String);

/// Why a string is not an extension identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidExtensionId {
    /// The string that was given.
    pub id: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for InvalidExtensionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an extension identifier: {}; use `vendor.prefix/extension-name` such as `com.example/my-extension`",
            self.id, self.reason
        )
    }
}

impl std::error::Error for InvalidExtensionId {}

fn label_ok(label: &str) -> bool {
    let bytes = label.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

fn name_ok(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

impl ExtensionId {
    /// Checks `id` against the SEP-2133 form: a reverse-DNS vendor prefix
    /// of at least two dot-separated labels (letters, digits, inner
    /// hyphens), one `/`, and a name of letters, digits, `-`, `_` and `.`
    /// that starts and ends with a letter or digit.
    ///
    /// # Errors
    /// [`InvalidExtensionId`] saying what is wrong.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidExtensionId> {
        let id = id.into();
        let fail = |reason| {
            Err(InvalidExtensionId {
                id: id.clone(),
                reason,
            })
        };
        if id.len() > MAX_EXTENSION_ID_LEN {
            return fail("it is longer than 255 bytes");
        }
        let Some((vendor, name)) = id.split_once('/') else {
            return fail("it has no `/` between the vendor prefix and the name");
        };
        let labels: Vec<&str> = vendor.split('.').collect();
        if labels.len() < 2 {
            return fail("the vendor prefix is not a reverse-DNS name of two or more labels");
        }
        if !labels.iter().all(|l| label_ok(l)) {
            return fail(
                "a label of the vendor prefix is empty or has characters other than letters, digits and inner hyphens",
            );
        }
        if !name_ok(name) {
            return fail(
                "the name is empty, has characters other than letters, digits, `-`, `_` and `.`, or does not start and end with a letter or digit",
            );
        }
        Ok(Self(id))
    }

    /// The identifier as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The reverse-DNS vendor prefix (`io.modelcontextprotocol`).
    pub fn vendor(&self) -> &str {
        self.0.split_once('/').map_or("", |(vendor, _)| vendor)
    }

    /// The extension's name within its vendor (`skills`).
    pub fn name(&self) -> &str {
        self.0.split_once('/').map_or("", |(_, name)| name)
    }
}

impl fmt::Display for ExtensionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ExtensionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for ExtensionId {
    type Err = InvalidExtensionId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl<'de> Deserialize<'de> for ExtensionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::new(raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identifier_rule_accepts_reverse_dns_names_and_refuses_the_rest() {
        for good in [
            SKILLS,
            UI,
            TASKS,
            "com.example/a",
            "com.example-corp/x_y.z-2",
            "io.github.someone/ext",
        ] {
            assert!(ExtensionId::new(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "skills",
            "example/x",
            "com..example/x",
            "com.example/",
            "com.example/-x",
            "com.example/x/y",
            "com.-example/x",
            "com.example/x y",
            "/x",
        ] {
            let error = ExtensionId::new(bad).expect_err(bad);
            assert!(error.to_string().contains("not an extension identifier"));
        }
        assert!(ExtensionId::new(format!("com.example/{}", "a".repeat(250))).is_err());
        let parsed: Result<ExtensionId, _> = serde_json::from_str("\"nope\"");
        assert!(parsed.is_err());
    }
}
