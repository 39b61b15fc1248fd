//! What the checks share: running the `mcp` binary, the servers it talks
//! to (this test binary itself over stdio, the same server in-process over
//! HTTP), and temporary directories.

#![allow(dead_code, unreachable_pub)]

pub mod auth;
pub mod hostile;

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use mcp_server::{Context, NoArguments, Server, ServerBuilder, ToolError};
use mcp_types::{Completion, ContentBlock, EmbeddedResource, TextResourceContents};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::process::{Child, ChildStderr};

/// The binary under test.
pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");
/// How long one run of the binary may take.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// The argument that makes this test binary a stdio server.
const ROLE_FLAG: &str = "--mcp-test-role=";

/// A 1x1 PNG, base64 (70 bytes decoded).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The era a check asks for with `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Stateless,
    Handshake,
}

impl Era {
    pub fn name(self) -> &'static str {
        match self {
            Era::Stateless => "stateless",
            Era::Handshake => "handshake",
        }
    }
}

/// The demo server the checks talk to: the project's demo
/// (`mcp_examples::demo_builder`) with completions and list changes.
pub fn test_server() -> Server {
    fn builder() -> ServerBuilder {
        mcp_examples::demo_builder().list_changed(true)
    }
    builder()
        .tool(
            "picture",
            "Returns an image and an embedded resource",
            |_: NoArguments, _cx: Context| async move {
                let embedded = TextResourceContents::new("file:///note", "a note");
                vec![
                    ContentBlock::image(PNG, "image/png"),
                    ContentBlock::from(EmbeddedResource::new(embedded)),
                ]
            },
        )
        .completion(|params, _cx: Context| async move {
            let candidates: &[&str] = match params.argument.name.as_str() {
                "language" => &["python", "ruby", "rust"],
                "id" => &["ada", "alan", "grace"],
                _ => &[],
            };
            let values = candidates
                .iter()
                .filter(|c| c.starts_with(&params.argument.value))
                .map(|c| (*c).to_owned())
                .collect();
            Ok::<_, ToolError>(Completion::new(values))
        })
        .build()
        .expect("the test server's registrations are valid")
}

/// When this binary was started as a server (`--mcp-test-role=...`),
/// serves and returns its exit code.
pub fn serve_role() -> Option<ExitCode> {
    let role = std::env::args().find_map(|a| a.strip_prefix(ROLE_FLAG).map(str::to_owned))?;
    if role == "hostile-stdio" {
        hostile::serve();
        return Some(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let server = test_server();
        match role.as_str() {
            "demo-stdio" => server.serve_stdio().await.expect("served"),
            "watch-stdio" => watch_stdio(&server).await,
            other => panic!("unknown role {other}"),
        }
    });
    Some(ExitCode::SUCCESS)
}

