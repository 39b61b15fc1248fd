//! Which methods exist at which revision, in which direction.
//!
//! Version gating lives here, in one table, rather than in scattered `if`s:
//! a dispatcher asks [`MethodInfo::lookup`] whether a method may be sent by a
//! side at a revision. The table is checked against every revision's official
//! schema by this crate's tests.

use crate::revision::Revision;

/// A set of revisions, as a bit set over [`Revision::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RevisionSet(u8);

impl RevisionSet {
    /// No revision.
    pub const NONE: RevisionSet = RevisionSet(0);
    /// Every known revision.
    pub const ALL: RevisionSet = RevisionSet::from_slice(&Revision::ALL);
    /// The handshake-era revisions.
    pub const HANDSHAKE: RevisionSet = RevisionSet::from_slice(&Revision::HANDSHAKE);
    /// The stateless-era revisions.
    pub const STATELESS: RevisionSet = RevisionSet::from_slice(&Revision::STATELESS);

    const fn bit(revision: Revision) -> u8 {
        1 << (revision as u8)
    }

    /// The set holding exactly `revisions`.
    pub const fn from_slice(revisions: &[Revision]) -> RevisionSet {
        let mut bits = 0;
        let mut i = 0;
        while i < revisions.len() {
            bits |= Self::bit(revisions[i]);
            i += 1;
        }
        RevisionSet(bits)
    }

    /// Every revision from `first` on (inclusive), in both eras.
    pub const fn since(first: Revision) -> RevisionSet {
        RevisionSet(!(Self::bit(first) - 1) & Self::ALL.0)
    }

    /// Every revision from `first` to `last`, inclusive.
    pub const fn between(first: Revision, last: Revision) -> RevisionSet {
        RevisionSet(Self::since(first).0 & !Self::since(last).0 | Self::bit(last))
    }

    /// Whether `revision` is in the set.
    pub const fn contains(self, revision: Revision) -> bool {
        self.0 & Self::bit(revision) != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The revisions in the set, oldest first.
    pub fn iter(self) -> impl Iterator<Item = Revision> {
        Revision::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

/// Whether a method is a request or a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// Expects a response.
    Request,
    /// Gets no response.
    Notification,
}

/// Which side sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The client (host) side.
    Client,
    /// The server side.
    Server,
}

/// One method of the protocol and where it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The wire name, such as `"tools/call"`.
    pub name: &'static str,
    /// Request or notification.
    pub kind: MessageKind,
    /// The revisions at which the client may send it.
    pub from_client: RevisionSet,
    /// The revisions at which the server may send it.
    pub from_server: RevisionSet,
    /// The revisions at which the server may ask for it as an input request
    /// inside an `InputRequiredResult` (a bare `{method, params}`, not a
    /// JSON-RPC message).
    pub as_input_request: RevisionSet,
    /// For requests, the schema names of the results a successful response may
    /// carry, each with the revisions where it may (the first is the usual one;
    /// `"Result"` is the empty result).
    pub results: &'static [(&'static str, RevisionSet)],
}

impl MethodInfo {
    /// The entry for `name`, whatever its revisions.
    pub fn find(name: &str) -> Option<&'static MethodInfo> {
        METHODS.iter().find(|m| m.name == name)
    }

    /// The entry for `name` if `sender` may send it at `revision`.
    ///
    /// # Examples
    /// ```
    /// use mcp_types::{MethodInfo, Revision, Side};
    /// assert!(MethodInfo::lookup("initialize", Revision::V2025_11_25, Side::Client).is_some());
    /// assert!(MethodInfo::lookup("initialize", Revision::V2026_07_28, Side::Client).is_none());
    /// assert!(MethodInfo::lookup("server/discover", Revision::V2026_07_28, Side::Client).is_some());
    /// ```
    pub fn lookup(name: &str, revision: Revision, sender: Side) -> Option<&'static MethodInfo> {
        Self::find(name).filter(|m| m.is_sent_by(sender, revision))
    }

    /// Whether `sender` may send this method at `revision`.
    pub const fn is_sent_by(&self, sender: Side, revision: Revision) -> bool {
        match sender {
            Side::Client => self.from_client.contains(revision),
            Side::Server => self.from_server.contains(revision),
        }
    }

    /// The schema names of the results this request may have at `revision`.
    pub fn results_at(&self, revision: Revision) -> impl Iterator<Item = &'static str> {
        self.results
            .iter()
            .filter(move |(_, revisions)| revisions.contains(revision))
            .map(|(name, _)| *name)
    }

    /// Whether the method exists at `revision` in either direction, as a
    /// message or as an input request.
    pub const fn exists_at(&self, revision: Revision) -> bool {
        self.from_client.contains(revision)
            || self.from_server.contains(revision)
            || self.as_input_request.contains(revision)
    }
}

