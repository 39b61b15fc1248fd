//! Prints one tool call, and its answer, on the wire of both protocol eras.
//! Run `cargo run --example wire-tour`. (A live server and client replace this
//! tour once `mcp-server` and `mcp-client` land.)

use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientRequest,
    ContentBlock, Implementation, JsonObject, RequestMeta, Revision, ServerResult,
};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = JsonObject::new();
    arguments.insert("a".into(), json!(1));
    arguments.insert("b".into(), json!(2));
    let answer = CallToolResult::new(vec![ContentBlock::text("3")]);

    for revision in [Revision::LATEST_HANDSHAKE, Revision::LATEST_STATELESS] {
        let mut params = CallToolRequestParams::new("add").with_arguments(arguments.clone());
        if revision.is_stateless() {
            // The stateless era carries version, identity and capabilities on
            // every request instead of negotiating them once.
            params.meta = Some(
                RequestMeta::new()
                    .with_protocol_version(revision.as_str())
                    .with_client_info(Implementation::new("wire-tour", "0.1.0"))
                    .with_client_capabilities(ClientCapabilities::new()),
            );
        }
        let request = CallToolRequest::new(1, params);
        let wire = serde_json::to_string(&request)?;

        // The receiving side: one parse of the envelope, then the typed params
        // for the revision in force.
        let message = mcp_types::JsonRpcMessage::from_str(&wire)?;
        let mcp_types::JsonRpcMessage::Request(received) = message else {
            return Err("expected a request".into());
        };
        let typed = ClientRequest::parse(&received.method, received.params.as_ref(), revision)?;

        let mut result = answer.clone();
        if revision.is_stateless() {
            result.result_type = Some(mcp_types::ResultType::Complete);
        }
        let result_json = ServerResult::CallTool(result).to_json()?;

        println!("{revision} ({:?} era)", revision.era());
        println!("  request : {wire}");
        println!("  parsed  : {}", typed.method());
        println!("  result  : {result_json}");
    }
    Ok(())
}
