//! One catalog from many: each upstream's tools and prompts named apart (a
//! prefix per upstream by default, a [`Naming`] hook to choose otherwise),
//! collisions refused, and resources routed by URI to the upstream that
//! owns them.
//!
//! Precedence is the order the upstreams are merged in (a
//! [`GatewayConfig`](crate::GatewayConfig) keeps them in name order): when
//! two entries end up with one name, or two upstreams claim one resource
//! URI or template, the first keeps it and the later one is dropped, with
//! the reason kept in [`Merged::dropped`] (the gateway logs it). Nothing is
//! ever overwritten silently.
//!
//! Resource URIs are not renamed: they are addresses the upstream
//! understands (`file:///...`), and a client reading one must send it back
//! as is.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_server::UriTemplate;
use mcp_types::untrusted::Escaped;
use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

use crate::lists::Lists;

/// What is being named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A tool (its name must follow the spec's rule:
    /// [`Tool::is_valid_name`]).
    Tool,
    /// A prompt.
    Prompt,
}

impl EntryKind {
    /// "tool" or "prompt".
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Tool => "tool",
            EntryKind::Prompt => "prompt",
        }
    }
}

/// Chooses the name a downstream client sees for an upstream's tool or
/// prompt. Any `Fn(&str, EntryKind, &str) -> String` (upstream, kind,
/// name) is one.
///
/// # Examples
/// ```
/// use mcp_gateway::naming::{EntryKind, Naming, Prefix};
///
/// assert_eq!(Prefix::default().name("files", EntryKind::Tool, "read"), "files_read");
/// // Keep the upstream's names, prefixing only the `search` upstream's.
/// let hook = |upstream: &str, _kind: EntryKind, name: &str| {
///     if upstream == "search" { format!("search.{name}") } else { name.to_owned() }
/// };
/// assert_eq!(hook.name("files", EntryKind::Tool, "read"), "read");
/// ```
pub trait Naming: Send + Sync + 'static {
    /// The downstream name of the upstream `upstream`'s entry `name`.
    fn name(&self, upstream: &str, kind: EntryKind, name: &str) -> String;
}

impl<F> Naming for F
where
    F: Fn(&str, EntryKind, &str) -> String + Send + Sync + 'static,
{
    fn name(&self, upstream: &str, kind: EntryKind, name: &str) -> String {
        self(upstream, kind, name)
    }
}

/// The default naming: `{upstream}{separator}{name}`, with `_` as the
/// separator.
///
/// `_` because it is the one separator every consumer of tool names
/// accepts: the spec allows `A-Z a-z 0-9 _ - .`, but model APIs that take
/// tool names as function names commonly allow only `A-Z a-z 0-9 _ -`, and
/// `-` reads as part of a word (`web-search`). A prefix can make two
/// names equal (`a_b` + `c` and `a` + `b_c`); such a collision is refused
/// like any other.
#[derive(Debug, Clone)]
pub struct Prefix {
    separator: String,
}

impl Default for Prefix {
    fn default() -> Self {
        Self {
            separator: "_".into(),
        }
    }
}

impl Prefix {
    /// A prefix with `separator` between the upstream's name and the entry's.
    pub fn with_separator(separator: impl Into<String>) -> Self {
        Self {
            separator: separator.into(),
        }
    }
}

impl Naming for Prefix {
    fn name(&self, upstream: &str, _kind: EntryKind, name: &str) -> String {
        format!("{upstream}{}{name}", self.separator)
    }
}

/// Where a downstream name goes: the upstream, and the entry's name there.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route {
    /// The upstream that serves it.
    pub upstream: Arc<str>,
    /// The name the upstream knows it by.
    pub name: String,
}

/// Why an upstream's entry is not in the merged catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// Another upstream's entry has the same downstream name (or URI).
    Collision {
        /// The upstream that keeps it.
        holder: Arc<str>,
    },
    /// The chosen name breaks the spec's tool-name rule.
    InvalidName,
    /// A resource template that is not a valid RFC 6570 template: no URI
    /// could be routed by it.
    InvalidTemplate,
}

/// An entry left out of the merged catalog, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Dropped {
    /// "tool", "prompt", "resource" or "resource template".
    pub kind: &'static str,
    /// The upstream it came from.
    pub upstream: Arc<str>,
    /// Its downstream name (or URI, or template).
    pub name: String,
    /// Why it was left out.
    pub reason: DropReason,
}

