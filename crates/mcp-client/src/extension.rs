//! Client extensions (SEP-2133): declaring them, result claims and
//! notification bindings.
//!
//! - **Declaring.** [`ClientConfig::extension`] lists an extension (by its
//!   validated identifier, with its settings) under the client's
//!   `capabilities.extensions`, in `initialize` and in every stateless
//!   request's `_meta`. [`ClientSession::server_supports_extension`] says
//!   whether the server listed it too.
//! - **Result claims.** An extension whose `tools/call` results have their
//!   own shape (a task handle with `"resultType": "task"`, say) describes
//!   that shape as a Rust type implementing [`ResultClaim`] and registers it
//!   with [`ClientConfig::claim`]. A claim is active from its
//!   [`ResultClaim::SINCE`] revision on; an extension all of whose claims
//!   are inactive at the negotiated revision is not advertised (the client
//!   never announces result shapes it would reject). A claimed result is
//!   parsed into the claim's type: [`ClientSession::call_tool_claimed`]
//!   returns it as [`ToolOutcome::Claimed`]; plain
//!   [`call_tool`](ClientSession::call_tool) refuses it with
//!   [`Error::UnexpectedClaimedResult`], which carries the parsed value.
//! - **Notification bindings.** [`ClientConfig::bind_notification`] hands a
//!   notification method the core protocol does not define at the
//!   negotiated revision (a vendor notification) to a typed handler. Each
//!   binding has its own bounded FIFO, drained by a task the session owns,
//!   so a slow handler never stalls the connection's reader and may itself
//!   send requests; when the FIFO is full the oldest notification is
//!   dropped (logged at `warn`).
//!
//! # Examples
//! ```
//! use mcp_client::extension::ResultClaim;
//! use mcp_client::ClientConfig;
//! use mcp_client::types::Revision;
//!
//! #[derive(serde::Deserialize)]
//! struct Receipt { receipt: String }
//!
//! impl ResultClaim for Receipt {
//!     const EXTENSION: &'static str = "com.example/receipts";
//!     const RESULT_TYPE: &'static str = "receipt";
//!     const SINCE: Revision = Revision::V2026_07_28;
//! }
//!
//! let config = ClientConfig::new("host", "1.0.0").claim::<Receipt>().unwrap();
//! let ad = config.capabilities_at(Revision::V2026_07_28);
//! assert!(ad.extensions.unwrap().contains_key("com.example/receipts"));
//! // At a revision where the claim is inactive, the extension is not advertised.
//! assert!(config.capabilities_at(Revision::V2025_11_25).extensions.is_none());
//! ```

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use mcp_types::extension::{ExtensionId, InvalidExtensionId};
use mcp_types::method::NotificationMethod;
use mcp_types::{CallToolResult, JsonObject, RawJson, Revision};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::Notify;

use crate::config::BoxFuture;
use crate::{ClientConfig, ClientSession, Error, RequestOptions};

/// The `resultType` values of the core protocol, which no claim may take.
const CORE_RESULT_TYPES: [&str; 2] = ["complete", "input_required"];

/// The default capacity of each notification binding's FIFO.
pub const DEFAULT_BINDING_QUEUE: usize = 64;

/// A result shape an extension adds to `tools/call`, told apart by its
/// `resultType`. See the [module documentation](self).
pub trait ResultClaim: DeserializeOwned + Send + Sync + 'static {
    /// The extension's identifier (`io.modelcontextprotocol/tasks`).
    const EXTENSION: &'static str;
    /// The `resultType` that marks this shape (`task`); never `complete`
    /// or `input_required`.
    const RESULT_TYPE: &'static str;
    /// The first protocol revision at which the claim is active.
    const SINCE: Revision;
}

type ParseFn = fn(&RawJson) -> Result<Box<dyn Any + Send + Sync>, serde_json::Error>;

/// One registered claim, type-erased.
#[derive(Clone)]
pub(crate) struct Claim {
    pub(crate) extension: &'static str,
    pub(crate) result_type: &'static str,
    pub(crate) since: Revision,
    parse: ParseFn,
}

fn parse_claim<T: ResultClaim>(
    raw: &RawJson,
) -> Result<Box<dyn Any + Send + Sync>, serde_json::Error> {
    raw.parse::<T>()
        .map(|v| Box::new(v) as Box<dyn Any + Send + Sync>)
}

