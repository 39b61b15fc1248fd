//! What one upstream offers: its tools, prompts, resources and resource
//! templates, as last listed.

use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

/// One upstream's lists, under the upstream's own names.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Lists {
    /// Its tools.
    pub tools: Vec<Tool>,
    /// Its prompts.
    pub prompts: Vec<Prompt>,
    /// Its resources.
    pub resources: Vec<Resource>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplate>,
}

impl Lists {
    /// Empty lists.
    pub fn new() -> Self {
        Self::default()
    }
}
