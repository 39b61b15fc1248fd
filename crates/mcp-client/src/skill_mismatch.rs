//! What a skill file's verification can find wrong: plain data, below the
//! crate's error that carries it. What the server wrote (the entry's
//! digest, a field's name) is shown escaped.

use mcp_types::untrusted::Escaped;

/// What did not match when a skill file was verified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillMismatch {
    /// The entry does not list the file (or lists no files: `"dynamic"`).
    #[error("the skill's entry does not list this file, so it cannot be verified")]
    NotListed,
    /// The read returned no contents for the URI.
    #[error("the server returned no contents for it")]
    NoContent,
    /// The blob is not valid base64.
    #[error("its blob is not valid base64")]
    InvalidBlob,
    /// The byte length differs from the entry's `size`.
    #[error("it is {actual} bytes, the entry says {expected}")]
    Size {
        /// The entry's size.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The SHA-256 digest differs from the entry's `digest`.
    #[error("its digest is {actual}, the entry says {}", Escaped::name(.expected))]
    Digest {
        /// The entry's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The `SKILL.md` is not UTF-8 or its frontmatter cannot be read.
    #[error("its frontmatter cannot be read: {reason}")]
    Frontmatter {
        /// Why.
        reason: String,
    },
    /// A frontmatter field differs between the file and the entry.
    #[error("frontmatter field `{}` differs from the entry's", Escaped::name(.field))]
    FrontmatterField {
        /// The field.
        field: String,
    },
}
