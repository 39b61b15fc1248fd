//! The client the official conformance suite drives: it reads the scenario
//! from `MCP_CONFORMANCE_SCENARIO` and takes the server URL as its last
//! argument.
//!
//! ```sh
//! cargo build --example conformance-client
//! ../shared/tools/conformance client --command target/debug/examples/conformance-client --scenario initialize
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_client::{Client, ClientConfig};
use mcp_types::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
        .ok_or("usage: conformance-client <server-url> (the URL comes last)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("conformance-client: scenario `{scenario}` against {url}");

    let config = ClientConfig::new("mcp-rust-conformance-client", env!("CARGO_PKG_VERSION"))
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(|params, _| async move { Ok(accept_defaults(&params)) });
    let client = Client::connect_http(&url, config).await?;
    eprintln!(
        "initialized: {} {} at {}",
        client
            .server_info()
            .map_or("(unnamed)", |i| i.name.as_str()),
        client.server_info().map_or("", |i| i.version.as_str()),
        client.protocol_version()
    );

    match scenario.as_str() {
        "tools_call" => {
            let tools = client.list_all_tools().await?;
            eprintln!(
                "tools: {:?}",
                tools.iter().map(|t| &t.name).collect::<Vec<_>>()
            );
            let result = client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
            eprintln!("add_numbers: {:?}", result.content);
        }
        "elicitation-sep1034-client-defaults" => {
            let result = client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
            eprintln!("test_client_elicitation_defaults: {:?}", result.content);
        }
        "sse-retry" => {
            let result = client.call_tool("test_reconnection", json!({})).await?;
            eprintln!("test_reconnection: {:?}", result.content);
        }
        _ => {
            let tools = client.list_all_tools().await?;
            eprintln!("tools: {}", tools.len());
        }
    }
    client.close().await?;
    Ok(())
}

/// Accepts a form with every field's default value (SEP-1034).
fn accept_defaults(params: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::Form(form) = params else {
        return ElicitResult::new(ElicitAction::Decline);
    };
    let mut content = BTreeMap::new();
    for (name, schema) in &form.requested_schema.properties {
        let default = serde_json::to_value(schema)
            .ok()
            .and_then(|v| v.get("default").cloned())
            .and_then(|d| serde_json::from_value::<ElicitValue>(d).ok());
        if let Some(value) = default {
            content.insert(name.clone(), value);
        }
    }
    ElicitResult::accept(content)
}
