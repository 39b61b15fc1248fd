//! [`Catalog`]: what a server offers (tools, prompts, resources and
//! templates), changed while it serves.
//!
//! Entries belong to groups, each named by its caller (a gateway keeps one
//! per upstream); the builder's own registrations, and its extensions',
//! are the group [`Catalog::BUILT`]. A change replaces one group's entries
//! whole and publishes a new [`Snapshot`] of every group's: each request
//! reads the snapshot current when it starts, so it sees one consistent
//! catalog, and a reader only clones an `Arc` under a read lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

use crate::Error;
use crate::changes::ListChanges;
use crate::entries::{PromptEntry, ResourceEntry, TemplateEntry, ToolEntry, param_headers};
use crate::registration::{Registrations, ToolDefinition};
use crate::states::AppState;

/// One consistent view of the catalog: every group's entries, in the order
/// the groups were first filled, indexed by name and URI.
#[derive(Default)]
pub(crate) struct Snapshot {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
    pub(crate) resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<Arc<TemplateEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    pub(crate) prompt_index: HashMap<String, usize>,
    /// A fingerprint of each list's names or URIs, in order: a list
    /// cursor carries its list's, so a cursor into a list that changed
    /// since is refused instead of skipping or repeating entries.
    pub(crate) tags: Tags,
}

/// The fingerprints of a [`Snapshot`]'s lists.
#[derive(Default, Clone, Copy)]
pub(crate) struct Tags {
    pub(crate) tools: u64,
    pub(crate) resources: u64,
    pub(crate) templates: u64,
    pub(crate) prompts: u64,
}

/// FNV-1a over `keys`, each ended by a byte no name or URI holds: the same
/// on every replica that holds the same list, whatever its build.
fn fingerprint<'a>(keys: impl Iterator<Item = &'a str>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for key in keys {
        for &byte in key.as_bytes().iter().chain(&[0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// What one group contributes.
#[derive(Default, Clone)]
struct Group {
    tools: Vec<Arc<ToolEntry>>,
    resources: Vec<Arc<ResourceEntry>>,
    templates: Vec<Arc<TemplateEntry>>,
    prompts: Vec<Arc<PromptEntry>>,
}

impl Group {
    fn is_empty(&self) -> bool {
        self.tools.is_empty()
            && self.resources.is_empty()
            && self.templates.is_empty()
            && self.prompts.is_empty()
    }

    /// Keeps only the entries an extension contributed (a replacement of
    /// the builder's group leaves its extensions' entries in place).
    fn extensions_only(&self) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|e| e.owner.is_some())
                .cloned()
                .collect(),
            resources: self
                .resources
                .iter()
                .filter(|e| e.owner.is_some())
                .cloned()
                .collect(),
            templates: self
                .templates
                .iter()
                .filter(|e| e.owner.is_some())
                .cloned()
                .collect(),
            prompts: Vec::new(),
        }
    }

    fn extend(&mut self, other: Group) {
        self.tools.extend(other.tools);
        self.resources.extend(other.resources);
        self.templates.extend(other.templates);
        self.prompts.extend(other.prompts);
    }
}

/// Which lists a change altered, as clients see them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Altered {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Altered {
    fn between(old: &Group, new: &Group) -> Self {
        fn differ<T, U: PartialEq>(a: &[Arc<T>], b: &[Arc<T>], item: impl Fn(&T) -> &U) -> bool {
            !a.iter().map(|e| item(e)).eq(b.iter().map(|e| item(e)))
        }
        Self {
            tools: differ(&old.tools, &new.tools, |e| &e.tool),
            prompts: differ(&old.prompts, &new.prompts, |e| &e.prompt),
            resources: differ(&old.resources, &new.resources, |e| &e.resource)
                || differ(&old.templates, &new.templates, |e| &e.template),
        }
    }

    fn announce(self, changes: &ListChanges) {
        if self.tools {
            changes.tools_changed();
        }
        if self.prompts {
            changes.prompts_changed();
        }
        if self.resources {
            changes.resources_changed();
        }
    }
}

/// The catalog's state, shared by every handle and the server's runners.
struct Shared {
    /// What requests read: replaced whole by each change.
    current: RwLock<Arc<Snapshot>>,
    /// Each group's entries, in the order the groups were first filled;
    /// held by a change from start to publication, so changes apply one at
    /// a time.
    groups: Mutex<Vec<(String, Group)>>,
    changes: ListChanges,
    /// The server's states, which handlers added at run time may take.
    states: Option<AppState>,
}

