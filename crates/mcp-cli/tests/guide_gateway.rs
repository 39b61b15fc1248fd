//! The commands of the guide's gateway chapter (docs/guide/gateway.md), run
//! as written: each `sh` block's lines, in order, with three substitutions
//! only: `mcp` is this build's binary, the `cargo run` of a demo program is
//! the program `cargo test --workspace` built (the README's test command
//! builds every binary and example), and the chapter's fixed ports are
//! free ones (the config file it names is read with the same ports put
//! in). A command that ends in `&`, and `mcp gateway ... --listen`, start
//! servers that run to the end; every other command must exit 0, and the
//! outputs the chapter promises (a sum, prefixed names) must be there.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CHAPTER: &str = include_str!("../../../docs/guide/gateway.md");
const CONFIG: &str = include_str!("../../../examples/gateway/servers.json");

/// How long a server the chapter starts may take to answer `/readyz`
/// (the config's upstreams are built binaries, connected on 127.0.0.1).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The program `cargo test --workspace` built beside this test's `mcp`.
fn built(relative: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_mcp"))
        .parent()
        .expect("the target directory");
    let path = dir.join(relative);
    assert!(
        path.is_file(),
        "{} is missing: the README's test command (cargo test --workspace) builds it; \
         or build it alone with cargo build -p mcp-examples --bins --examples",
        path.display()
    );
    path
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The CLI's own rule for `--stdio` command lines (shell words, quotes and
/// backslashes, no expansion), shared with this test: `mcp` is a binary
/// crate, so its source file is compiled in here.
#[path = "../src/split.rs"]
mod split;

/// Splits a command line of the chapter into words.
fn words(line: &str) -> Vec<String> {
    split::split_command(line).unwrap_or_else(|e| panic!("`{line}`: {e}"))
}

/// The lines of every `sh` block, in order.
fn commands(chapter: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in chapter.lines() {
        match (inside, line.trim()) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, command) if !command.is_empty() => lines.push(command),
            _ => {}
        }
    }
    lines
}

/// What the chapter's text is replaced with.
struct Substitutions {
    pairs: Vec<(String, String)>,
    /// This build's `mcp`.
    mcp: String,
}

