//! The command line: how to reach the server and what to do there.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Poke an MCP server from the terminal: list and call its tools, read its
/// resources, get its prompts, watch its notifications.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok, 1 the tool reported an error, 2 usage, \
                        3 connection (spawn, network, sign-in), 4 protocol (the server refused \
                        or answered wrongly).\n\n\
                        Text from the server is printed with its control characters and bidi \
                        controls escaped (\\x1b, \\u{9b}, \\u{202e}), to a terminal or not; \
                        --json prints it exactly, as JSON escapes."
)]
pub(crate) struct Cli {
    /// How to reach the server.
    #[command(flatten)]
    pub(crate) server: ServerArgs,

    /// Print results as JSON (one document; `watch` prints one per line).
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Answer the server's sampling requests with this text (without it
    /// they are declined: the CLI has no model).
    #[arg(long, value_name = "TEXT", global = true)]
    pub(crate) sampling_reply: Option<String>,

    /// Ask the server for log messages at this level and above (printed on
    /// stderr).
    #[arg(long, value_enum, value_name = "LEVEL", global = true)]
    pub(crate) log_level: Option<LogLevel>,

    /// Seconds to wait for each request (default 60; `watch` waits until
    /// interrupted).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, global = true)]
    pub(crate) timeout: u64,

    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Where the server is.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// Spawn the server and talk over its stdin/stdout: a command line,
    /// split on spaces (quote arguments with spaces: "server --name 'a b'").
    #[arg(long, value_name = "COMMAND", global = true, conflicts_with = "url")]
    pub(crate) stdio: Option<String>,

    /// Connect to a streamable HTTP endpoint.
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) url: Option<String>,

    /// An HTTP header sent with every request (`--url` only), as `Name: value`.
    #[arg(long = "header", short = 'H', value_name = "NAME:VALUE", global = true)]
    pub(crate) headers: Vec<String>,

    /// Which protocol era to speak: the newest both sides know (auto), the
    /// stateless 2026-07-28 revision only, or the initialize handshake only.
    #[arg(long, value_enum, default_value_t = Era::Auto, global = true)]
    pub(crate) era: Era,

    /// Do not start a browser to sign in to a protected server: print the
    /// URL instead.
    #[arg(long, global = true)]
    pub(crate) no_browser: bool,
}

/// `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Era {
    /// The newest era both sides speak.
    Auto,
    /// 2026-07-28 (`server/discover`, no session).
    Stateless,
    /// The `initialize` handshake (2025-11-25 and older).
    Handshake,
}

/// `--log-level`: the protocol's syslog levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[allow(missing_docs)]
pub(crate) enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// The negotiated revision, the server's name and version, its
    /// capabilities and instructions.
    Info,
    /// List or call tools.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// List, read resources and their templates.
    #[command(subcommand)]
    Resources(ResourcesCommand),
    /// List or get prompts.
    #[command(subcommand)]
    Prompts(PromptsCommand),
    /// Ask for completions of a prompt's or a resource template's argument.
    Complete(CompleteArgs),
    /// Check that the server answers.
    Ping,
    /// Print the server's notifications until interrupted (Ctrl-C) or
    /// `--count` have arrived: list changes, updates of the resources given
    /// with `--resource`, log messages.
    Watch(WatchArgs),
    /// Serve servers as one: the server of `--stdio` or `--url`, or every
    /// server of a `--config` file, over streamable HTTP (`--listen`, both
    /// eras on one endpoint) and/or this process's stdin/stdout
    /// (`--stdio-out`).
    #[command(after_help = GATEWAY_USES)]
    Gateway(Box<GatewayArgs>),
}

