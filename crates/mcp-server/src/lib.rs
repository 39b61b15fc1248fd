//! Build MCP servers: register tools, resources and prompts, then serve them
//! over stdio, streamable HTTP or in memory.
//!
//! - [`UriTemplate`]: RFC 6570 templates for resource templates, expanded and
//!   matched back to their variables.

mod uri_template;

pub use uri_template::{UriTemplate, UriTemplateError};
