//! Params of notifications: cancellation, progress, resource updates, log
//! messages, and the acknowledgement of a listen stream.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::ProgressToken;
use crate::jsonrpc::RequestId;
use crate::logging::LoggingLevel;
use crate::meta::NotificationMeta;
use crate::subscription::SubscriptionFilter;

/// Params of a notification that carries nothing but `_meta` (schema
/// `NotificationParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl NotificationParams {
    /// No `_meta`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(NotificationParams { with_meta(meta: NotificationMeta) });

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// The request to cancel. Required except in 2025-11-25, where a task
    /// cancellation could omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl CancelledNotificationParams {
    /// Cancels request `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        Self {
            request_id: Some(request_id.into()),
            reason: None,
            meta: None,
        }
    }
}

setters!(CancelledNotificationParams {
    with_reason(reason: String),
    with_meta(meta: NotificationMeta),
});

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// The token the request gave in `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// The total to reach, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is going on (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl ProgressNotificationParams {
    /// `progress` made on the request with `progress_token`.
    pub fn new(progress_token: impl Into<ProgressToken>, progress: f64) -> Self {
        Self {
            progress_token: progress_token.into(),
            progress,
            total: None,
            message: None,
            meta: None,
        }
    }
}

setters!(ProgressNotificationParams {
    with_total(total: f64),
    with_message(message: String),
    with_meta(meta: NotificationMeta),
});

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceUpdatedNotificationParams {
    /// The resource that changed (maybe a sub-resource of the one watched).
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl ResourceUpdatedNotificationParams {
    /// The resource at `uri` changed.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(ResourceUpdatedNotificationParams { with_meta(meta: NotificationMeta) });

/// Params of `notifications/message`: one log message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// What to log: any JSON.
    pub data: Value,
    /// Name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl LoggingMessageNotificationParams {
    /// Logs `data` at `level`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        Self {
            level,
            data: data.into(),
            logger: None,
            meta: None,
        }
    }
}

setters!(LoggingMessageNotificationParams {
    with_logger(logger: String),
    with_meta(meta: NotificationMeta),
});

/// Params of `notifications/subscriptions/acknowledged` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The requested notifications the server agreed to send.
    pub notifications: SubscriptionFilter,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl SubscriptionsAcknowledgedNotificationParams {
    /// Acknowledges `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            notifications,
            meta: None,
        }
    }
}

setters!(SubscriptionsAcknowledgedNotificationParams { with_meta(meta: NotificationMeta) });
