//! rmcp, the official Rust SDK, measured beside ours: an echo server with
//! the same tool (`echo`, returning its `message` as text), written here as
//! a tiny Cargo project that `cargo xtask bench` lays out in a scratch
//! directory under target/ and builds with the same `production` settings
//! (release, fat LTO, one codegen unit). rmcp is an ordinary crates.io
//! dependency of that scratch project; nothing of it is in this repository.
//!
//! The server is what rmcp's own documentation shows for a tools-only
//! server (`#[tool_router(server_handler)]`), served by
//! `StreamableHttpService` with its default config on hyper's http1
//! server with `TCP_NODELAY`, as ours and the raw hyper baseline are, on a
//! multi-thread runtime. Both eras: 2025-11-25 requests get a session each
//! (rmcp's default `legacy_session_mode`), 2026-07-28 ones are served
//! statelessly.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rmcp release measured: the newest on crates.io when these rows were
/// written (MSRV 1.88), pinned so a run is reproducible.
macro_rules! rmcp_version {
    () => {
        "3.11.0"
    };
}

/// How the rows name it.
pub(super) const SERVER: &str = concat!("rmcp ", rmcp_version!());

/// The scratch project's package and binary.
const BINARY: &str = "rmcp-bench-echo-server";

const CARGO_TOML: &str = concat!(
    r#"# Written by `cargo xtask bench` (xtask/src/bench/rmcp.rs); do not edit.
[package]
name = "rmcp-bench-echo-server"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "="#,
    rmcp_version!(),
    r#"", default-features = false, features = ["server", "macros", "transport-streamable-http-server"] }
tokio = { version = "1", features = ["rt-multi-thread", "net", "macros"] }
hyper = { version = "1", features = ["server", "http1"] }
hyper-util = { version = "0.1", features = ["tokio"] }
tower-service = "0.3"
serde = { version = "1", features = ["derive"] }
schemars = "1"

# The workspace's profiles, so rmcp is built as ours is.
[profile.release]
debug = "line-tables-only"

[profile.production]
inherits = "release"
lto = "fat"
codegen-units = 1

# Its own workspace, not a member of the one around target/.
[workspace]
"#
);

const MAIN_RS: &str = r#"//! Written by `cargo xtask bench` (xtask/src/bench/rmcp.rs); do not edit.
//! rmcp's echo server: prints `127.0.0.1:PORT`, then serves streamable HTTP.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

#[derive(Clone)]
struct Echo;

#[tool_router(server_handler)]
impl Echo {
    #[tool(description = "Returns its message")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let service = StreamableHttpService::new(
            || Ok(Echo),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("{}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let service = service.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    tower_service::Service::call(&mut service.clone(), request)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
"#;

/// Lays out the scratch project in `dir` and builds it with `profile` (a
/// named one, such as `production`; its own target directory inside
/// `dir`); returns the server's path.
/// Files are rewritten only when their text changed, so a second run
/// rebuilds nothing.
pub(super) fn build(cargo: &OsStr, dir: &Path, profile: &str) -> Result<PathBuf, String> {
    write_if_changed(&dir.join("Cargo.toml"), CARGO_TOML)?;
    write_if_changed(&dir.join("src/main.rs"), MAIN_RS)?;
    let target = dir.join("target");
    eprintln!(
        "building {SERVER}'s echo server ({profile}) in {}",
        dir.display()
    );
    let status = Command::new(cargo)
        .current_dir(dir)
        .args(["build", "--profile", profile, "--bin", BINARY])
        .arg("--target-dir")
        .arg(&target)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building {SERVER}'s echo server in {} failed ({status}); `--skip-rmcp` measures without it",
            dir.display()
        ));
    }
    Ok(target.join(profile).join(BINARY))
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_project_pins_the_version_the_rows_name() {
        let pinned = format!(r#"rmcp = {{ version = "={}""#, rmcp_version!());
        assert!(CARGO_TOML.contains(&pinned), "{CARGO_TOML}");
        assert!(SERVER.ends_with(rmcp_version!()));
        assert!(CARGO_TOML.contains(&format!(r#"name = "{BINARY}""#)));
        // The echo tool the load generator calls.
        assert!(MAIN_RS.contains("fn echo("));
    }

    #[test]
    fn unchanged_files_are_not_rewritten() {
        let dir = std::env::temp_dir().join(format!("xtask-rmcp-{}", std::process::id()));
        let path = dir.join("src/main.rs");
        write_if_changed(&path, "one").expect("written");
        // An hour back: a rewrite right after the first write could land in
        // the same tick of the file system's clock and leave the time as it
        // was, so only a time that no write now can give tells.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(old))
            .expect("mtime set");
        write_if_changed(&path, "one").expect("kept");
        let second = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(second, old, "an unchanged file was rewritten");
        write_if_changed(&path, "two").expect("rewritten");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "two");
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
