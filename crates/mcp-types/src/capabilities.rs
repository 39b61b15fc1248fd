//! What a client or server supports: [`ClientCapabilities`] and
//! [`ServerCapabilities`], with a small struct per capability that has
//! properties of its own. A capability whose schema is an open object
//! (`logging`, `completions`, `sampling.context`, ...) is a [`JsonObject`]:
//! present means supported.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::JsonObject;

/// Capabilities a client declares: at `initialize` (handshake era) or on
/// every request's `_meta` (2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions supported, keyed by identifier such as
    /// `io.modelcontextprotocol/ui` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Present if the client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client can elicit input from the user (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Present if the client accepts task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
}

impl ClientCapabilities {
    /// No optional capabilities (`{}`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether these capabilities cover everything `required` names: each
    /// capability it names is declared, and within it each sub-capability
    /// (`roots.listChanged`, `sampling.context`, `sampling.tools`, the
    /// elicitation modes, each `tasks` entry down to
    /// `tasks.requests.sampling.createMessage`); each `experimental` entry
    /// it names is declared with the same value; each extension it names is
    /// declared. An `elicitation: {}` counts as form mode, as the spec reads
    /// it.
    ///
    /// # Examples
    /// ```
    /// use mcp_types::ClientCapabilities;
    /// use serde_json::json;
    ///
    /// let declared: ClientCapabilities =
    ///     serde_json::from_value(json!({"experimental": {"fast": {"level": 2}}}))?;
    /// let same: ClientCapabilities =
    ///     serde_json::from_value(json!({"experimental": {"fast": {"level": 2}}}))?;
    /// let other: ClientCapabilities =
    ///     serde_json::from_value(json!({"experimental": {"fast": {"level": 3}}}))?;
    /// assert!(declared.covers(&same));
    /// assert!(!declared.covers(&other));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn covers(&self, required: &ClientCapabilities) -> bool {
        let roots = nested(&self.roots, &required.roots, |have, want| {
            want.list_changed != Some(true) || have.list_changed == Some(true)
        });
        let sampling = nested(&self.sampling, &required.sampling, |have, want| {
            present(&have.context, &want.context) && present(&have.tools, &want.tools)
        });
        let elicitation = nested(&self.elicitation, &required.elicitation, |have, want| {
            let form = have.form.is_some() || have.url.is_none();
            (want.form.is_none() || form) && present(&have.url, &want.url)
        });
        let tasks = nested(&self.tasks, &required.tasks, |have, want| {
            let requests = nested(&have.requests, &want.requests, |have, want| {
                nested(&have.sampling, &want.sampling, |have, want| {
                    present(&have.create_message, &want.create_message)
                }) && nested(&have.elicitation, &want.elicitation, |have, want| {
                    present(&have.create, &want.create)
                })
            });
            present(&have.list, &want.list) && present(&have.cancel, &want.cancel) && requests
        });
        // Experimental entries are compared by value, as the Python SDK
        // does: their shape is the client's and server's private agreement.
        let experimental = nested(&self.experimental, &required.experimental, |have, want| {
            want.iter().all(|(key, value)| have.get(key) == Some(value))
        });
        let extensions = nested(&self.extensions, &required.extensions, |have, want| {
            want.keys().all(|key| have.contains_key(key))
        });
        roots && sampling && elicitation && tasks && experimental && extensions
    }
}

/// A capability `want` names is declared in `have`, and `covers` says the
/// declared one has all `want` asks of it.
fn nested<T>(have: &Option<T>, want: &Option<T>, covers: impl FnOnce(&T, &T) -> bool) -> bool {
    match (have, want) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(have), Some(want)) => covers(have, want),
    }
}

/// A sub-capability `want` names is declared in `have`.
fn present<T>(have: &Option<T>, want: &Option<T>) -> bool {
    want.is_none() || have.is_some()
}

setters!(ClientCapabilities {
    with_experimental(experimental: JsonObject),
    with_extensions(extensions: JsonObject),
    with_roots(roots: RootsCapability),
    with_sampling(sampling: SamplingCapability),
    with_elicitation(elicitation: ElicitationCapability),
    with_tasks(tasks: ClientTasksCapability),
});

/// The client's `roots` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed`
    /// (handshake era only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl RootsCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(RootsCapability { with_list_changed(list_changed: bool) });

/// The client's `sampling` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Present if the client honours `includeContext` other than `"none"`
    /// (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present if the client supports `tools` and `toolChoice` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Other members: the 2024-11-05 to 2025-06-18 schemas leave this object
    /// open, so unknown keys are kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SamplingCapability {
    /// `{}`: plain sampling.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SamplingCapability {
    with_context(context: JsonObject),
    with_tools(tools: JsonObject),
});

/// The client's `elicitation` capability; `{}` means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Present if form mode is supported (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present if URL mode is supported (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Other members: the 2025-06-18 schema leaves this object open, so
    /// unknown keys are kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// `{}`: form mode only.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ElicitationCapability {
    with_form(form: JsonObject),
    with_url(url: JsonObject),
});