impl std::fmt::Display for Dropped {
    // The entry's name (or URI, or template) is the upstream's text: shown
    // cut to `SHOWN_CHARS` characters, its control and bidi characters
    // escaped, for the message goes to a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Dropped {
            kind,
            upstream,
            name,
            reason,
        } = self;
        let name = shown(name);
        match reason {
            DropReason::Collision { holder } => write!(
                f,
                "{kind} `{name}` of upstream `{upstream}` left out: upstream `{holder}` already \
                 has it (choose other names with a naming hook)"
            ),
            DropReason::InvalidName => write!(
                f,
                "{kind} `{name}` of upstream `{upstream}` left out: tool names are 1 to 128 of \
                 A-Z a-z 0-9 _ - . (choose other names with a naming hook)"
            ),
            DropReason::InvalidTemplate => write!(
                f,
                "{kind} `{name}` of upstream `{upstream}` left out: not a URI template"
            ),
        }
    }
}

/// The most characters of a peer's name or URI a message shows.
const SHOWN_CHARS: usize = 200;

/// A peer's text (an upstream's name or URI, a client's URI) in a message
/// or a log: at most [`SHOWN_CHARS`] characters (`…` marks a cut), its
/// controls escaped.
pub(crate) fn shown(text: &str) -> Escaped<'_> {
    Escaped::one_line(text).cut(SHOWN_CHARS)
}

/// The merged catalog of every upstream: what the downstream lists, and
/// where each entry is routed.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Merged {
    /// The tools, under downstream names, in upstream then listing order.
    pub tools: Vec<(Route, Tool)>,
    /// The prompts, under downstream names.
    pub prompts: Vec<(Route, Prompt)>,
    /// The resources, URIs unchanged, each with its upstream.
    pub resources: Vec<(Arc<str>, Resource)>,
    /// The resource templates, unchanged, each with its upstream.
    pub templates: Vec<(Arc<str>, ResourceTemplate)>,
    /// What was left out, and why.
    pub dropped: Vec<Dropped>,
    tool_index: HashMap<String, usize>,
    prompt_index: HashMap<String, usize>,
    resource_owner: HashMap<String, Arc<str>>,
    template_owner: HashMap<String, Arc<str>>,
    /// The parsed templates, in precedence order, for routing URIs.
    matchers: Vec<(UriTemplate, Arc<str>)>,
}

impl Merged {
    /// Merges `upstreams` in the order given (the first keeps a contested
    /// name or URI), naming tools and prompts with `naming`.
    pub fn merge<'a>(
        upstreams: impl IntoIterator<Item = (&'a Arc<str>, &'a Lists)>,
        naming: &dyn Naming,
    ) -> Self {
        let mut merged = Merged::default();
        for (upstream, lists) in upstreams {
            merged.add(upstream, lists, naming);
        }
        merged
    }

    fn add(&mut self, upstream: &Arc<str>, lists: &Lists, naming: &dyn Naming) {
        let dropped = &mut self.dropped;
        let tools = (&mut self.tools, &mut self.tool_index);
        add_named(upstream, &lists.tools, naming, tools, dropped);
        let prompts = (&mut self.prompts, &mut self.prompt_index);
        add_named(upstream, &lists.prompts, naming, prompts, dropped);
        for resource in &lists.resources {
            if let Some(holder) = self.resource_owner.get(&resource.uri) {
                let reason = DropReason::Collision {
                    holder: holder.clone(),
                };
                drop_entry(
                    &mut self.dropped,
                    "resource",
                    upstream,
                    resource.uri.clone(),
                    reason,
                );
                continue;
            }
            self.resource_owner
                .insert(resource.uri.clone(), upstream.clone());
            self.resources.push((upstream.clone(), resource.clone()));
        }
        for template in &lists.templates {
            let text = &template.uri_template;
            let parsed = match self.template_owner.get(text) {
                Some(holder) => Err(DropReason::Collision {
                    holder: holder.clone(),
                }),
                None => UriTemplate::parse(text).map_err(|_| DropReason::InvalidTemplate),
            };
            let parsed = match parsed {
                Ok(parsed) => parsed,
                Err(reason) => {
                    let (kind, name) = ("resource template", text.clone());
                    drop_entry(&mut self.dropped, kind, upstream, name, reason);
                    continue;
                }
            };
            self.template_owner.insert(text.clone(), upstream.clone());
            self.matchers.push((parsed, upstream.clone()));
            self.templates.push((upstream.clone(), template.clone()));
        }
    }

    /// Whether `other` lists the same entries (what was dropped aside).
    pub fn same_entries(&self, other: &Merged) -> bool {
        self.tools == other.tools
            && self.prompts == other.prompts
            && self.resources == other.resources
            && self.templates == other.templates
    }

    /// Where the downstream tool `name` goes.
    pub fn tool(&self, name: &str) -> Option<&Route> {
        self.tool_index.get(name).map(|&at| &self.tools[at].0)
    }

    /// Where the downstream prompt `name` goes.
    pub fn prompt(&self, name: &str) -> Option<&Route> {
        self.prompt_index.get(name).map(|&at| &self.prompts[at].0)
    }

    /// The upstream that owns the resource `uri`: the one that listed it,
    /// else the first whose template matches it.
    pub fn resource_owner(&self, uri: &str) -> Option<&Arc<str>> {
        self.resource_owner.get(uri).or_else(|| {
            self.matchers
                .iter()
                .find(|(template, _)| template.match_uri(uri).is_some())
                .map(|(_, upstream)| upstream)
        })
    }

    /// The upstream that listed the resource template `template` (as
    /// written), for routing completions of its variables.
    pub fn template_owner(&self, template: &str) -> Option<&Arc<str>> {
        self.template_owner.get(template)
    }
}

