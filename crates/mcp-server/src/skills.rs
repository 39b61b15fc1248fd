//! Serving skills (SEP-2640, `io.modelcontextprotocol/skills`), written on
//! the public [extension](crate::extension) API.
//!
//! A [`Skill`] is a `SKILL.md` (YAML frontmatter with `name` and
//! `description`, then Markdown) and the files beside it, given in code or
//! read from a directory. [`Skills`] gathers them and becomes an
//! [`Extension`]: every file is a resource at `skill://<name>/<path>`
//! (`SKILL.md` as `text/markdown`, named and described by its
//! frontmatter), `skills/list` and `skills/get` hand out each skill's entry
//! (frontmatter as JSON, every file with its SHA-256 digest and size), and
//! `resources/directory/read` lists a skill directory's direct children.
//! Any client may call them (the client need not declare the extension).
//!
//! # Examples
//! ```
//! use mcp_server::Server;
//! use mcp_server::skills::{Skill, Skills};
//!
//! let skill = Skill::new("---\nname: greeting\ndescription: Greets people\n---\nSay hello.\n")
//!     .unwrap()
//!     .file("references/TONE.md", "Be warm.\n")
//!     .unwrap();
//! let server = Server::builder("skilled", "1.0.0")
//!     .extension(Skills::new().skill(skill).into_extension().unwrap())
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().extensions.unwrap().contains_key("io.modelcontextprotocol/skills"));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_types::skills::{
    self, GetSkill, GetSkillResult, ListSkills, ListSkillsResult, ReadDirectory,
    ReadDirectoryResult, SkillEntry, SkillFile, SkillUriParams,
};
use mcp_types::{ErrorObject, JsonObject, PaginatedRequestParams, Resource};
use serde_json::Value;

use crate::Error;
use crate::answer::{Blob, IntoResourceResult};
use crate::extension::{Extension, Params};
use crate::handler_error::ResourceError;

/// The most files [`Skill::from_dir`] reads from one skill directory.
pub const MAX_DIR_FILES: usize = skills::MAX_FILES_PER_SKILL;
/// The most entries of one `skills/list` page.
pub const SKILLS_PAGE_SIZE: usize = 100;

fn refused(what: impl std::fmt::Display, reason: impl Into<String>) -> Error {
    Error::Registration {
        what: format!("skill {what}"),
        reason: reason.into(),
    }
}

/// One skill: its `SKILL.md` and the files beside it.
#[derive(Debug, Clone)]
pub struct Skill {
    name: String,
    frontmatter: JsonObject,
    /// Every file by its path within the skill (`SKILL.md` included).
    files: BTreeMap<String, Arc<[u8]>>,
}

impl Skill {
    /// A skill whose `SKILL.md` is `skill_md`; its name is the
    /// frontmatter's `name`.
    ///
    /// # Errors
    /// [`Error::Registration`] when the frontmatter is missing or unreadable,
    /// lacks `name` or `description`, or the name breaks the naming rule
    /// (1-64 lowercase letters, digits and single inner hyphens).
    pub fn new(skill_md: impl Into<String>) -> Result<Self, Error> {
        let skill_md = skill_md.into();
        let frontmatter =
            skills::parse_frontmatter(&skill_md).map_err(|e| refused("SKILL.md", e.to_string()))?;
        let name = frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !skills::is_valid_name(&name) {
            return Err(refused(
                format!("`{name}`"),
                "the name must be 1-64 lowercase letters, digits and single inner hyphens",
            ));
        }
        let mut files = BTreeMap::new();
        files.insert(
            skills::SKILL_MD.to_owned(),
            Arc::from(skill_md.into_bytes()),
        );
        Ok(Self {
            name,
            frontmatter,
            files,
        })
    }

