//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): its
//! wire types, methods and pure rules.
//!
//! A skill is a directory whose root holds a `SKILL.md` (YAML frontmatter
//! with at least `name` and `description`, then Markdown), served as
//! resources under `skill://<skill-path>/`, the last segment of the path
//! being the skill's name. `skills/list` and `skills/get` hand out
//! [`SkillEntry`]s: the `SKILL.md` URI, its frontmatter as JSON, and every
//! file of the skill with its SHA-256 [`digest`] and size, so a host can
//! verify what it later reads with `resources/read`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::common::{Cursor, JsonObject};
use crate::meta::RequestMeta;
use crate::method::declare_method;
use crate::params::PaginatedRequestParams;

/// The file at the root of every skill.
pub const SKILL_MD: &str = "SKILL.md";
/// The URI scheme of skills.
pub const SCHEME: &str = "skill";
/// The `mimeType` of a `SKILL.md` resource.
pub const SKILL_MD_MIME_TYPE: &str = "text/markdown";
/// The `mimeType` of a directory in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The most files a skill should have (`SKILL.md` included).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes a skill's files should add up to (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The `resources` value of a skill whose files are not enumerated.
pub const DYNAMIC: &str = "dynamic";

/// One file of a skill: its URI, SHA-256 digest and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI, within the skill's directory.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits of the file's raw bytes.
    pub digest: String,
    /// The length of the file's raw bytes.
    pub size: u64,
}

impl SkillFile {
    /// The entry of file `uri` with content `bytes`.
    pub fn of(uri: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            uri: uri.into(),
            digest: digest(bytes),
            size: bytes.len() as u64,
        }
    }
}

/// A skill's files: every one of them, or `"dynamic"` when the server does
/// not enumerate them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file, `SKILL.md` included, each once.
    Files(Vec<SkillFile>),
    /// The literal `"dynamic"`: no manifest.
    Dynamic(DynamicMarker),
}

/// The string `"dynamic"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DynamicMarker {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, as JSON.
    pub frontmatter: JsonObject,
    /// The skill's files.
    pub resources: SkillResources,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SkillEntry {
    /// An entry for the skill at `uri` with `frontmatter` and `files`.
    pub fn new(uri: impl Into<String>, frontmatter: JsonObject, files: Vec<SkillFile>) -> Self {
        Self {
            uri: uri.into(),
            frontmatter,
            resources: SkillResources::Files(files),
            meta: None,
        }
    }

    /// The skill's name (`frontmatter.name`).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The skill's description (`frontmatter.description`).
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The listed file at `uri`, if the entry enumerates its files.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic(_) => None,
        }
    }
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// One page of skills.
    pub skills: Vec<SkillEntry>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ListSkillsResult {
    /// A page of `skills`.
    pub fn new(skills: Vec<SkillEntry>) -> Self {
        Self {
            skills,
            next_cursor: None,
            meta: None,
        }
    }
}

/// The params of `skills/get` and of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillUriParams {
    /// The skill's `SKILL.md` URI (or, for a directory read, the directory's URI).
    pub uri: String,
    /// Where to resume a paged directory read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl SkillUriParams {
    /// Params naming `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            cursor: None,
            meta: None,
        }
    }
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill.
    pub skill: SkillEntry,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl GetSkillResult {
    /// The result for `skill`.
    pub fn new(skill: SkillEntry) -> Self {
        Self { skill, meta: None }
    }
}

/// The result of `resources/directory/read`: the directory's direct children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadDirectoryResult {
    /// The children (a subdirectory has `mimeType` [`DIRECTORY_MIME_TYPE`]).
    pub resources: Vec<crate::Resource>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
}

impl ReadDirectoryResult {
    /// A page of `resources`.
    pub fn new(resources: Vec<crate::Resource>) -> Self {
        Self {
            resources,
            next_cursor: None,
        }
    }
}

declare_method! {
    /// `skills/list`: the skills a server serves, paged.
    ListSkills = "skills/list", request, optional params: PaginatedRequestParams, result: ListSkillsResult
}
declare_method! {
    /// `skills/get`: one skill, by its `SKILL.md` URI.
    GetSkill = "skills/get", request, params: SkillUriParams, result: GetSkillResult
}
declare_method! {
    /// `resources/directory/read`: the direct children of a skill directory.
    ReadDirectory = "resources/directory/read", request, params: SkillUriParams, result: ReadDirectoryResult
}

