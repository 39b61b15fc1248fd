//! The one error type of this crate.

/// What went wrong configuring or running a gateway.
///
/// Messages name the upstream (and the config entry and field) they are
/// about, never a secret: an upstream's environment values and header
/// values appear in no error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration could not be read as JSON.
    #[error("the gateway config is not valid JSON: {0}; fix the file's syntax")]
    ConfigSyntax(#[source] serde_json::Error),
    /// The configuration is larger than the gateway reads.
    #[error("the gateway config is {size} bytes, more than the {limit} read; shorten it")]
    ConfigTooLarge {
        /// Its size.
        size: usize,
        /// The most read ([`Limits::max_config_bytes`](crate::Limits::max_config_bytes)).
        limit: usize,
    },
    /// One entry of the configuration is refused.
    #[error("upstream `{entry}` in the gateway config: `{field}` {problem}")]
    Config {
        /// The entry's name (its key under `mcpServers`), or `mcpServers`
        /// itself when the section is wrong.
        entry: String,
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it, and what it should be.
        problem: String,
    },
    /// More upstreams are configured than the limit allows.
    #[error(
        "{count} upstreams configured, more than the {limit} allowed; raise \
         `Limits::max_upstreams` or serve fewer"
    )]
    TooManyUpstreams {
        /// How many were configured.
        count: usize,
        /// The limit ([`Limits::max_upstreams`](crate::Limits::max_upstreams)).
        limit: usize,
    },
    /// A name or URI the downstream asked for is not in the merged catalog.
    // The name is the asker's text, shown escaped and cut (it reaches logs).
    #[error(
        "no upstream serves {kind} `{}`; list the gateway's {kind}s to see what it offers",
        crate::naming::shown(name)
    )]
    NotFound {
        /// "tool", "prompt" or "resource".
        kind: &'static str,
        /// The name or URI asked for.
        name: String,
    },
    /// The upstream that serves the request is not connected right now
    /// (starting, or restarting after it failed).
    #[error("upstream `{upstream}` is not connected ({state}); retry once it is back")]
    Unavailable {
        /// The upstream's name.
        upstream: String,
        /// What it is doing instead.
        state: String,
    },
    /// The upstream's connection ended while the request was in flight (its
    /// process died, or its HTTP session could not go on); the gateway
    /// restarts it, the request is not retried.
    #[error(
        "upstream `{upstream}` went away during the request ({source}); it is being \
         restarted: retry the request"
    )]
    UpstreamLost {
        /// The upstream's name.
        upstream: String,
        /// What the client saw.
        #[source]
        source: mcp_client::Error,
    },
    /// The gateway follows as many upstream tasks as it may: a task-augmented
    /// call is refused until one ends.
    #[error(
        "the gateway follows {limit} upstream tasks already, as many as it may; wait for \
         one to end, or raise `Limits::max_tasks`"
    )]
    TooManyTasks {
        /// The limit ([`Limits::max_tasks`](crate::Limits::max_tasks)).
        limit: usize,
    },
    /// The upstream running a task went away (its process restarted, its
    /// session ended) or no longer knows the task: the task is lost with
    /// it. The upstream's own words are not repeated (they may name its
    /// task id, which the gateway keeps to itself); they are the source.
    #[error(
        "upstream `{upstream}` lost the task it ran for this call (it restarted, its \
         session ended or the task expired there); call the tool again"
    )]
    TaskLost {
        /// The upstream's name.
        upstream: String,
        /// What the client saw.
        #[source]
        source: mcp_client::Error,
    },
    /// The upstream answered a call made as a task with neither a task nor
    /// a result.
    #[error(
        "upstream `{upstream}` answered the call made as a task with something the \
         gateway cannot follow; call the tool without a task"
    )]
    TaskNotStarted {
        /// The upstream's name.
        upstream: String,
    },
    /// A 2026-07-28 upstream's task waited for input, which the gateway
    /// does not relay for a task; it was cancelled upstream.
    #[error(
        "upstream `{upstream}`'s task asked for input, which the gateway does not pass on for \
         a task, so it was cancelled; call the tool without a task to be asked"
    )]
    TaskAsked {
        /// The upstream's name.
        upstream: String,
    },
    /// The upstream cancelled the task it ran for a downstream task.
    #[error("upstream `{upstream}` cancelled the task it ran for this call; call the tool again")]
    TaskCancelled {
        /// The upstream's name.
        upstream: String,
    },
    /// The upstream's task did not end within the gateway's limit; it was
    /// cancelled.
    #[error(
        "upstream `{upstream}`'s task did not end within {timeout:?} and was cancelled; \
         raise `Limits::task_timeout` for longer work"
    )]
    TaskTimeout {
        /// The upstream's name.
        upstream: String,
        /// The limit ([`Limits::task_timeout`](crate::Limits::task_timeout)).
        timeout: std::time::Duration,
    },
    /// The downstream server could not be built, or the merged catalog
    /// not registered in it.
    #[error("the gateway's server: {0}")]
    Server(#[source] mcp_server::Error),
    /// The upstream answered the request with an error, or the call to it
    /// failed otherwise.
    #[error("upstream `{upstream}`: {source}")]
    Upstream {
        /// The upstream's name.
        upstream: String,
        /// The client's error, with the server's error object if it sent one.
        #[source]
        source: mcp_client::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn a_name_not_found_is_shown_escaped_and_cut() {
        let name = format!("a://\u{1b}]0;x\u{7}\r\n{}", "p".repeat(5_000));
        let text = Error::NotFound {
            kind: "resource",
            name,
        }
        .to_string();
        assert!(
            text.starts_with(r"no upstream serves resource `a://\x1b]0;x\x07\x0d\x0app"),
            "{text}"
        );
        assert!(text.contains("p…`; list"), "cut: {text}");
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(text.len() < 400, "{} bytes", text.len());
    }
}
