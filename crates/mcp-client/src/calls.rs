//! The typed calls of a session, one per client request of the protocol.

use std::collections::BTreeMap;
use std::time::Instant;

use mcp_types::method::{Method, RequestMethod};
use mcp_types::untrusted::Escaped;
use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteArgument, CompleteContext, CompleteReference,
    CompleteRequestParams, CompleteResult, EmptyResult, GetPromptRequestParams, GetPromptResult,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, PaginatedRequestParams, Prompt, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, ResultOrInputRequired, SetLevelRequestParams,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams, methods,
};
use serde::Serialize;
use serde_json::Value;

use crate::cache::ResultCache;
use crate::error::{Error, ListLimit};
use crate::extension::claims::ToolOutcome;
use crate::options::RequestOptions;
use crate::session::{ClientSession, parse_result, raw_params};
use crate::validation::OutputSchemas;

/// One page of a list method: its items and the cursor of the next page.
pub(crate) trait Page {
    type Item;
    fn into_parts(self) -> (Vec<Self::Item>, Option<String>);
}

macro_rules! page {
    ($result:ty, $field:ident, $item:ty) => {
        impl Page for $result {
            type Item = $item;
            fn into_parts(self) -> (Vec<$item>, Option<String>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

page!(ListToolsResult, tools, Tool);
page!(ListResourcesResult, resources, Resource);
page!(
    ListResourceTemplatesResult,
    resource_templates,
    ResourceTemplate
);
page!(ListPromptsResult, prompts, Prompt);
page!(
    mcp_types::skills::ListSkillsResult,
    skills,
    mcp_types::skills::SkillEntry
);

impl ClientSession {
    /// Sends `ping`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server does not answer.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn send_ping(&self) -> Result<(), Error> {
        self.send_ping_with(RequestOptions::new()).await
    }

    /// [`send_ping`](Self::send_ping) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`send_ping`](Self::send_ping).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn send_ping_with(&self, options: RequestOptions) -> Result<(), Error> {
        self.request::<methods::Ping>(&None, options)
            .await
            .map(|_: EmptyResult| ())
    }

    /// One page of a list method, from the stateless-era cache while the
    /// server's `ttlMs` allows, with its size in bytes as it came. A call
    /// with its own `_meta` or extensions bypasses the cache: its answer
    /// may differ.
    pub(crate) async fn list_page<M>(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<(M::Result, usize), Error>
    where
        M: RequestMethod<Params = Option<PaginatedRequestParams>>,
    {
        let key = ResultCache::key(M::NAME, cursor.as_deref());
        let cacheable = options.meta.is_none() && options.extensions.is_empty();
        let hit = cacheable
            .then(|| self.shared.lock().cache.get(&key, Instant::now()))
            .flatten();
        let raw = match hit {
            Some(raw) => raw,
            None => {
                let params = raw_params::<M>(&paginated(cursor))?;
                let raw = self.request_raw(M::NAME, params, options).await?;
                if cacheable && self.is_stateless() {
                    let max_ttl = self.config.max_cache_ttl;
                    self.shared
                        .lock()
                        .cache
                        .insert(key, &raw, Instant::now(), max_ttl);
                }
                raw
            }
        };
        Ok((parse_result(M::NAME, &raw)?, raw.get().len()))
    }

    /// Follows `nextCursor` through every page `list` reads (each with its
    /// size in bytes), within the config's [`ListLimits`](crate::ListLimits):
    /// the items of a page past a limit are never kept.
    pub(crate) async fn list_all<R: Page, F, Fut>(
        &self,
        method: &'static str,
        list: F,
    ) -> Result<Vec<R::Item>, Error>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: std::future::Future<Output = Result<(R, usize), Error>>,
    {
        let limits = self.config.list_limits;
        let refuse = |limit| Err(Error::ListLimit { method, limit });
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut cursor = None;
        for _ in 0..limits.max_pages {
            let (page, size) = list(cursor).await?;
            bytes = bytes.saturating_add(size);
            if bytes > limits.max_bytes {
                return refuse(ListLimit::Bytes(limits.max_bytes));
            }
            let (page, next) = page.into_parts();
            if items.len().saturating_add(page.len()) > limits.max_items {
                return refuse(ListLimit::Items(limits.max_items));
            }
            items.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(items),
            }
        }
        refuse(ListLimit::Pages(limits.max_pages))
    }

    /// One page of `tools/list` (pass the previous page's `next_cursor`).
    /// Also learns each tool's output schema, so [`call_tool`](Self::call_tool)
    /// can check its results, and its `x-mcp-header` annotations.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        self.list_tools_with(cursor, RequestOptions::new()).await
    }

    /// [`list_tools`](Self::list_tools) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_tools_with(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<ListToolsResult, Error> {
        self.tools_page(cursor, options).await.map(|(page, _)| page)
    }

    /// [`list_tools`](Self::list_tools), with the page's size in bytes.
    async fn tools_page(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<(ListToolsResult, usize), Error> {
        let (mut result, bytes) = self
            .list_page::<methods::ListTools>(cursor, options)
            .await?;
        let mut routes = Vec::new();
        if self.is_stateless() {
            // Tools whose `x-mcp-header` annotations are invalid cannot be
            // called correctly over HTTP: the spec drops them from view.
            result.tools.retain(|tool| match mcp_types::routing::annotated_properties(tool) {
                Ok(found) => {
                    routes.push((tool.name.clone(), found.into()));
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = %Escaped::name(&tool.name), %reason, "dropping a tool with invalid x-mcp-header annotations");
                    false
                }
            });
        }
        let compiled = OutputSchemas::compile(&result.tools);
        let mut state = self.shared.lock();
        state.output_schemas.learn(compiled);
        state.routes.extend(routes);
        Ok((result, bytes))
    }

    /// Every tool, following `nextCursor` through all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools); [`Error::ListLimit`] when the
    /// list passes the config's [`ListLimits`](crate::ListLimits).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the page request in flight; pages already
    /// read are discarded.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all(methods::ListTools::NAME, |c| {
            self.tools_page(c, RequestOptions::new())
        })
        .await
    }

    /// Calls a tool. `arguments` is anything that serializes to a JSON
    /// object (a struct, a `json!({...})`), or `()` for none.
    ///
    /// In the stateless era, input the tool asks for (elicitation,
    /// sampling, roots) is answered through the config's callbacks and the
    /// call retried, as the handshake era answers server requests.
    ///
    /// When the session has listed the tool (see
    /// [`list_tools`](Self::list_tools)) and it declares an output schema,
    /// the structured result is checked against it; an unlisted tool is not
    /// checked and no `tools/list` is sent for it.
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error (unknown tool, timeout,
    /// closed connection); [`Error::InvalidToolResult`] when the result does
    /// not match the tool's output schema. A tool's own failure is not an
    /// error: it is a result with `is_error: Some(true)`.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the call on the wire.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, RequestOptions::new())
            .await
    }

    /// Calls a tool with a timeout, a progress callback, a log level or
    /// extra headers (see [`RequestOptions`]).
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    /// In the stateless era, answers the callbacks already gave are discarded too.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = tool_arguments(arguments)?;
        let result: CallToolResult = self.with_input_rounds(params, options).await?;
        self.check_output(name, &result)?;
        Ok(result)
    }

    /// One `tools/call` exchange, without answering input requests: the
    /// raw [`ResultOrInputRequired`] for hosts that drive Multi Round-Trip
    /// Requests themselves (set `input_responses` and `request_state` on
    /// `params` to retry).
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error; [`Error::InvalidResult`]
    /// when the answer is neither a result nor an input request.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn call_tool_once(
        &self,
        params: &CallToolRequestParams,
        options: RequestOptions,
    ) -> Result<ResultOrInputRequired<CallToolResult>, Error> {
        let answer = self.exchange(params, options).await?;
        if let ResultOrInputRequired::Complete(result) = &answer {
            self.check_output(&params.name, result)?;
        }
        Ok(answer)
    }

    /// Checks a tool's result against its output schema, when the config
    /// asks for it and the call did not fail.
    fn check_output(&self, name: &str, result: &CallToolResult) -> Result<(), Error> {
        if self.config.validate_tool_output && result.is_error != Some(true) {
            self.shared.lock().output_schemas.validate(name, result)?;
        }
        Ok(())
    }

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, Error> {
        self.list_resources_with(cursor, RequestOptions::new())
            .await
    }

    /// [`list_resources`](Self::list_resources) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_resources_with(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<ListResourcesResult, Error> {
        self.list_page::<methods::ListResources>(cursor, options)
            .await
            .map(|(page, _)| page)
    }

    /// Every resource, following `nextCursor` through all pages.
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources); [`Error::ListLimit`].
    ///
    /// # Cancel safety
    /// Dropping the future cancels the page request in flight; pages already
    /// read are discarded.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all(methods::ListResources::NAME, |c| {
            self.list_page::<methods::ListResources>(c, RequestOptions::new())
        })
        .await
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.list_resource_templates_with(cursor, RequestOptions::new())
            .await
    }

    /// [`list_resource_templates`](Self::list_resource_templates) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`list_resource_templates`](Self::list_resource_templates).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_resource_templates_with(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.list_page::<methods::ListResourceTemplates>(cursor, options)
            .await
            .map(|(page, _)| page)
    }

    /// Every resource template, following `nextCursor` through all pages.
    ///
    /// # Errors
    /// As [`list_resource_templates`](Self::list_resource_templates);
    /// [`Error::ListLimit`].
    ///
    /// # Cancel safety
    /// Dropping the future cancels the page request in flight; pages already
    /// read are discarded.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all(methods::ListResourceTemplates::NAME, |c| {
            self.list_page::<methods::ListResourceTemplates>(c, RequestOptions::new())
        })
        .await
    }

    /// Reads a resource.
    ///
    /// # Errors
    /// [`Error::Request`]: a missing resource is a remote error (`-32002` in
    /// the handshake era, `-32602` at 2026-07-28).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.read_resource_with(uri, RequestOptions::new()).await
    }

    /// [`read_resource`](Self::read_resource) with per-call options.
    ///
    /// # Errors
    /// As [`read_resource`](Self::read_resource).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: RequestOptions,
    ) -> Result<ReadResourceResult, Error> {
        self.with_input_rounds(ReadResourceRequestParams::new(uri), options)
            .await
    }

    /// One `resources/read` exchange, without answering input requests: the
    /// raw [`ResultOrInputRequired`] for a host that drives Multi
    /// Round-Trip Requests itself (the Python SDK's
    /// `read_resource(..., allow_input_required=True)`): set
    /// `input_responses` and `request_state` on `params` to retry (see
    /// [`dispatch_input_request`](Self::dispatch_input_request)), and
    /// `meta` for the request's `_meta`.
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error; [`Error::InvalidResult`]
    /// when the answer is neither a result nor an input request.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn read_resource_once(
        &self,
        params: &ReadResourceRequestParams,
        options: RequestOptions,
    ) -> Result<ResultOrInputRequired<ReadResourceResult>, Error> {
        self.exchange(params, options).await
    }

    /// Subscribes to `notifications/resources/updated` for `uri`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.subscribe_resource_with(uri, RequestOptions::new())
            .await
    }

    /// [`subscribe_resource`](Self::subscribe_resource) with per-call
    /// options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`subscribe_resource`](Self::subscribe_resource).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn subscribe_resource_with(
        &self,
        uri: &str,
        options: RequestOptions,
    ) -> Result<(), Error> {
        self.request::<methods::Subscribe>(&SubscribeRequestParams::new(uri), options)
            .await?;
        // Made again should the session be started anew.
        self.shared.lock().subscriptions.insert(uri.to_owned());
        Ok(())
    }

    /// Ends a subscription.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.unsubscribe_resource_with(uri, RequestOptions::new())
            .await
    }

    /// [`unsubscribe_resource`](Self::unsubscribe_resource) with per-call
    /// options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`unsubscribe_resource`](Self::unsubscribe_resource).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn unsubscribe_resource_with(
        &self,
        uri: &str,
        options: RequestOptions,
    ) -> Result<(), Error> {
        self.shared.lock().subscriptions.remove(uri);
        self.request::<methods::Unsubscribe>(&UnsubscribeRequestParams::new(uri), options)
            .await
            .map(|_| ())
    }

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses or the connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        self.list_prompts_with(cursor, RequestOptions::new()).await
    }

    /// [`list_prompts`](Self::list_prompts) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`list_prompts`](Self::list_prompts).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn list_prompts_with(
        &self,
        cursor: Option<String>,
        options: RequestOptions,
    ) -> Result<ListPromptsResult, Error> {
        self.list_page::<methods::ListPrompts>(cursor, options)
            .await
            .map(|(page, _)| page)
    }

    /// Every prompt, following `nextCursor` through all pages.
    ///
    /// # Errors
    /// As [`list_prompts`](Self::list_prompts); [`Error::ListLimit`].
    ///
    /// # Cancel safety
    /// Dropping the future cancels the page request in flight; pages already
    /// read are discarded.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_all(methods::ListPrompts::NAME, |c| {
            self.list_page::<methods::ListPrompts>(c, RequestOptions::new())
        })
        .await
    }

    /// Gets a prompt with its arguments.
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown prompt or a missing argument is a
    /// remote `-32602`.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        self.get_prompt_with(name, arguments, RequestOptions::new())
            .await
    }

    /// [`get_prompt`](Self::get_prompt) with per-call options.
    ///
    /// # Errors
    /// As [`get_prompt`](Self::get_prompt).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: RequestOptions,
    ) -> Result<GetPromptResult, Error> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        self.with_input_rounds(params, options).await
    }

    /// One `prompts/get` exchange, without answering input requests: the
    /// raw [`ResultOrInputRequired`] for a host that drives Multi
    /// Round-Trip Requests itself (the Python SDK's
    /// `get_prompt(..., allow_input_required=True)`), as
    /// [`read_resource_once`](Self::read_resource_once) does for reads.
    ///
    /// # Errors
    /// [`Error::Request`] for a protocol error; [`Error::InvalidResult`]
    /// when the answer is neither a result nor an input request.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn get_prompt_once(
        &self,
        params: &GetPromptRequestParams,
        options: RequestOptions,
    ) -> Result<ResultOrInputRequired<GetPromptResult>, Error> {
        self.exchange(params, options).await
    }

    /// Asks for completions of an argument of a prompt or resource template.
    ///
    /// # Errors
    /// [`Error::Request`] when the server refuses.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn complete(
        &self,
        reference: impl Into<CompleteReference>,
        argument: CompleteArgument,
        context_arguments: Option<BTreeMap<String, String>>,
    ) -> Result<CompleteResult, Error> {
        self.complete_with(
            reference,
            argument,
            context_arguments,
            RequestOptions::new(),
        )
        .await
    }

    /// [`complete`](Self::complete) with per-call options (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`complete`](Self::complete).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire
    /// (`notifications/cancelled`) and discards a late answer.
    pub async fn complete_with(
        &self,
        reference: impl Into<CompleteReference>,
        argument: CompleteArgument,
        context_arguments: Option<BTreeMap<String, String>>,
        options: RequestOptions,
    ) -> Result<CompleteResult, Error> {
        let mut params = CompleteRequestParams::new(reference, argument);
        if let Some(arguments) = context_arguments {
            let mut context = CompleteContext::new();
            context.arguments = Some(arguments);
            params.context = Some(context);
        }
        self.request::<methods::Complete>(&params, options).await
    }

    /// Asks the server to send log messages at `level` and above for the
    /// rest of the session (`logging/setLevel`, handshake era).
    ///
    /// # Errors
    /// [`Error::NotInThisEra`] in the stateless era, which has no session to
    /// set a level on: ask per call with
    /// [`RequestOptions::with_log_level`]; [`Error::Request`] when the server
    /// refuses.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        self.set_logging_level_with(level, RequestOptions::new())
            .await
    }

    /// [`set_logging_level`](Self::set_logging_level) with per-call options
    /// (a timeout, `_meta`).
    ///
    /// # Errors
    /// As [`set_logging_level`](Self::set_logging_level).
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the wire, but the server may
    /// already have applied it.
    pub async fn set_logging_level_with(
        &self,
        level: LoggingLevel,
        options: RequestOptions,
    ) -> Result<(), Error> {
        self.require_era(
            false,
            methods::SetLevel::NAME,
            "RequestOptions::with_log_level on each call",
        )?;
        self.request::<methods::SetLevel>(&SetLevelRequestParams::new(level), options)
            .await?;
        // Set again should the session be started anew.
        self.shared.lock().log_level = Some(level);
        Ok(())
    }

    /// Tells the server the roots changed.
    ///
    /// # Errors
    /// [`Error::Request`] when the connection is closed.
    ///
    /// # Cancel safety
    /// A notification is queued whole or not at all: dropping the future before
    /// it resolves may leave it unsent.
    pub async fn send_roots_list_changed(&self) -> Result<(), Error> {
        self.notify::<methods::RootsListChanged>(&None).await
    }
}

