//! `mcp gateway`'s deploy settings: the `gateway` section of the config
//! file (beside `mcpServers`) and the flags that override it key by key.
//! Read and checked here, before anything starts: each bad value is
//! refused with the key (and flag) that holds it; the Redis URL's
//! password is never printed.
//!
//! ```json
//! {"mcpServers": {...},
//!  "gateway": {
//!    "maxBody": 4194304, "maxSessions": 1024,
//!    "auth": {"jwks": "jwks.json", "issuer": "https://auth.example.com",
//!             "resource": "https://gw.example.com/mcp", "scopes": ["mcp"]},
//!    "rateLimit": {"perSecond": 10, "burst": 20, "maxConcurrent": 4},
//!    "redis": {"url": "redis://127.0.0.1:6379", "prefix": "mcp-gateway"},
//!    "stateKeyFile": "state.key"}}
//! ```
//!
//! Paths in the file are read relative to the file's directory; paths in
//! flags relative to the working directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_server::limit::{Limiter, RateLimit};
use mcp_server::{HttpServerConfig, ServerBuilder};
use mcp_transport::http::{JwtVerifier, ProtectedResource, TokenVerifier};
use serde_json::{Map, Value};

use crate::args::GatewayArgs;
use crate::error::{CliError, UsageError};
use crate::redis_url::RedisUrl;

/// The least a `requestState` secret may hold (the server's own rule).
const MIN_STATE_KEY: usize = 32;
/// The largest JWKS or state key file read.
const MAX_FILE: u64 = 1024 * 1024;

/// What the gateway is deployed with, checked.
#[derive(Default)]
pub(crate) struct Deploy {
    /// `maxBody`: the largest request body, in bytes.
    max_body: Option<usize>,
    /// `maxSessions`: the most handshake-era sessions open at once.
    max_sessions: Option<usize>,
    /// `auth`: the bearer guard.
    pub(crate) auth: Option<Guard>,
    /// `rateLimit`: per client.
    rate: Option<RateLimit>,
    /// `redis`: stores shared with the other replicas.
    redis: Option<Redis>,
    /// `stateKeyFile`: the secret sealing `requestState`.
    state_key: Option<Vec<u8>>,
}

/// The bearer guard: the resource tokens must be issued for, and how they
/// are checked.
pub(crate) struct Guard {
    pub(crate) resource: ProtectedResource,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
}

/// Where the shared stores are.
struct Redis {
    url: RedisUrl,
    #[cfg_attr(
        not(feature = "redis"),
        expect(dead_code, reason = "read by the Redis stores")
    )]
    prefix: Option<String>,
}

impl Deploy {
    /// Reads the `gateway` section of `file` (when given) and the flags
    /// over it.
    ///
    /// # Errors
    /// [`UsageError::Deploy`] naming the key (and flag) of the first bad
    /// or missing value, or the file that cannot be read.
    pub(crate) fn read(
        file: Option<(&Path, &Value)>,
        args: &GatewayArgs,
    ) -> Result<Self, CliError> {
        let empty = Map::new();
        let (base, section) = match file {
            Some((path, root)) => {
                let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
                match root.get("gateway") {
                    None => (base, &empty),
                    Some(Value::Object(section)) => (base, section),
                    Some(_) => return Err(refuse("gateway", "must be an object")),
                }
            }
            None => (PathBuf::new(), &empty),
        };
        let file = Section {
            base: &base,
            values: section,
            path: "gateway",
        };
        let deploy = Deploy {
            max_body: positive(
                args.max_body,
                file.count("maxBody")?,
                "maxBody",
                "--max-body",
            )?,
            max_sessions: positive(
                args.max_sessions,
                file.count("maxSessions")?,
                "maxSessions",
                "--max-sessions",
            )?,
            auth: guard(&file.section("auth", "gateway.auth")?, args)?,
            rate: rate(&file.section("rateLimit", "gateway.rateLimit")?, args)?,
            redis: redis(&file.section("redis", "gateway.redis")?, args)?,
            state_key: state_key(&file, args)?,
        };
        let http_only = [
            (deploy.auth.is_some(), "gateway.auth (--jwks)"),
            (deploy.redis.is_some(), "gateway.redis (--redis)"),
            (deploy.max_body.is_some(), "gateway.maxBody (--max-body)"),
            (
                deploy.max_sessions.is_some(),
                "gateway.maxSessions (--max-sessions)",
            ),
        ];
        if args.listen.is_none() {
            if let Some((_, key)) = http_only.iter().find(|(set, _)| *set) {
                return Err(UsageError::Deploy {
                    key: (*key).to_owned(),
                    problem: "applies to the HTTP side only: add --listen ADDR".into(),
                }
                .into());
            }
        }
        Ok(deploy)
    }