use Revision::{V2025_06_18, V2025_11_25};

const HANDSHAKE: RevisionSet = RevisionSet::HANDSHAKE;
const STATELESS: RevisionSet = RevisionSet::STATELESS;
const ALL: RevisionSet = RevisionSet::ALL;
const NONE: RevisionSet = RevisionSet::NONE;
const ONLY_2025_11_25: RevisionSet = RevisionSet::from_slice(&[V2025_11_25]);
const HANDSHAKE_SINCE_2025_06_18: RevisionSet = RevisionSet::between(V2025_06_18, V2025_11_25);

const fn request(
    name: &'static str,
    from_client: RevisionSet,
    from_server: RevisionSet,
    results: &'static [(&'static str, RevisionSet)],
) -> MethodInfo {
    MethodInfo {
        name,
        kind: MessageKind::Request,
        from_client,
        from_server,
        as_input_request: NONE,
        results,
    }
}

const fn notification(
    name: &'static str,
    from_client: RevisionSet,
    from_server: RevisionSet,
) -> MethodInfo {
    MethodInfo {
        name,
        kind: MessageKind::Notification,
        from_client,
        from_server,
        as_input_request: NONE,
        results: &[],
    }
}

/// A task-augmented 2025-11-25 request is answered with a `CreateTaskResult`
/// (the spec's tasks page; the schema's result unions leave it out).
const TASK_CREATED: (&str, RevisionSet) = ("CreateTaskResult", ONLY_2025_11_25);
/// Multi Round-Trip Requests may answer with an `InputRequiredResult` (2026).
const INPUT_REQUIRED: (&str, RevisionSet) = ("InputRequiredResult", STATELESS);

/// A server-to-client request that the stateless era carries as an input request.
const fn input_request(
    name: &'static str,
    from_server: RevisionSet,
    results: &'static [(&'static str, RevisionSet)],
) -> MethodInfo {
    MethodInfo {
        as_input_request: STATELESS,
        ..request(name, NONE, from_server, results)
    }
}