/// The tools, prompts, resources and resource templates a
/// [`Server`](crate::Server) serves, changed while it serves: from
/// [`Server::catalog`](crate::Server::catalog). Cheap to clone; every
/// clone changes the same catalog.
///
/// Entries belong to groups named by the caller (say one per upstream
/// server of a gateway); what the [`ServerBuilder`](crate::ServerBuilder)
/// registered is the group [`BUILT`](Self::BUILT). A name (tool, prompt) or
/// URI (resource) belongs to one group at a time: a change that would give
/// another group's name to a group is refused whole.
///
/// Each change tells clients once per list whose contents it altered
/// (tools; prompts; resources and templates): handshake-era sessions get
/// `notifications/*/list_changed` for the lists the server advertises
/// `listChanged` on ([`ServerBuilder::list_changed`](crate::ServerBuilder::list_changed)
/// or [`ServerBuilder::dynamic`](crate::ServerBuilder::dynamic)), and
/// 2026-07-28 `subscriptions/listen` streams as their filter asks. A list
/// cursor handed out before a change of its list is refused afterwards
/// (`-32602`): the client lists again from the start.
///
/// A request reads the catalog as it was when the request began: a call
/// of a tool removed while it runs finishes; a call that begins after the
/// removal is answered `-32602` (unknown tool).
///
/// # Examples
/// ```
/// use mcp_server::{Args, Registrations, Server, Tool, ToolDefinition};
/// use mcp_server::types::JsonObject;
///
/// # fn main() -> Result<(), mcp_server::Error> {
/// let server = Server::builder("gateway", "1.0.0").dynamic().build()?;
/// let catalog = server.catalog();
///
/// // A tool whose schema comes from elsewhere (an upstream server, say).
/// let mut schema = JsonObject::new();
/// schema.insert("type".into(), "object".into());
/// let echo = ToolDefinition::raw(Tool::new("echo", schema), |Args(a): Args<JsonObject>| async move {
///     serde_json::Value::Object(a).to_string()
/// });
/// let mut upstream = Registrations::new();
/// upstream.register(echo);
/// catalog.replace_group("upstream", upstream)?;
/// assert_eq!(server.tools()[0].name, "echo");
///
/// catalog.remove_group("upstream");
/// assert!(server.tools().is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Catalog {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let groups: Vec<String> = self.lock().iter().map(|(name, _)| name.clone()).collect();
        f.debug_struct("Catalog")
            .field("groups", &groups)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// The group of what the [`ServerBuilder`](crate::ServerBuilder)
    /// registered (its extensions' entries included), which the
    /// single-entry methods ([`add_tool`](Self::add_tool) and the like)
    /// change too.
    pub const BUILT: &'static str = "";

    /// An empty catalog (what a builder holds until it builds).
    pub(crate) fn empty(changes: ListChanges) -> Self {
        Self {
            shared: Arc::new(Shared {
                current: RwLock::new(Arc::default()),
                groups: Mutex::new(vec![(Self::BUILT.to_owned(), Group::default())]),
                changes,
                states: None,
            }),
        }
    }

    /// A catalog of the builder's registrations, `built`, for handlers
    /// that may take `states`.
    ///
    /// # Errors
    /// The first registration refused, a name or URI registered twice, or
    /// a state a handler takes that `states` lacks.
    pub(crate) fn new(
        built: Registrations,
        changes: ListChanges,
        states: Option<AppState>,
    ) -> Result<Self, Error> {
        let group = accept(built, states.as_deref())?;
        let snapshot = merge(&[(Self::BUILT, &group)], 0)?;
        Ok(Self {
            shared: Arc::new(Shared {
                current: RwLock::new(Arc::new(snapshot)),
                groups: Mutex::new(vec![(Self::BUILT.to_owned(), group)]),
                changes,
                states,
            }),
        })
    }

    /// The catalog as it is now: what one request reads throughout.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.shared
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Group)>> {
        self.shared
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces everything `group` contributed with `registrations` (a
    /// group not seen before is added after the others), at once: requests
    /// that begin afterwards see the new entries, none sees half of them.
    /// Clients are told of each list whose contents changed (none when
    /// nothing did). Replacing [`BUILT`](Self::BUILT) keeps its extensions'
    /// entries.
    ///
    /// # Errors
    /// [`Error::Registration`], and nothing changes, when a registration
    /// was refused (see [`Registrations`]), a name or URI is registered
    /// twice in `registrations`, another group holds one of its names or
    /// URIs (the error names that group), or a handler takes a
    /// [`State<S>`](crate::State) the server holds no `S` for.
    pub fn replace_group(&self, group: &str, registrations: Registrations) -> Result<(), Error> {
        let new = self.accept(registrations)?;
        self.change(group, |old| {
            if group == Self::BUILT {
                let mut kept = old.extensions_only();
                kept.extend(new);
                kept
            } else {
                new
            }
        })
    }

    /// Removes everything `group` contributed (for [`BUILT`](Self::BUILT),
    /// all but its extensions' entries), telling clients of each list that
    /// changed. Returns whether the group held anything.
    pub fn remove_group(&self, group: &str) -> bool {
        let mut held = false;
        let changed = self.change(group, |old| {
            held = !old.is_empty();
            if group == Self::BUILT {
                old.extensions_only()
            } else {
                Group::default()
            }
        });
        // Removing entries cannot collide with anything.
        debug_assert!(changed.is_ok());
        held
    }

    /// The names of the groups that hold entries, [`BUILT`](Self::BUILT)
    /// first.
    pub fn groups(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, group)| !group.is_empty())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Adds `definition` to the [`BUILT`](Self::BUILT) group, replacing
    /// that group's tool of the same name if it has one.
    ///
    /// # Errors
    /// As [`replace_group`](Self::replace_group).
    pub fn add_tool(&self, definition: ToolDefinition) -> Result<(), Error> {
        let mut added = Registrations::new();
        added.register(definition);
        self.add(added)
    }

    /// Removes the tool `name` from the [`BUILT`](Self::BUILT) group (an
    /// extension's stays); returns whether it was there.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove_built(|group| {
            let before = group.tools.len();
            group
                .tools
                .retain(|e| e.owner.is_some() || e.tool.name != name);
            group.tools.len() != before
        })
    }

    /// Adds the prompts, resources and templates (and tools) of
    /// `registrations` to the [`BUILT`](Self::BUILT) group, each replacing
    /// that group's entry of the same name or URI.
    ///
    /// # Errors
    /// As [`replace_group`](Self::replace_group).
    pub fn add(&self, registrations: Registrations) -> Result<(), Error> {
        let added = self.accept(registrations)?;
        self.change(Self::BUILT, |old| {
            let mut group = old.clone();
            for entry in added.tools {
                group.tools.retain(|e| e.tool.name != entry.tool.name);
                group.tools.push(entry);
            }
            for entry in added.prompts {
                group.prompts.retain(|e| e.prompt.name != entry.prompt.name);
                group.prompts.push(entry);
            }
            for entry in added.resources {
                group
                    .resources
                    .retain(|e| e.resource.uri != entry.resource.uri);
                group.resources.push(entry);
            }
            for entry in added.templates {
                group
                    .templates
                    .retain(|e| e.template.uri_template != entry.template.uri_template);
                group.templates.push(entry);
            }
            group
        })
    }

    /// Removes the prompt `name` from the [`BUILT`](Self::BUILT) group;
    /// returns whether it was there.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove_built(|group| {
            let before = group.prompts.len();
            group.prompts.retain(|e| e.prompt.name != name);
            group.prompts.len() != before
        })
    }

    /// Removes the resource at `uri`, or the resource template whose
    /// template is `uri`, from the [`BUILT`](Self::BUILT) group (an
    /// extension's stays); returns whether it was there.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.remove_built(|group| {
            let before = group.resources.len() + group.templates.len();
            group
                .resources
                .retain(|e| e.owner.is_some() || e.resource.uri != uri);
            group
                .templates
                .retain(|e| e.owner.is_some() || e.template.uri_template != uri);
            group.resources.len() + group.templates.len() != before
        })
    }

    /// The tools as listed now, every group's.
    pub fn tools(&self) -> Vec<Tool> {
        self.snapshot()
            .tools
            .iter()
            .map(|e| e.tool.clone())
            .collect()
    }

    /// The prompts as listed now, every group's.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.snapshot()
            .prompts
            .iter()
            .map(|e| e.prompt.clone())
            .collect()
    }

    /// The resources as listed now, every group's.
    pub fn resources(&self) -> Vec<Resource> {
        self.snapshot()
            .resources
            .iter()
            .map(|e| e.resource.clone())
            .collect()
    }

    /// The resource templates as listed now, every group's.
    pub fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.snapshot()
            .templates
            .iter()
            .map(|e| e.template.clone())
            .collect()
    }

    /// Removes from the built group what `remove` removes; whether it did.
    fn remove_built(&self, remove: impl FnOnce(&mut Group) -> bool) -> bool {
        let mut removed = false;
        let changed = self.change(Self::BUILT, |old| {
            let mut group = old.clone();
            removed = remove(&mut group);
            group
        });
        debug_assert!(changed.is_ok());
        removed
    }

    /// `registrations` as a group's entries, or its first refusal.
    fn accept(&self, registrations: Registrations) -> Result<Group, Error> {
        accept(registrations, self.shared.states.as_deref())
    }

    /// Replaces `group`'s entries with what `change` makes of them, and
    /// publishes the new snapshot; tells clients what changed.
    fn change(&self, group: &str, change: impl FnOnce(&Group) -> Group) -> Result<(), Error> {
        let mut groups = self.lock();
        let at = match groups.iter().position(|(name, _)| name == group) {
            Some(at) => at,
            None => {
                groups.push((group.to_owned(), Group::default()));
                groups.len() - 1
            }
        };
        let new = change(&groups[at].1);
        let altered = Altered::between(&groups[at].1, &new);
        let snapshot = {
            let view: Vec<(&str, &Group)> = groups
                .iter()
                .enumerate()
                .map(|(i, (name, old))| (name.as_str(), if i == at { &new } else { old }))
                .collect();
            merge(&view, at)
        };
        let snapshot = match snapshot {
            Ok(snapshot) => snapshot,
            Err(error) => {
                if groups[at].1.is_empty() && group != Self::BUILT {
                    groups.remove(at);
                }
                return Err(error);
            }
        };
        if new.is_empty() && group != Self::BUILT {
            groups.remove(at);
        } else {
            groups[at].1 = new;
        }
        *self
            .shared
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
        drop(groups);
        altered.announce(&self.shared.changes);
        Ok(())
    }
}

