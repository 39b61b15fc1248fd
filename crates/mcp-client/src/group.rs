//! Several servers behind one set of tools, resources and prompts.

use std::collections::BTreeMap;

use crate::RequestOptions;
use mcp_types::{CallToolResult, Implementation, Prompt, Resource, Tool};
use serde::Serialize;

use crate::{Client, Error};

/// Identifies one server in a [`ClientSessionGroup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(u64);

type NameHook = Box<dyn Fn(&str, &Implementation) -> String + Send + Sync>;

struct Member {
    id: ServerId,
    client: Client,
    tools: Vec<String>,
    resources: Vec<String>,
    prompts: Vec<String>,
}

/// Connections to several servers, their tools, resources and prompts
/// gathered under one namespace. Names that collide across servers are
/// refused unless a naming hook tells them apart.
///
/// # Examples
/// ```no_run
/// use mcp_client::{ClientConfig, ClientSessionGroup};
/// use mcp_transport::stdio::ServerCommand;
///
/// # async fn run() -> Result<(), mcp_client::Error> {
/// let mut group = ClientSessionGroup::new()
///     .with_name_hook(|name, server| format!("{}_{name}", server.name));
/// let config = ClientConfig::new("my-host", "1.0.0");
/// group.connect_stdio(ServerCommand::new("weather-server"), config.clone()).await?;
/// group.connect_stdio(ServerCommand::new("calendar-server"), config).await?;
/// for name in group.tools().keys() {
///     println!("{name}");
/// }
/// group.close().await;
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct ClientSessionGroup {
    name_hook: Option<NameHook>,
    next_id: u64,
    members: Vec<Member>,
    tools: BTreeMap<String, (Tool, ServerId)>,
    resources: BTreeMap<String, (Resource, ServerId)>,
    prompts: BTreeMap<String, (Prompt, ServerId)>,
}

impl ClientSessionGroup {
    /// An empty group; components keep their own names.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names each component from its own name and its server's
    /// implementation info, so that servers with the same tool names can share the group.
    pub fn with_name_hook(
        mut self,
        hook: impl Fn(&str, &Implementation) -> String + Send + Sync + 'static,
    ) -> Self {
        self.name_hook = Some(Box::new(hook));
        self
    }