    /// The server's builder with the rate limit and the `requestState`
    /// secret.
    pub(crate) fn server(&self, mut builder: ServerBuilder) -> ServerBuilder {
        if let Some(rate) = &self.rate {
            let limiter = Arc::new(Limiter::new(rate.clone()));
            let config = mcp_core::DispatcherConfig::default().with_rate_limit(limiter);
            builder = builder.dispatcher_config(config);
        }
        if let Some(key) = &self.state_key {
            builder = builder.request_state_key(key.clone());
        }
        builder
    }

    /// The HTTP side's config: `base` with the limits and the shared
    /// stores (connected here).
    ///
    /// # Errors
    /// [`CliError::Connection`] when Redis cannot be reached (its URL
    /// printed without its password).
    pub(crate) async fn http(
        &self,
        mut base: HttpServerConfig,
    ) -> Result<HttpServerConfig, CliError> {
        if let Some(bytes) = self.max_body {
            base = base.max_body(bytes);
        }
        if let Some(sessions) = self.max_sessions {
            base = base.max_sessions(sessions);
        }
        if let Some(redis) = &self.redis {
            base = base.shared(redis.connect().await?);
        }
        Ok(base)
    }
}

impl Redis {
    #[cfg(feature = "redis")]
    async fn connect(&self) -> Result<mcp_transport::store::SharedStores, CliError> {
        let mut config = mcp_transport::store::redis::RedisConfig::new(self.url.as_str());
        if let Some(prefix) = &self.prefix {
            config = config.prefix(prefix);
        }
        config
            .connect()
            .await
            .map_err(|error| CliError::Connection {
                doing: format!("connecting to the Redis at {:?}", self.url),
                source: Box::new(error),
            })
    }

    #[cfg(not(feature = "redis"))]
    async fn connect(&self) -> Result<mcp_transport::store::SharedStores, CliError> {
        Err(UsageError::Deploy {
            key: "gateway.redis (--redis)".into(),
            problem: format!(
                "{:?}: this `mcp` is built without Redis; build it with `--features redis`",
                self.url
            ),
        }
        .into())
    }
}

/// One object of the file, named by its path of keys.
struct Section<'a> {
    base: &'a Path,
    values: &'a Map<String, Value>,
    path: &'static str,
}

impl<'a> Section<'a> {
    fn key(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The object at `key`, named `path` in messages.
    fn section(&self, key: &str, path: &'static str) -> Result<Section<'a>, CliError> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let values = match self.values.get(key) {
            None | Some(Value::Null) => EMPTY.get_or_init(Map::new),
            Some(Value::Object(values)) => values,
            Some(_) => return Err(refuse(&self.key(key), "must be an object")),
        };
        Ok(Section {
            base: self.base,
            values,
            path,
        })
    }

    fn string(&self, key: &str) -> Result<Option<String>, CliError> {
        match self.values.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(refuse(&self.key(key), "must be a string")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, CliError> {
        match self.values.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text.clone()),
                    _ => Err(refuse(&self.key(key), "must be an array of strings")),
                })
                .collect(),
            Some(_) => Err(refuse(&self.key(key), "must be an array of strings")),
        }
    }

    fn count(&self, key: &str) -> Result<Option<u64>, CliError> {
        match self.values.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| refuse(&self.key(key), "must be a whole number")),
        }
    }

    fn path(&self, key: &str) -> Result<Option<PathBuf>, CliError> {
        Ok(self.string(key)?.map(|path| self.base.join(path)))
    }
}

fn refuse(key: &str, problem: &str) -> CliError {
    UsageError::Deploy {
        key: key.to_owned(),
        problem: problem.to_owned(),
    }
    .into()
}

