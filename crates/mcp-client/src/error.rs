//! The one error type of this crate.

use mcp_core::TransportError;
use mcp_types::ErrorObject;
use mcp_types::untrusted::Escaped;

/// What went wrong talking to a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request failed: the server answered with an error
    /// ([`remote`](Self::remote)), it timed out, the connection closed
    /// ([`is_connection_closed`](Self::is_connection_closed)), or the
    /// transport failed it ([`is_transport`](Self::is_transport)).
    #[error(transparent)]
    Request(#[from] mcp_core::Error),
    /// The server answered `initialize` with a revision this client does not speak.
    #[error(
        "the server answered with protocol revision `{}`, which this client does not support \
         (it speaks {supported}); use a server that supports one of those",
        Escaped::name(.answered)
    )]
    UnsupportedProtocolVersion {
        /// What the server answered.
        answered: String,
        /// What this client speaks.
        supported: String,
    },
    /// A `server/discover` result (given to
    /// [`adopt`](crate::ClientSession::adopt), or answered by the server)
    /// lists no stateless revision this client speaks.
    #[error(
        "the server speaks {offered:?} and this client speaks {supported}: no revision in \
         common; use the handshake era (`initialize`) or a newer client"
    )]
    NoMutualRevision {
        /// The revisions the server listed.
        offered: Vec<String>,
        /// The stateless revisions this client speaks.
        supported: String,
    },
    /// `tools/call` answered with a result of an extension's own shape (a
    /// [claim](crate::extension::ResultClaim)); it carries the parsed value.
    #[error(
        "the tool answered with a `{}` result of extension `{}`; call `call_tool_claimed` to receive it",
        .result.result_type(),
        .result.extension()
    )]
    UnexpectedClaimedResult {
        /// The claimed result, parsed into its claim's type.
        result: crate::extension::claims::ClaimedResult,
    },
    /// A skill file read from the server does not match its skill entry
    /// (SEP-2640); the content was not used.
    #[error(
        "skill file `{}` failed verification: {reason}; it was not used",
        Escaped::name(.uri)
    )]
    SkillVerification {
        /// The file's URI.
        uri: String,
        /// What did not match.
        reason: crate::skill_mismatch::SkillMismatch,
    },
    /// The server's answer does not match the method's result schema.
    // serde quotes what it read (an unknown variant or field) as it came.
    #[error(
        "the server's answer to `{method}` is not a valid result: {}",
        Escaped::one_line(&.source.to_string())
    )]
    InvalidResult {
        /// The method.
        method: &'static str,
        /// What serde found wrong.
        source: serde_json::Error,
    },
    /// A tool's result does not match the output schema it declared.
    #[error(
        "the result of tool `{tool}` does not match its output schema: {}",
        Escaped::one_line(.reason)
    )]
    InvalidToolResult {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// Params could not be serialized.
    #[error("could not serialize the params of `{method}`: {source}")]
    Serialize {
        /// The method.
        method: &'static str,
        /// The serializer's error.
        source: serde_json::Error,
    },
    /// The server process could not be started or stopped.
    #[error(transparent)]
    Process(#[from] mcp_transport::Error),
    /// A session group refused a server whose component names collide with
    /// those already in the group.
    #[error(
        "{kind} {names:?} already exist in the group; give a naming hook to tell servers apart"
    )]
    DuplicateComponents {
        /// "tools", "resources" or "prompts".
        kind: &'static str,
        /// The colliding names.
        names: Vec<String>,
    },
    /// The server asked for input this client has no callback for.
    #[error(
        "the server asked for `{method}` input, but no callback answers it; give the ClientConfig \
         one (on_sampling, on_elicitation, on_list_roots)"
    )]
    NoCallback {
        /// The input request's method.
        method: &'static str,
    },
    /// A callback of the host refused what the server asked (its error is
    /// the host's own, not the server's).
    #[error("the host's `{method}` callback refused: {}", .error.message)]
    InputRefused {
        /// The input request's method.
        method: &'static str,
        /// What the callback answered.
        error: ErrorObject,
    },
    /// A `list_all_*` call reached one of its [`ListLimits`](crate::ListLimits):
    /// the server keeps handing out cursors, or its pages are too many or
    /// too large to hold.
    #[error(
        "`{method}` stopped at {limit}; the server's list is larger than this client accepts \
         (raise ClientConfig::list_limits if it is legitimate)"
    )]
    ListLimit {
        /// The list method.
        method: &'static str,
        /// Which limit was reached.
        limit: ListLimit,
    },
    /// The server forgot the session (or stopped accepting the negotiated
    /// revision) more often than the client starts sessions anew
    /// ([`ClientConfig::session_restarts`](crate::ClientConfig::session_restarts)),
    /// or starting one failed.
    #[error(
        "the session with the server was lost and could not be started anew ({reason}); \
         check that the server keeps its sessions, then reconnect"
    )]
    SessionLost {
        /// What went wrong last.
        reason: SessionLoss,
    },
    /// A request declared an extension of its own
    /// ([`RequestOptions::with_extension`](crate::RequestOptions::with_extension))
    /// in the handshake era, whose capabilities are fixed at `initialize`.
    #[error(
        "`{method}` cannot declare extension(s) {extensions} for itself at protocol revision \
         {revision}: the handshake era declares capabilities once, at initialize; declare them \
         with ClientConfig::extension instead"
    )]
    ExtensionPerRequest {
        /// The method.
        method: &'static str,
        /// The negotiated revision.
        revision: &'static str,
        /// The extensions the request declared, comma-separated.
        extensions: String,
    },
    /// The method does not exist at the negotiated protocol revision.
    #[error("`{method}` does not exist at protocol revision {revision}; use {instead}")]
    NotInThisEra {
        /// The method.
        method: &'static str,
        /// The negotiated revision.
        revision: &'static str,
        /// What to use instead.
        instead: &'static str,
    },
    /// A request kept asking for input.
    #[error("`{method}` still asked for input after {rounds} rounds; giving up")]
    TooManyInputRounds {
        /// The request's method.
        method: &'static str,
        /// How many rounds were answered.
        rounds: usize,
    },
    /// A task was cancelled before it produced a result.
    #[error(
        "task `{}` was cancelled before it produced a result",
        Escaped::name(.task_id)
    )]
    TaskCancelled {
        /// The task.
        task_id: String,
    },
    /// A task failed with a JSON-RPC error (2026-07-28, where the error is
    /// part of the task's state rather than the answer to a request).
    #[error(
        "task `{}` failed: {}",
        Escaped::name(.task_id),
        Escaped::one_line(&.error.message)
    )]
    TaskFailed {
        /// The task.
        task_id: String,
        /// The error the server recorded for it.
        error: ErrorObject,
    },
    /// A session group has no server of that id: it was never added, or
    /// was already disconnected.
    #[error("{id} is not in the group (never added, or already disconnected)")]
    UnknownServer {
        /// The id asked for.
        id: crate::server_id::ServerId,
    },
    /// A session group has no component of that name.
    #[error("no {kind} named `{name}` in the group")]
    UnknownComponent {
        /// "tool".
        kind: &'static str,
        /// The name asked for.
        name: String,
    },
}

