//! What a gateway serves and within which limits: the upstreams, read from
//! the `mcpServers` JSON that desktop hosts already use, and every limit
//! with its documented default.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcp_client::ListLimits;
use mcp_core::backoff::BackoffConfig;
use serde_json::{Map, Value};

use crate::error::Error;

/// Everything a gateway runs: its upstreams, by name, and its limits.
///
/// The upstreams are kept in name order, and that order is their
/// precedence: when two upstreams claim the same name or URI after naming,
/// the one whose name sorts first keeps it (see [`crate::naming`]).
///
/// # Examples
/// ```
/// use mcp_gateway::{GatewayConfig, UpstreamTransport};
///
/// let config = GatewayConfig::from_json(r#"{
///     "mcpServers": {
///         "files": {"command": "mcp-files", "args": ["--root", "."], "env": {"TOKEN": "s3cret"}},
///         "search": {"url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer abc"}}
///     }
/// }"#)?;
/// assert_eq!(config.upstreams.len(), 2);
/// assert!(matches!(config.upstreams["files"].transport, UpstreamTransport::Stdio { .. }));
/// // Secrets never show in Debug output.
/// assert!(!format!("{config:?}").contains("s3cret"));
/// # Ok::<(), mcp_gateway::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The servers served as one, by the name that prefixes their entries.
    pub upstreams: BTreeMap<String, UpstreamConfig>,
    /// Every bound the gateway keeps.
    pub limits: Limits,
}

/// One upstream server: how to reach it, and in which era to speak to it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpstreamConfig {
    /// A process to run, or an HTTP endpoint.
    pub transport: UpstreamTransport,
    /// Which protocol era to speak ([`EraPreference::Auto`] unless the
    /// entry says `"era"`).
    pub era: EraPreference,
}

impl UpstreamConfig {
    /// An upstream reached over `transport`, era negotiated.
    pub fn new(transport: UpstreamTransport) -> Self {
        Self {
            transport,
            era: EraPreference::Auto,
        }
    }

    /// Sets [`era`](Self::era).
    #[must_use]
    pub fn with_era(self, era: EraPreference) -> Self {
        Self { era, ..self }
    }
}

/// How an upstream is reached.
///
/// `Debug` shows the names of environment variables and headers, never
/// their values: those are often tokens.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamTransport {
    /// A child process, spoken to over its stdin and stdout; supervised
    /// (restarted with backoff when it dies).
    Stdio {
        /// The program (looked up in `PATH` when it has no slash).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the gateway's environment for it.
        env: BTreeMap<String, String>,
        /// Its working directory (the gateway's unless set).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// Its URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request (an `Authorization` header, say).
        headers: BTreeMap<String, String>,
    },
}

impl UpstreamTransport {
    /// A program run with `args`, no extra environment, in the gateway's
    /// working directory.
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        UpstreamTransport::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// A streamable HTTP endpoint, no extra headers.
    pub fn http(url: impl Into<String>) -> Self {
        UpstreamTransport::Http {
            url: url.into(),
            headers: BTreeMap::new(),
        }
    }
}

/// The names of a secret-holding map, its values left out.
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|key| (key, "<redacted>")))
            .finish()
    }
}

impl std::fmt::Debug for UpstreamTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &Redacted(env))
                .field("cwd", cwd)
                .finish(),
            UpstreamTransport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &Redacted(headers))
                .finish(),
        }
    }
}

/// Which protocol era the gateway speaks to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraPreference {
    /// The newest both speak: `server/discover`, falling back to
    /// `initialize` (the default).
    #[default]
    Auto,
    /// The handshake era only (`initialize`).
    Handshake,
    /// The stateless era (2026-07-28) only (`server/discover`).
    Stateless,
}