    /// Adds the file at `path` (relative, `/`-separated, within the skill).
    ///
    /// # Errors
    /// [`Error::Registration`] for an absolute path, an empty or `.`/`..`
    /// segment, a second `SKILL.md` at the root, or a duplicate path.
    pub fn file(
        mut self,
        path: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<Self, Error> {
        let path = path.into();
        let what = format!("`{}` file `{path}`", self.name);
        let bad_segment = path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..");
        if bad_segment || path.contains('\\') {
            return Err(refused(
                what,
                "a file path is relative, `/`-separated, without empty, `.` or `..` segments",
            ));
        }
        if self.files.contains_key(&path) {
            return Err(refused(what, "the skill already has this file"));
        }
        self.files.insert(path, Arc::from(bytes.into()));
        Ok(self)
    }

    /// The skill in directory `dir`: its `SKILL.md` and every other file
    /// below it (at most [`MAX_DIR_FILES`]; hidden files are left out).
    ///
    /// # Errors
    /// [`Error::Registration`] when the directory or a file cannot be read,
    /// or as [`Skill::new`] and [`Skill::file`].
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = dir.as_ref();
        let what = || format!("directory `{}`", dir.display());
        let skill_md = std::fs::read_to_string(dir.join(skills::SKILL_MD))
            .map_err(|e| refused(what(), format!("cannot read its SKILL.md: {e}")))?;
        let mut skill = Self::new(skill_md)?;
        let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
        let mut found = Vec::new();
        while let Some(at) = pending.pop() {
            let entries = std::fs::read_dir(&at)
                .map_err(|e| refused(what(), format!("cannot list `{}`: {e}", at.display())))?;
            for entry in entries {
                let entry = entry.map_err(|e| refused(what(), e.to_string()))?;
                let path = entry.path();
                if entry.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                let kind = entry
                    .file_type()
                    .map_err(|e| refused(what(), e.to_string()))?;
                if kind.is_dir() {
                    pending.push(path);
                } else if kind.is_file() {
                    found.push(path);
                    if found.len() > MAX_DIR_FILES {
                        return Err(refused(
                            what(),
                            format!("it holds more than {MAX_DIR_FILES} files"),
                        ));
                    }
                }
            }
        }
        found.sort();
        for path in found {
            let relative = path
                .strip_prefix(dir)
                .map_err(|e| refused(what(), e.to_string()))?;
            let relative: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let relative = relative.join("/");
            if relative == skills::SKILL_MD {
                continue;
            }
            let bytes = std::fs::read(&path)
                .map_err(|e| refused(what(), format!("cannot read `{}`: {e}", path.display())))?;
            skill = skill.file(relative, bytes)?;
        }
        Ok(skill)
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The frontmatter, as JSON.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.frontmatter
    }

    fn uri(&self, path: &str) -> String {
        format!("{}://{}/{path}", skills::SCHEME, self.name)
    }

    fn entry(&self) -> SkillEntry {
        // SKILL.md first, then the other files in path order.
        let skill_md = self
            .files
            .get(skills::SKILL_MD)
            .map(|bytes| SkillFile::of(self.uri(skills::SKILL_MD), bytes));
        let others = self
            .files
            .iter()
            .filter(|(path, _)| *path != skills::SKILL_MD)
            .map(|(path, bytes)| SkillFile::of(self.uri(path), bytes));
        SkillEntry::new(
            self.uri(skills::SKILL_MD),
            self.frontmatter.clone(),
            skill_md.into_iter().chain(others).collect(),
        )
    }
}

/// A server's skills, turned into the Skills extension by
/// [`into_extension`](Self::into_extension).
#[derive(Debug, Clone, Default)]
pub struct Skills {
    skills: Vec<Skill>,
}

impl Skills {
    /// No skills yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `skill`.
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Every skill in a directory of `root`'s (each subdirectory holding a
    /// `SKILL.md`; others are skipped), in name order.
    ///
    /// # Errors
    /// As [`Skill::from_dir`], and when `root` cannot be listed.
    pub fn from_root(root: impl AsRef<Path>) -> Result<Self, Error> {
        let root = root.as_ref();
        let entries = std::fs::read_dir(root).map_err(|e| {
            refused(
                format!("root `{}`", root.display()),
                format!("cannot list it: {e}"),
            )
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(skills::SKILL_MD).is_file())
            .collect();
        dirs.sort();
        let mut all = Self::new();
        for dir in dirs {
            all = all.skill(Skill::from_dir(dir)?);
        }
        Ok(all)
    }

    /// The Skills extension serving these skills.
    ///
    /// # Errors
    /// [`Error::Registration`] for two skills of one name, or a skill over
    /// the SEP's limits (512 files, 16 MiB).
    pub fn into_extension(self) -> Result<Extension, Error> {
        let mut by_name = BTreeMap::new();
        for skill in self.skills {
            let total: u64 = skill.files.values().map(|b| b.len() as u64).sum();
            if skill.files.len() > skills::MAX_FILES_PER_SKILL || total > skills::MAX_SKILL_BYTES {
                return Err(refused(
                    format!("`{}`", skill.name),
                    "a skill holds at most 512 files and 16 MiB",
                ));
            }
            if by_name.contains_key(&skill.name) {
                return Err(refused(
                    format!("`{}`", skill.name),
                    "another skill has this name",
                ));
            }
            by_name.insert(skill.name.clone(), skill);
        }
        let served = Arc::new(Served {
            entries: by_name.values().map(Skill::entry).collect(),
            skills: by_name,
        });
        let mut settings = JsonObject::new();
        settings.insert("directoryRead".into(), Value::Bool(true));
        let mut extension = Extension::new(mcp_types::extension::SKILLS)
            .map_err(|e| refused("extension", e.to_string()))?
            .settings(settings)
            .client_must_declare(false);
        for skill in served.skills.values() {
            for (path, bytes) in &skill.files {
                let resource = file_resource(skill, path, bytes.len());
                let bytes = bytes.clone();
                extension = extension.resource(resource, move || {
                    let bytes = bytes.clone();
                    async move { FileBytes(bytes) }
                });
            }
        }
        let list = served.clone();
        let get = served.clone();
        let dir = served;
        Ok(extension
            .cacheable_request::<ListSkills, _, _>(
                move |Params(params): Params<Option<PaginatedRequestParams>>| {
                    let served = list.clone();
                    async move { served.list(params.and_then(|p| p.cursor).as_deref()) }
                },
            )
            .cacheable_request::<GetSkill, _, _>(move |Params(params): Params<SkillUriParams>| {
                let served = get.clone();
                async move { served.get(&params.uri) }
            })
            .cacheable_request::<ReadDirectory, _, _>(
                move |Params(params): Params<SkillUriParams>| {
                    let served = dir.clone();
                    async move { served.read_directory(&params.uri) }
                },
            ))
    }
}

/// A file's bytes, served as text when they are UTF-8 and as a blob otherwise.
struct FileBytes(Arc<[u8]>);

impl IntoResourceResult for FileBytes {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<mcp_types::ResourceContents>, ResourceError> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => text.to_owned().into_resource_contents(uri, mime_type),
            Err(_) => Blob(self.0.to_vec()).into_resource_contents(uri, mime_type),
        }
    }
}

