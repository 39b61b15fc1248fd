//! Several servers behind one set of tools, resources and prompts.

use std::collections::BTreeMap;

use mcp_types::untrusted::Escaped;
use mcp_types::{CallToolResult, Implementation, Prompt, Resource, Tool};
use serde::Serialize;

use crate::client::Client;
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::config::ClientConfig;
use crate::error::Error;
use crate::options::RequestOptions;
use crate::server_id::ServerId;

/// How to reach one server of a group (the Python SDK's
/// `ServerParameters`): what [`ClientSessionGroup::connect_to_server`]
/// connects to. The timeouts are the [`ClientConfig`]'s
/// ([`request_timeout`](ClientConfig::request_timeout)); headers,
/// reconnection and whether closing ends the HTTP session
/// ([`terminate_on_close`](crate::HttpClientConfig::terminate_on_close))
/// are the [`HttpClientConfig`](crate::HttpClientConfig)'s.
#[cfg(any(feature = "stdio", feature = "http"))]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerParams {
    /// A process to spawn, spoken to over its stdin and stdout.
    #[cfg(feature = "stdio")]
    Stdio(mcp_transport::stdio::ServerCommand),
    /// A streamable HTTP endpoint.
    #[cfg(feature = "http")]
    Http {
        /// Its URL (`http://` or `https://`).
        url: String,
        /// Headers, limits, reconnection.
        http: mcp_transport::http::HttpClientConfig,
    },
    /// A server of the 2024-11-05 HTTP+SSE transport.
    #[cfg(feature = "http")]
    LegacySse {
        /// Its SSE endpoint, often `/sse`.
        url: String,
        /// Headers, limits, reconnection.
        http: mcp_transport::http::HttpClientConfig,
    },
}

#[cfg(any(feature = "stdio", feature = "http"))]
impl ServerParams {
    /// A streamable HTTP endpoint with the default HTTP settings.
    #[cfg(feature = "http")]
    pub fn http(url: impl Into<String>) -> Self {
        ServerParams::Http {
            url: url.into(),
            http: mcp_transport::http::HttpClientConfig::new(),
        }
    }

    /// Connects and negotiates.
    async fn connect(self, config: ClientConfig) -> Result<Client, Error> {
        match self {
            #[cfg(feature = "stdio")]
            ServerParams::Stdio(command) => Client::connect_stdio(command, config).await,
            #[cfg(feature = "http")]
            ServerParams::Http { url, http } => Client::connect_http_with(&url, http, config).await,
            #[cfg(feature = "http")]
            ServerParams::LegacySse { url, http } => {
                Client::connect_legacy_sse_with(&url, http, config).await
            }
        }
    }
}

#[cfg(feature = "stdio")]
impl From<mcp_transport::stdio::ServerCommand> for ServerParams {
    fn from(command: mcp_transport::stdio::ServerCommand) -> Self {
        ServerParams::Stdio(command)
    }
}

/// A list of one server the group could not read: the server joined the
/// group without those components (the Python SDK logs such a failure and
/// goes on; so does the group, with a warning in the log, and keeps it
/// here to be asked).
#[derive(Debug)]
#[non_exhaustive]
pub struct ListingFailure {
    /// "tools", "resources" or "prompts".
    pub kind: &'static str,
    /// Why the list could not be read.
    pub error: Error,
}

type NameHook = Box<dyn Fn(&str, &Implementation) -> String + Send + Sync>;

struct Member {
    id: ServerId,
    client: Client,
    server_info: Implementation,
    tools: Vec<String>,
    resources: Vec<String>,
    prompts: Vec<String>,
    failures: Vec<ListingFailure>,
}

/// What one server brings to the group, under group names.
#[derive(Default)]
struct Gathered {
    tools: Vec<(String, Tool)>,
    resources: Vec<(String, Resource)>,
    prompts: Vec<(String, Prompt)>,
    failures: Vec<ListingFailure>,
}