impl Substitutions {
    fn new(config_file: &Path, ports: &HashMap<&str, u16>) -> Self {
        let mcp = env!("CARGO_BIN_EXE_mcp").to_owned();
        let demo = built("mcp-demo-server").display().to_string();
        let everything = built("examples/everything-server").display().to_string();
        let mut pairs = vec![
            (
                "cargo run -q -p mcp-examples --bin mcp-demo-server".to_owned(),
                demo.clone(),
            ),
            (
                "cargo run -q -p mcp-examples --example everything-server --".to_owned(),
                everything,
            ),
            // The same command as the config file writes it.
            (
                r#""command": "cargo", "args": ["run", "-q", "-p", "mcp-examples", "--bin", "mcp-demo-server"]"#
                    .to_owned(),
                format!(r#""command": {demo:?}, "args": []"#),
            ),
            (
                "examples/gateway/servers.json".to_owned(),
                config_file.display().to_string(),
            ),
        ];
        for (written, port) in ports {
            pairs.push(((*written).to_owned(), format!("127.0.0.1:{port}")));
            let bare = written.rsplit(':').next().expect("a port");
            pairs.push((format!("--port {bare}"), format!("--port {port}")));
        }
        // `mcp` as a program: a quoted command's first word (the first
        // word of a line is `apply`'s).
        pairs.push(("\"mcp ".to_owned(), format!("\"{mcp} ")));
        Self { pairs, mcp }
    }

    fn apply(&self, line: &str) -> String {
        let mut line = match line.strip_prefix("mcp ") {
            Some(rest) => format!("{} {rest}", self.mcp),
            None => line.to_owned(),
        };
        for (from, to) in &self.pairs {
            line = line.replace(from, to);
        }
        line
    }
}

/// `GET url` over a plain TCP connection: the status code, or `None`
/// while nothing answers.
fn get_status(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split(' ').nth(1)?.parse().ok()
}

/// Waits until `base`'s `/readyz` answers 200.
fn wait_ready(base: &str) {
    let readyz = format!("{base}/readyz");
    let deadline = Instant::now() + READY_WITHIN;
    while get_status(&readyz) != Some(200) {
        assert!(
            Instant::now() < deadline,
            "{readyz} did not answer 200 within {READY_WITHIN:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until something accepts connections at `addr`.
fn wait_listening(addr: &str) {
    let deadline = Instant::now() + READY_WITHIN;
    while TcpStream::connect(addr).is_err() {
        assert!(
            Instant::now() < deadline,
            "nothing listens at {addr} after {READY_WITHIN:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The servers the chapter started, stopped when the test ends, however
/// it ends.
#[derive(Default)]
struct Started(Vec<Child>);

impl Drop for Started {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // SIGTERM first: the gateway stops its upstreams on it.
            let Ok(pid) = libc::pid_t::try_from(child.id()) else {
                continue;
            };
            // SAFETY: kill(2) on a child this test started and has not reaped.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(pid, libc::SIGTERM)
            };
        }
        for child in &mut self.0 {
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn run(words: &[String]) -> Output {
    Command::new(&words[0])
        .args(&words[1..])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {words:?}: {e}"))
}

/// The NAME column of `mcp tools list`'s table.
fn tool_names(stdout: &str) -> Vec<&str> {
    let mut lines = stdout.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("NAME"), "not a tools table: {stdout}");
    lines.filter_map(|l| l.split_whitespace().next()).collect()
}

#[test]
fn the_gateway_chapter_commands_work_as_written() {
    let written_ports = [
        "127.0.0.1:8080",
        "127.0.0.1:8081",
        "127.0.0.1:8082",
        "127.0.0.1:3001",
    ];
    let ports: HashMap<&str, u16> = written_ports.iter().map(|p| (*p, free_port())).collect();
    let dir = std::env::temp_dir().join(format!("mcp-guide-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let config_file = dir.join("servers.json");
    let subs = Substitutions::new(&config_file, &ports);
    // The config as the chapter shows it, its programs and ports put in.
    std::fs::write(&config_file, subs.apply(CONFIG)).expect("the config written");
    let mut started = Started::default();
    let lines = commands(CHAPTER);
    assert!(lines.len() >= 8, "the chapter's sh blocks: {lines:#?}");
    for line in lines {
        let applied = subs.apply(line);
        let background = applied.ends_with(" &");
        let words = words(applied.trim_end_matches(" &"));
        if words[0] == "curl" {
            let url = words.last().expect("a URL");
            assert_eq!(get_status(url), Some(200), "{line}");
            continue;
        }
        if background || (line.starts_with("mcp gateway") && line.contains("--listen")) {
            let child = Command::new(&words[0])
                .args(&words[1..])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {line}: {e}"));
            started.0.push(child);
            let listen = words
                .iter()
                .position(|w| w == "--listen")
                .map(|i| words[i + 1].clone());
            match listen {
                Some(addr) => wait_ready(&format!("http://{addr}")),
                None => {
                    let port = words
                        .iter()
                        .position(|w| w == "--port")
                        .map(|i| words[i + 1].clone())
                        .expect("a background server names its port");
                    wait_listening(&format!("127.0.0.1:{port}"));
                }
            }
            continue;
        }
        let output = run(&words);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "`{line}` failed: {:?}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        // What the chapter says each one shows.
        if line.contains("tools call add a=2 b=40") {
            assert!(stdout.contains("42"), "{line}: {stdout}");
            let sum: serde_json::Value = serde_json::from_str(stdout.trim())
                .unwrap_or_else(|e| panic!("{line}: not the tool's JSON ({e}): {stdout}"));
            assert_eq!(sum, serde_json::json!({"sum": 42}), "{line}");
        } else if line.contains(&format!("{}/mcp tools list", "127.0.0.1:8081")) {
            for name in ["demo_add", "everything_test_simple_text"] {
                assert!(stdout.contains(name), "{line}: {name} missing: {stdout}");
            }
            // Every upstream's tools prefixed with its name, each listed.
            let names = tool_names(&stdout);
            assert!(
                names.contains(&"demo_add") && names.contains(&"everything_test_simple_text"),
                "{line}: {names:?}"
            );
            assert!(
                names
                    .iter()
                    .all(|n| n.starts_with("demo_") || n.starts_with("everything_")),
                "{line}: an unprefixed name: {names:?}"
            );
        } else if line.contains("tools list") {
            assert!(stdout.contains("add"), "{line}: {stdout}");
            // One upstream: its names as they are, not prefixed.
            let names = tool_names(&stdout);
            assert!(names.contains(&"add"), "{line}: {names:?}");
            assert!(
                !names.iter().any(|n| n.starts_with("server_")),
                "{line}: a prefixed name: {names:?}"
            );
        }
    }
    drop(started);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_lines_split_as_the_chapter_writes_them() {
    assert_eq!(
        words(r#"mcp --stdio "a b  c" tools list"#),
        ["mcp", "--stdio", "a b  c", "tools", "list"]
    );
    assert_eq!(words(r#"x """#), ["x", ""]);
}