/// Why a claim or binding could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtensionConfigError {
    /// The extension identifier is not valid.
    #[error(transparent)]
    InvalidId(#[from] InvalidExtensionId),
    /// A claim takes a core `resultType`.
    #[error(
        "the claim of `{extension}` takes the core resultType `{result_type}`; give the extension's own shape a resultType of its own"
    )]
    CoreResultType {
        /// The extension.
        extension: &'static str,
        /// The core result type it tried to claim.
        result_type: &'static str,
    },
    /// Two claims take the same `resultType`.
    #[error("resultType `{result_type}` is already claimed; each shape needs its own resultType")]
    DuplicateClaim {
        /// The result type.
        result_type: &'static str,
    },
    /// Two bindings for one notification method.
    #[error("notification `{method}` is already bound; bind each method once")]
    DuplicateBinding {
        /// The method.
        method: &'static str,
    },
}

/// A claimed `tools/call` result, parsed into its claim's type.
pub struct ClaimedResult {
    extension: &'static str,
    result_type: &'static str,
    value: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for ClaimedResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimedResult")
            .field("extension", &self.extension)
            .field("result_type", &self.result_type)
            .finish_non_exhaustive()
    }
}

impl ClaimedResult {
    /// The identifier of the extension that claimed the result.
    pub fn extension(&self) -> &'static str {
        self.extension
    }

    /// The result's `resultType`.
    pub fn result_type(&self) -> &'static str {
        self.result_type
    }

    /// Whether the result is of claim type `T`.
    pub fn is<T: ResultClaim>(&self) -> bool {
        self.value.is::<T>()
    }

    /// The typed value, or `self` back when it is of another claim's type.
    ///
    /// # Errors
    /// `self`, unchanged, when the value is not a `T`.
    pub fn downcast<T: ResultClaim>(self) -> Result<T, Self> {
        match self.value.downcast::<T>() {
            Ok(value) => Ok(*value),
            Err(value) => Err(Self { value, ..self }),
        }
    }

    /// A reference to the typed value, if it is a `T`.
    pub fn downcast_ref<T: ResultClaim>(&self) -> Option<&T> {
        self.value.downcast_ref::<T>()
    }
}

/// What `tools/call` answered, claimed results included.
#[derive(Debug)]
#[non_exhaustive]
// Returned once per call, never stored in bulk: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum ToolOutcome {
    /// The tool's result.
    Complete(CallToolResult),
    /// A result of an extension's own shape.
    Claimed(ClaimedResult),
}

/// The claims of a config, indexed by `resultType`.
#[derive(Clone, Default)]
pub(crate) struct Claims {
    by_type: HashMap<&'static str, Claim>,
}

impl Claims {
    fn add<T: ResultClaim>(&mut self) -> Result<(), ExtensionConfigError> {
        ExtensionId::new(T::EXTENSION)?;
        if CORE_RESULT_TYPES.contains(&T::RESULT_TYPE) {
            return Err(ExtensionConfigError::CoreResultType {
                extension: T::EXTENSION,
                result_type: T::RESULT_TYPE,
            });
        }
        if self.by_type.contains_key(T::RESULT_TYPE) {
            return Err(ExtensionConfigError::DuplicateClaim {
                result_type: T::RESULT_TYPE,
            });
        }
        self.by_type.insert(
            T::RESULT_TYPE,
            Claim {
                extension: T::EXTENSION,
                result_type: T::RESULT_TYPE,
                since: T::SINCE,
                parse: parse_claim::<T>,
            },
        );
        Ok(())
    }

    /// Whether `extension` bears claims, none of them active at `revision`.
    pub(crate) fn all_inactive(&self, extension: &str, revision: Revision) -> bool {
        let mut of_extension = self
            .by_type
            .values()
            .filter(|c| c.extension == extension)
            .peekable();
        of_extension.peek().is_some() && of_extension.all(|c| c.since > revision)
    }

    /// The extensions bearing claims.
    pub(crate) fn extensions(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.by_type.values().map(|c| c.extension)
    }

