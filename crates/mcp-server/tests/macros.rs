//! The `#[tool]` attribute (feature `macros`): the name and description
//! come from the function, and the function stays callable as written.

use mcp_server::{Args, Json, Server, State, ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

struct Limit(i64);

/// Adds two integers.
///
/// Sums above the server's limit are refused.
#[tool]
async fn add(Args(add): Args<Add>, State(limit): State<Limit>) -> Result<Json<Sum>, ToolError> {
    let sum = add.a + add.b;
    if sum > limit.0 {
        return Err(ToolError::new("the sum is above the limit"));
    }
    Ok(Json(Sum { sum }))
}

/// Not the description.
#[tool(name = "pong", description = "Answers ping")]
pub async fn ping() -> &'static str {
    "pong"
}

#[test]
fn a_tool_fn_registers_with_its_name_doc_and_schemas() {
    let server = Server::builder("macros", "1")
        .with_state(Limit(100))
        .register(add_tool())
        .register(ping_tool())
        .build()
        .expect("valid");
    let tools = server.tools();
    assert_eq!(tools[0].name, "add");
    assert_eq!(
        tools[0].description.as_deref(),
        Some("Adds two integers.\n\nSums above the server's limit are refused.")
    );
    assert_eq!(
        tools[0].input_schema["required"],
        serde_json::json!(["a", "b"])
    );
    assert!(tools[0].output_schema.is_some());
    assert_eq!(tools[1].name, "pong");
    assert_eq!(tools[1].description.as_deref(), Some("Answers ping"));
}

#[test]
fn the_state_a_tool_fn_takes_is_checked_at_build() {
    let refused = Server::builder("macros", "1").register(add_tool()).build();
    assert!(refused.is_err());
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(ping().await, "pong");
    let sum = add(
        Args(Add { a: 1, b: 2 }),
        State(std::sync::Arc::new(Limit(10))),
    )
    .await
    .expect("below the limit");
    assert_eq!(sum.0.sum, 3);
}