/// The flag's value, else the file's; at least 1.
fn positive(
    flag: Option<u64>,
    file: Option<u64>,
    key: &str,
    name: &str,
) -> Result<Option<usize>, CliError> {
    match flag.or(file) {
        None => Ok(None),
        Some(0) => Err(refuse(
            &format!("gateway.{key} ({name})"),
            "must be at least 1",
        )),
        Some(n) => usize::try_from(n)
            .map(Some)
            .map_err(|_| refuse(&format!("gateway.{key} ({name})"), "is too large")),
    }
}

/// The same as [`positive`], as a `u32` (the limiter's counts).
fn positive_u32(
    flag: Option<u64>,
    file: Option<u64>,
    key: &str,
    name: &str,
) -> Result<Option<u32>, CliError> {
    positive(flag, file, key, name)?
        .map(|n| {
            u32::try_from(n).map_err(|_| refuse(&format!("gateway.{key} ({name})"), "is too large"))
        })
        .transpose()
}

fn guard(file: &Section<'_>, args: &GatewayArgs) -> Result<Option<Guard>, CliError> {
    let jwks = args.jwks.clone().or(file.path("jwks")?);
    let issuer = args.issuer.clone().or(file.string("issuer")?);
    let resource = args.resource.clone().or(file.string("resource")?);
    let server = args
        .authorization_server
        .clone()
        .or(file.string("authorizationServer")?);
    let scopes = if args.scopes.is_empty() {
        file.strings("scopes")?
    } else {
        args.scopes.clone()
    };
    let given = jwks.is_some()
        || issuer.is_some()
        || resource.is_some()
        || server.is_some()
        || !scopes.is_empty();
    if !given {
        return Ok(None);
    }
    let missing = |key: &str, flag: &str, what: &str| UsageError::Deploy {
        key: format!("gateway.auth.{key} ({flag})"),
        problem: format!("is missing: the bearer guard needs {what}"),
    };
    let jwks =
        jwks.ok_or_else(|| missing("jwks", "--jwks", "the JWKS file its tokens are signed with"))?;
    let issuer = issuer.ok_or_else(|| {
        missing(
            "issuer",
            "--issuer",
            "the issuer (`iss`) its tokens must name",
        )
    })?;
    let resource = resource.ok_or_else(|| {
        missing(
            "resource",
            "--resource",
            "the gateway's URL as its clients reach it (the audience its tokens must name)",
        )
    })?;
    for (key, flag, url) in [
        ("issuer", "--issuer", Some(&issuer)),
        ("resource", "--resource", Some(&resource)),
        (
            "authorizationServer",
            "--authorization-server",
            server.as_ref(),
        ),
    ] {
        if let Some(url) = url {
            if url::Url::parse(url).is_err() {
                return Err(refuse(
                    &format!("gateway.auth.{key} ({flag})"),
                    &format!("`{url}` is not an absolute URL"),
                ));
            }
        }
    }
    let key = "gateway.auth.jwks (--jwks)";
    let text = read_bounded(&jwks, key)?;
    let document: Value = serde_json::from_slice(&text)
        .map_err(|e| refuse(key, &format!("{} is not JSON: {e}", jwks.display())))?;
    let verifier = JwtVerifier::from_jwks(&document)
        .map_err(|e| refuse(key, &format!("{}: {e}", jwks.display())))?
        .with_issuer(issuer.clone());
    let mut protected = ProtectedResource::new(resource, server.unwrap_or(issuer));
    if !scopes.is_empty() {
        protected = protected
            .with_scopes_supported(scopes.iter().cloned())
            .with_required_scopes(scopes);
    }
    Ok(Some(Guard {
        resource: protected,
        verifier: Arc::new(verifier),
    }))
}