/// The `mimeType` of a skill file, by its extension.
fn mime_type_of(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    match extension.to_ascii_lowercase().as_str() {
        "md" | "markdown" => skills::SKILL_MD_MIME_TYPE,
        "txt" => "text/plain",
        "json" => "application/json",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" => "text/javascript",
        "html" | "htm" => "text/html",
        "yaml" | "yml" => "application/yaml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn file_resource(skill: &Skill, path: &str, size: usize) -> Resource {
    let mut resource = Resource::new(skill.uri(path), path);
    if path == skills::SKILL_MD {
        resource.name = skill.name.clone();
        resource.description = skill
            .frontmatter
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    resource.mime_type = Some(mime_type_of(path).to_owned());
    resource.size = Some(size as u64);
    resource
}

/// What the extension's methods answer from.
struct Served {
    skills: BTreeMap<String, Skill>,
    /// Each skill's entry, in name order, computed once.
    entries: Vec<SkillEntry>,
}

impl Served {
    fn list(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&s| s <= self.entries.len())
                .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{cursor}`")))?,
        };
        let end = start
            .saturating_add(SKILLS_PAGE_SIZE)
            .min(self.entries.len());
        let mut result = ListSkillsResult::new(self.entries[start..end].to_vec());
        result.next_cursor = (end < self.entries.len()).then(|| end.to_string());
        Ok(result)
    }

    fn get(&self, uri: &str) -> Result<GetSkillResult, ErrorObject> {
        self.entries
            .iter()
            .find(|e| e.uri == uri)
            .map(|e| GetSkillResult::new(e.clone()))
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!("no skill at `{uri}`"))
                    .with_data(serde_json::json!({ "uri": uri }))
            })
    }

    /// The direct children of directory `uri` (`skill://<name>` or a
    /// subdirectory of it).
    fn read_directory(&self, uri: &str) -> Result<ReadDirectoryResult, ErrorObject> {
        let not_a_directory = || {
            ErrorObject::invalid_params(format!("`{uri}` is not a skill directory"))
                .with_data(serde_json::json!({ "uri": uri }))
        };
        let rest = uri
            .strip_prefix(skills::SCHEME)
            .and_then(|r| r.strip_prefix("://"))
            .ok_or_else(not_a_directory)?
            .trim_end_matches('/');
        let (name, inner) = rest.split_once('/').unwrap_or((rest, ""));
        let skill = self.skills.get(name).ok_or_else(not_a_directory)?;
        let prefix = if inner.is_empty() {
            String::new()
        } else {
            format!("{inner}/")
        };
        let mut children = Vec::new();
        let mut subdirectories = std::collections::BTreeSet::new();
        for (path, bytes) in &skill.files {
            let Some(below) = path.strip_prefix(&prefix) else {
                continue;
            };
            match below.split_once('/') {
                None => children.push(file_resource(skill, path, bytes.len())),
                Some((sub, _)) => {
                    subdirectories.insert(sub.to_owned());
                }
            }
        }
        if children.is_empty() && subdirectories.is_empty() {
            return Err(not_a_directory());
        }
        for sub in subdirectories {
            let mut resource = Resource::new(skill.uri(&format!("{prefix}{sub}")), sub);
            resource.mime_type = Some(skills::DIRECTORY_MIME_TYPE.to_owned());
            children.push(resource);
        }
        Ok(ReadDirectoryResult::new(children))
    }
}
