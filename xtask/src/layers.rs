//! `cargo xtask layers`: the file-level import graph of each crate and its
//! circles.
//!
//! A crate is built in floors when no file imports, directly or through
//! other files, a file that imports it back: then each file can be read,
//! tested and changed knowing only the files below it. This task reads every
//! `src/**/*.rs` file of every crate under `crates/`, draws an arrow from a
//! file to each file it takes a name from, and prints every circle (a
//! strongly connected set of two or more files) with the names that tie it.
//! It fails when a crate of [`FLOORED`] has one.
//!
//! The graph is read from the text, not from the compiler, so it is an
//! approximation that errs towards seeing arrows:
//! - an arrow is a `use` of, or a path written through, `crate::`, `self::`,
//!   `super::` or a child module; a name is followed through the `use`
//!   declarations of the module it is taken from to the file that defines
//!   it, so taking a name a parent re-exports points at the defining file;
//! - a `pub` (any visibility) `use` of a module's own descendant is a
//!   re-export, not a dependency (`lib.rs` and `mod.rs` facades), and draws
//!   no arrow;
//! - comments, string and character literals, and items under `#[cfg(test)]`
//!   (test modules, test-only files) are left out: tests may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The crates that must have no circle. `mcp-types` is left out: its wire
/// types reference each other as the protocol's schema does (a tool's
/// result holds content blocks, a sampling message holds tools), and those
/// files are split by the schema's topics, not by floors. `mcp-transport`
/// is printed but not judged yet: its HTTP server's files still import
/// each other (the report shows where).
const FLOORED: &[&str] = &[
    "mcp-core",
    "mcp-tasks",
    "mcp-client",
    "mcp-server",
    "mcp-testing",
    "mcp-cli",
    "mcp-gateway",
];

/// Prints each crate's circles; fails when a crate of [`FLOORED`] has one.
/// `--crate NAME` limits the report to that crate.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let only = match args {
        [] => None,
        [flag, name] if flag == "--crate" => Some(name.as_str()),
        _ => return Err("usage: cargo xtask layers [--crate NAME]".into()),
    };
    let crates_dir = root.join("crates");
    let mut names: Vec<String> = fs::read_dir(&crates_dir)
        .map_err(|e| format!("cannot list {}: {e}", crates_dir.display()))?
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("src").is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| only.is_none_or(|only| only == name))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!("no crate to read under {}", crates_dir.display()));
    }
    let mut failed = Vec::new();
    for name in &names {
        let src = crates_dir.join(name).join("src");
        let graph = Graph::read(&src)?;
        let circles = graph.circles();
        let floored = FLOORED.contains(&name.as_str());
        println!(
            "{name}: {} files, {} arrows, {} circle(s){}",
            graph.modules.len(),
            graph.arrow_count(),
            circles.len(),
            if floored { "" } else { " (not judged)" }
        );
        for circle in &circles {
            print!("{}", graph.describe(circle, &src));
        }
        if floored && !circles.is_empty() {
            failed.push(name.clone());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "module circles in {}: move what both files need below both, \
             so that arrows only point down",
            failed.join(", ")
        ))
    }
}

/// One file of a crate, as a module.
#[derive(Debug, Default)]
struct Module {
    /// The module's path below the crate root (`[]` for `lib.rs`).
    path: Vec<String>,
    file: PathBuf,
    /// Child modules declared with `mod name;` (test-only ones left out).
    children: BTreeSet<String>,
    /// Child modules declared under `#[cfg(test)]`: their files are tests.
    test_children: BTreeSet<String>,
    uses: Vec<Use>,
    /// Paths written in the code (not in a `use`) that start at `crate`,
    /// `self`, `super` or a child module.
    paths: Vec<Vec<String>>,
}

/// One name a `use` declaration brings in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Use {
    /// The path as written, `*` last for a glob.
    path: Vec<String>,
    /// The name it is known by in the module (`*` for a glob).
    name: String,
    /// Declared with some `pub` visibility: a re-export when it names a
    /// descendant.
    public: bool,
}

/// The import graph of one crate.
#[derive(Debug, Default)]
struct Graph {
    modules: Vec<Module>,
    by_path: BTreeMap<Vec<String>, usize>,
    /// From each module, the modules it takes names from, with the names.
    arrows: Vec<BTreeMap<usize, BTreeSet<String>>>,
}

