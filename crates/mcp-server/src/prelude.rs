//! The names most servers use, in one import: `use mcp_server::prelude::*;`
//!
//! ```
//! use mcp_server::prelude::*;
//!
//! #[derive(serde::Deserialize, JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! async fn add(Args(add): Args<Add>) -> Result<String, ToolError> {
//!     let sum = add.a.checked_add(add.b).ok_or_else(|| ToolError::new("overflow"))?;
//!     Ok(sum.to_string())
//! }
//!
//! let server = Server::builder("calculator", "1.0.0").tool("add", "Adds two integers", add).build();
//! assert!(server.is_ok());
//! ```

#[cfg(feature = "macros")]
pub use crate::tool;
pub use crate::{
    Answer, Args, Blob, CallToolResult, CancellationToken, CompletionError, ContentBlock, Context,
    Elicitation, InputRequired, Json, LoggingLevel, Meta, Prompt, PromptError, PromptMessage,
    Resource, ResourceError, ResourceRequest, ResourceTemplate, Role, Server, ServerBuilder, State,
    ToolError, Uri, Variables,
};
pub use schemars::JsonSchema;
