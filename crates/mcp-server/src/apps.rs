//! MCP Apps (`io.modelcontextprotocol/ui`): tools with an interactive HTML
//! view, written on the public [extension](crate::extension) API.
//!
//! An app is an HTML document served as a `ui://` resource with
//! `mimeType` [`APP_MIME_TYPE`]; a tool points at it with
//! `_meta.ui.resourceUri`, and a host that supports Apps renders the tool's
//! results in that view. A host that does not still calls the tool as any
//! other, so the tool degrades to text: inside the handler,
//! [`Context::client_supports_extension`](crate::Context::client_supports_extension)`(`[`UI`]`)`
//! tells which.
//!
//! # Examples
//! ```
//! use mcp_server::apps::{Apps, UI};
//! use mcp_server::{Context, Server, Tool};
//!
//! async fn time(cx: Context) -> &'static str {
//!     if cx.client_supports_extension(UI) { "12:00 (the view shows a clock)" } else { "12:00" }
//! }
//!
//! let apps = Apps::new()
//!     .html("ui://clock/view", "clock", "<!DOCTYPE html><html><body>tick</body></html>")
//!     .tool(Tool::new("time", Default::default()), "ui://clock/view", time);
//! let server = Server::builder("clock", "1.0.0").extension(apps.into_extension()).build().unwrap();
//! let tool = &server.tools()[0];
//! assert_eq!(tool.meta.as_ref().unwrap()["ui"]["resourceUri"], "ui://clock/view");
//! ```

use mcp_types::{JsonObject, Resource, Tool};
use serde_json::Value;

use crate::Error;
use crate::extension::Extension;
use crate::handler::{Handler, Tools};
use crate::tool_io::IntoToolResult;

pub use mcp_types::extension::UI;

/// The `mimeType` of an app's HTML document.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The URI scheme of app resources.
pub const SCHEME: &str = "ui://";

/// Builds the Apps extension: HTML views and the tools that show them.
#[derive(Debug)]
pub struct Apps {
    /// The views are its resources (it has no others).
    extension: Extension,
}

impl Default for Apps {
    fn default() -> Self {
        Self::new()
    }
}

impl Apps {
    /// No views yet. Any client may call the tools (a host without Apps
    /// gets their text), so the client need not declare the extension.
    pub fn new() -> Self {
        let extension = Extension::new(UI)
            .map(|e| e.client_must_declare(false))
            .unwrap_or_else(|_| unreachable!("`{UI}` is a valid identifier"));
        Self { extension }
    }

    /// Serves `html` as the view at `uri` (which must start with `ui://`).
    pub fn html(mut self, uri: &str, name: &str, html: impl Into<String>) -> Self {
        if !uri.starts_with(SCHEME) || uri.len() == SCHEME.len() {
            self.extension.items.errors.push(Error::Registration {
                what: format!("app view `{uri}`"),
                reason: "an app view's URI starts with `ui://`".into(),
            });
            return self;
        }
        let mut resource = Resource::new(uri, name);
        resource.mime_type = Some(APP_MIME_TYPE.to_owned());
        let html: String = html.into();
        self.extension = self.extension.resource(resource, move || {
            let html = html.clone();
            async move { html }
        });
        self
    }

    /// A tool whose results the view at `view_uri` (registered with
    /// [`html`](Self::html) first) renders: `_meta.ui.resourceUri` is set on
    /// `tool`, which is otherwise as [`ServerBuilder::tool_with`](crate::ServerBuilder::tool_with) takes it.
    pub fn tool<H, M>(mut self, mut tool: Tool, view_uri: &str, handler: H) -> Self
    where
        H: Handler<Tools, M>,
        H::Output: IntoToolResult,
        M: 'static,
    {
        if !self.extension.items.has_resource(view_uri) {
            self.extension.items.errors.push(Error::Registration {
                what: format!("app tool `{}`", tool.name),
                reason: format!("no view `{view_uri}` is registered; call `html` first"),
            });
            return self;
        }
        let meta = tool.meta.get_or_insert_with(JsonObject::new);
        let mut ui = JsonObject::new();
        ui.insert("resourceUri".into(), Value::String(view_uri.to_owned()));
        meta.insert("ui".into(), Value::Object(ui));
        self.extension = self.extension.tool_with(tool, handler);
        self
    }

    /// The extension, to register with
    /// [`ServerBuilder::extension`](crate::ServerBuilder::extension).
    pub fn into_extension(self) -> Extension {
        self.extension
    }
}
