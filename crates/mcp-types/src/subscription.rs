//! `subscriptions/listen` (2026-07-28): a long-lived stream of the
//! notifications a client opted in to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Implementation, JsonObject};
use crate::jsonrpc::RequestId;
use crate::meta::RequestMeta;
use crate::result::ResultType;

/// Which notifications a listen stream carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// Receive `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// Receive `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// Receive `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// Receive `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Receive `notifications/tasks` for these task ids (the tasks
    /// extension, `io.modelcontextprotocol/tasks`; SEP-2663).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SubscriptionFilter {
    with_tools_list_changed(tools_list_changed: bool),
    with_prompts_list_changed(prompts_list_changed: bool),
    with_resources_list_changed(resources_list_changed: bool),
    with_resource_subscriptions(resource_subscriptions: Vec<String>),
    with_task_ids(task_ids: Vec<String>),
});

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// The notifications the client opts in to.
    pub notifications: SubscriptionFilter,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl SubscriptionsListenRequestParams {
    /// Listens for `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            notifications,
            meta: None,
        }
    }
}

setters!(SubscriptionsListenRequestParams { with_meta(meta: RequestMeta) });

/// The `_meta` of a [`SubscriptionsListenResult`]: a result `_meta` whose
/// subscription id is required (schema `SubscriptionsListenResultMetaObject`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct SubscriptionsListenResultMeta {
    /// The stream this result closes: the id of the `subscriptions/listen`
    /// request, with its JSON type.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// The server software.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenResultMeta {
    /// Closes stream `subscription_id`.
    pub fn new(subscription_id: impl Into<RequestId>) -> Self {
        Self {
            subscription_id: subscription_id.into(),
            server_info: None,
            extra: JsonObject::new(),
        }
    }
}

setters!(SubscriptionsListenResultMeta { with_server_info(server_info: Implementation) });

/// Ends a listen stream gracefully.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// Which stream ends (required).
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMeta,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl SubscriptionsListenResult {
    /// Ends stream `subscription_id`.
    pub fn new(subscription_id: impl Into<RequestId>) -> Self {
        Self {
            meta: SubscriptionsListenResultMeta::new(subscription_id),
            result_type: Some(ResultType::Complete),
        }
    }
}

setters!(SubscriptionsListenResult { with_result_type(result_type: ResultType) });

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listen_result_keeps_the_subscription_id_type() {
        let input = json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}});
        let result: SubscriptionsListenResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(result.meta.subscription_id, RequestId::Number(7));
        assert_eq!(serde_json::to_value(&result).unwrap(), input);
        assert_eq!(
            serde_json::to_value(SubscriptionsListenResult::new(7)).unwrap(),
            input
        );
    }
}
