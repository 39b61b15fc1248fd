//! stdio: spawn a server as a child process and talk over its pipes, or serve
//! on this process's own stdin and stdout.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::framing::{DEFAULT_MAX_LINE, LineTransport};

/// The transport to a child process: its stdout and stdin.
pub type ChildTransport = LineTransport<ChildStdout, ChildStdin>;

/// The transport of a stdio server: this process's stdin and stdout.
pub type StdioServerTransport = LineTransport<Stdin, tokio::io::Stdout>;

/// Serves on this process's stdin and stdout.
///
/// Nothing else may write to stdout while it is in use: log to stderr.
pub fn stdio_server() -> StdioServerTransport {
    LineTransport::new(Stdin::new(), tokio::io::stdout())
}

/// How many bytes the stdin thread reads at once.
const STDIN_CHUNK: usize = 64 * 1024;
/// How many buffers of [`STDIN_CHUNK`] bytes go round between the stdin
/// thread and the transport: while the transport reads one, the thread
/// fills the other. So at most one chunk is read ahead of the transport,
/// and a host that writes faster than the server reads is held back by the
/// pipe, as with a plain blocking read, instead of queueing its requests in
/// the server (where they wait just as long, and cost memory).
const STDIN_BUFFERS: usize = 2;

/// This process's stdin, read on a thread of its own.
///
/// A read from stdin cannot be cancelled, and tokio's own `Stdin` reads on
/// the runtime's blocking pool, which a runtime waits for when it shuts
/// down: a server stopped by a signal would hang until the host wrote a line
/// or closed stdin. This thread is no part of any runtime; dropping the
/// reader lets it end after its current read, and the process ends it at
/// exit whatever it is doing.
///
/// The thread reads into one of two buffers of 64 KiB and hands it
/// over filled; the transport hands each back once it has read it all, so
/// nothing is allocated or copied per read.
#[derive(Debug)]
pub struct Stdin {
    /// Buffers the thread filled, with how many bytes it read into each.
    filled: tokio::sync::mpsc::Receiver<std::io::Result<(Vec<u8>, usize)>>,
    /// Buffers read to their end, back to the thread.
    spent: std::sync::mpsc::Sender<Vec<u8>>,
    /// The buffer being read (its first `len` bytes are stdin's).
    chunk: Vec<u8>,
    len: usize,
    /// How much of `chunk` was handed out.
    read: usize,
}

impl Stdin {
    fn new() -> Self {
        let (filler, filled) = tokio::sync::mpsc::channel(STDIN_BUFFERS);
        let (spent, empty) = std::sync::mpsc::channel();
        for _ in 0..STDIN_BUFFERS {
            // Zeroed by the allocator: a page counts once it is read into.
            let _ = spent.send(vec![0; STDIN_CHUNK]);
        }
        let spawned = std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || read_stdin(&empty, &filler));
        let mut stdin = Self {
            filled,
            spent,
            chunk: Vec::new(),
            len: 0,
            read: 0,
        };
        if let Err(error) = spawned {
            // Read as a failed stdin: the connection ends with this error.
            let (sender, failed) = tokio::sync::mpsc::channel(1);
            let _ = sender.try_send(Err(error));
            stdin.filled = failed;
        }
        stdin
    }
}

/// The stdin thread: fills each buffer handed to it, until end of file, a
/// failure, or the reader is gone.
fn read_stdin(
    empty: &std::sync::mpsc::Receiver<Vec<u8>>,
    filled: &tokio::sync::mpsc::Sender<std::io::Result<(Vec<u8>, usize)>>,
) {
    use std::io::Read as _;
    let mut stdin = std::io::stdin().lock();
    // Ends when the reader is gone (it holds the other end).
    while let Ok(mut buffer) = empty.recv() {
        let read = loop {
            match stdin.read(&mut buffer) {
                Ok(0) => return,
                Ok(n) => break Ok((buffer, n)),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => break Err(error),
            }
        };
        let failed = read.is_err();
        if filled.blocking_send(read).is_err() || failed {
            return;
        }
    }
}