/// Which of a list's [`ListLimits`](crate::ListLimits) was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListLimit {
    /// This many pages.
    Pages(usize),
    /// This many items.
    Items(usize),
    /// This many bytes.
    Bytes(usize),
}

impl std::fmt::Display for ListLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListLimit::Pages(n) => write!(f, "the limit of {n} pages"),
            ListLimit::Items(n) => write!(f, "the limit of {n} items"),
            ListLimit::Bytes(n) => write!(f, "the limit of {n} bytes"),
        }
    }
}

/// Why a lost session could not be started anew.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionLoss {
    /// The client already started this many sessions within the window.
    #[error("{attempts} new sessions within {window:?}, the limit")]
    TooManyRestarts {
        /// The restarts the window allows.
        attempts: u32,
        /// The window.
        window: std::time::Duration,
    },
    /// Starting the new session failed.
    #[error("starting a new session failed: {0}")]
    Failed(#[source] Box<Error>),
}

impl Error {
    /// Whether the server no longer knew the session: the client starts a
    /// new one on its own (see
    /// [`ClientConfig::session_restarts`](crate::ClientConfig::session_restarts)).
    pub fn is_session_expired(&self) -> bool {
        matches!(
            self.transport(),
            Some(TransportError::SessionExpired { .. })
        ) || matches!(self, Error::SessionLost { .. })
    }