/// The three common uses of `mcp gateway`, for its `--help`.
const GATEWAY_USES: &str = "\
Common uses:
  A remote server for a host that speaks stdio only:
    mcp gateway --url https://example.com/mcp --stdio-out
  A stdio server over streamable HTTP (both protocol eras on one endpoint):
    mcp gateway --stdio \"mcp-demo-server\" --listen 127.0.0.1:8080
  Many servers as one (each one's tools and prompts prefixed with its name):
    mcp gateway --config servers.json --listen 127.0.0.1:8080

The config file is the JSON desktop hosts use:
  {\"mcpServers\": {\"files\": {\"command\": \"mcp-files\", \"args\": [\".\"], \"env\": {}},
                  \"search\": {\"url\": \"http://127.0.0.1:9000/mcp\", \"headers\": {}}}}

Over HTTP, GET /livez answers while the gateway runs, GET /readyz once every
upstream (or each --ready one) has connected. Ctrl-C or SIGTERM stops it, its
upstream processes with it.

Deployed (the Deploy flags, or the same keys in the file's \"gateway\" object):
  mcp gateway --config servers.json --listen 0.0.0.0:8080 \\
    --jwks jwks.json --issuer https://auth.example.com \\
    --resource https://mcp.example.com/mcp --scope mcp \\
    --rate-per-second 20 --burst 40
  {\"mcpServers\": {...}, \"gateway\": {\"rateLimit\": {\"perSecond\": 20},
   \"redis\": {\"url\": \"redis://:PASSWORD@10.0.0.5:6379\"}, \"stateKeyFile\": \"state.key\"}}
Replicas on one Redis share sessions (an mcp built with --features redis);
docs/guide/gateway.md, \"Deploying\", says what they do not share. Built with
--features otel, OTEL_EXPORTER_OTLP_ENDPOINT turns on OpenTelemetry export, and
each request's trace context is passed upstream.";

/// `gateway`.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    /// The servers to serve, from a JSON file with an `mcpServers` object
    /// (instead of `--stdio` or `--url`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdio", "url"])]
    pub(crate) config: Option<std::path::PathBuf>,
    /// Serve over streamable HTTP at this address (the endpoint is `/mcp`).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// Serve over this process's stdin and stdout.
    #[arg(long)]
    pub(crate) stdio_out: bool,
    /// A Host header the HTTP endpoint accepts besides localhost's
    /// (repeatable; for a gateway reached by another name).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub(crate) allowed_hosts: Vec<String>,
    /// Readiness waits for this upstream only (repeatable; default: all).
    #[arg(long = "ready", value_name = "NAME")]
    pub(crate) ready: Vec<String>,

    // Deploy settings: each overrides its key of the config file's
    // `gateway` section (crate::deploy).
    /// The largest request body the HTTP side reads, in bytes (default
    /// 4 MiB; `gateway.maxBody`).
    #[arg(long, value_name = "BYTES", help_heading = "Deploy")]
    pub(crate) max_body: Option<u64>,
    /// The most sessions the HTTP side keeps open (default 1024;
    /// `gateway.maxSessions`).
    #[arg(long, value_name = "N", help_heading = "Deploy")]
    pub(crate) max_sessions: Option<u64>,
    /// Require a bearer token: JWTs signed by a key of this JWKS file
    /// (`gateway.auth.jwks`; with --issuer and --resource).
    #[arg(long, value_name = "FILE", help_heading = "Deploy")]
    pub(crate) jwks: Option<std::path::PathBuf>,
    /// The `iss` tokens must name (`gateway.auth.issuer`); also the
    /// authorization server announced, unless --authorization-server.
    #[arg(long, value_name = "URL", help_heading = "Deploy")]
    pub(crate) issuer: Option<String>,
    /// The gateway's URL as clients reach it: the audience tokens must name
    /// (`gateway.auth.resource`).
    #[arg(long, value_name = "URL", help_heading = "Deploy")]
    pub(crate) resource: Option<String>,
    /// The authorization server the protected-resource metadata names
    /// (`gateway.auth.authorizationServer`; default: the issuer).
    #[arg(long, value_name = "URL", help_heading = "Deploy")]
    pub(crate) authorization_server: Option<String>,
    /// A scope every token must grant (repeatable; `gateway.auth.scopes`).
    #[arg(long = "scope", value_name = "SCOPE", help_heading = "Deploy")]
    pub(crate) scopes: Vec<String>,
    /// Requests per second one client may send (`gateway.rateLimit.perSecond`;
    /// a client is its token's subject, else its session, else its address).
    #[arg(long, value_name = "N", help_heading = "Deploy")]
    pub(crate) rate_per_second: Option<u64>,
    /// Requests per minute one client may send (`gateway.rateLimit.perMinute`).
    #[arg(long, value_name = "N", help_heading = "Deploy")]
    pub(crate) rate_per_minute: Option<u64>,
    /// Requests one client may send at once after a quiet spell (default:
    /// the rate's count; `gateway.rateLimit.burst`).
    #[arg(long, value_name = "N", help_heading = "Deploy")]
    pub(crate) burst: Option<u64>,
    /// Requests of one client running at the same time
    /// (`gateway.rateLimit.maxConcurrent`; default: no cap).
    #[arg(long, value_name = "N", help_heading = "Deploy")]
    pub(crate) max_concurrent: Option<u64>,
    /// Share sessions with the other replicas on this Redis
    /// (`gateway.redis.url`; prefer the file: a password here shows in the
    /// process list). Needs an `mcp` built with `--features redis`.
    #[arg(long, value_name = "URL", help_heading = "Deploy")]
    pub(crate) redis: Option<crate::redis_url::RedisUrl>,
    /// The prefix of the replicas' Redis keys (default `mcp`;
    /// `gateway.redis.prefix`).
    #[arg(long, value_name = "PREFIX", help_heading = "Deploy")]
    pub(crate) redis_prefix: Option<String>,
    /// The secret (32 bytes or more) sealing stateless clients'
    /// `requestState`: the same file on every replica
    /// (`gateway.stateKeyFile`).
    #[arg(long, value_name = "FILE", help_heading = "Deploy")]
    pub(crate) state_key_file: Option<std::path::PathBuf>,
}

/// `tools ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// Every tool with its description.
    List,
    /// Call a tool: arguments as `--args JSON` or `key=value` pairs (values
    /// typed from the tool's input schema).
    Call(CallArgs),
}

/// `tools call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's name.
    pub(crate) name: String,
    /// The arguments as one JSON object.
    #[arg(long, value_name = "JSON", conflicts_with = "pairs")]
    pub(crate) args: Option<String>,
    /// The arguments as `key=value` pairs.
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) pairs: Vec<String>,
}