fn rate(file: &Section<'_>, args: &GatewayArgs) -> Result<Option<RateLimit>, CliError> {
    // A rate flag replaces the file's rate whole (one of the two).
    let flagged = args.rate_per_second.is_some() || args.rate_per_minute.is_some();
    let (file_second, file_minute) = if flagged {
        (None, None)
    } else {
        (file.count("perSecond")?, file.count("perMinute")?)
    };
    let per_second = positive_u32(
        args.rate_per_second,
        file_second,
        "rateLimit.perSecond",
        "--rate-per-second",
    )?;
    let per_minute = positive_u32(
        args.rate_per_minute,
        file_minute,
        "rateLimit.perMinute",
        "--rate-per-minute",
    )?;
    let burst = positive_u32(
        args.burst,
        file.count("burst")?,
        "rateLimit.burst",
        "--burst",
    )?;
    let concurrent = positive_u32(
        args.max_concurrent,
        file.count("maxConcurrent")?,
        "rateLimit.maxConcurrent",
        "--max-concurrent",
    )?;
    let mut limit = match (per_second, per_minute) {
        (Some(_), Some(_)) => {
            return Err(refuse(
                "gateway.rateLimit.perSecond (--rate-per-second)",
                "and gateway.rateLimit.perMinute (--rate-per-minute) are both set: give one",
            ));
        }
        (Some(n), None) => RateLimit::per_second(n),
        (None, Some(n)) => RateLimit::per_minute(n),
        (None, None) if burst.is_some() || concurrent.is_some() => {
            return Err(refuse(
                "gateway.rateLimit.perSecond (--rate-per-second)",
                "is missing: a burst or concurrency cap needs a rate (perSecond or perMinute)",
            ));
        }
        (None, None) => return Ok(None),
    };
    if let Some(burst) = burst {
        limit = limit.with_burst(burst);
    }
    if let Some(concurrent) = concurrent {
        limit = limit.with_max_concurrent(concurrent);
    }
    Ok(Some(limit))
}

fn redis(file: &Section<'_>, args: &GatewayArgs) -> Result<Option<Redis>, CliError> {
    let url = args
        .redis
        .clone()
        .or(file.string("url")?.map(RedisUrl::from));
    let prefix = args.redis_prefix.clone().or(file.string("prefix")?);
    let Some(url) = url else {
        if prefix.is_some() {
            return Err(refuse(
                "gateway.redis.url (--redis)",
                "is missing: a key prefix needs a Redis",
            ));
        }
        return Ok(None);
    };
    let known = ["redis://", "rediss://", "redis+sentinel://"];
    if !known.iter().any(|scheme| url.as_str().starts_with(scheme)) {
        return Err(refuse(
            "gateway.redis.url (--redis)",
            &format!(
                "`{url:?}` is not a Redis URL (redis://[:PASSWORD@]HOST:PORT[/DB] or redis+sentinel://…)"
            ),
        ));
    }
    if prefix.as_deref() == Some("") {
        return Err(refuse(
            "gateway.redis.prefix (--redis-prefix)",
            "must not be empty",
        ));
    }
    Ok(Some(Redis { url, prefix }))
}

fn state_key(file: &Section<'_>, args: &GatewayArgs) -> Result<Option<Vec<u8>>, CliError> {
    let Some(path) = args.state_key_file.clone().or(file.path("stateKeyFile")?) else {
        return Ok(None);
    };
    let key = "gateway.stateKeyFile (--state-key-file)";
    let mut secret = read_bounded(&path, key)?;
    // A trailing newline from `echo` or an editor is not part of it.
    while secret.last().is_some_and(u8::is_ascii_whitespace) {
        secret.pop();
    }
    if secret.len() < MIN_STATE_KEY {
        return Err(refuse(
            key,
            &format!(
                "{} holds {} bytes; a secret needs at least {MIN_STATE_KEY} random bytes \
                 (e.g. `head -c 48 /dev/urandom | base64 > state.key`)",
                path.display(),
                secret.len()
            ),
        ));
    }
    Ok(Some(secret))
}

/// The file at `path`, at most [`MAX_FILE`] bytes.
fn read_bounded(path: &Path, key: &str) -> Result<Vec<u8>, CliError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)
        .map_err(|e| refuse(key, &format!("cannot read {}: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(key, &format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(refuse(
            key,
            &format!("{} is larger than {MAX_FILE} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::args::Cli;

    #[test]
    fn the_parsed_flags_debug_hides_the_redis_password() {
        let line = "mcp --url http://127.0.0.1:9/mcp gateway --listen 127.0.0.1:0 \
                    --redis redis://:s3cret@127.0.0.1:6379/0";
        let cli = Cli::try_parse_from(line.split_whitespace()).expect("parses");
        let shown = format!("{cli:?}");
        assert!(shown.contains("redis://***@127.0.0.1:6379/0"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