/// `registrations` as a group's entries, for handlers that may take
/// `states`, or its first refusal.
fn accept(
    mut registrations: Registrations,
    states: Option<&crate::states::States>,
) -> Result<Group, Error> {
    if !registrations.errors.is_empty() {
        return Err(registrations.errors.swap_remove(0));
    }
    crate::registration::check_states(&registrations.needs, states)?;
    Ok(into_group(registrations))
}

/// `registrations`' entries (already checked) as a group's, each tool's
/// `x-mcp-header` annotations read once.
fn into_group(registrations: Registrations) -> Group {
    Group {
        tools: registrations
            .tools
            .into_iter()
            .map(|mut entry| {
                entry.param_headers = param_headers(&entry.tool);
                Arc::new(entry)
            })
            .collect(),
        resources: registrations.resources.into_iter().map(Arc::new).collect(),
        templates: registrations.templates.into_iter().map(Arc::new).collect(),
        prompts: registrations.prompts.into_iter().map(Arc::new).collect(),
    }
}

/// The snapshot of `groups`; refused when two entries share a name or URI
/// (the one of group `changed`, being changed, is the one refused).
fn merge(groups: &[(&str, &Group)], changed: usize) -> Result<Snapshot, Error> {
    let (tools, tool_index) = merge_list(
        groups,
        changed,
        |g| &g.tools,
        |e| &e.tool.name,
        ("tool", "name"),
    )?;
    let (resources, resource_index) = merge_list(
        groups,
        changed,
        |g| &g.resources,
        |e| &e.resource.uri,
        ("resource", "URI"),
    )?;
    let (prompts, prompt_index) = merge_list(
        groups,
        changed,
        |g| &g.prompts,
        |e| &e.prompt.name,
        ("prompt", "name"),
    )?;
    let templates: Vec<Arc<TemplateEntry>> = groups
        .iter()
        .flat_map(|(_, g)| g.templates.iter().cloned())
        .collect();
    let tags = Tags {
        tools: fingerprint(tools.iter().map(|e| e.tool.name.as_str())),
        resources: fingerprint(resources.iter().map(|e| e.resource.uri.as_str())),
        templates: fingerprint(templates.iter().map(|e| e.template.uri_template.as_str())),
        prompts: fingerprint(prompts.iter().map(|e| e.prompt.name.as_str())),
    };
    Ok(Snapshot {
        tools,
        tool_index,
        resources,
        resource_index,
        templates,
        prompts,
        prompt_index,
        tags,
    })
}