/// `resources ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ResourcesCommand {
    /// Every resource.
    List,
    /// Every resource template.
    Templates,
    /// Read a resource.
    Read {
        /// The resource's URI.
        uri: String,
    },
}

/// `prompts ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum PromptsCommand {
    /// Every prompt with its arguments.
    List,
    /// Get a prompt's messages.
    Get {
        /// The prompt's name.
        name: String,
        /// Its arguments as `key=value` pairs.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
    },
}

/// `complete`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("reference").required(true).args(["prompt", "template"])))]
pub(crate) struct CompleteArgs {
    /// Complete an argument of this prompt.
    #[arg(long, value_name = "NAME")]
    pub(crate) prompt: Option<String>,
    /// Complete a variable of this resource template (its URI template).
    #[arg(long, value_name = "URI_TEMPLATE")]
    pub(crate) template: Option<String>,
    /// The argument to complete.
    pub(crate) argument: String,
    /// What has been typed of it so far.
    #[arg(default_value = "")]
    pub(crate) value: String,
    /// Arguments already filled in, as `key=value` (repeatable).
    #[arg(long = "context", value_name = "KEY=VALUE")]
    pub(crate) context: Vec<String>,
}

/// `watch`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// Also watch this resource for updates (repeatable).
    #[arg(long = "resource", value_name = "URI")]
    pub(crate) resources: Vec<String>,
    /// Stop after this many notifications.
    #[arg(long, value_name = "N")]
    pub(crate) count: Option<u64>,
}