    /// The claimed result `raw` is, if an active claim takes its `resultType`.
    ///
    /// # Errors
    /// [`Error::InvalidResult`] when it is claimed but does not fit the claim's type.
    pub(crate) fn claimed(
        &self,
        method: &'static str,
        raw: &RawJson,
        revision: Revision,
    ) -> Result<Option<ClaimedResult>, Error> {
        if self.by_type.is_empty() {
            return Ok(None);
        }
        #[derive(serde::Deserialize)]
        struct Tag {
            #[serde(rename = "resultType")]
            result_type: Option<String>,
        }
        let Some(tag) = raw.parse::<Tag>().ok().and_then(|t| t.result_type) else {
            return Ok(None);
        };
        let Some(claim) = self
            .by_type
            .get(tag.as_str())
            .filter(|c| c.since <= revision)
        else {
            return Ok(None);
        };
        let value = (claim.parse)(raw).map_err(|source| Error::InvalidResult { method, source })?;
        Ok(Some(ClaimedResult {
            extension: claim.extension,
            result_type: claim.result_type,
            value,
        }))
    }
}

type BindingFn = Arc<dyn Fn(Option<RawJson>) -> BoxFuture<()> + Send + Sync>;

/// One notification binding: its handler and FIFO capacity.
#[derive(Clone)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    handler: BindingFn,
    capacity: usize,
}

/// A binding's FIFO between the connection's reader and its consumer task.
pub(crate) struct BindingQueue {
    binding: Binding,
    queue: Mutex<VecDeque<Option<RawJson>>>,
    ready: Notify,
}

impl BindingQueue {
    /// Enqueues without waiting (the reader must never block); drops the
    /// oldest when full.
    pub(crate) fn push(&self, params: Option<RawJson>) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.len() >= self.binding.capacity {
            queue.pop_front();
            tracing::warn!(
                method = self.binding.method,
                capacity = self.binding.capacity,
                "notification queue is full; dropped the oldest notification (raise the capacity \
                 given to ClientConfig::bind_notification_with_capacity, or make the handler faster)"
            );
        }
        queue.push_back(params);
        drop(queue);
        self.ready.notify_one();
    }

    /// Delivers queued notifications to the handler, in order, forever.
    async fn drain(self: Arc<Self>) {
        loop {
            let next = self
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front();
            match next {
                Some(params) => (self.binding.handler)(params).await,
                None => self.ready.notified().await,
            }
        }
    }
}

/// The bindings of a session, with their running consumers.
pub(crate) struct Bindings {
    pub(crate) queues: HashMap<&'static str, Arc<BindingQueue>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Bindings {
    /// Starts one consumer task per binding; they end when the session
    /// closes or is dropped.
    pub(crate) fn start(bindings: &[Binding]) -> Self {
        let mut queues = HashMap::new();
        let mut tasks = Vec::new();
        for binding in bindings {
            let queue = Arc::new(BindingQueue {
                binding: binding.clone(),
                queue: Mutex::new(VecDeque::new()),
                ready: Notify::new(),
            });
            tasks.push(tokio::spawn(queue.clone().drain()));
            queues.insert(binding.method, queue);
        }
        Self { queues, tasks }
    }

    /// Stops the consumers and waits for them.
    pub(crate) async fn stop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
    }
}

impl Drop for Bindings {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What a config declares about extensions.
#[derive(Clone, Default)]
pub(crate) struct ExtensionConfig {
    pub(crate) declared: Vec<(ExtensionId, JsonObject)>,
    pub(crate) claims: Claims,
    pub(crate) bindings: Vec<Binding>,
}

impl ExtensionConfig {
    /// Warns of bindings that can never fire at the negotiated `revision`:
    /// only methods the core protocol does not define there reach them.
    pub(crate) fn check_bindings(&self, revision: Revision) {
        for binding in &self.bindings {
            if mcp_types::MethodInfo::lookup(binding.method, revision, mcp_types::Side::Server)
                .is_some()
            {
                tracing::warn!(
                    method = binding.method,
                    %revision,
                    "this notification binding will never fire: the core protocol defines the \
                     method at this revision, so its notifications go to on_notification"
                );
            }
        }
    }