/// The SEP-2640 digest of `bytes`: `sha256:` and 64 lowercase hex digits.
pub fn digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        // Writing to a `String` cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Whether `name` follows the Agent Skills naming rule: 1 to 64 lowercase
/// letters, digits and hyphens, no hyphen first, last or doubled.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
        && !name.contains("--")
}

/// The skill name a `skill://…/<name>/SKILL.md` URI ends in.
pub fn name_of_uri(uri: &str) -> Option<&str> {
    let rest = uri.split_once("://")?.1;
    let dir = rest.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    dir.rsplit('/').next().filter(|n| !n.is_empty())
}

/// Why a `SKILL.md` frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    /// The line (1-based, in the file) where reading stopped, if any.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "SKILL.md frontmatter, line {line}: {}", self.reason),
            None => write!(f, "SKILL.md frontmatter: {}", self.reason),
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// Reads the YAML frontmatter of a `SKILL.md` (between a leading `---`
/// line and the next `---` line) into JSON, and checks that `name` and
/// `description` are non-empty strings.
///
/// Frontmatter is small and plain, so this reads the YAML it uses: nested
/// mappings by indentation, `- item` and `[a, b]` sequences, plain, quoted
/// and block (`|`, `>`) scalars, booleans, numbers and null. Anchors, tags
/// and multi-document streams are refused.
///
/// # Errors
/// [`FrontmatterError`] saying what and where.
///
/// # Examples
/// ```
/// let text = "---\nname: pdf-processing\ndescription: Fill PDF forms\nmetadata:\n  version: 2\n---\nBody\n";
/// let frontmatter = mcp_types::skills::parse_frontmatter(text).unwrap();
/// assert_eq!(frontmatter["name"], "pdf-processing");
/// assert_eq!(frontmatter["metadata"]["version"], 2);
/// ```
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(FrontmatterError {
            line: Some(1),
            reason: "the file does not begin with a `---` line".into(),
        });
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err(FrontmatterError {
            line: None,
            reason: "no closing `---` line".into(),
        });
    }
    let mut parser = Yaml {
        lines: block,
        at: 0,
    };
    let value = parser.node(0)?;
    let Value::Object(object) = value else {
        return Err(FrontmatterError {
            line: Some(2),
            reason: "the frontmatter is not a mapping".into(),
        });
    };
    for field in ["name", "description"] {
        if object
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(FrontmatterError {
                line: None,
                reason: format!("`{field}` is missing or not a non-empty string"),
            });
        }
    }
    Ok(object)
}

/// A line-based reader of the YAML subset frontmatter uses.
struct Yaml<'a> {
    lines: Vec<&'a str>,
    at: usize,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

