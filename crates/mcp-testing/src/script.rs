//! The scripted answers to what the server asks: one queue per kind, used in
//! order, each ask recorded as it was put.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use mcp_client::ClientConfig;
use mcp_types::{CreateMessageResult, ElicitResult, ErrorObject, InputRequest, ListRootsResult};

use crate::record::Record;

/// Answers given to the builder, not yet used.
#[derive(Debug, Default)]
pub(crate) struct Script {
    pub(crate) sampling: VecDeque<CreateMessageResult>,
    pub(crate) elicitation: VecDeque<ElicitResult>,
    pub(crate) roots: Option<ListRootsResult>,
}

fn unscripted(method: &str, builder_method: &str) -> ErrorObject {
    ErrorObject::internal_error(format!(
        "mcp-testing: no scripted answer left for `{method}` (add one with TestClientBuilder::{builder_method})"
    ))
}

impl Script {
    /// Gives `config` a callback for each kind of ask the script answers,
    /// so the client declares exactly those capabilities.
    pub(crate) fn install(self, mut config: ClientConfig, record: Arc<Record>) -> ClientConfig {
        let Script {
            sampling,
            elicitation,
            roots,
        } = self;
        if !sampling.is_empty() {
            let queue = Arc::new(Mutex::new(sampling));
            let record = record.clone();
            config =
                config.on_sampling(move |params, _info| {
                    record.push_asked(InputRequest::CreateMessage(params));
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    async move {
                        next.ok_or_else(|| unscripted("sampling/createMessage", "sampling_reply"))
                    }
                });
        }
        if !elicitation.is_empty() {
            let queue = Arc::new(Mutex::new(elicitation));
            let record = record.clone();
            config =
                config.on_elicitation(move |params, _info| {
                    record.push_asked(InputRequest::Elicit(params));
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    async move {
                        next.ok_or_else(|| unscripted("elicitation/create", "elicitation_reply"))
                    }
                });
        }
        if let Some(roots) = roots {
            config = config.on_list_roots(move |_info| {
                record.push_asked(InputRequest::ListRoots(None));
                let roots = roots.clone();
                async move { Ok(roots) }
            });
        }
        config
    }
}