impl tokio::io::AsyncRead for Stdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.read == this.len {
            if !this.chunk.is_empty() {
                // Read to its end: the thread may fill it again.
                let _ = this.spent.send(std::mem::take(&mut this.chunk));
                this.len = 0;
                this.read = 0;
            }
            match std::task::ready!(this.filled.poll_recv(cx)) {
                Some(Ok((chunk, len))) => {
                    this.chunk = chunk;
                    this.len = len;
                }
                Some(Err(error)) => return std::task::Poll::Ready(Err(error)),
                // End of file.
                None => return std::task::Poll::Ready(Ok(())),
            }
        }
        let n = buf.remaining().min(this.len - this.read);
        buf.put_slice(&this.chunk[this.read..this.read + n]);
        this.read += n;
        std::task::Poll::Ready(Ok(()))
    }
}

/// Environment variables a child inherits by default; everything else must be
/// passed explicitly, so secrets in the host's environment do not leak.
#[cfg(unix)]
pub const DEFAULT_INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// Environment variables a child inherits by default; everything else must be
/// passed explicitly, so secrets in the host's environment do not leak.
#[cfg(windows)]
pub const DEFAULT_INHERITED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// Where a child's stderr goes. It is free-form logging, never an error.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum StderrSink {
    /// This process's stderr.
    #[default]
    Inherit,
    /// Nowhere.
    Discard,
    /// Each line to a callback: at most
    /// [`ServerCommand::max_line`] bytes of it, bytes that are not UTF-8
    /// replaced. Otherwise the child's text as it wrote it, control
    /// characters and all: escape it before a terminal or a log sees it
    /// ([`mcp_types::untrusted::Escaped`]), and cut it shorter to keep it.
    Lines(Arc<dyn Fn(String) + Send + Sync>),
}

impl std::fmt::Debug for StderrSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StderrSink::Inherit => "Inherit",
            StderrSink::Discard => "Discard",
            StderrSink::Lines(_) => "Lines",
        })
    }
}

/// Passes the child's stderr to `callback` a line at a time until it
/// closes: each line at most `max_line` bytes (the rest of a longer one is
/// skipped), bytes that are not UTF-8 replaced. It never stops reading
/// early: a child whose stderr is no longer drained blocks once the pipe
/// is full.
async fn stderr_lines(
    stderr: ChildStderr,
    max_line: usize,
    callback: Arc<dyn Fn(String) + Send + Sync>,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        let Ok(available) = reader.fill_buf().await else {
            return;
        };
        if available.is_empty() {
            if !line.is_empty() {
                callback(into_text(line));
            }
            return;
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        let room = max_line.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = newline.map_or(available.len(), |at| at + 1);
        reader.consume(used);
        if newline.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            callback(into_text(std::mem::take(&mut line)));
        }
    }
}

/// A stderr line as text: its own buffer when it is UTF-8 (no buffer of a
/// long line kept for the next), else a copy with the bad bytes replaced.
/// Shrunk to exactly its size, since the callback may keep it: that copies
/// only a line whose buffer is larger (one that grew over several reads,
/// ended by a dropped CR, or shorter than a vector's first allocation).
fn into_text(mut line: Vec<u8>) -> String {
    line.shrink_to_fit();
    String::from_utf8(line)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// How to start a stdio server.
///
/// # Examples
/// ```no_run
/// # async fn run() -> Result<(), mcp_transport::Error> {
/// use mcp_transport::stdio::ServerCommand;
/// let (transport, child) = ServerCommand::new("my-mcp-server")
///     .arg("--verbose")
///     .env("API_URL", "http://127.0.0.1:8080")
///     .spawn()?;
/// # drop(transport); child.shutdown().await?; Ok(()) }
/// ```
#[derive(Clone)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: Option<PathBuf>,
    stderr: StderrSink,
    max_line: usize,
    shutdown_grace: Duration,
}

/// The environment's values stay out (they are where a server's secrets
/// go: API keys, tokens); its names are shown.
impl std::fmt::Debug for ServerCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("stderr", &self.stderr)
            .field("max_line", &self.max_line)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish()
    }
}

impl ServerCommand {
    /// Runs `program` (looked up in `PATH` when it has no slash).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            stderr: StderrSink::default(),
            max_line: DEFAULT_MAX_LINE,
            shutdown_grace: Duration::from_secs(2),
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable, over the safe inherited defaults.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Chooses where the child's stderr goes.
    #[must_use]
    pub fn stderr(mut self, sink: StderrSink) -> Self {
        self.stderr = sink;
        self
    }

