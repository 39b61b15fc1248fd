//! Prints one JSON-RPC request on the wire of both protocol eras.
//! Run `cargo run --example wire-tour`. (A live server and client replace this
//! tour once `mcp-server` and `mcp-client` land.)

use mcp_types::{JsonRpcMessage, JsonRpcRequest, RawJson, Revision};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handshake = JsonRpcRequest::new(
        1,
        "tools/call",
        Some(RawJson::from_string(
            r#"{"name":"add","arguments":{"a":1,"b":2}}"#.to_owned(),
        )?),
    );
    let stateless = JsonRpcRequest::new(
        1,
        "tools/call",
        Some(RawJson::from_string(format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"add","arguments":{{"a":1,"b":2}}}}"#,
            Revision::LATEST_STATELESS
        ))?),
    );
    for (revision, request) in [
        (Revision::LATEST_HANDSHAKE, handshake),
        (Revision::LATEST_STATELESS, stateless),
    ] {
        let bytes = JsonRpcMessage::from(request).to_vec()?;
        println!(
            "{revision} ({:?} era):\n  {}",
            revision.era(),
            String::from_utf8(bytes)?
        );
    }
    Ok(())
}
