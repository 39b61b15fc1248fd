//! Build MCP servers: register tools, resources and prompts, then serve them
//! over stdio, streamable HTTP or in memory.
//!
//! - [`input_schema_for`], [`parse_arguments`], [`IntoToolResult`], [`Json`]:
//!   a tool's arguments and results from plain Rust types.
//! - [`UriTemplate`]: RFC 6570 templates for resource templates, expanded and
//!   matched back to their variables.

mod tool_io;
mod uri_template;

pub use tool_io::{
    IntoToolResult, Json, SchemaError, ToolError, empty_input_schema, input_schema_for,
    output_schema_for, parse_arguments,
};
pub use uri_template::{UriTemplate, UriTemplateError};