impl Graph {
    fn read(src: &Path) -> Result<Self, String> {
        let mut files = Vec::new();
        collect_files(src, &mut files)?;
        let mut modules = Vec::new();
        for file in files {
            let relative = file.strip_prefix(src).unwrap_or(&file);
            let Some(path) = module_path(relative) else {
                continue;
            };
            let text = fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            modules.push((path, file, text));
        }
        Ok(Self::of(modules))
    }

    /// The graph of these files, each its module path, file and text.
    fn of(files: Vec<(Vec<String>, PathBuf, String)>) -> Self {
        let mut graph = Graph::default();
        for (path, file, text) in files {
            let mut module = parse_module(&text);
            module.path = path;
            module.file = file;
            graph
                .by_path
                .insert(module.path.clone(), graph.modules.len());
            graph.modules.push(module);
        }
        graph.drop_test_files();
        graph.arrows = (0..graph.modules.len())
            .map(|from| graph.arrows_from(from))
            .collect();
        graph
    }

    /// Leaves out the files of modules declared under `#[cfg(test)]`, and
    /// everything below them.
    fn drop_test_files(&mut self) {
        let tests: Vec<Vec<String>> = self
            .modules
            .iter()
            .flat_map(|m| {
                m.test_children.iter().map(|child| {
                    let mut path = m.path.clone();
                    path.push(child.clone());
                    path
                })
            })
            .collect();
        self.modules
            .retain(|m| !tests.iter().any(|test| m.path.starts_with(test)));
        self.by_path = self
            .modules
            .iter()
            .enumerate()
            .map(|(index, m)| (m.path.clone(), index))
            .collect();
    }

    fn arrow_count(&self) -> usize {
        self.arrows.iter().map(BTreeMap::len).sum()
    }

    fn arrows_from(&self, from: usize) -> BTreeMap<usize, BTreeSet<String>> {
        let module = &self.modules[from];
        let mut arrows: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        let mut add = |to: Option<(usize, String)>| {
            if let Some((to, name)) = to
                && to != from
            {
                arrows.entry(to).or_default().insert(name);
            }
        };
        for used in &module.uses {
            let Some(absolute) = self.absolute(from, &used.path) else {
                continue;
            };
            let re_export = used.public && absolute.starts_with(&module.path);
            if !re_export {
                add(self.target(&absolute, 0));
            }
        }
        for path in &module.paths {
            if let Some(absolute) = self.absolute(from, path) {
                add(self.target(&absolute, 0));
            }
        }
        arrows
    }

    /// `path` as written in module `from`, made a path from the crate root;
    /// `None` for a path into another crate.
    fn absolute(&self, from: usize, path: &[String]) -> Option<Vec<String>> {
        let module = &self.modules[from];
        let mut base = module.path.clone();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) if module.children.contains(first) => {}
            _ => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines what `absolute` names, with the name: the
    /// longest module prefix of the path, followed through that module's
    /// `use` declarations when the next segment is a name it imports.
    fn target(&self, absolute: &[String], depth: usize) -> Option<(usize, String)> {
        let split = (0..=absolute.len())
            .rev()
            .find(|&len| self.by_path.contains_key(&absolute[..len]))?;
        let module = self.by_path[&absolute[..split]];
        let rest = &absolute[split..];
        let Some(first) = rest.first() else {
            let name = absolute.last().cloned().unwrap_or_else(|| "crate".into());
            return Some((module, name));
        };
        if first == "*" {
            return Some((module, "*".into()));
        }
        let imported = self.modules[module]
            .uses
            .iter()
            .find(|used| &used.name == first);
        match imported {
            // Bounded: a `use` loop in broken code must not hang the check.
            Some(used) if depth < 16 => {
                let mut through = self.absolute(module, &used.path)?;
                through.extend(rest[1..].iter().cloned());
                self.target(&through, depth + 1)
            }
            _ => Some((module, first.clone())),
        }
    }