/// Connections to several servers, over any transport, their tools,
/// resources and prompts gathered under one namespace. Names that collide
/// across servers are refused unless a naming hook tells them apart; a
/// server whose list cannot be read joins without it, with a warning.
///
/// # Examples
/// ```no_run
/// use mcp_client::{ClientConfig, ClientSessionGroup, ServerParams};
/// use mcp_transport::stdio::ServerCommand;
///
/// # async fn run() -> Result<(), mcp_client::Error> {
/// let mut group = ClientSessionGroup::new()
///     .with_name_hook(|name, server| format!("{}_{name}", server.name));
/// let config = ClientConfig::new("my-host", "1.0.0");
/// group.connect_stdio(ServerCommand::new("weather-server"), config.clone()).await?;
/// group
///     .connect_to_server(ServerParams::http("http://127.0.0.1:8000/mcp"), config)
///     .await?;
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
    /// implementation info (the Python SDK's `component_name_hook`), so that
    /// servers with the same tool names can share the group.
    pub fn with_name_hook(
        mut self,
        hook: impl Fn(&str, &Implementation) -> String + Send + Sync + 'static,
    ) -> Self {
        self.name_hook = Some(Box::new(hook));
        self
    }

    /// Connects to a server, negotiates and adds it to the group (the Python
    /// SDK's `connect_to_server`).
    ///
    /// # Errors
    /// As [`Client::connect_stdio`], [`Client::connect_http`] or
    /// [`Client::connect_legacy_sse`], and [`add`](Self::add).
    #[cfg(any(feature = "stdio", feature = "http"))]
    pub async fn connect_to_server(
        &mut self,
        server: impl Into<ServerParams>,
        config: ClientConfig,
    ) -> Result<ServerId, Error> {
        let client = server.into().connect(config).await?;
        self.add(client).await
    }

    /// Spawns a server process, connects and adds it to the group.
    ///
    /// # Errors
    /// As [`Client::connect_stdio`] and [`add`](Self::add).
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        &mut self,
        command: mcp_transport::stdio::ServerCommand,
        config: ClientConfig,
    ) -> Result<ServerId, Error> {
        self.connect_to_server(command, config).await
    }

    /// Connects to a streamable HTTP endpoint and adds it to the group.
    ///
    /// # Errors
    /// As [`Client::connect_http_with`] and [`add`](Self::add).
    #[cfg(feature = "http")]
    pub async fn connect_http(
        &mut self,
        url: &str,
        http: mcp_transport::http::HttpClientConfig,
        config: ClientConfig,
    ) -> Result<ServerId, Error> {
        let url = url.to_owned();
        self.connect_to_server(ServerParams::Http { url, http }, config)
            .await
    }

    /// Adds a connected client: lists its tools, resources and prompts (those
    /// its server declares) and adds them under their group names, named
    /// after the server's own name and version.
    ///
    /// A list that cannot be read (the server fails it, or it passes the
    /// config's [`ListLimits`](crate::ListLimits)) is skipped with a warning
    /// and kept in [`listing_failures`](Self::listing_failures); the server
    /// still joins with the rest.
    ///
    /// # Errors
    /// [`Error::DuplicateComponents`] when a name is already taken (nothing
    /// is added and the client is closed).
    pub async fn add(&mut self, client: Client) -> Result<ServerId, Error> {
        // A stateless server may not name itself; the hook still gets an identity.
        let server_info = client
            .server_info()
            .unwrap_or_else(|| Implementation::new("unknown-server", "0"));
        self.add_with_server_info(client, server_info).await
    }

    /// [`add`](Self::add), naming the server's components after
    /// `server_info` rather than what the server says of itself (the Python
    /// SDK's `connect_with_session`): to tell apart two servers that give
    /// the same name, or a stateless server that gives none.
    ///
    /// # Errors
    /// As [`add`](Self::add).
    pub async fn add_with_server_info(
        &mut self,
        client: Client,
        server_info: Implementation,
    ) -> Result<ServerId, Error> {
        let gathered = self.gather(&client, &server_info).await;
        let unique = check_unique("tools", gathered.tools.iter().map(|(n, _)| n), &self.tools)
            .and_then(|()| {
                check_unique(
                    "resources",
                    gathered.resources.iter().map(|(n, _)| n),
                    &self.resources,
                )
            })
            .and_then(|()| {
                check_unique(
                    "prompts",
                    gathered.prompts.iter().map(|(n, _)| n),
                    &self.prompts,
                )
            });
        if let Err(error) = unique {
            if let Err(close) = client.close().await {
                tracing::debug!(error = %close, "a refused server did not shut down cleanly");
            }
            return Err(error);
        }
        let id = ServerId(self.next_id);
        self.next_id += 1;
        let Gathered {
            tools,
            resources,
            prompts,
            failures,
        } = gathered;
        let member = Member {
            id,
            client,
            server_info,
            tools: tools.iter().map(|(n, _)| n.clone()).collect(),
            resources: resources.iter().map(|(n, _)| n.clone()).collect(),
            prompts: prompts.iter().map(|(n, _)| n.clone()).collect(),
            failures,
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

    /// Lists what `client`'s server declares, each component under its
    /// group name; a list that fails is skipped with a warning.
    async fn gather(&self, client: &Client, server: &Implementation) -> Gathered {
        let capabilities = client.server_capabilities().unwrap_or_default();
        let name = |n: &str| match &self.name_hook {
            Some(hook) => hook(n, server),
            None => n.to_owned(),
        };
        let mut gathered = Gathered::default();
        let failed = |kind: &'static str, error: Error| {
            tracing::warn!(
                server = %Escaped::name(&server.name), kind, %error,
                "could not list the server's {kind}; it joins the group without them"
            );
            ListingFailure { kind, error }
        };
        if capabilities.tools.is_some() {
            match client.list_all_tools().await {
                Ok(tools) => {
                    gathered.tools = tools.into_iter().map(|t| (name(&t.name), t)).collect()
                }
                Err(error) => gathered.failures.push(failed("tools", error)),
            }
        }
        if capabilities.resources.is_some() {
            match client.list_all_resources().await {
                Ok(resources) => {
                    gathered.resources =
                        resources.into_iter().map(|r| (name(&r.name), r)).collect();
                }
                Err(error) => gathered.failures.push(failed("resources", error)),
            }
        }
        if capabilities.prompts.is_some() {
            match client.list_all_prompts().await {
                Ok(prompts) => {
                    gathered.prompts = prompts.into_iter().map(|p| (name(&p.name), p)).collect();
                }
                Err(error) => gathered.failures.push(failed("prompts", error)),
            }
        }
        gathered
    }

    /// Removes a server from the group and closes its connection (the
    /// Python SDK's `disconnect_from_server`).
    ///
    /// # Errors
    /// [`Error::UnknownServer`] when no server of the group has `id` (it was
    /// never added, or already disconnected); [`Error::Process`] when its
    /// process could not be reaped.
    pub async fn disconnect(&mut self, id: ServerId) -> Result<(), Error> {
        let Some(index) = self.members.iter().position(|m| m.id == id) else {
            return Err(Error::UnknownServer { id });
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

    /// The servers in the group (the Python SDK's `sessions`).
    pub fn servers(&self) -> impl Iterator<Item = (ServerId, &Client)> {
        self.members.iter().map(|m| (m.id, &m.client))
    }

    /// One server's client, for what the group does not aggregate
    /// (subscriptions, completions, logging levels).
    pub fn server(&self, id: ServerId) -> Option<&Client> {
        self.members.iter().find(|m| m.id == id).map(|m| &m.client)
    }

    /// The implementation info a server's components are named after: what
    /// the server said of itself, or what [`add_with_server_info`](Self::add_with_server_info)
    /// was given.
    pub fn server_info(&self, id: ServerId) -> Option<&Implementation> {
        self.members
            .iter()
            .find(|m| m.id == id)
            .map(|m| &m.server_info)
    }

    /// The lists of a server that could not be read when it joined.
    pub fn listing_failures(&self, id: ServerId) -> &[ListingFailure] {
        self.members
            .iter()
            .find(|m| m.id == id)
            .map_or(&[], |m| m.failures.as_slice())
    }

    /// Calls a tool by its group name on the server that offers it (timeout,
    /// progress and `_meta` in `options`).
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
        let unknown = || Error::UnknownComponent {
            kind: "tool",
            name: name.to_owned(),
        };
        let (tool, id) = self.tools.get(name).ok_or_else(unknown)?;
        let client = self.server(*id).ok_or_else(unknown)?;
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
