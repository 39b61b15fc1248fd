//! Why a run failed, and the exit code each failure maps to.

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What went wrong. Each kind has its exit code ([`CliError::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The command line asks for something that cannot be done as given.
    #[error("{0}")]
    Usage(#[from] UsageError),
    /// The server could not be reached or the connection broke (spawning
    /// it, the network, signing in).
    #[error("{doing}: {source}")]
    Connection {
        /// What was being done ("connecting to the server", ...).
        doing: String,
        /// What failed.
        source: BoxError,
    },
    /// The server refused the request or answered with something invalid.
    #[error("{doing}: {source}")]
    Protocol {
        /// What was being done.
        doing: String,
        /// What the server said, or what was wrong with its answer.
        source: BoxError,
    },
    /// Writing the output failed (a closed pipe).
    #[error("could not write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// A mistake on the command line that clap cannot see.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UsageError {
    /// Neither `--stdio` nor `--url`.
    #[error("say which server to talk to: --stdio \"<command> <args>\" or --url <endpoint>")]
    NoServer,
    /// `--stdio` with an empty or unbalanced command line.
    #[error("--stdio: {0}")]
    Command(&'static str),
    /// A `--header` without a colon or with an invalid name or value.
    #[error("--header `{0}`: give it as `Name: value`")]
    Header(String),
    /// `--header` with `--stdio`.
    #[error("--header applies to --url only")]
    HeaderWithStdio,
    /// `--args` is not a JSON object.
    #[error("--args must be a JSON object: {0}")]
    ArgsJson(String),
    /// A `key=value` without `=`.
    #[error("`{0}` is not key=value")]
    Pair(String),
    /// A value that the schema says is a number, integer or boolean and is not.
    #[error("`{key}` must be {expected} (the tool's input schema says so), not `{value}`")]
    Typed {
        /// The argument.
        key: String,
        /// "a number", "an integer", "true or false".
        expected: &'static str,
        /// What was given.
        value: String,
    },
    /// `gateway` with nothing to serve, or nowhere to serve it.
    #[error("{0}")]
    Gateway(&'static str),
    /// A deploy setting of `gateway` (its config file's `gateway` section
    /// or a flag) that is bad or missing.
    #[error("{key} {problem}")]
    Deploy {
        /// The key and its flag: `gateway.rateLimit.burst (--burst)`.
        key: String,
        /// What is wrong with it, and what to do.
        problem: String,
    },
    /// `complete` without `--prompt` or `--template`.
    #[error("say what to complete: --prompt NAME or --template URI_TEMPLATE")]
    NoReference,
}

impl CliError {
    /// 2 usage, 3 connection, 4 protocol (1, a tool's own error, is not a
    /// `CliError`: the call succeeded).
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Connection { .. } | CliError::Output(_) => 3,
            CliError::Protocol { .. } => 4,
        }
    }

    /// Sorts an error of the client by what failed: the way there
    /// (connection) or the server's answer (protocol). `doing` says what was
    /// being done, for the message.
    pub(crate) fn from_client(doing: &str, error: mcp_client::Error) -> Self {
        let doing = doing.to_owned();
        let local = matches!(error, mcp_client::Error::Process(_))
            || error.is_transport()
            || error.is_connection_closed()
            || error.is_timeout();
        if error.remote().is_none() && local {
            CliError::Connection {
                doing,
                source: Box::new(error),
            }
        } else {
            CliError::Protocol {
                doing,
                source: Box::new(error),
            }
        }
    }
}
