//! The handshake era (2024-11-05 to 2025-11-25): `initialize`, and what a
//! session keeps (its log level and subscriptions); everything else takes
//! the shared route.

use mcp_core::{IncomingRequest, RequestContext};
use mcp_types::{
    ClientRequest, EmptyResult, ErrorCode, ErrorObject, InitializeRequestParams, InitializeResult,
    RawJson, Revision,
};

use super::{Era, Runner, record_span, to_raw};

impl Runner {
    pub(super) fn initialize(
        &self,
        params: InitializeRequestParams,
    ) -> Result<RawJson, ErrorObject> {
        let revision = Revision::from_version(&params.protocol_version)
            .filter(|r| r.is_handshake())
            .unwrap_or(Revision::LATEST_HANDSHAKE);
        tracing::debug!(
            client = %params.client_info.name,
            requested = %params.protocol_version,
            answered = %revision,
            "initialize"
        );
        tracing::Span::current().record("revision", revision.as_str());
        self.state.set_client(params, revision);
        let r = &self.registry;
        let mut result = InitializeResult::new(
            revision.as_str(),
            self.server().capabilities(),
            r.info.clone(),
        );
        result.instructions = r.instructions.clone();
        to_raw(&result)
    }

    pub(super) async fn handshake(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        let revision = self.state.revision();
        let mut request = request;
        if revision.is_some() && !self.registry.extension_requests.is_empty() {
            if let Some(answer) = self
                .extension_request(&mut request, &cx, &Era::Handshake)
                .await
            {
                return answer;
            }
        }
        // The raw params go once parsed: a large message is held once, not twice.
        let params = request.params;
        let parsed = ClientRequest::parse(
            &request.method,
            params.as_ref(),
            revision.unwrap_or(Revision::LATEST_HANDSHAKE),
        )
        .map_err(|e| e.to_error_object())?;
        drop(params);
        if let Some(revision) = revision {
            record_span(revision, &parsed);
        }
        let era = Era::Handshake;
        match parsed {
            ClientRequest::Initialize(params) => self.initialize(params),
            ClientRequest::Ping(_) => to_raw(&EmptyResult::new()),
            _ if revision.is_none() => Err(ErrorObject::invalid_request(format!(
                "`{}` before initialization: send `initialize` first",
                request.method
            ))),
            ClientRequest::Subscribe(params) => {
                if !self.subscribe_target_exists(&params.uri) {
                    return Err(ErrorObject::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        format!("resource `{}` not found", params.uri),
                    ));
                }
                self.state.subscribe(params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::Unsubscribe(params) => {
                self.state.unsubscribe(&params.uri);
                to_raw(&EmptyResult::new())
            }
            ClientRequest::SetLevel(params) => {
                self.state.set_log_level(params.level);
                to_raw(&EmptyResult::new())
            }
            other => self.route(other, &cx, &era).await,
        }
    }
}