impl Yaml<'_> {
    fn error(&self, reason: impl Into<String>) -> FrontmatterError {
        // +2: the opening `---` is line 1, and `at` counts from 0.
        FrontmatterError {
            line: Some(self.at + 2),
            reason: reason.into(),
        }
    }

    fn skip_blank(&mut self) {
        while self.at < self.lines.len() && is_blank(self.lines[self.at]) {
            self.at += 1;
        }
    }

    /// The node whose lines are indented at least `min`: a mapping or a sequence.
    fn node(&mut self, min: usize) -> Result<Value, FrontmatterError> {
        self.skip_blank();
        let Some(first) = self.lines.get(self.at) else {
            return Ok(Value::Object(JsonObject::new()));
        };
        if first.contains('\t') && first.trim_start().len() != first.trim_start_matches('\t').len()
        {
            return Err(self.error("tabs are not allowed for indentation"));
        }
        let indent = indent_of(first);
        if indent < min {
            return Ok(Value::Null);
        }
        let trimmed = first.trim_start();
        if trimmed == "-" || trimmed.starts_with("- ") {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else {
                break;
            };
            if indent_of(line) != indent {
                break;
            }
            let item = line.trim_start();
            let Some(rest) = item.strip_prefix('-') else {
                break;
            };
            self.at += 1;
            let rest = rest.trim();
            if rest.is_empty() {
                items.push(self.node(indent + 1)?);
            } else if rest.contains(": ") || rest.ends_with(':') {
                return Err(self.error("mappings inside sequences are not supported"));
            } else {
                items.push(self.scalar(rest, indent)?);
            }
        }
        Ok(Value::Array(items))
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut object = JsonObject::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else {
                break;
            };
            let this = indent_of(line);
            if this < indent {
                break;
            }
            if this > indent {
                return Err(self.error("unexpected indentation"));
            }
            let entry = line.trim();
            let (key, rest) = match entry.split_once(": ") {
                Some((key, rest)) => (key, rest.trim()),
                None => match entry.strip_suffix(':') {
                    Some(key) => (key, ""),
                    None => return Err(self.error("expected `key: value`")),
                },
            };
            let key = unquote(key.trim());
            if key.is_empty() {
                return Err(self.error("empty key"));
            }
            if object.contains_key(&key) {
                return Err(self.error(format!(
                    "duplicate key `{}`",
                    crate::untrusted::Escaped::name(&key)
                )));
            }
            self.at += 1;
            let value = if rest.is_empty() || rest.starts_with('#') {
                self.node(indent + 1)?
            } else {
                self.scalar(rest, indent)?
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    /// A scalar after `key: ` or `- `; block scalars read the following lines.
    fn scalar(&mut self, text: &str, indent: usize) -> Result<Value, FrontmatterError> {
        if text.starts_with('&') || text.starts_with('*') || text.starts_with('!') {
            return Err(self.error("anchors, aliases and tags are not supported"));
        }
        if let Some(style) = text.chars().next().filter(|c| *c == '|' || *c == '>') {
            return Ok(Value::String(self.block(style, text, indent)));
        }
        if text.starts_with('"') {
            return double_quoted(text)
                .ok_or_else(|| self.error("unterminated double-quoted string"));
        }
        if text.starts_with('\'') {
            return single_quoted(text)
                .ok_or_else(|| self.error("unterminated single-quoted string"));
        }
        if text.starts_with('{') {
            return Err(self.error("flow mappings are not supported"));
        }
        if let Some(inner) = text.strip_prefix('[') {
            let inner = strip_comment(inner);
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| self.error("unterminated flow sequence"))?;
            let items = inner
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| match s.chars().next() {
                    Some('"') => double_quoted(s).unwrap_or_else(|| Value::String(s.into())),
                    Some('\'') => single_quoted(s).unwrap_or_else(|| Value::String(s.into())),
                    _ => plain(s),
                })
                .collect();
            return Ok(Value::Array(items));
        }
        Ok(plain(strip_comment(text)))
    }

    fn block(&mut self, style: char, header: &str, indent: usize) -> String {
        let keep = header.contains('+');
        let strip = header.contains('-');
        let mut lines = Vec::new();
        let mut block_indent = None;
        while let Some(line) = self.lines.get(self.at) {
            if line.trim().is_empty() {
                lines.push("");
                self.at += 1;
                continue;
            }
            let this = indent_of(line);
            if this <= indent {
                break;
            }
            let base = *block_indent.get_or_insert(this);
            if this < base {
                break;
            }
            lines.push(&line[base..]);
            self.at += 1;
        }
        while lines.last() == Some(&"") && !keep {
            lines.pop();
        }
        let mut text = if style == '|' {
            lines.join("\n")
        } else {
            let mut folded = String::new();
            for line in &lines {
                if line.is_empty() {
                    folded.push('\n');
                } else {
                    if !folded.is_empty() && !folded.ends_with('\n') {
                        folded.push(' ');
                    }
                    folded.push_str(line);
                }
            }
            folded
        };
        if !strip && !text.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// A plain scalar without its ` #` comment.
fn strip_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(at) => text[..at].trim_end(),
        None => text.trim_end(),
    }
}

fn unquote(key: &str) -> String {
    match (
        double_quoted(key).filter(|_| key.starts_with('"')),
        single_quoted(key).filter(|_| key.starts_with('\'')),
    ) {
        (Some(Value::String(s)), _) | (_, Some(Value::String(s))) => s,
        _ => key.to_owned(),
    }
}

