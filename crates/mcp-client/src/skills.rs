//! Using a server's skills (SEP-2640, `io.modelcontextprotocol/skills`),
//! written on the public session API.
//!
//! Listing is cheap and fetches nothing: [`list_all_skills`] returns each
//! skill's entry (its `SKILL.md` URI, frontmatter and the digest and size
//! of every file). A skill's files are read only when the host needs them:
//! [`load_skill`] reads the `SKILL.md`, [`read_skill_file`] any other file,
//! and each read is verified against the entry before it is handed over:
//! the size, then the SHA-256 digest, and for `SKILL.md` its frontmatter,
//! field by field. Content that fails is never returned; the error says
//! what did not match ([`SkillMismatch`]).
//!
//! [`list_all_skills`]: ClientSession::list_all_skills
//! [`load_skill`]: ClientSession::load_skill
//! [`read_skill_file`]: ClientSession::read_skill_file

use base64::Engine as _;
use mcp_types::method::Method;
use mcp_types::skills::{self, GetSkill, ListSkills, SkillEntry, SkillUriParams};
use mcp_types::{JsonObject, ResourceContents};
use serde_json::Value;

use crate::error::Error;
use crate::options::RequestOptions;
use crate::session::ClientSession;

pub use crate::skill_mismatch::SkillMismatch;

/// A skill whose `SKILL.md` was read and verified.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub entry: SkillEntry,
    /// The whole `SKILL.md`, frontmatter included.
    pub skill_md: String,
    /// The frontmatter, as read from the file.
    pub frontmatter: JsonObject,
}

impl LoadedSkill {
    /// The Markdown after the frontmatter.
    pub fn body(&self) -> &str {
        let text = self
            .skill_md
            .strip_prefix('\u{feff}')
            .unwrap_or(&self.skill_md);
        let mut seen = 0;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            offset += line.len();
            if line.trim_end() == "---" {
                seen += 1;
                if seen == 2 {
                    return &text[offset..];
                }
            }
        }
        ""
    }

    /// The URIs of the skill's other files, to read with
    /// [`ClientSession::read_skill_file`] when needed.
    pub fn files(&self) -> Vec<&str> {
        match &self.entry.resources {
            skills::SkillResources::Files(files) => files
                .iter()
                .map(|f| f.uri.as_str())
                .filter(|uri| *uri != self.entry.uri)
                .collect(),
            skills::SkillResources::Dynamic(_) => Vec::new(),
        }
    }
}

/// The first field on which two frontmatter objects differ.
fn differing_field(file: &JsonObject, entry: &JsonObject) -> Option<String> {
    file.keys()
        .chain(entry.keys())
        .find(|key| {
            file.get(*key).unwrap_or(&Value::Null) != entry.get(*key).unwrap_or(&Value::Null)
        })
        .cloned()
}

impl ClientSession {
    /// One page of `skills/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses (`-32601` if it serves no skills).
    pub async fn list_skills(
        &self,
        cursor: Option<String>,
    ) -> Result<skills::ListSkillsResult, Error> {
        self.list_page::<ListSkills>(cursor, RequestOptions::new())
            .await
            .map(|(page, _)| page)
    }

    /// Every skill's entry, following `nextCursor`. Reads no skill file.
    ///
    /// # Errors
    /// As [`list_skills`](Self::list_skills); [`Error::ListLimit`].
    pub async fn list_all_skills(&self) -> Result<Vec<SkillEntry>, Error> {
        self.list_all(skills::ListSkills::NAME, |c| {
            self.list_page::<ListSkills>(c, RequestOptions::new())
        })
        .await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown skill is a remote `-32602`.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        self.request::<GetSkill>(&SkillUriParams::new(uri), RequestOptions::new())
            .await
            .map(|result| result.skill)
    }

    /// Reads the skill's `SKILL.md` and verifies its size, digest and
    /// frontmatter against `entry`.
    ///
    /// # Errors
    /// [`Error::SkillVerification`] when anything differs (the content is
    /// not returned); [`Error::Request`] when the read fails.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, Error> {
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let refuse = |reason| Error::SkillVerification {
            uri: entry.uri.clone(),
            reason,
        };
        let skill_md = String::from_utf8(bytes).map_err(|e| {
            refuse(SkillMismatch::Frontmatter {
                reason: e.to_string(),
            })
        })?;
        let frontmatter = skills::parse_frontmatter(&skill_md).map_err(|e| {
            refuse(SkillMismatch::Frontmatter {
                reason: e.to_string(),
            })
        })?;
        if let Some(field) = differing_field(&frontmatter, &entry.frontmatter) {
            return Err(refuse(SkillMismatch::FrontmatterField { field }));
        }
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
            frontmatter,
        })
    }

    /// Reads file `uri` of the skill described by `entry` and verifies its
    /// size and digest against the entry.
    ///
    /// # Errors
    /// [`Error::SkillVerification`] when the entry does not list the file or
    /// what was read does not match; [`Error::Request`] when the read fails.
    pub async fn read_skill_file(&self, entry: &SkillEntry, uri: &str) -> Result<Vec<u8>, Error> {
        let refuse = |reason| Error::SkillVerification {
            uri: uri.to_owned(),
            reason,
        };
        let listed = entry
            .file(uri)
            .ok_or_else(|| refuse(SkillMismatch::NotListed))?;
        let read = self.read_resource(uri).await?;
        let contents = read
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or(read.contents.first())
            .ok_or_else(|| refuse(SkillMismatch::NoContent))?;
        let bytes = match contents {
            ResourceContents::Text(text) => text.text.clone().into_bytes(),
            ResourceContents::Blob(blob) => base64::engine::general_purpose::STANDARD
                .decode(&blob.blob)
                .map_err(|_| refuse(SkillMismatch::InvalidBlob))?,
            _ => return Err(refuse(SkillMismatch::NoContent)),
        };
        if bytes.len() as u64 != listed.size {
            return Err(refuse(SkillMismatch::Size {
                expected: listed.size,
                actual: bytes.len() as u64,
            }));
        }
        let digest = skills::digest(&bytes);
        if digest != listed.digest {
            return Err(refuse(SkillMismatch::Digest {
                expected: listed.digest.clone(),
                actual: digest,
            }));
        }
        Ok(bytes)
    }
}
