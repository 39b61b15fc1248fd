//! The names most servers use, in one import: `use mcp_server::prelude::*;`
//!
//! ```
//! use mcp_server::prelude::*;
//!
//! #[derive(serde::Deserialize, JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! let server = Server::builder("calculator", "1.0.0")
//!     .tool("add", "Adds two integers", |args: Add, _cx: Context| async move {
//!         let sum = args.a.checked_add(args.b).ok_or_else(|| ToolError::new("overflow"))?;
//!         Ok::<_, ToolError>(sum.to_string())
//!     })
//!     .build();
//! assert!(server.is_ok());
//! ```

pub use crate::{
    Answer, Blob, CallToolResult, ContentBlock, Context, Elicitation, InputRequired, Json,
    LoggingLevel, NoArguments, Prompt, PromptMessage, Resource, ResourceRequest, ResourceTemplate,
    Role, Server, ServerBuilder, ToolError,
};
pub use schemars::JsonSchema;