fn plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => {
            if let Ok(n) = text.parse::<i64>() {
                return Value::from(n);
            }
            let numeric = text
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
            if numeric {
                if let Some(n) = text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                {
                    return Value::Number(n);
                }
            }
            Value::String(text.to_owned())
        }
    }
}

fn double_quoted(text: &str) -> Option<Value> {
    let mut out = String::new();
    let mut chars = text.strip_prefix('"')?.chars();
    loop {
        match chars.next()? {
            '"' => break,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    let rest: String = chars.collect();
    let rest = rest.trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(Value::String(out))
}

fn single_quoted(text: &str) -> Option<Value> {
    let mut out = String::new();
    let mut chars = text.strip_prefix('\'')?.chars().peekable();
    loop {
        match chars.next()? {
            '\'' if chars.peek() == Some(&'\'') => {
                chars.next();
                out.push('\'');
            }
            '\'' => break,
            c => out.push(c),
        }
    }
    let rest: String = chars.collect();
    let rest = rest.trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_duplicate_key_is_named_escaped() {
        let text = "---\nna\u{1b}]0;x\u{7}me: a\nna\u{1b}]0;x\u{7}me: b\n---\n";
        let error = parse_frontmatter(text).expect_err("a duplicate key");
        assert_eq!(error.reason, r"duplicate key `na\x1b]0;x\x07me`");
        assert_eq!(error.line, Some(3));
    }

    #[test]
    fn frontmatter_reads_the_yaml_skills_use() {
        let text = "---\nname: pdf-processing\ndescription: \"Extract, fill: and assemble\" # c\nlicense: 'it''s MIT'\nallowed-tools: [Read, \"Bash\"]\nmetadata:\n  version: 1.5\n  author: someone\n  nested:\n    deep: true\ntags:\n  - one\n  - two\nnotes: |\n  line one\n  line two\nfolded: >\n  a\n  b\n---\n# Body\n";
        let frontmatter = parse_frontmatter(text).expect("parsed");
        assert_eq!(
            Value::Object(frontmatter),
            json!({
                "name": "pdf-processing",
                "description": "Extract, fill: and assemble",
                "license": "it's MIT",
                "allowed-tools": ["Read", "Bash"],
                "metadata": {"version": 1.5, "author": "someone", "nested": {"deep": true}},
                "tags": ["one", "two"],
                "notes": "line one\nline two\n",
                "folded": "a b\n",
            })
        );
    }

    #[test]
    fn frontmatter_refuses_what_it_cannot_read() {
        for bad in [
            "no frontmatter",
            "---\nname: x\n",
            "---\nname: x\n---\n",
            "---\ndescription: d\n---\n",
            "---\nname: x\ndescription: d\nname: y\n---\n",
            "---\nname: &a x\ndescription: d\n---\n",
            "---\nname: \"x\ndescription: d\n---\n",
            "---\njust text\n---\n",
        ] {
            assert!(parse_frontmatter(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn digests_names_and_entries_follow_the_sep() {
        assert_eq!(
            digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_valid_name("pdf-processing"));
        for bad in ["", "-a", "a-", "a--b", "Upper", "a_b", &"a".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
        assert_eq!(name_of_uri("skill://a/b/pdf/SKILL.md"), Some("pdf"));
        assert_eq!(name_of_uri("skill://pdf/SKILL.md"), Some("pdf"));
        assert_eq!(name_of_uri("skill://pdf/README.md"), None);
        let dynamic: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://x/SKILL.md", "frontmatter": {"name": "x"}, "resources": "dynamic"
        }))
        .expect("dynamic");
        assert!(matches!(dynamic.resources, SkillResources::Dynamic(_)));
        let listed = SkillEntry::new(
            "skill://x/SKILL.md",
            JsonObject::new(),
            vec![SkillFile::of("skill://x/SKILL.md", b"abc")],
        );
        let value = serde_json::to_value(&listed).expect("serialized");
        assert_eq!(value["resources"][0]["size"], 3);
        assert!(
            serde_json::from_value::<SkillEntry>(
                json!({"uri": "u", "frontmatter": {}, "resources": "other"})
            )
            .is_err()
        );
    }
}