    /// The `capabilities.extensions` ad at `revision`: every declared
    /// extension and every claim-bearing one, but those whose claims are
    /// all inactive at `revision`.
    pub(crate) fn advertised(&self, revision: Revision) -> Option<JsonObject> {
        let mut ad = JsonObject::new();
        for (id, settings) in &self.declared {
            ad.insert(id.to_string(), Value::Object(settings.clone()));
        }
        for extension in self.claims.extensions() {
            ad.entry(extension.to_owned())
                .or_insert_with(|| Value::Object(JsonObject::new()));
        }
        ad.retain(|id, _| !self.claims.all_inactive(id, revision));
        (!ad.is_empty()).then_some(ad)
    }
}

impl ClientConfig {
    /// Declares extension `id` with its `settings` (`{}` for none) under
    /// `capabilities.extensions`.
    ///
    /// # Errors
    /// [`InvalidExtensionId`] when `id` is not `vendor.prefix/name`.
    pub fn extension(
        mut self,
        id: impl Into<String>,
        settings: JsonObject,
    ) -> Result<Self, InvalidExtensionId> {
        let id = ExtensionId::new(id)?;
        self.extensions.declared.retain(|(known, _)| *known != id);
        self.extensions.declared.push((id, settings));
        Ok(self)
    }

    /// Accepts `tools/call` results of claim type `T` (and advertises its
    /// extension where the claim is active).
    ///
    /// # Errors
    /// [`ExtensionConfigError`] for an invalid identifier, a core or
    /// already claimed `resultType`.
    pub fn claim<T: ResultClaim>(mut self) -> Result<Self, ExtensionConfigError> {
        self.extensions.claims.add::<T>()?;
        Ok(self)
    }

    /// Hands notification method `M` (one the core protocol does not define
    /// at the negotiated revision) to `handler`, through a FIFO of
    /// [`DEFAULT_BINDING_QUEUE`] notifications.
    ///
    /// # Errors
    /// [`ExtensionConfigError::DuplicateBinding`] when `M` is already bound.
    pub fn bind_notification<M, F, Fut>(self, handler: F) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.bind_notification_with_capacity::<M, F, Fut>(DEFAULT_BINDING_QUEUE, handler)
    }

    /// As [`bind_notification`](Self::bind_notification), with a FIFO of
    /// `capacity` notifications (at least 1).
    ///
    /// # Errors
    /// As [`bind_notification`](Self::bind_notification).
    pub fn bind_notification_with_capacity<M, F, Fut>(
        mut self,
        capacity: usize,
        handler: F,
    ) -> Result<Self, ExtensionConfigError>
    where
        M: NotificationMethod,
        M::Params: Send,
        F: Fn(M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if self.extensions.bindings.iter().any(|b| b.method == M::NAME) {
            return Err(ExtensionConfigError::DuplicateBinding { method: M::NAME });
        }
        let handler = Arc::new(handler);
        let handler: BindingFn = Arc::new(move |params| {
            let handler = handler.clone();
            Box::pin(async move {
                match mcp_types::parse_params::<M>(params.as_ref()) {
                    Ok(params) => handler(params).await,
                    Err(e) => tracing::warn!(
                        method = M::NAME,
                        error = %e,
                        "dropped a bound notification whose params do not fit"
                    ),
                }
            })
        });
        self.extensions.bindings.push(Binding {
            method: M::NAME,
            handler,
            capacity: capacity.max(1),
        });
        Ok(self)
    }
}

impl ClientSession {
    /// Whether the server listed extension `id` under
    /// `capabilities.extensions` (once negotiated).
    pub fn server_supports_extension(&self, id: &str) -> bool {
        self.server_capabilities()
            .and_then(|c| c.extensions)
            .is_some_and(|e| e.contains_key(id))
    }

    /// Calls a tool, accepting results of the config's
    /// [claims](ClientConfig::claim) as [`ToolOutcome::Claimed`].
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(n: u32) -> Option<RawJson> {
        Some(RawJson::from_serialize(&n).expect("json"))
    }

    #[test]
    fn a_full_binding_queue_drops_its_oldest_notification() {
        let handler: BindingFn = Arc::new(|_| Box::pin(async {}));
        let queue = BindingQueue {
            binding: Binding {
                method: "com.example/ping",
                handler,
                capacity: 2,
            },
            queue: Mutex::new(VecDeque::new()),
            ready: Notify::new(),
        };
        for n in 1..=3 {
            queue.push(raw(n));
        }
        let kept: Vec<_> = queue.queue.lock().expect("queue").drain(..).collect();
        assert_eq!(kept, [raw(2), raw(3)], "the oldest is dropped, order kept");
    }
}