type Merged<T> = (Vec<Arc<T>>, HashMap<String, usize>);

/// One list of every group, indexed by `key`; `(kind, named)` say what a
/// refusal names ("tool", "name").
fn merge_list<T>(
    groups: &[(&str, &Group)],
    changed: usize,
    list: impl Fn(&Group) -> &Vec<Arc<T>>,
    key: impl Fn(&T) -> &String,
    (kind, named): (&str, &str),
) -> Result<Merged<T>, Error> {
    let mut entries = Vec::new();
    let mut index = HashMap::new();
    // The group of each entry, to name the holder of a taken key.
    let mut from = Vec::new();
    for (g, (_, group)) in groups.iter().enumerate() {
        for entry in list(group) {
            let name = key(entry);
            if let Some(&at) = index.get(name) {
                let holder = if from[at] == changed { g } else { from[at] };
                let reason = if holder == changed {
                    format!("a {kind} with this {named} is already registered")
                } else {
                    match groups[holder].0 {
                        Catalog::BUILT => format!(
                            "the server's own registrations hold a {kind} with this {named}"
                        ),
                        other => format!("group `{other}` holds a {kind} with this {named}"),
                    }
                };
                return Err(Error::Registration {
                    what: format!("{kind} `{name}`"),
                    reason,
                });
            }
            index.insert(name.clone(), entries.len());
            entries.push(entry.clone());
            from.push(g);
        }
    }
    Ok((entries, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Server, State};

    fn names(catalog: &Catalog) -> Vec<String> {
        catalog.tools().into_iter().map(|t| t.name).collect()
    }

    fn one(name: &str) -> Registrations {
        let mut registrations = Registrations::new();
        registrations.tool(name, "A tool", || async { "ok" });
        registrations
    }

    #[test]
    fn the_builders_group_keeps_its_extensions_entries_when_replaced() {
        let extension = crate::extension::Extension::new("io.example/ext")
            .expect("an id")
            .tool("ext_tool", "The extension's", || async { "ext" });
        let server = Server::builder("s", "1")
            .tool("own", "The server's", || async { "own" })
            .extension(extension)
            .build()
            .expect("server");
        let catalog = server.catalog();
        assert_eq!(names(&catalog), ["own", "ext_tool"]);
        catalog
            .replace_group(Catalog::BUILT, one("new"))
            .expect("replaced");
        assert_eq!(names(&catalog), ["ext_tool", "new"]);
        assert!(!catalog.remove_tool("ext_tool"), "an extension's stays");
        assert!(catalog.remove_tool("new"));
        assert!(catalog.remove_group(Catalog::BUILT));
        assert_eq!(names(&catalog), ["ext_tool"]);
        // The extension's own name is taken for the other groups.
        let error = catalog
            .replace_group("up", one("ext_tool"))
            .expect_err("taken");
        assert!(error.to_string().contains("server's own"), "{error}");
    }

    #[test]
    fn a_group_is_refused_whole_and_nothing_changes() {
        let server = Server::builder("s", "1").build().expect("server");
        let catalog = server.catalog();
        let mut twice = one("a");
        twice.tool("a", "Again", || async { "again" });
        let error = catalog.replace_group("up", twice).expect_err("twice");
        assert!(error.to_string().contains("already registered"), "{error}");
        // A handler taking a state the server lacks.
        let mut stateful = one("b");
        stateful.tool("c", "Stateful", |State(_): State<u8>| async { "c" });
        let error = catalog.replace_group("up", stateful).expect_err("no u8");
        assert!(error.to_string().contains("State<u8>"), "{error}");
        assert!(catalog.tools().is_empty() && catalog.groups().is_empty());
    }

    #[tokio::test]
    async fn each_list_that_changed_is_announced_once() {
        let server = Server::builder("s", "1").build().expect("server");
        let catalog = server.catalog();
        let mut changes = server.list_changes().subscribe();
        let mut both = one("a");
        both.resource(Resource::new("memo://x", "x"), || async { "x" });
        catalog.replace_group("up", both).expect("added");
        assert_eq!(
            changes.try_recv().ok(),
            Some(crate::changes::ListChange::Tools)
        );
        assert_eq!(
            changes.try_recv().ok(),
            Some(crate::changes::ListChange::Resources)
        );
        assert!(changes.try_recv().is_err(), "prompts did not change");
        catalog
            .replace_group("up", {
                let mut same = one("a");
                same.resource(Resource::new("memo://x", "x"), || async { "y" });
                same
            })
            .expect("the same lists");
        assert!(changes.try_recv().is_err(), "nothing listed changed");
    }

    #[test]
    fn a_catalog_is_shared_across_threads() {
        fn shared<T: Clone + Send + Sync + 'static>() {}
        fn sent<T: Send + 'static>() {}
        shared::<Catalog>();
        sent::<Registrations>();
    }

    #[test]
    fn fingerprints_tell_lists_apart_by_their_keys_in_order() {
        let of = |keys: &[&str]| fingerprint(keys.iter().copied());
        assert_eq!(of(&["a", "b"]), of(&["a", "b"]));
        assert_ne!(of(&["a", "b"]), of(&["b", "a"]));
        assert_ne!(of(&["ab"]), of(&["a", "b"]));
        assert_ne!(of(&[]), of(&[""]));
    }
}
