//! `cargo xtask guide`: each chapter of the guide (`docs/guide/*.md`) built
//! with the dependency list it shows, and nothing else.
//!
//! `cargo test --workspace` already runs every chapter's Rust blocks as doc
//! tests of `mcp-examples` (examples/guide.rs), but with that crate's
//! dependencies, which are the union of every chapter's: a block needing a
//! crate or a feature its chapter does not name still passes there, and a
//! reader who copies the chapter's list gets an error. Here each chapter
//! becomes a scratch crate under `target/guide-check/` whose manifest is
//! the chapter's first `toml` block (the SDK's crates pointed at this
//! workspace), whose docs are the chapter, and whose doc tests are run. A
//! chapter with Rust blocks and no `toml` block is refused: every chapter
//! says what it needs. The scratch crates share one target directory and
//! this workspace's `Cargo.lock`, so the versions are the ones tested.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Builds and runs each chapter's blocks with its own dependency list;
/// `only` limits the run to chapters whose file name holds it.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let only = match args {
        [] => None,
        [flag, text] if flag == "--only" => Some(text.as_str()),
        _ => return Err("usage: cargo xtask guide [--only TEXT]".into()),
    };
    let guide = root.join("docs/guide");
    let mut chapters: Vec<_> = fs::read_dir(&guide)
        .map_err(|e| format!("cannot list {}: {e}", guide.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .filter(|path| {
            only.is_none_or(|text| {
                path.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(text))
            })
        })
        .collect();
    chapters.sort();
    let scratch = root.join("target/guide-check");
    let mut failed = Vec::new();
    let mut checked = 0;
    for chapter in &chapters {
        let name = chapter
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = fs::read_to_string(chapter)
            .map_err(|e| format!("cannot read {}: {e}", chapter.display()))?;
        if !text.contains("```rust") {
            continue;
        }
        let Some(dependencies) = first_toml_block(&text) else {
            failed.push(format!(
                "{name}: Rust blocks but no ```toml block listing their dependencies"
            ));
            continue;
        };
        let crate_dir = scratch.join(&name);
        let manifest = manifest(&name, dependencies, root)?;
        write(&crate_dir.join("Cargo.toml"), &manifest)?;
        let chapter_path = chapter.canonicalize().map_err(|e| e.to_string())?;
        write(
            &crate_dir.join("src/lib.rs"),
            &format!(
                "//! Written by `cargo xtask guide` (xtask/src/guide.rs); do not edit.\n\
                 #![doc = include_str!({:?})]\n",
                chapter_path.display().to_string()
            ),
        )?;
        fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock"))
            .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
        eprintln!("guide: {name}");
        checked += 1;
        let status = Command::new(env!("CARGO"))
            .args(["test", "--doc", "--quiet", "--manifest-path"])
            .arg(crate_dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", scratch.join("target"))
            // Nothing here is debugged: without debug info a third less
            // to build and link.
            .env("CARGO_PROFILE_DEV_DEBUG", "0")
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            failed.push(format!(
                "{name}: its blocks do not build or pass with the dependencies it lists"
            ));
        }
    }
    if !failed.is_empty() {
        Err(failed.join("\n"))
    } else if checked == 0 {
        // A run that built nothing proves nothing: a moved guide or an
        // `--only` that names no chapter must not pass as green.
        Err(format!(
            "no chapter with Rust blocks found in {}{}",
            guide.display(),
            only.map(|text| format!(" whose file name holds `{text}`"))
                .unwrap_or_default()
        ))
    } else {
        eprintln!("guide: {checked} chapters built and run");
        Ok(())
    }
}

/// The body of the first ```toml block of `text`.
fn first_toml_block(text: &str) -> Option<&str> {
    let start = text.find("```toml\n")? + "```toml\n".len();
    let end = text[start..].find("```")?;
    Some(&text[start..start + end])
}

/// The scratch crate's manifest: `dependencies` as the chapter shows them,
/// each of the SDK's crates (`mcp-*`) also given its path here, so the
/// workspace's code is built and not a release from a registry.
fn manifest(name: &str, dependencies: &str, root: &Path) -> Result<String, String> {
    let mut manifest = format!(
        "# Written by `cargo xtask guide` (xtask/src/guide.rs); do not edit.\n\
         [package]\n\
         name = \"guide-{name}\"\n\
         version = \"0.0.0\"\n\
         edition = \"2024\"\n\
         publish = false\n\n"
    );
    for line in dependencies.lines() {
        let Some((key, value)) = line.split_once(" = ") else {
            manifest.push_str(line);
            manifest.push('\n');
            continue;
        };
        let key = key.trim();
        if !key.starts_with("mcp-") {
            manifest.push_str(line);
            manifest.push('\n');
            continue;
        }
        let path = root.join("crates").join(key);
        if !path.join("Cargo.toml").is_file() {
            return Err(format!("{name}: `{key}` is no crate of this workspace"));
        }
        let path = format!("path = {:?}", path.display().to_string());
        let value = value.trim();
        let value = match value.strip_prefix('{') {
            Some(table) => format!("{{ {path},{table}"),
            None => format!("{{ {path}, version = {value} }}"),
        };
        let _ = writeln!(manifest, "{key} = {value}");
    }
    manifest
        .push_str("\n# Its own workspace, not a member of the one around target/.\n[workspace]\n");
    Ok(manifest)
}

fn write(path: &Path, contents: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_crates_are_pointed_at_the_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("root");
        let listed = "[dependencies]\n\
                      mcp-server = { version = \"0.1\", features = [\"http\"] }\n\
                      mcp-testing = \"0.1\"\n\
                      tokio = { version = \"1\", features = [\"macros\"] }\n";
        let manifest = manifest("http", listed, root).expect("a manifest");
        let server = root.join("crates/mcp-server").display().to_string();
        assert!(
            manifest.contains(&format!(
                "mcp-server = {{ path = {server:?}, version = \"0.1\", features = [\"http\"] }}"
            )),
            "{manifest}"
        );
        assert!(manifest.contains("mcp-testing = { path = "), "{manifest}");
        assert!(manifest.contains("version = \"0.1\" }"), "{manifest}");
        assert!(manifest.contains("tokio = { version = \"1\", features = [\"macros\"] }"));
        assert!(manifest.ends_with("[workspace]\n"));
    }

    #[test]
    fn a_crate_not_in_the_workspace_is_refused() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("root");
        let refused = manifest("x", "mcp-nothing = \"0.1\"\n", root).expect_err("unknown");
        assert!(refused.contains("mcp-nothing"), "{refused}");
    }

    #[test]
    fn the_first_toml_block_is_read() {
        let text = "intro\n```toml\n[dependencies]\na = \"1\"\n```\n```toml\nb\n```\n";
        assert_eq!(first_toml_block(text), Some("[dependencies]\na = \"1\"\n"));
        assert_eq!(first_toml_block("```rust\n```\n"), None);
    }
}