    /// Spawns a server process, connects and adds it to the group.
    ///
    /// # Errors
    /// As [`Client::connect_stdio`] and [`add`](Self::add).
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        &mut self,
        command: mcp_transport::stdio::ServerCommand,
        config: crate::ClientConfig,
    ) -> Result<ServerId, Error> {
        let client = Client::connect_stdio(command, config).await?;
        self.add(client).await
    }

    /// Adds a connected client: lists its tools, resources and prompts (those
    /// its server declares) and adds them under their group names.
    ///
    /// # Errors
    /// [`Error::DuplicateComponents`] when a name is already taken (nothing
    /// is added and the client is closed); [`Error::Request`] when listing fails.
    pub async fn add(&mut self, client: Client) -> Result<ServerId, Error> {
        match self.gather(&client).await {
            Ok((tools, resources, prompts)) => {
                let id = ServerId(self.next_id);
                self.next_id += 1;
                let member = Member {
                    id,
                    client,
                    tools: tools.iter().map(|(n, _)| n.clone()).collect(),
                    resources: resources.iter().map(|(n, _)| n.clone()).collect(),
                    prompts: prompts.iter().map(|(n, _)| n.clone()).collect(),
                };
                self.tools
                    .extend(tools.into_iter().map(|(n, t)| (n, (t, id))));
                self.resources
                    .extend(resources.into_iter().map(|(n, r)| (n, (r, id))));
                self.prompts
                    .extend(prompts.into_iter().map(|(n, p)| (n, (p, id))));
                self.members.push(member);
                Ok(id)
            }
            Err(error) => {
                let _ = client.close().await;
                Err(error)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    async fn gather(
        &self,
        client: &Client,
    ) -> Result<
        (
            Vec<(String, Tool)>,
            Vec<(String, Resource)>,
            Vec<(String, Prompt)>,
        ),
        Error,
    > {
        let capabilities = client.server_capabilities().unwrap_or_default();
        // A stateless server may not name itself; the hook still gets an identity.
        let server = client
            .server_info()
            .unwrap_or_else(|| Implementation::new("unknown-server", "0"));
        let name = |n: &str| match &self.name_hook {
            Some(hook) => hook(n, &server),
            None => n.to_owned(),
        };
        let mut tools = Vec::new();
        if capabilities.tools.is_some() {
            for tool in client.list_all_tools().await? {
                tools.push((name(&tool.name), tool));
            }
        }
        let mut resources = Vec::new();
        if capabilities.resources.is_some() {
            for resource in client.list_all_resources().await? {
                resources.push((name(&resource.name), resource));
            }
        }
        let mut prompts = Vec::new();
        if capabilities.prompts.is_some() {
            for prompt in client.list_all_prompts().await? {
                prompts.push((name(&prompt.name), prompt));
            }
        }
        check_unique("tools", tools.iter().map(|(n, _)| n), &self.tools)?;
        check_unique(
            "resources",
            resources.iter().map(|(n, _)| n),
            &self.resources,
        )?;
        check_unique("prompts", prompts.iter().map(|(n, _)| n), &self.prompts)?;
        Ok((tools, resources, prompts))
    }

    /// Removes a server from the group and closes its connection.
    ///
    /// # Errors
    /// [`Error::Process`] when its process could not be reaped.
    pub async fn disconnect(&mut self, id: ServerId) -> Result<(), Error> {
        let Some(index) = self.members.iter().position(|m| m.id == id) else {
            return Ok(());
        };
        let member = self.members.remove(index);
        for name in &member.tools {
            self.tools.remove(name);
        }
        for name in &member.resources {
            self.resources.remove(name);
        }
        for name in &member.prompts {
            self.prompts.remove(name);
        }
        member.client.close().await
    }

    /// Every tool, by group name.
    pub fn tools(&self) -> BTreeMap<&str, &Tool> {
        self.tools
            .iter()
            .map(|(n, (t, _))| (n.as_str(), t))
            .collect()
    }

    /// Every resource, by group name.
    pub fn resources(&self) -> BTreeMap<&str, &Resource> {
        self.resources
            .iter()
            .map(|(n, (r, _))| (n.as_str(), r))
            .collect()
    }

    /// Every prompt, by group name.
    pub fn prompts(&self) -> BTreeMap<&str, &Prompt> {
        self.prompts
            .iter()
            .map(|(n, (p, _))| (n.as_str(), p))
            .collect()
    }

    /// The servers in the group.
    pub fn servers(&self) -> impl Iterator<Item = (ServerId, &Client)> {
        self.members.iter().map(|m| (m.id, &m.client))
    }

    /// One server's client, for what the group does not aggregate
    /// (subscriptions, completions, logging levels).
    pub fn server(&self, id: ServerId) -> Option<&Client> {
        self.members.iter().find(|m| m.id == id).map(|m| &m.client)
    }

    /// Calls a tool by its group name on the server that offers it.
    ///
    /// # Errors
    /// [`Error::UnknownComponent`] for a name not in the group; as
    /// [`ClientSession::call_tool_with`](crate::ClientSession::call_tool_with) otherwise.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let Some((tool, id)) = self.tools.get(name) else {
            return Err(Error::UnknownComponent {
                kind: "tool",
                name: name.to_owned(),
            });
        };
        let Some(client) = self.server(*id) else {
            return Err(Error::UnknownComponent {
                kind: "tool",
                name: name.to_owned(),
            });
        };
        client.call_tool_with(&tool.name, arguments, options).await
    }

    /// Closes every connection.
    pub async fn close(self) {
        for member in self.members {
            if let Err(error) = member.client.close().await {
                tracing::warn!(%error, "a server of the group did not shut down cleanly");
            }
        }
    }
}

fn check_unique<'a, T>(
    kind: &'static str,
    names: impl Iterator<Item = &'a String>,
    existing: &BTreeMap<String, T>,
) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    let duplicates: Vec<String> = names
        .filter(|n| existing.contains_key(*n) || !seen.insert(*n))
        .cloned()
        .collect();
    if duplicates.is_empty() {
        Ok(())
    } else {
        Err(Error::DuplicateComponents {
            kind,
            names: duplicates,
        })
    }
}