    /// The strongly connected sets of two or more modules (Tarjan's
    /// algorithm), each sorted by path.
    fn circles(&self) -> Vec<Vec<usize>> {
        struct Walk<'a> {
            graph: &'a Graph,
            next: usize,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            stack: Vec<usize>,
            on_stack: Vec<bool>,
            found: Vec<Vec<usize>>,
        }
        impl Walk<'_> {
            fn visit(&mut self, v: usize) {
                self.index[v] = Some(self.next);
                self.low[v] = self.next;
                self.next += 1;
                self.stack.push(v);
                self.on_stack[v] = true;
                for &w in self.graph.arrows[v].keys() {
                    match self.index[w] {
                        None => {
                            self.visit(w);
                            self.low[v] = self.low[v].min(self.low[w]);
                        }
                        Some(index) if self.on_stack[w] => {
                            self.low[v] = self.low[v].min(index);
                        }
                        Some(_) => {}
                    }
                }
                if Some(self.low[v]) == self.index[v] {
                    let mut set = Vec::new();
                    while let Some(w) = self.stack.pop() {
                        self.on_stack[w] = false;
                        set.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if set.len() > 1 {
                        set.sort_by(|a, b| {
                            self.graph.modules[*a]
                                .path
                                .cmp(&self.graph.modules[*b].path)
                        });
                        self.found.push(set);
                    }
                }
            }
        }
        let count = self.modules.len();
        let mut walk = Walk {
            graph: self,
            next: 0,
            index: vec![None; count],
            low: vec![0; count],
            stack: Vec::new(),
            on_stack: vec![false; count],
            found: Vec::new(),
        };
        for v in 0..count {
            if walk.index[v].is_none() {
                walk.visit(v);
            }
        }
        walk.found
    }

    /// A circle's files and the arrows between them, with their names.
    fn describe(&self, circle: &[usize], src: &Path) -> String {
        let name = |m: usize| {
            let file = &self.modules[m].file;
            file.strip_prefix(src).unwrap_or(file).display().to_string()
        };
        let mut out = String::new();
        let files: Vec<String> = circle.iter().map(|&m| name(m)).collect();
        let _ = writeln!(out, "  circle of {}: {}", circle.len(), files.join(", "));
        for &from in circle {
            for (to, names) in &self.arrows[from] {
                if circle.contains(to) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    let _ = writeln!(
                        out,
                        "    {} -> {}: {}",
                        name(from),
                        name(*to),
                        names.join(", ")
                    );
                }
            }
        }
        out
    }
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(())
}

/// The module path of a file below `src/`: `a/b.rs` and `a/b/mod.rs` are
/// `a::b`, `lib.rs` the root; binaries (`main.rs`, `bin/`) are crates of
/// their own and left out.
fn module_path(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") || parts == ["main.rs"] {
        return None;
    }
    let last = parts.pop()?;
    match last.strip_suffix(".rs")? {
        "mod" => {}
        "lib" if parts.is_empty() => {}
        stem => parts.push(stem.to_owned()),
    }
    Some(parts)
}

/// The `mod` declarations, `use` declarations and written paths of one
/// file's text.
fn parse_module(text: &str) -> Module {
    let code = strip_comments_and_literals(text);
    let (code, test_children) = strip_cfg_test(&code);
    let tokens = tokenize(&code);
    let mut module = Module {
        test_children,
        ..Module::default()
    };
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i].as_str() {
            "mod" if tokens.get(i + 2).is_some_and(|t| t == ";") => {
                module.children.insert(tokens[i + 1].clone());
                i += 3;
            }
            "use" if tokens.get(i + 1).is_some_and(|t| t != "<") => {
                let public = declared_public(&tokens[..i]);
                let end = tokens[i..]
                    .iter()
                    .position(|t| t == ";")
                    .map_or(tokens.len(), |p| i + p);
                let mut at = i + 1;
                parse_use_tree(
                    &tokens[..end],
                    &mut at,
                    Vec::new(),
                    public,
                    &mut module.uses,
                );
                i = end + 1;
            }
            _ => {
                let (path, next) = read_path(&tokens, i);
                if path.len() > 1 {
                    module.paths.push(path);
                }
                i = next.max(i + 1);
            }
        }
    }
    // Only paths that start inside this crate are kept; a child module is
    // known only once every `mod` is read.
    let children = module.children.clone();
    module.paths.retain(|path| {
        matches!(path[0].as_str(), "crate" | "self" | "super") || children.contains(&path[0])
    });
    module
}

