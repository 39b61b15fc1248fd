//! The extensions of the examples, written on the SDK's public extension
//! API: the Skills the conformance suite's `sep-2640-*` scenarios read,
//! and an MCP App (a counter with a small HTML view). Shared by the
//! everything-server and the conformance client.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_client::ClientSession;
use mcp_server::apps::{Apps, UI};
use mcp_server::extension::Extension;
use mcp_server::skills::{Skill, Skills};
use mcp_server::{CallToolResult, Context, Tool};

/// The `SKILL.md` of the example skill.
const PDF_SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  author: mcp-rust-sdk\n  version: \"1.0\"\n---\n\n# PDF processing\n\nRead `references/FORMS.md` before filling a form.\n";

/// The Skills extension of the everything-server: one skill with a
/// supporting file in a subdirectory.
///
/// # Panics
/// Never: the skill is fixed and valid (a test builds it).
pub fn skills() -> Extension {
    let skill = Skill::new(PDF_SKILL)
        .and_then(|s| {
            s.file(
                "references/FORMS.md",
                "# Forms\n\nFill each field in order.\n",
            )
        })
        .expect("a valid example skill");
    Skills::new()
        .skill(skill)
        .into_extension()
        .expect("a valid example skill set")
}

/// What the `counter` tool returns: the view shows `count`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Count {
    /// How many times the tool was called.
    pub count: u64,
}

/// The Apps extension: a `counter` tool whose results the HTML view at
/// `ui://counter/view` renders; a host without Apps gets the text.
pub fn apps() -> Extension {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut tool = Tool::new("counter", Default::default());
    tool.description = Some("Counts its calls; hosts with MCP Apps show a counter view".into());
    Apps::new()
        .html(
            "ui://counter/view",
            "counter",
            include_str!("apps/counter.html"),
        )
        .tool(tool, "ui://counter/view", |cx: Context| async move {
            let count = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
            let structured = serde_json::to_value(Count { count }).unwrap_or_default();
            // The view renders the structured result; a host without Apps
            // shows only the text, so the text says it in words.
            let text = if cx.client_supports_extension(UI) {
                structured.to_string()
            } else {
                format!("the counter is at {count}")
            };
            CallToolResult::text(text).with_structured_content(structured)
        })
        .into_extension()
}

/// The `sep-2640-client-*` scenarios: list the skills (fetching nothing);
/// unless told only to list, load each skill (its `SKILL.md`, verified)
/// and then read its other files (each verified). A file that fails
/// verification ends the run with its error, before anything else is read.
///
/// # Errors
/// The first request or verification error.
pub async fn use_skills(client: &ClientSession, list_only: bool) -> Result<(), mcp_client::Error> {
    let entries = client.list_all_skills().await?;
    eprintln!(
        "skills: {:?}",
        entries.iter().map(|e| &e.uri).collect::<Vec<_>>()
    );
    if list_only {
        return Ok(());
    }
    for entry in &entries {
        let loaded = client.load_skill(entry).await?;
        eprintln!(
            "loaded {} ({} bytes of body)",
            entry.uri,
            loaded.body().len()
        );
        for file in loaded.files() {
            let bytes = client.read_skill_file(entry, file).await?;
            eprintln!("read {file} ({} bytes)", bytes.len());
        }
    }
    Ok(())
}