    /// Sets the longest line accepted from the child (a longer stderr
    /// line is cut to it).
    #[must_use]
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// Sets how long shutdown waits at each step before escalating.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Starts the child.
    ///
    /// # Errors
    /// [`Error::Spawn`] when the program cannot be started.
    pub fn spawn(self) -> Result<(ChildTransport, ChildProcess), Error> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrSink::Inherit => Stdio::inherit(),
                StderrSink::Discard => Stdio::null(),
                StderrSink::Lines(_) => Stdio::piped(),
            })
            .kill_on_drop(true);
        for key in DEFAULT_INHERITED_ENV {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.envs(&self.env);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        // Its own process group, so shutdown reaches grandchildren too
        // (npx and uvx start the real server as a grandchild).
        #[cfg(unix)]
        command.process_group(0);
        let program = self.program.to_string_lossy().into_owned();
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            program: program.clone(),
            source,
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::Spawn {
                program,
                source: std::io::Error::other("the child's pipes were not created"),
            });
        };
        let stderr_task = match (&self.stderr, child.stderr.take()) {
            (StderrSink::Lines(callback), Some(stderr)) => Some(tokio::spawn(stderr_lines(
                stderr,
                self.max_line,
                callback.clone(),
            ))),
            _ => None,
        };
        let pid = child.id();
        let transport = LineTransport::with_max_line(stdout, stdin, self.max_line);
        Ok((
            transport,
            ChildProcess {
                child,
                pid,
                stderr_task,
                grace: self.shutdown_grace,
            },
        ))
    }
}

/// A running server process. Dropping it kills the process group.
#[derive(Debug)]
pub struct ChildProcess {
    child: Child,
    pid: Option<u32>,
    stderr_task: Option<JoinHandle<()>>,
    grace: Duration,
}

impl ChildProcess {
    /// The child's process id (while it runs).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the child has exited, without waiting.
    ///
    /// # Errors
    /// When the process status cannot be read.
    pub fn try_exit_status(&mut self) -> Result<Option<ExitStatus>, Error> {
        self.child.try_wait().map_err(Error::Wait)
    }

    /// Stops the child in order: wait for it to exit on its own (its stdin
    /// should already be closed, which closing the connection does), then
    /// terminate it, then kill it, waiting the grace period
    /// ([`ServerCommand::shutdown_grace`], 2 s by default) between steps, so
    /// a child that ignores its closed stdin is gone within about two
    /// graces. Returns once the child is reaped.
    ///
    /// On Unix, terminating is SIGTERM and killing SIGKILL, each to the
    /// child's process group (grandchildren too); this is what the tests
    /// check, on Linux. Elsewhere (Windows) both steps end the direct child
    /// at once (`TerminateProcess`, which has no gentler form for a
    /// console process); that path is not tested here.
    ///
    /// # Errors
    /// When waiting on the process fails.
    ///
    /// # Cancel safety
    /// Dropping the future kills the child (`kill_on_drop`) without the
    /// SIGTERM step; tokio reaps it in the background.
    pub async fn shutdown(mut self) -> Result<ExitStatus, Error> {
        let grace = self.grace;
        if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
            return self.finish(status);
        }
        self.signal_group(Signal::Terminate);
        if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
            return self.finish(status);
        }
        self.signal_group(Signal::Kill);
        let status = self.child.wait().await;
        self.finish(status)
    }

    fn finish(&mut self, status: std::io::Result<ExitStatus>) -> Result<ExitStatus, Error> {
        // Anything left in the group (grandchildren) goes with it.
        self.signal_group(Signal::Kill);
        self.pid = None;
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        status.map_err(Error::Wait)
    }

    fn signal_group(&mut self, signal: Signal) {
        let Some(pid) = self.pid else { return };
        #[cfg(unix)]
        {
            let signal = match signal {
                Signal::Terminate => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            };
            let Ok(group) = libc::pid_t::try_from(pid) else {
                return;
            };
            kill_group(group, signal);
        }
        #[cfg(not(unix))]
        {
            let _ = (pid, signal);
            // No process groups or signals: end the direct child.
            if let Err(error) = self.child.start_kill() {
                tracing::trace!(%error, "the child had already exited");
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg takes plain integers and touches no memory; `group` is
    // the id of a process group we created for our own child (process_group(0)).
    let result = unsafe { libc::killpg(group, signal) };
    if result != 0 {
        tracing::trace!(group, signal, "killpg found no process (already gone)");
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.pid.is_some() {
            self.signal_group(Signal::Kill);
            // tokio's kill_on_drop reaps the direct child in the background.
            if let Err(error) = self.child.start_kill() {
                tracing::trace!(%error, "the child had already exited");
            }
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}