/// The params of one page of a list method: `None` for the first page.
pub(crate) fn paginated(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    cursor.map(|cursor| {
        let mut params = PaginatedRequestParams::default();
        params.cursor = Some(cursor);
        params
    })
}

pub(crate) fn tool_arguments(arguments: impl Serialize) -> Result<Option<JsonObject>, Error> {
    let serialize_error = |source| Error::Serialize {
        method: methods::CallTool::NAME,
        source,
    };
    match serde_json::to_value(arguments).map_err(serialize_error)? {
        Value::Null => Ok(None),
        Value::Object(object) => Ok(Some(object)),
        other => Err(serialize_error(serde::ser::Error::custom(format!(
            "tool arguments must be a JSON object, not {other}"
        )))),
    }
}

impl ClientSession {
    /// Whether the server listed extension `id` under
    /// `capabilities.extensions` (once negotiated).
    pub fn server_supports_extension(&self, id: &str) -> bool {
        self.reading_server_capabilities(|c| {
            c.extensions.as_ref().is_some_and(|e| e.contains_key(id))
        })
        .unwrap_or(false)
    }

    /// Calls a tool, accepting results of the config's
    /// [claims](crate::ClientConfig::claim) as [`ToolOutcome::Claimed`].
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool), but for claimed results.
    pub async fn call_tool_claimed(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: RequestOptions,
    ) -> Result<ToolOutcome, Error> {
        match self.call_tool_with(name, arguments, options).await {
            Ok(result) => Ok(ToolOutcome::Complete(result)),
            Err(Error::UnexpectedClaimedResult { result }) => Ok(ToolOutcome::Claimed(result)),
            Err(e) => Err(e),
        }
    }
}