    /// The server's JSON-RPC error, when the server answered with one (or
    /// recorded one for a failed task, [`TaskFailed`](Self::TaskFailed));
    /// never a failure of this side or of the connection.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            Error::Request(mcp_core::Error::Remote(e)) => Some(e),
            Error::TaskFailed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The URL elicitations the server asks the user to complete before it
    /// can serve the request, when it answered with `-32042` (URL
    /// elicitation required, 2025-11-25): the Python SDK's
    /// `UrlElicitationRequiredError.from_error(...).elicitations`. Send the
    /// user to each URL, then retry the request.
    ///
    /// `None` for any other error, and for a `-32042` whose `data` cannot
    /// be read (read it with
    /// [`UrlElicitationRequiredData::from_error`](mcp_types::UrlElicitationRequiredData::from_error)
    /// on [`remote`](Self::remote) to see why).
    pub fn url_elicitation_required(&self) -> Option<mcp_types::UrlElicitationRequiredData> {
        let remote = self
            .remote()
            .filter(|e| e.code == mcp_types::ErrorCode::URL_ELICITATION_REQUIRED)?;
        mcp_types::UrlElicitationRequiredData::from_error(remote)
            .inspect_err(|error| tracing::debug!(%error, "an unreadable -32042 error"))
            .ok()
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Request(mcp_core::Error::Timeout { .. }))
    }

    /// Whether there is no connection to answer on: it closed, broke before
    /// the answer was complete, or could not be opened. Reconnecting is the
    /// remedy.
    pub fn is_connection_closed(&self) -> bool {
        match self {
            Error::Request(mcp_core::Error::ConnectionClosed { .. } | mcp_core::Error::Closed) => {
                true
            }
            Error::Request(mcp_core::Error::Transport { source, .. }) => matches!(
                source,
                TransportError::Closed
                    | TransportError::Connect(_)
                    | TransportError::ConnectionLost(_)
            ),
            _ => false,
        }
    }

    /// Whether the transport failed the request (the connection, an HTTP
    /// status without a JSON-RPC answer, an unreadable answer, a failed
    /// authorization): the server did not answer it.
    pub fn is_transport(&self) -> bool {
        self.transport().is_some()
    }

    /// What the transport reported, when it failed the request.
    pub fn transport(&self) -> Option<&TransportError> {
        match self {
            Error::Request(mcp_core::Error::Transport { source, .. }) => Some(source),
            _ => None,
        }
    }

    /// The HTTP status the server answered with, when it sent no JSON-RPC
    /// message (a 500 with an HTML page, a 401 no credentials could answer).
    pub fn http_status(&self) -> Option<u16> {
        match self.transport() {
            Some(TransportError::Http { status }) => Some(*status),
            _ => None,
        }
    }

    /// Why authorization failed, when the OAuth client could not obtain
    /// credentials for the request.
    #[cfg(feature = "auth")]
    pub fn auth(&self) -> Option<&crate::auth::AuthError> {
        match self.transport() {
            Some(TransportError::Auth(source)) => source.downcast_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_text_is_shown_escaped_and_its_ids_cut() {
        let failed = Error::TaskFailed {
            task_id: "t\u{1b}]0;x\u{7}".into(),
            error: ErrorObject::internal_error("boom\r\nERROR forged\u{202e}"),
        };
        assert_eq!(
            failed.to_string(),
            r"task `t\x1b]0;x\x07` failed: boom\x0d\x0aERROR forged\u{202e}"
        );
        let cancelled = Error::TaskCancelled {
            task_id: "c".repeat(10_000),
        };
        let shown = cancelled.to_string();
        assert!(shown.len() < 400, "{shown}");
        assert!(
            shown.contains(&format!("`{}…`", "c".repeat(200))),
            "{shown}"
        );
        let revision = Error::UnsupportedProtocolVersion {
            answered: "2099\u{1b}[2J".into(),
            supported: "2025-11-25".into(),
        };
        assert!(
            revision
                .to_string()
                .starts_with(r"the server answered with protocol revision `2099\x1b[2J`, which"),
            "{revision}"
        );
        let invalid = Error::InvalidToolResult {
            tool: "t".into(),
            reason: "\"\u{202e}x\" is not of type \"integer\"".into(),
        };
        assert_eq!(
            invalid.to_string(),
            r#"the result of tool `t` does not match its output schema: "\u{202e}x" is not of type "integer""#
        );
        let source = serde_json::from_str::<mcp_types::LoggingLevel>(r#""\u001b[2J""#)
            .expect_err("no such level");
        assert!(source.to_string().contains('\u{1b}'), "serde quotes it raw");
        let invalid = Error::InvalidResult {
            method: "logging/setLevel",
            source,
        };
        assert!(
            invalid.to_string().contains(r"unknown variant `\x1b[2J`"),
            "{invalid}"
        );
        let skill = Error::SkillVerification {
            uri: "skill://a\nb/SKILL.md".into(),
            reason: crate::skill_mismatch::SkillMismatch::FrontmatterField {
                field: "na\u{1b}me".into(),
            },
        };
        assert_eq!(
            skill.to_string(),
            concat!(
                r"skill file `skill://a\x0ab/SKILL.md` failed verification: ",
                r"frontmatter field `na\x1bme` differs from the entry's; it was not used"
            )
        );
    }
}