/// Every method of every known revision.
pub static METHODS: &[MethodInfo] = &[
    // Lifecycle.
    request("initialize", HANDSHAKE, NONE, &[("InitializeResult", ALL)]),
    request("ping", HANDSHAKE, HANDSHAKE, &[("Result", ALL)]),
    request(
        "server/discover",
        STATELESS,
        NONE,
        &[("DiscoverResult", ALL)],
    ),
    // Server features.
    request("tools/list", ALL, NONE, &[("ListToolsResult", ALL)]),
    request(
        "tools/call",
        ALL,
        NONE,
        &[("CallToolResult", ALL), INPUT_REQUIRED, TASK_CREATED],
    ),
    request("resources/list", ALL, NONE, &[("ListResourcesResult", ALL)]),
    request(
        "resources/templates/list",
        ALL,
        NONE,
        &[("ListResourceTemplatesResult", ALL)],
    ),
    request(
        "resources/read",
        ALL,
        NONE,
        &[("ReadResourceResult", ALL), INPUT_REQUIRED],
    ),
    request("resources/subscribe", HANDSHAKE, NONE, &[("Result", ALL)]),
    request("resources/unsubscribe", HANDSHAKE, NONE, &[("Result", ALL)]),
    request("prompts/list", ALL, NONE, &[("ListPromptsResult", ALL)]),
    request(
        "prompts/get",
        ALL,
        NONE,
        &[("GetPromptResult", ALL), INPUT_REQUIRED],
    ),
    request("completion/complete", ALL, NONE, &[("CompleteResult", ALL)]),
    request("logging/setLevel", HANDSHAKE, NONE, &[("Result", ALL)]),
    request(
        "subscriptions/listen",
        STATELESS,
        NONE,
        &[("SubscriptionsListenResult", ALL)],
    ),
    // Tasks (experimental, 2025-11-25 only; either side may host tasks).
    request(
        "tasks/get",
        ONLY_2025_11_25,
        ONLY_2025_11_25,
        &[("GetTaskResult", ALL)],
    ),
    request(
        "tasks/result",
        ONLY_2025_11_25,
        ONLY_2025_11_25,
        &[("GetTaskPayloadResult", ALL)],
    ),
    request(
        "tasks/list",
        ONLY_2025_11_25,
        ONLY_2025_11_25,
        &[("ListTasksResult", ALL)],
    ),
    request(
        "tasks/cancel",
        ONLY_2025_11_25,
        ONLY_2025_11_25,
        &[("CancelTaskResult", ALL)],
    ),
    // Client features, asked by the server (handshake era only; the stateless
    // era carries them as input requests inside an `InputRequiredResult`).
    input_request(
        "sampling/createMessage",
        HANDSHAKE,
        &[("CreateMessageResult", ALL), TASK_CREATED],
    ),
    input_request("roots/list", HANDSHAKE, &[("ListRootsResult", ALL)]),
    input_request(
        "elicitation/create",
        HANDSHAKE_SINCE_2025_06_18,
        &[("ElicitResult", ALL), TASK_CREATED],
    ),
    // Notifications.
    notification("notifications/initialized", HANDSHAKE, NONE),
    notification("notifications/cancelled", ALL, ALL),
    notification("notifications/progress", HANDSHAKE, ALL),
    notification("notifications/roots/list_changed", HANDSHAKE, NONE),
    notification("notifications/message", NONE, ALL),
    notification("notifications/resources/list_changed", NONE, ALL),
    notification("notifications/resources/updated", NONE, ALL),
    notification("notifications/prompts/list_changed", NONE, ALL),
    notification("notifications/tools/list_changed", NONE, ALL),
    notification("notifications/elicitation/complete", NONE, ONLY_2025_11_25),
    notification(
        "notifications/tasks/status",
        ONLY_2025_11_25,
        ONLY_2025_11_25,
    ),
    notification("notifications/subscriptions/acknowledged", NONE, STATELESS),
];

/// Methods a sender must never cancel with `notifications/cancelled`.
pub const NON_CANCELLABLE: &[&str] = &["initialize"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_ranges_are_inclusive() {
        let set = RevisionSet::between(Revision::V2025_03_26, Revision::V2025_11_25);
        let got: Vec<_> = set.iter().collect();
        assert_eq!(
            got,
            [
                Revision::V2025_03_26,
                Revision::V2025_06_18,
                Revision::V2025_11_25
            ]
        );
        assert_eq!(RevisionSet::since(Revision::V2024_11_05), RevisionSet::ALL);
    }

    #[test]
    fn every_method_appears_once_and_exists_somewhere() {
        for (i, m) in METHODS.iter().enumerate() {
            assert!(
                !(m.from_client.is_empty() && m.from_server.is_empty()),
                "{}",
                m.name
            );
            assert!(
                METHODS[i + 1..].iter().all(|other| other.name != m.name),
                "{} twice",
                m.name
            );
            assert_eq!(
                m.kind == MessageKind::Request,
                !m.results.is_empty(),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn removed_methods_are_gone_in_the_stateless_era() {
        for name in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
        ] {
            assert!(MethodInfo::lookup(name, Revision::V2026_07_28, Side::Client).is_none());
            assert!(MethodInfo::lookup(name, Revision::V2025_11_25, Side::Client).is_some());
        }
        assert!(
            MethodInfo::lookup(
                "sampling/createMessage",
                Revision::V2026_07_28,
                Side::Server
            )
            .is_none()
        );
        assert!(
            MethodInfo::lookup("elicitation/create", Revision::V2025_03_26, Side::Server).is_none()
        );
    }
}
