//! What the checks share: running the `mcp` binary, the servers it talks
//! to (this test binary itself over stdio, the same server in-process over
//! HTTP), and temporary directories.

#![allow(dead_code, unreachable_pub)]

pub mod auth;
pub mod hostile;
pub mod misbehaving;
pub mod misbehaving_http;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use mcp_server::{Server, ServerBuilder};
use mcp_types::{CompleteRequestParams, ContentBlock, EmbeddedResource, TextResourceContents};
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

/// One check: an async fn run as a task of its own.
pub type Check = fn() -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// The list of checks of a test binary, by name.
macro_rules! checks {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), || Box::pin($name()) as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>)),*]
    };
}
pub(crate) use checks;

/// The `main` of a test binary of checks (`harness = false`): serves when
/// started in a role (`--mcp-test-role=...`); otherwise runs every check
/// whose name contains one of the arguments (all without arguments) and
/// fails with the names of those that failed.
pub fn main(checks: &[(&str, Check)]) -> ExitCode {
    if let Some(code) = serve_role() {
        return code;
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if std::env::args().any(|a| a == "--list") {
        for (name, _) in checks {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut failed = Vec::new();
    let mut passed = 0;
    for (name, check) in checks {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        eprintln!("check {name} ...");
        // Each check runs as a task: a panic fails it, not the run.
        let outcome = runtime.block_on(runtime.spawn(check()));
        match outcome {
            Ok(()) => {
                passed += 1;
                eprintln!("check {name} ... ok");
            }
            Err(_) => {
                eprintln!("check {name} ... FAILED");
                failed.push(*name);
            }
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("failed: {}", failed.join(", "));
        ExitCode::FAILURE
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
            || async move {
                let embedded = TextResourceContents::new("file:///note", "a note");
                vec![
                    ContentBlock::image(PNG, "image/png"),
                    ContentBlock::from(EmbeddedResource::new(embedded)),
                ]
            },
        )
        .completion(|params: CompleteRequestParams| async move {
            let candidates: &[&str] = match params.argument.name.as_str() {
                "language" => &["python", "ruby", "rust"],
                "id" => &["ada", "alan", "grace"],
                _ => &[],
            };
            candidates
                .iter()
                .filter(|c| c.starts_with(&params.argument.value))
                .map(|c| (*c).to_owned())
                .collect::<Vec<_>>()
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
    if let Some(way) = role.strip_prefix("misbehaving:") {
        misbehaving::serve(way);
        return Some(ExitCode::SUCCESS);
    }
    // `demo-stdio-threads` serves on worker threads, as a server's
    // `#[tokio::main]` does: what it answers must not depend on how its
    // tasks are scheduled.
    let runtime = if role == "demo-stdio-threads" {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
    .expect("a runtime");
    runtime.block_on(async move {
        let server = test_server();
        match role.as_str() {
            "demo-stdio-threads" | "demo-stdio" => server
                .serve_stdio(mcp_server::shutdown_signal())
                .await
                .expect("served"),
            "watch-stdio" => watch_stdio(&server).await,
            other => match other.strip_prefix("demo-http:") {
                // The demo over HTTP on a given port until killed (its
                // sessions in its memory only).
                Some(address) => {
                    let listener = tokio::net::TcpListener::bind(address)
                        .await
                        .expect("the port is free");
                    let config = mcp_transport::http::HttpServerConfig::new();
                    server
                        .serve_http(listener, config, std::future::pending())
                        .await
                        .expect("served");
                }
                None => panic!("unknown role {other}"),
            },
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

/// The command line that runs this test binary in `role`.
pub fn role_command(role: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary");
    format!("'{}' {ROLE_FLAG}{role}", exe.display())
}

/// This test binary and the argument that gives it `role`, to spawn.
pub fn role_program(role: &str) -> (PathBuf, String) {
    let exe = std::env::current_exe().expect("the test binary");
    (exe, format!("{ROLE_FLAG}{role}"))
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
        let command = role_command(role);
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

    fn std_command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(MCP);
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
            .stderr(Stdio::piped());
        command
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::from(self.std_command(args));
        command.kill_on_drop(true);
        command
    }

    /// Runs to the end; with the peak resident memory of the run in bytes
    /// (the kernel's count for the process, read when it is reaped).
    pub async fn run_measured(&self, args: &[&str]) -> (Ran, u64) {
        let mut command = self.std_command(args);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let pid_slot = std::sync::Arc::new(std::sync::Mutex::new(None));
        let pid_seen = pid_slot.clone();
        std::thread::spawn(move || {
            // Reaped by `wait4` below, which also reads its peak memory.
            #[allow(clippy::zombie_processes)]
            let mut child = command.spawn().expect("mcp runs");
            let pid = i32::try_from(child.id()).expect("a pid");
            *pid_seen.lock().expect("lock") = Some(pid);
            let mut stdout = child.stdout.take().expect("stdout");
            let mut stderr = child.stderr.take().expect("stderr");
            let err = std::thread::spawn(move || {
                let mut text = Vec::new();
                let _ = std::io::Read::read_to_end(&mut stderr, &mut text);
                text
            });
            let mut out = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
            let err = err.join().unwrap_or_default();
            let (status, peak) = reap_measured(pid);
            let ran = Ran {
                code: status,
                stdout: String::from_utf8_lossy(&out).into_owned(),
                stderr: String::from_utf8_lossy(&err).into_owned(),
            };
            let _ = tx.send((ran, peak));
        });
        match tokio::time::timeout(RUN_LIMIT, rx).await {
            Ok(Ok(done)) => done,
            _ => {
                if let Some(pid) = *pid_slot.lock().expect("lock") {
                    kill(pid);
                }
                panic!("mcp {args:?} did not finish");
            }
        }
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

    /// Sends the run SIGTERM (what stops a served `mcp gateway`).
    pub fn terminate(&self) {
        let pid = self.child.id().and_then(|pid| i32::try_from(pid).ok());
        let pid = pid.expect("mcp is running");
        // SAFETY: kill(2) on the child this run started, not yet reaped.
        #[allow(unsafe_code)]
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM sent");
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

    /// The endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(RUN_LIMIT, self.task).await;
    }
}

/// Waits for the child `pid` and reaps it: its exit code and its peak
/// resident memory in bytes.
#[allow(unsafe_code)]
fn reap_measured(pid: i32) -> (i32, u64) {
    let mut status = 0;
    // SAFETY: plain out-parameters owned by this frame; `pid` is our child,
    // which std's `Child` has not waited for (it is dropped unwaited).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 reaped the child");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // Linux counts `ru_maxrss` in KiB.
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    (code, peak)
}

/// Kills the process `pid`, one of ours.
#[allow(unsafe_code)]
fn kill(pid: i32) {
    // SAFETY: kill takes plain integers and touches no memory.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
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