/// Whether the tokens before a `use` end with a `pub` visibility: `pub`,
/// or `pub(crate)`, `pub(super)`, `pub(in path)`.
fn declared_public(before: &[String]) -> bool {
    match before.last().map(String::as_str) {
        Some("pub") => true,
        Some(")") => {
            let open = before.iter().rposition(|t| t == "(");
            open.is_some_and(|open| open > 0 && before[open - 1] == "pub")
        }
        _ => false,
    }
}

/// Reads `a::b::c` from `tokens[at]`; returns the segments and the index
/// after the path.
fn read_path(tokens: &[String], at: usize) -> (Vec<String>, usize) {
    let mut path = Vec::new();
    let mut i = at;
    while let Some(token) = tokens.get(i) {
        if !is_ident(token) {
            break;
        }
        path.push(token.clone());
        if tokens.get(i + 1).is_some_and(|t| t == "::")
            && tokens.get(i + 2).is_some_and(|t| is_ident(t))
        {
            i += 2;
        } else {
            i += 1;
            break;
        }
    }
    (path, i)
}

/// Parses one use tree (`a::b::{c, d as e, f::*}`) from `tokens[*at]`,
/// pushing each name it brings in.
fn parse_use_tree(
    tokens: &[String],
    at: &mut usize,
    mut prefix: Vec<String>,
    public: bool,
    out: &mut Vec<Use>,
) {
    if tokens.get(*at).is_some_and(|t| t == "::") {
        // `use ::name`: always another crate.
        return;
    }
    loop {
        match tokens.get(*at).map(String::as_str) {
            Some("{") => {
                *at += 1;
                while tokens.get(*at).is_some_and(|t| t != "}") {
                    parse_use_tree(tokens, at, prefix.clone(), public, out);
                    if tokens.get(*at).is_some_and(|t| t == ",") {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            Some("*") => {
                *at += 1;
                prefix.push("*".into());
                out.push(Use {
                    path: prefix,
                    name: "*".into(),
                    public,
                });
                return;
            }
            Some(segment) if is_ident(segment) => {
                *at += 1;
                if tokens.get(*at).is_some_and(|t| t == "::") {
                    *at += 1;
                    prefix.push(segment.to_owned());
                    continue;
                }
                let mut name = segment.to_owned();
                if segment != "self" {
                    prefix.push(segment.to_owned());
                } else if let Some(last) = prefix.last() {
                    name = last.clone();
                }
                if tokens.get(*at).is_some_and(|t| t == "as") {
                    name = tokens.get(*at + 1).cloned().unwrap_or_default();
                    *at += 2;
                }
                if name != "_" && !prefix.is_empty() {
                    out.push(Use {
                        path: prefix,
                        name,
                        public,
                    });
                }
                return;
            }
            _ => {
                // Not a use tree we understand: skip the token.
                *at += 1;
                return;
            }
        }
    }
}

fn is_ident(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::` and single punctuation characters.
fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let mut end = start + c.len_utf8();
            while let Some(&(at, next)) = chars.peek() {
                if next.is_alphanumeric() || next == '_' {
                    end = at + next.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &code[start..end];
            tokens.push(word.strip_prefix("r#").unwrap_or(word).to_owned());
        } else if c == ':' && chars.peek().is_some_and(|&(_, n)| n == ':') {
            chars.next();
            tokens.push("::".into());
        } else {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// `text` with comments and the contents of string and character literals
/// blanked (lifetimes kept), so that neither a doc link nor a string that
/// reads like a path draws an arrow.
fn strip_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
            && raw_string_hashes(&chars, i + 1).is_some()
        {
            let hashes = raw_string_hashes(&chars, i + 1).unwrap_or(0);
            i += 2 + hashes;
            while i < chars.len() {
                if chars[i] == '"' && (0..hashes).all(|k| chars.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a
            // lifetime (`'a`): only the first is closed by a quote soon.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string whose `r` is just before `at`, or
/// `None` when what follows is not a raw string's opening.
fn raw_string_hashes(chars: &[char], at: usize) -> Option<usize> {
    let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}

/// `code` without the items under `#[cfg(test)]`, and the names of the
/// test modules declared with `mod name;` there.
fn strip_cfg_test(code: &str) -> (String, BTreeSet<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut tests = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        // The item ends at its first `;` or at the brace closing its first
        // `{`, whichever comes first (attributes in between are skipped
        // with it).
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        let declared = tokenize(&item[..end]);
        if let [.., m, name, semi] = declared.as_slice()
            && m == "mod"
            && semi == ";"
        {
            tests.insert(name.clone());
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(text: &str) -> Vec<(String, String, bool)> {
        parse_module(text)
            .uses
            .into_iter()
            .map(|u| (u.path.join("::"), u.name, u.public))
            .collect()
    }

    #[test]
    fn use_trees_are_read_with_their_names_and_visibility() {
        let found = uses(
            "use crate::a::{B, c::{D as E, self}, f::*};\n\
             pub(crate) use super::g::H;\n\
             pub use self::child::I;\n\
             use std::sync::Arc;\n",
        );
        let expected = [
            ("crate::a::B", "B", false),
            ("crate::a::c::D", "E", false),
            ("crate::a::c", "c", false),
            ("crate::a::f::*", "*", false),
            ("super::g::H", "H", true),
            ("self::child::I", "I", true),
            ("std::sync::Arc", "Arc", false),
        ];
        let expected: Vec<_> = expected
            .iter()
            .map(|(p, n, v)| ((*p).to_owned(), (*n).to_owned(), *v))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn comments_literals_and_test_items_draw_no_arrows() {
        let module = parse_module(
            "//! see [`X`](crate::docs::X)\n\
             const S: &str = \"crate::strings::Y\";\n\
             const R: &str = r#\"use crate::raw::Z;\"#;\n\
             fn f<'a>(c: char) -> bool { c == '\"' || c == '\\'' }\n\
             #[cfg(test)]\nmod tests { use crate::tested::T; }\n\
             #[cfg(test)]\nmod more;\n\
             fn g() { crate::called::h(); }\n",
        );
        assert!(module.uses.is_empty(), "{:?}", module.uses);
        let paths: Vec<String> = module.paths.iter().map(|p| p.join("::")).collect();
        assert_eq!(paths, ["crate::called::h"]);
        assert!(module.test_children.contains("more"));
    }

    fn graph(files: &[(&str, &str)]) -> Graph {
        Graph::of(
            files
                .iter()
                .map(|(file, text)| {
                    let path = module_path(Path::new(file)).expect("a module file");
                    (path, PathBuf::from(file), (*text).to_owned())
                })
                .collect(),
        )
    }

    fn circle_files(graph: &Graph) -> Vec<Vec<String>> {
        graph
            .circles()
            .iter()
            .map(|c| {
                c.iter()
                    .map(|&m| graph.modules[m].file.display().to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_circle_through_three_files_is_found_and_a_facade_is_not_one() {
        let found = graph(&[
            (
                "lib.rs",
                "mod a; mod b; mod c; mod d;\npub use a::A; pub use b::B;",
            ),
            // Taken through the root's re-export: the arrow reaches b.rs.
            ("a.rs", "use crate::B; pub struct A;"),
            ("b.rs", "pub struct B; fn f() { crate::c::g(); }"),
            ("c.rs", "use super::a::A; pub fn g() {}"),
            ("d.rs", "use crate::A;"),
        ]);
        assert_eq!(circle_files(&found), [["a.rs", "b.rs", "c.rs"]]);
    }

    #[test]
    fn a_parent_and_child_that_use_each_other_are_a_circle() {
        let found = graph(&[
            ("lib.rs", "mod run;"),
            (
                "run/mod.rs",
                "mod fast;\npub(crate) use fast::Fast;\npub struct Plan;",
            ),
            ("run/fast.rs", "use super::Plan; pub struct Fast;"),
        ]);
        assert!(
            circle_files(&found).is_empty(),
            "a re-export is not a dependency"
        );
        let found = graph(&[
            ("lib.rs", "mod run;"),
            (
                "run/mod.rs",
                "mod fast;\npub struct Plan;\nfn go() { fast::now(); }",
            ),
            ("run/fast.rs", "use super::Plan; pub fn now() {}"),
        ]);
        assert_eq!(circle_files(&found), [["run/mod.rs", "run/fast.rs"]]);
    }
}