/// Every bound a gateway keeps, each with its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The first wait before restarting an upstream that failed; doubled
    /// (with jitter) at each failure in a row. Default 250 ms.
    pub restart_backoff_min: Duration,
    /// The longest wait between restarts. Default 30 s.
    pub restart_backoff_max: Duration,
    /// At most this many (re)starts of one upstream in any
    /// [`restart_window`](Self::restart_window); past it the gateway waits
    /// for the window to move on. Default 5. An HTTP upstream's new
    /// sessions (when the server forgot the old one) are paced and
    /// counted the same way, apart from its reconnections.
    pub max_restarts: u32,
    /// The span [`max_restarts`](Self::max_restarts) counts over. Default
    /// 60 s.
    pub restart_window: Duration,
    /// How long connecting to an upstream (spawn or HTTP, and negotiation)
    /// may take. Default 30 s.
    pub connect_timeout: Duration,
    /// A timeout for every request forwarded to an upstream. Default 300 s.
    pub request_timeout: Duration,
    /// The last stderr lines of an upstream process kept, to be logged when
    /// it dies. Default 20.
    pub stderr_lines: usize,
    /// The longest stderr line kept, in bytes (longer ones are cut).
    /// Default 1,024.
    pub stderr_line_bytes: usize,
    /// Upstreams a gateway serves at most. Default 64.
    pub max_upstreams: usize,
    /// Progress reports and log messages of one forwarded call waiting to
    /// be passed on to its client; more are dropped (never waited for: the
    /// upstream connection is not held up by a slow client). Default 64.
    pub relay_queue: usize,
    /// How much of each list (tools, prompts, resources, templates) is
    /// read from one upstream at most; more fails its listing. Default
    /// 10,000 entries, 100 pages, 16 MiB as they came on the wire.
    pub lists: ListLimits,
    /// The largest config file read, in bytes. Default 1 MiB.
    pub max_config_bytes: usize,
    /// Upstream tasks the gateway follows at once for its clients' tasks,
    /// those whose client's task stopped first counted until they are
    /// cancelled upstream (each started on an upstream's one session for
    /// all clients, so this bounds what the clients together hold there);
    /// a task-augmented call past it is refused. Default 1,000.
    pub max_tasks: usize,
    /// How long the gateway follows one upstream task at most; past it the
    /// client's task fails and the upstream's is cancelled. Default 24 h.
    pub task_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            restart_backoff_min: Duration::from_millis(250),
            restart_backoff_max: Duration::from_secs(30),
            max_restarts: 5,
            restart_window: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
            stderr_lines: 20,
            stderr_line_bytes: 1024,
            max_upstreams: 64,
            relay_queue: 64,
            lists: ListLimits::new()
                .with_max_items(10_000)
                .with_max_pages(100)
                .with_max_bytes(16 * 1024 * 1024),
            max_config_bytes: 1024 * 1024,
            max_tasks: 1000,
            task_timeout: Duration::from_secs(24 * 60 * 60),
        }
    }
}

impl Limits {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pace and budget of an upstream's restarts: of its process or
    /// connection, and of its HTTP session when the server forgot it.
    pub(crate) fn restarts(&self) -> BackoffConfig {
        BackoffConfig::new()
            .with_floor(self.restart_backoff_min)
            .with_cap(self.restart_backoff_max)
            .with_budget(self.max_restarts.max(1), self.restart_window)
    }

    /// Sets [`restart_backoff_min`](Self::restart_backoff_min) and
    /// [`restart_backoff_max`](Self::restart_backoff_max).
    #[must_use]
    pub fn with_restart_backoff(self, min: Duration, max: Duration) -> Self {
        Self {
            restart_backoff_min: min,
            restart_backoff_max: max,
            ..self
        }
    }