/// A tool or a prompt: an entry the downstream knows under a name the
/// naming chose.
trait Named: Clone {
    const KIND: EntryKind;
    fn name(&self) -> &str;
    fn name_mut(&mut self) -> &mut String;
}

/// `Named` for the entry types whose [`EntryKind`] has their name.
macro_rules! named {
    ($($entry:ident),*) => {$(
        impl Named for $entry {
            const KIND: EntryKind = EntryKind::$entry;
            fn name(&self) -> &str {
                &self.name
            }
            fn name_mut(&mut self) -> &mut String {
                &mut self.name
            }
        }
    )*};
}

named!(Tool, Prompt);

/// Adds `upstream`'s `entries` of one kind under their downstream names to
/// `kept` (and its `index` by name), the ones whose name is taken or (a
/// tool's) breaks the spec's rule to `dropped`.
fn add_named<T: Named>(
    upstream: &Arc<str>,
    entries: &[T],
    naming: &dyn Naming,
    (kept, index): (&mut Vec<(Route, T)>, &mut HashMap<String, usize>),
    dropped: &mut Vec<Dropped>,
) {
    let kind = T::KIND.as_str();
    for entry in entries {
        let exposed = naming.name(upstream, T::KIND, entry.name());
        if T::KIND == EntryKind::Tool && !Tool::is_valid_name(&exposed) {
            drop_entry(dropped, kind, upstream, exposed, DropReason::InvalidName);
            continue;
        }
        if let Some(&at) = index.get(&exposed) {
            let holder = kept[at].0.upstream.clone();
            let reason = DropReason::Collision { holder };
            drop_entry(dropped, kind, upstream, exposed, reason);
            continue;
        }
        let mut renamed = entry.clone();
        let name = std::mem::replace(renamed.name_mut(), exposed.clone());
        index.insert(exposed, kept.len());
        let route = Route {
            upstream: upstream.clone(),
            name,
        };
        kept.push((route, renamed));
    }
}

