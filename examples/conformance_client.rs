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

use std::sync::Arc;

use mcp_client::auth::{HeadlessRedirect, OAuthClient, OAuthConfig};
use mcp_client::{Client, ClientConfig};
use mcp_transport::http::HttpClientConfig;
use mcp_types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue,
    ListRootsResult, Revision, Root, SamplingMessageContentBlock,
};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
        .ok_or("usage: conformance-client <server-url> (the URL comes last)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("conformance-client: scenario `{scenario}` against {url}");

    // The run's wire version: 2026-07-28 is the stateless era; anything
    // older is the handshake era.
    let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| Revision::from_version(&v))
        .unwrap_or(Revision::V2025_11_25);
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);

    let config = ClientConfig::new("mcp-rust-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol_version(revision)
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(|params, _| async move { Ok(accept_defaults(&params)) })
        .on_sampling(|_, _| async move {
            Ok(CreateMessageResult::new(
                SamplingMessageContentBlock::text("Paris"),
                "conformance-model",
            ))
        })
        .on_list_roots(|_| async move {
            Ok(ListRootsResult::new(vec![Root::new("file:///workspace")]))
        });
    let client = if scenario.starts_with("auth/") {
        // The suite's authorization servers approve at once: follow the
        // authorization URL headlessly and read the code from the redirect.
        let step = Arc::new(HeadlessRedirect::new()?);
        let mut oauth = OAuthConfig::new(
            "mcp-rust-conformance-client",
            "http://localhost:3000/callback",
            step,
        )
        .metadata_document("https://conformance-test.local/client-metadata.json")
        .dpop(scenario.starts_with("auth/dpop"));
        if let Some(client_id) = context["client_id"].as_str() {
            let secret = context["client_secret"].as_str().map(str::to_owned);
            let text = |key: &str| context[key].as_str().map(str::to_owned);
            oauth = match (scenario.as_str(), secret) {
                ("auth/client-credentials-basic", Some(secret)) => {
                    oauth.client_credentials(client_id, secret)
                }
                ("auth/client-credentials-jwt", _) => oauth.client_credentials_jwt(
                    client_id,
                    &text("private_key_pem").unwrap_or_default(),
                )?,
                ("auth/wif-jwt-bearer", _) => {
                    oauth.jwt_bearer(client_id, text("valid_jwt").unwrap_or_default())
                }
                ("auth/enterprise-managed-authorization", secret) => oauth.enterprise_managed(
                    text("idp_token_endpoint").unwrap_or_default(),
                    text("idp_client_id").unwrap_or_default(),
                    text("idp_id_token").unwrap_or_default(),
                    client_id,
                    secret,
                ),
                (_, secret) => oauth.preregistered(client_id, secret),
            };
        }
        let http = HttpClientConfig::new().authorizer(OAuthClient::new(oauth)?);
        Client::connect_http_with(&url, http, config).await?
    } else {
        Client::connect_http(&url, config).await?
    };
    let server = client.server_info();
    eprintln!(
        "connected: {} {} at {}",
        server.as_ref().map_or("(unnamed)", |i| i.name.as_str()),
        server.as_ref().map_or("", |i| i.version.as_str()),
        client.protocol_version()
    );

    let tools = client.list_all_tools().await?;
    eprintln!(
        "tools: {:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    match scenario.as_str() {
        auth if auth.starts_with("auth/") && tools.iter().any(|t| t.name == "test-tool") => {
            let result = client.call_tool("test-tool", json!({})).await?;
            eprintln!("test-tool: {:?}", result.content);
        }
        "json-schema-2020-12-preservation" => {
            // Echo the schema exactly as listed: nothing may be lost on the way.
            if let Some(tool) = tools.iter().find(|t| t.name == "json_schema_2020_12_tool") {
                let result = client
                    .call_tool("json_schema_echo", json!({"schema": tool.input_schema}))
                    .await?;
                eprintln!("json_schema_echo: {:?}", result.content);
            }
        }
        "tools_call" => {
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
        "sep-2640-client-no-prefetch" => {
            mcp_examples::extensions::use_skills(&client, true).await?
        }
        skills if skills.starts_with("sep-2640-client-") => {
            mcp_examples::extensions::use_skills(&client, false).await?
        }
        "sep-2322-client-request-state" => {
            for tool in tools.iter().filter(|t| t.name.starts_with("test_mrtr")) {
                let result = client.call_tool(&tool.name, json!({})).await?;
                eprintln!("{}: {:?}", tool.name, result.content);
            }
        }
        "http-standard-headers" => {
            for tool in &tools {
                let result = client.call_tool(&tool.name, json!({})).await?;
                eprintln!("{}: {:?}", tool.name, result.content);
            }
            let resources = client.list_resources(None).await?;
            for resource in &resources.resources {
                let read = client.read_resource(&resource.uri).await?;
                eprintln!("{}: {} content(s)", resource.uri, read.contents.len());
            }
            let prompts = client.list_prompts(None).await?;
            for prompt in &prompts.prompts {
                let got = client.get_prompt(&prompt.name, BTreeMap::new()).await?;
                eprintln!("{}: {} message(s)", prompt.name, got.messages.len());
            }
        }
        "http-custom-headers" => {
            let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
            for call in calls {
                let name = call["name"].as_str().unwrap_or_default();
                let result = client.call_tool(name, call["arguments"].clone()).await?;
                eprintln!("{name}: {:?}", result.content);
            }
        }
        "http-invalid-tool-headers" if tools.iter().any(|t| t.name == "valid_tool") => {
            let result = client
                .call_tool("valid_tool", json!({"region": "us-west1"}))
                .await?;
            eprintln!("valid_tool: {:?}", result.content);
        }
        _ => {}
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