    /// Sets [`max_restarts`](Self::max_restarts) per
    /// [`restart_window`](Self::restart_window).
    #[must_use]
    pub fn with_restart_budget(self, max_restarts: u32, window: Duration) -> Self {
        Self {
            max_restarts,
            restart_window: window,
            ..self
        }
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[must_use]
    pub fn with_connect_timeout(self, timeout: Duration) -> Self {
        Self {
            connect_timeout: timeout,
            ..self
        }
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    #[must_use]
    pub fn with_request_timeout(self, timeout: Duration) -> Self {
        Self {
            request_timeout: timeout,
            ..self
        }
    }

    /// Sets [`stderr_lines`](Self::stderr_lines) and
    /// [`stderr_line_bytes`](Self::stderr_line_bytes).
    #[must_use]
    pub fn with_stderr_tail(self, lines: usize, line_bytes: usize) -> Self {
        Self {
            stderr_lines: lines,
            stderr_line_bytes: line_bytes,
            ..self
        }
    }

    /// Sets [`max_upstreams`](Self::max_upstreams).
    #[must_use]
    pub fn with_max_upstreams(self, upstreams: usize) -> Self {
        Self {
            max_upstreams: upstreams,
            ..self
        }
    }

    /// Sets [`relay_queue`](Self::relay_queue) (at least 1).
    #[must_use]
    pub fn with_relay_queue(self, messages: usize) -> Self {
        Self {
            relay_queue: messages.max(1),
            ..self
        }
    }

    /// Sets [`lists`](Self::lists).
    #[must_use]
    pub fn with_list_limits(self, lists: ListLimits) -> Self {
        Self { lists, ..self }
    }

    /// Sets [`max_config_bytes`](Self::max_config_bytes).
    #[must_use]
    pub fn with_max_config_bytes(self, bytes: usize) -> Self {
        Self {
            max_config_bytes: bytes,
            ..self
        }
    }
}

/// The longest upstream name: it prefixes every tool and prompt name, and
/// those are at most 128 characters.
pub const MAX_UPSTREAM_NAME: usize = 64;

impl GatewayConfig {
    /// No upstreams yet, default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the upstream `name`.
    ///
    /// # Errors
    /// [`Error::Config`] when `name` is not a usable upstream name (1 to
    /// [`MAX_UPSTREAM_NAME`] letters, digits, `_` or `-`).
    pub fn upstream(
        mut self,
        name: impl Into<String>,
        upstream: UpstreamConfig,
    ) -> Result<Self, Error> {
        let name = name.into();
        check_name(&name)?;
        self.upstreams.insert(name, upstream);
        Ok(self)
    }

    /// Sets [`limits`](Self::limits).
    #[must_use]
    pub fn with_limits(self, limits: Limits) -> Self {
        Self { limits, ..self }
    }

    /// Reads the `mcpServers` section of a desktop host's JSON config
    /// (default limits). Each entry is `{"command", "args", "env", "cwd"}`
    /// (a process) or `{"url", "headers"}` (streamable HTTP), with an
    /// optional `"era"`: `"auto"`, `"handshake"` or `"stateless"`. Keys the
    /// gateway does not know are ignored (hosts add their own); a `"type"`
    /// key, when present, must agree with the entry (`"stdio"`, `"http"` or
    /// `"streamable-http"`).
    ///
    /// # Errors
    /// [`Error::ConfigSyntax`] for text that is not JSON,
    /// [`Error::ConfigTooLarge`] past [`Limits::max_config_bytes`],
    /// [`Error::Config`] naming the entry and the field that is wrong,
    /// [`Error::TooManyUpstreams`] past [`Limits::max_upstreams`].
    pub fn from_json(text: &str) -> Result<Self, Error> {
        Self::from_json_with(text, Limits::default())
    }

    /// [`from_json`](Self::from_json) with `limits`.
    ///
    /// # Errors
    /// As [`from_json`](Self::from_json).
    pub fn from_json_with(text: &str, limits: Limits) -> Result<Self, Error> {
        if text.len() > limits.max_config_bytes {
            return Err(Error::ConfigTooLarge {
                size: text.len(),
                limit: limits.max_config_bytes,
            });
        }
        let root: Value = serde_json::from_str(text).map_err(Error::ConfigSyntax)?;
        let section = root
            .as_object()
            .and_then(|root| root.get("mcpServers"))
            .ok_or_else(|| {
                section_error(
                    "is missing: the config must be an object with an `mcpServers` object",
                )
            })?
            .as_object()
            .ok_or_else(|| section_error("must be an object of named servers"))?;
        if section.len() > limits.max_upstreams {
            return Err(Error::TooManyUpstreams {
                count: section.len(),
                limit: limits.max_upstreams,
            });
        }
        let mut config = GatewayConfig::new().with_limits(limits);
        for (name, entry) in section {
            check_name(name)?;
            config
                .upstreams
                .insert(name.clone(), parse_entry(name, entry)?);
        }
        Ok(config)
    }
}

fn section_error(problem: &str) -> Error {
    Error::Config {
        entry: "mcpServers".into(),
        field: "mcpServers",
        problem: problem.into(),
    }
}

/// Refuses an upstream name that cannot prefix tool names.
fn check_name(name: &str) -> Result<(), Error> {
    let usable = !name.is_empty()
        && name.len() <= MAX_UPSTREAM_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if usable {
        Ok(())
    } else {
        Err(Error::Config {
            entry: name.into(),
            field: "name",
            problem: format!(
                "is not a usable upstream name: it prefixes tool names, so it must be 1 to \
                 {MAX_UPSTREAM_NAME} ASCII letters, digits, `_` or `-`; rename the entry"
            ),
        })
    }
}

/// One `mcpServers` entry.
fn parse_entry(name: &str, entry: &Value) -> Result<UpstreamConfig, Error> {
    let refuse = |field: &'static str, problem: &str| Error::Config {
        entry: name.into(),
        field,
        problem: problem.into(),
    };
    let entry = entry
        .as_object()
        .ok_or_else(|| refuse("entry", "must be an object with `command` or `url`"))?;
    let command = string(entry, "command", &refuse)?;
    let url = string(entry, "url", &refuse)?;
    let kind = string(entry, "type", &refuse)?;
    let transport = match (command, url) {
        (Some(_), Some(_)) => {
            return Err(refuse(
                "url",
                "and `command` are both set: an upstream is a process or an HTTP endpoint; keep one",
            ));
        }
        (None, None) => {
            return Err(refuse(
                "command",
                "is missing: set `command` (a process) or `url` (streamable HTTP)",
            ));
        }
        (Some(command), None) => {
            if kind.as_deref().is_some_and(|kind| kind != "stdio") {
                return Err(refuse(
                    "type",
                    "must be `stdio` for an entry with `command`",
                ));
            }
            if command.is_empty() {
                return Err(refuse("command", "is empty: name the program to run"));
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|arg| arg.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| refuse("args", "must be an array of strings"))?,
                Some(_) => return Err(refuse("args", "must be an array of strings")),
            };
            UpstreamTransport::Stdio {
                command,
                args,
                env: string_map(entry, "env", &refuse)?,
                cwd: string(entry, "cwd", &refuse)?.map(PathBuf::from),
            }
        }
        (None, Some(url)) => {
            if kind
                .as_deref()
                .is_some_and(|kind| !matches!(kind, "http" | "streamable-http" | "streamableHttp"))
            {
                return Err(refuse(
                    "type",
                    "must be `http` or `streamable-http` for an entry with `url` (the legacy \
                     SSE transport is not served)",
                ));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(refuse("url", "must start with `http://` or `https://`"));
            }
            UpstreamTransport::Http {
                url,
                headers: string_map(entry, "headers", &refuse)?,
            }
        }
    };
    let era = match string(entry, "era", &refuse)?.as_deref() {
        None | Some("auto") => EraPreference::Auto,
        Some("handshake") => EraPreference::Handshake,
        Some("stateless") => EraPreference::Stateless,
        Some(_) => {
            return Err(refuse("era", "must be `auto`, `handshake` or `stateless`"));
        }
    };
    Ok(UpstreamConfig { transport, era })
}