fn drop_entry(
    dropped: &mut Vec<Dropped>,
    kind: &'static str,
    upstream: &Arc<str>,
    name: String,
    reason: DropReason,
) {
    dropped.push(Dropped {
        kind,
        upstream: upstream.clone(),
        name,
        reason,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::JsonObject;

    fn lists(tools: &[&str], resources: &[&str], templates: &[&str]) -> Lists {
        let mut lists = Lists::new();
        lists.tools = tools
            .iter()
            .map(|n| Tool::new(*n, JsonObject::new()))
            .collect();
        lists.prompts = tools.iter().map(|n| Prompt::new(*n)).collect();
        lists.resources = resources.iter().map(|u| Resource::new(*u, "r")).collect();
        lists.templates = templates
            .iter()
            .map(|t| ResourceTemplate::new(*t, "t"))
            .collect();
        lists
    }

    #[test]
    fn prefixes_route_back_to_the_upstream_names() {
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let (la, lb) = (lists(&["echo"], &[], &[]), lists(&["echo"], &[], &[]));
        let merged = Merged::merge([(&a, &la), (&b, &lb)], &Prefix::default());
        let names: Vec<_> = merged.tools.iter().map(|(_, t)| t.name.as_str()).collect();
        assert_eq!(names, ["a_echo", "b_echo"]);
        let route = merged.tool("b_echo").expect("routed");
        assert_eq!((&*route.upstream, route.name.as_str()), ("b", "echo"));
        assert_eq!(merged.prompt("a_echo").map(|r| &*r.upstream), Some("a"));
        assert!(merged.dropped.is_empty());
    }

    #[test]
    fn a_collision_keeps_the_first_and_says_so() {
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let (la, lb) = (
            lists(&["echo"], &[], &[]),
            lists(&["echo", "x y"], &[], &[]),
        );
        let keep = |_: &str, _: EntryKind, name: &str| name.to_owned();
        let merged = Merged::merge([(&a, &la), (&b, &lb)], &keep);
        assert_eq!(merged.tools.len(), 1);
        assert_eq!(&*merged.tool("echo").expect("kept").upstream, "a");
        let reasons: Vec<String> = merged.dropped.iter().map(ToString::to_string).collect();
        // Prompt names have no character rule: `x y` stays a prompt.
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].contains("tool `echo` of upstream `b`") && reasons[0].contains("`a`"));
        assert!(reasons[1].contains("tool `x y`") && reasons[1].contains("128"));
        assert!(reasons[2].contains("prompt `echo`"));
    }

    #[test]
    fn a_dropped_name_is_shown_escaped_and_cut() {
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let hostile = "\u{1b}]0;title\u{7}\r\u{202e}x";
        let long = "p".repeat(10_000);
        let (la, lb) = (
            lists(&[hostile, &long], &[], &[]),
            lists(&[hostile, &long], &[], &[]),
        );
        let keep = |_: &str, _: EntryKind, name: &str| name.to_owned();
        let merged = Merged::merge([(&a, &la), (&b, &lb)], &keep);
        let reasons: Vec<String> = merged.dropped.iter().map(ToString::to_string).collect();
        // Both tools of each upstream break the name rule; b's two prompts collide.
        assert_eq!(reasons.len(), 6, "{reasons:?}");
        assert_eq!(
            reasons[0],
            "tool `\\x1b]0;title\\x07\\x0d\\u{202e}x` of upstream `a` left out: tool names are \
             1 to 128 of A-Z a-z 0-9 _ - . (choose other names with a naming hook)"
        );
        let cut = format!("prompt `{}…` of upstream `b`", "p".repeat(SHOWN_CHARS));
        assert!(reasons[5].starts_with(&cut), "{}", reasons[5]);
        for reason in &reasons {
            assert!(!reason.chars().any(char::is_control), "{reason:?}");
            assert!(reason.len() < SHOWN_CHARS + 200, "{reason}");
        }
    }

    #[test]
    fn resources_route_by_uri_and_by_template_first_claim_wins() {
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let la = lists(&[], &["file:///one"], &["users://{id}"]);
        let lb = lists(
            &[],
            &["file:///one", "file:///two"],
            &["users://{id}", "notes://{n}"],
        );
        let merged = Merged::merge([(&a, &la), (&b, &lb)], &Prefix::default());
        let owner = |uri: &str| merged.resource_owner(uri).map(|o| o.to_string());
        assert_eq!(owner("file:///one").as_deref(), Some("a"));
        assert_eq!(owner("file:///two").as_deref(), Some("b"));
        assert_eq!(owner("users://7").as_deref(), Some("a"));
        assert_eq!(owner("notes://x").as_deref(), Some("b"));
        assert_eq!(owner("other://x"), None);
        assert_eq!(merged.dropped.len(), 2, "{:?}", merged.dropped);
        assert_eq!(
            merged.template_owner("notes://{n}").map(|o| &**o),
            Some("b")
        );
    }
}