/// Once the client subscribes to `file:///readme`: that resource's update,
/// then a tool list change.
async fn watch_stdio(server: &Server) {
    let connection = server.serve(mcp_transport::stdio::stdio_server());
    let session = connection.session().clone();
    let announce = async {
        let deadline = tokio::time::Instant::now() + RUN_LIMIT;
        while !session.is_subscribed("file:///readme") {
            if tokio::time::Instant::now() > deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = session.send_resource_updated("file:///readme").await;
        let _ = session.send_tool_list_changed().await;
        std::future::pending::<()>().await;
    };
    tokio::select! {
        () = connection.wait() => {}
        () = announce => {}
    }
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// How to run the binary: the server flags, the era, the environment.
#[derive(Clone)]
pub struct Mcp {
    args: Vec<String>,
    config_dir: PathBuf,
}

impl Mcp {
    /// No server flags at all.
    pub fn bare() -> Self {
        Self {
            args: Vec::new(),
            config_dir: std::env::temp_dir().join(format!("mcp-cli-test-{}", std::process::id())),
        }
    }

    /// This binary as the stdio demo server.
    pub fn stdio(era: Era) -> Self {
        Self::stdio_role("demo-stdio", era)
    }

    /// This binary as the stdio server of `role`.
    pub fn stdio_role(role: &str, era: Era) -> Self {
        let mut mcp = Self::stdio_auto(role);
        mcp.args.extend(["--era".into(), era.name().into()]);
        mcp
    }

    /// This binary as the stdio server of `role`, without `--era`.
    pub fn stdio_auto(role: &str) -> Self {
        let exe = std::env::current_exe().expect("the test binary");
        let command = format!("'{}' {ROLE_FLAG}{role}", exe.display());
        let mut mcp = Self::bare();
        mcp.args = vec!["--stdio".into(), command];
        mcp
    }

    /// A streamable HTTP endpoint.
    pub fn url(url: &str, era: Era) -> Self {
        let mut mcp = Self::bare();
        mcp.args = vec![
            "--url".into(),
            url.into(),
            "--era".into(),
            era.name().into(),
        ];
        mcp
    }

    /// Keeps sign-ins in `dir`.
    pub fn with_config_dir(mut self, dir: &Path) -> Self {
        self.config_dir = dir.to_owned();
        self
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(MCP);
        command
            .args(&self.args)
            .args(args)
            .env("MCP_CLI_CONFIG_DIR", &self.config_dir)
            // A browser must never start from a test.
            .env("BROWSER", "/nonexistent/browser")
            // Colours (escape sequences of the CLI's own) only on a
            // terminal, as without the override: the checks read escapes.
            .env_remove("CLICOLOR_FORCE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs to the end.
    pub async fn run(&self, args: &[&str]) -> Ran {
        let run = self.command(args).output();
        let output = tokio::time::timeout(RUN_LIMIT, run)
            .await
            .unwrap_or_else(|_| panic!("mcp {args:?} did not finish"))
            .expect("mcp runs");
        Ran {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs and expects success; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let ran = self.run(args).await;
        assert_eq!(ran.code, 0, "mcp {args:?}: {ran:?}");
        ran.stdout
    }

    /// Runs with `--json` and expects success; returns the parsed output.
    pub async fn json(&self, args: &[&str]) -> Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let stdout = self.ok(&with_json).await;
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
    }

    /// Starts a run to watch its stderr while it goes.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut child = self.command(args).spawn().expect("mcp starts");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        Running {
            child,
            stderr,
            seen: String::new(),
        }
    }
}

/// A run in progress.
pub struct Running {
    child: Child,
    stderr: BufReader<ChildStderr>,
    seen: String,
}

impl Running {
    /// Reads stderr up to the first line containing `needle`; returns it.
    pub async fn wait_for_stderr(&mut self, needle: &str) -> String {
        let read = async {
            loop {
                let mut line = String::new();
                let n = self.stderr.read_line(&mut line).await.expect("stderr");
                assert!(n > 0, "mcp ended before printing {needle:?}: {}", self.seen);
                self.seen.push_str(&line);
                if line.contains(needle) {
                    return line;
                }
            }
        };
        tokio::time::timeout(RUN_LIMIT, read)
            .await
            .unwrap_or_else(|_| panic!("mcp never printed {needle:?}"))
    }

    /// Waits for the end.
    pub async fn finish(mut self) -> Ran {
        let mut stdout = String::new();
        let mut rest = String::new();
        let mut out = self.child.stdout.take().expect("stdout");
        let finish = async {
            let (a, b) = tokio::join!(
                out.read_to_string(&mut stdout),
                self.stderr.read_to_string(&mut rest)
            );
            a.expect("stdout");
            b.expect("stderr");
            self.child.wait().await.expect("exit status")
        };
        let status = tokio::time::timeout(RUN_LIMIT, finish)
            .await
            .expect("mcp finished");
        Ran {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr: format!("{}{rest}", self.seen),
        }
    }
}

/// The test server in-process on a loopback port.
pub struct Served {
    url: String,
    pub changes: mcp_server::ListChanges,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    pub async fn http() -> Self {
        let server = test_server();
        let changes = server.list_changes();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let config = mcp_transport::http::HttpServerConfig::new();
            let _ = server
                .serve_http(listener, config, async {
                    let _ = stopped.await;
                })
                .await;
        });
        Self {
            url,
            changes,
            stop,
            task,
        }
    }

    pub fn mcp(&self, era: Era) -> Mcp {
        Mcp::url(&self.url, era)
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(RUN_LIMIT, self.task).await;
    }
}

/// A port with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