/// An optional string field.
fn string(
    entry: &Map<String, Value>,
    field: &'static str,
    refuse: &impl Fn(&'static str, &str) -> Error,
) -> Result<Option<String>, Error> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => Ok(Some(value.clone())),
        Some(_) => Err(refuse(field, "must be a string")),
    }
}

/// An optional object of strings (`env`, `headers`); a value that is not a
/// string is refused without echoing it (it may be a secret).
fn string_map(
    entry: &Map<String, Value>,
    field: &'static str,
    refuse: &impl Fn(&'static str, &str) -> Error,
) -> Result<BTreeMap<String, String>, Error> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(key, value)| match value {
                Value::String(value) => Ok((key.clone(), value.clone())),
                _ => Err(refuse(
                    field,
                    &format!("has a value for `{key}` that is not a string"),
                )),
            })
            .collect(),
        Some(_) => Err(refuse(field, "must be an object of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        GatewayConfig::from_json(text)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn reads_a_desktop_config_and_tolerates_unknown_keys() {
        let config = GatewayConfig::from_json(
            r#"{"globalShortcut": "x", "mcpServers": {
                "fs": {"command": "mcp-fs", "args": ["/tmp"], "env": {"K": "v"}, "cwd": "/", "disabled": false},
                "web": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"X": "y"}, "era": "stateless"}
            }}"#,
        )
        .expect("read");
        assert_eq!(
            config.upstreams["fs"],
            UpstreamConfig::new(UpstreamTransport::Stdio {
                command: "mcp-fs".into(),
                args: vec!["/tmp".into()],
                env: [("K".to_owned(), "v".to_owned())].into(),
                cwd: Some("/".into()),
            })
        );
        assert_eq!(config.upstreams["web"].era, EraPreference::Stateless);
    }

    #[test]
    fn bad_entries_are_refused_by_entry_and_field() {
        let message = refused(r#"{"mcpServers": {"a": {"command": 3}}}"#);
        assert!(
            message.contains("`a`") && message.contains("`command`"),
            "{message}"
        );
        let message = refused(r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#);
        assert!(message.contains("`url`"), "{message}");
        let message = refused(r#"{"mcpServers": {"a": {"args": []}}}"#);
        assert!(message.contains("`command` is missing"), "{message}");
        let message = refused(r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#);
        assert!(message.contains("`url` must start"), "{message}");
        let message = refused(r#"{"mcpServers": {"a b": {"command": "x"}}}"#);
        assert!(
            message.contains("`a b`") && message.contains("`name`"),
            "{message}"
        );
        let message = refused(r#"{"mcpServers": {"a": {"command": "x", "era": "old"}}}"#);
        assert!(message.contains("`era`"), "{message}");
        let message = refused(r#"{"servers": {}}"#);
        assert!(message.contains("mcpServers"), "{message}");
    }

    #[test]
    fn secrets_stay_out_of_errors_and_debug() {
        let message =
            refused(r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": 12345}}}}"#);
        assert!(
            message.contains("TOKEN") && !message.contains("12345"),
            "{message}"
        );
        let config = GatewayConfig::from_json(
            r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "hunter2"}},
                               "b": {"url": "http://h", "headers": {"Authorization": "Bearer hunter3"}}}}"#,
        )
        .expect("read");
        let shown = format!("{config:?}");
        assert!(
            shown.contains("TOKEN") && shown.contains("Authorization"),
            "{shown}"
        );
        assert!(!shown.contains("hunter"), "{shown}");
    }

    #[test]
    fn the_size_and_the_count_are_bounded() {
        let limits = Limits::new().with_max_upstreams(1);
        let two = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#;
        assert!(matches!(
            GatewayConfig::from_json_with(two, limits),
            Err(Error::TooManyUpstreams { count: 2, limit: 1 })
        ));
        let limits = Limits::new().with_max_config_bytes(10);
        assert!(matches!(
            GatewayConfig::from_json_with(two, limits),
            Err(Error::ConfigTooLarge { .. })
        ));
        // An upstream's lists are bounded in bytes too, not only in
        // entries and pages, and tighter than a lone client's default.
        let lists = Limits::new().lists;
        assert_eq!(
            (lists.max_items, lists.max_pages, lists.max_bytes),
            (10_000, 100, 16 * 1024 * 1024)
        );
        assert!(lists.max_bytes < ListLimits::new().max_bytes);
    }
}
