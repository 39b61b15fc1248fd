//! Argument completion: `completion/complete` and the references it takes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::meta::{RequestMeta, ResultMeta};
use crate::result::ResultType;
use crate::tag::{PromptRefTag, ResourceRefTag};

/// Points at a prompt (`"type": "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptReference {
    /// Always `"ref/prompt"`.
    #[serde(rename = "type")]
    pub kind: PromptRefTag,
    /// The prompt's name.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl PromptReference {
    /// Points at prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            kind: PromptRefTag,
            name: name.into(),
            title: None,
        }
    }
}

setters!(PromptReference { with_title(title: String) });

/// Points at a resource or resource template (`"type": "ref/resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplateReference {
    /// Always `"ref/resource"`.
    #[serde(rename = "type")]
    pub kind: ResourceRefTag,
    /// The URI or URI template.
    pub uri: String,
}

impl ResourceTemplateReference {
    /// Points at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            kind: ResourceRefTag,
            uri: uri.into(),
        }
    }
}

/// The name of [`ResourceTemplateReference`] up to 2025-03-26.
pub type ResourceReference = ResourceTemplateReference;

/// What a completion is for: a prompt or a resource template, told apart by
/// `type` (the `ref` of [`CompleteRequestParams`]).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum CompleteReference {
    /// `"ref/prompt"`.
    Prompt(PromptReference),
    /// `"ref/resource"`.
    Resource(ResourceTemplateReference),
}

tagged_union!(CompleteReference, "type", "reference", {
    "ref/prompt" => Prompt(PromptReference),
    "ref/resource" => Resource(ResourceTemplateReference),
});

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteArgument {
    /// The argument's name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

impl CompleteArgument {
    /// Completes `value` for argument `name`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Context for a completion (2025-06-18+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteContext {
    /// Variables already resolved in the template or prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

impl CompleteContext {
    /// No context.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(CompleteContext { with_arguments(arguments: BTreeMap<String, String>) });

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// The prompt or resource template the argument belongs to.
    #[serde(rename = "ref")]
    pub reference: CompleteReference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Arguments already resolved (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CompleteRequestParams {
    /// Completes `argument` of `reference`.
    pub fn new(reference: impl Into<CompleteReference>, argument: CompleteArgument) -> Self {
        Self {
            reference: reference.into(),
            argument,
            context: None,
            meta: None,
        }
    }
}

setters!(CompleteRequestParams {
    with_context(context: CompleteContext),
    with_meta(meta: RequestMeta),
});

/// The completion values of a [`CompleteResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// Suggestions, most relevant first; at most 100.
    pub values: Vec<String>,
    /// How many suggestions exist in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more suggestions exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// These suggestions and no more.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            values,
            total: None,
            has_more: None,
        }
    }
}

setters!(Completion {
    with_total(total: u64),
    with_has_more(has_more: bool),
});

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// What kind of result this is (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CompleteResult {
    /// A result holding `completion`.
    pub fn new(completion: Completion) -> Self {
        Self {
            completion,
            result_type: None,
            meta: None,
        }
    }
}

setters!(CompleteResult {
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_dispatch_on_type_both_ways() {
        for case in [
            json!({"type": "ref/prompt", "name": "p", "title": "P"}),
            json!({"type": "ref/resource", "uri": "file:///{path}"}),
        ] {
            let reference: CompleteReference = serde_json::from_value(case.clone()).unwrap();
            assert_eq!(serde_json::to_value(&reference).unwrap(), case);
        }
        let err =
            serde_json::from_value::<CompleteReference>(json!({"type": "ref/tool"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown reference type `ref/tool`; expected one of ref/prompt, ref/resource"
        );
    }

    #[test]
    fn params_use_ref_on_the_wire() {
        let params = CompleteRequestParams::new(
            PromptReference::new("p"),
            CompleteArgument::new("lang", "py"),
        );
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "lang", "value": "py"}})
        );
    }
}