/// The client's `tasks` capability (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientTasksCapability {
    /// Present if the client serves `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the client serves `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequests>,
}

impl ClientTasksCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientTasksCapability {
    with_list(list: JsonObject),
    with_cancel(cancel: JsonObject),
    with_requests(requests: ClientTaskRequests),
});

/// Server requests a client accepts as tasks (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientTaskRequests {
    /// Sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingTaskRequests>,
    /// Elicitation requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationTaskRequests>,
}

impl ClientTaskRequests {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientTaskRequests {
    with_sampling(sampling: SamplingTaskRequests),
    with_elicitation(elicitation: ElicitationTaskRequests),
});

/// Task support for sampling requests (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingTaskRequests {
    /// Present if `sampling/createMessage` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
}

impl SamplingTaskRequests {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SamplingTaskRequests { with_create_message(create_message: JsonObject) });

/// Task support for elicitation requests (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationTaskRequests {
    /// Present if `elicitation/create` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
}

impl ElicitationTaskRequests {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ElicitationTaskRequests { with_create(create: JsonObject) });

/// Capabilities a server declares: in `InitializeResult` (handshake era) or
/// `DiscoverResult` (2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions supported, keyed by identifier (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Present if the server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server completes arguments (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present if the server accepts task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
}

impl ServerCapabilities {
    /// No capabilities (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ServerCapabilities {
    with_experimental(experimental: JsonObject),
    with_extensions(extensions: JsonObject),
    with_logging(logging: JsonObject),
    with_completions(completions: JsonObject),
    with_prompts(prompts: PromptsCapability),
    with_resources(resources: ResourcesCapability),
    with_tools(tools: ToolsCapability),
    with_tasks(tasks: ServerTasksCapability),
});

/// The server's `prompts` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl PromptsCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(PromptsCapability { with_list_changed(list_changed: bool) });

/// The server's `resources` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether clients may subscribe to updates of single resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ResourcesCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ResourcesCapability {
    with_subscribe(subscribe: bool),
    with_list_changed(list_changed: bool),
});

/// The server's `tools` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ToolsCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ToolsCapability { with_list_changed(list_changed: bool) });

/// The server's `tasks` capability (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerTasksCapability {
    /// Present if the server serves `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the server serves `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequests>,
}

impl ServerTasksCapability {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ServerTasksCapability {
    with_list(list: JsonObject),
    with_cancel(cancel: JsonObject),
    with_requests(requests: ServerTaskRequests),
});

/// Client requests a server accepts as tasks (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerTaskRequests {
    /// Tool requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsTaskRequests>,
}

impl ServerTaskRequests {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ServerTaskRequests { with_tools(tools: ToolsTaskRequests) });

/// Task support for tool requests (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolsTaskRequests {
    /// Present if `tools/call` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
}

impl ToolsTaskRequests {
    /// `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ToolsTaskRequests { with_call(call: JsonObject) });

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_sub_capabilities_survive_a_round_trip() {
        let input = json!({"elicitation": {}, "roots": {}, "sampling": {"tools": {}}});
        let caps: ClientCapabilities = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&caps).unwrap(), input);
        let input = json!({"tools": {}, "logging": {}, "resources": {"subscribe": true}});
        let caps: ServerCapabilities = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&caps).unwrap(), input);
    }

    fn caps(value: serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn covering_goes_as_deep_as_the_required_capabilities_name() {
        let declared = caps(json!({
            "roots": {"listChanged": true},
            "sampling": {"tools": {}},
            "elicitation": {},
            "experimental": {"fast": {"level": 2}},
            "tasks": {"list": {}, "requests": {"sampling": {"createMessage": {}}}},
        }));
        let covered = [
            json!({}),
            json!({"roots": {"listChanged": true}}),
            json!({"sampling": {"tools": {}}}),
            json!({"elicitation": {"form": {}}}),
            json!({"experimental": {"fast": {"level": 2}}}),
            json!({"tasks": {"requests": {"sampling": {"createMessage": {}}}}}),
        ];
        for want in covered {
            assert!(declared.covers(&caps(want.clone())), "{want}");
        }
        let not_covered = [
            json!({"sampling": {"context": {}}}),
            json!({"elicitation": {"url": {}}}),
            json!({"experimental": {"fast": {"level": 3}}}),
            json!({"experimental": {"slow": {}}}),
            json!({"tasks": {"cancel": {}}}),
            json!({"tasks": {"requests": {"elicitation": {"create": {}}}}}),
            json!({"extensions": {"io.example/x": {}}}),
        ];
        for want in not_covered {
            assert!(!declared.covers(&caps(want.clone())), "{want}");
        }
        let bare_roots = caps(json!({"roots": {}}));
        assert!(!bare_roots.covers(&caps(json!({"roots": {"listChanged": true}}))));
    }
}
