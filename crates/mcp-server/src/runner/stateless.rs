//! The stateless era (2026-07-28): each request carries its client in
//! `_meta`; `server/discover`, `subscriptions/listen`, the `Mcp-Param-*`
//! header check, and the stamping of every result.

use crate::changes::{ListChange, next_changes};
use std::borrow::Cow;
use std::sync::Arc;

use mcp_core::{IncomingRequest, RequestContext};
use mcp_types::method::Method;
use mcp_types::tasks_ext::{self, DetailedTask};
use mcp_types::{CacheScope, DiscoverResult, SubscriptionFilter, SubscriptionsListenRequestParams};
use mcp_types::{ClientRequest, ErrorObject, RawJson, Revision};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::registry::{IdentityJson, SubscribeFn};
use crate::session::{ServerSession, StatelessRequest};
use crate::tasks::TaskWatch;

use super::{Requester, Runner, record_span, to_raw};

/// A stateless result as sent: the result's own members, in order, with
/// `resultType`, the cache hints and the server's identity added.
struct Stamped<'a> {
    /// The result's top-level members, as raw JSON.
    members: &'a [(Cow<'a, str>, &'a RawValue)],
    /// The cache hints, replacing any the result carries.
    cache: Option<(u64, CacheScope)>,
    /// The server's `Implementation`, serialized once.
    info: &'a RawValue,
}

impl Serialize for Stamped<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        let mut result_type = false;
        let mut meta = None;
        for (key, value) in self.members {
            match key.as_ref() {
                "ttlMs" | "cacheScope" if self.cache.is_some() => continue,
                "_meta" => {
                    meta = Some(*value);
                    continue;
                }
                "resultType" => result_type = true,
                _ => {}
            }
            map.serialize_entry(key, value)?;
        }
        if !result_type {
            map.serialize_entry("resultType", "complete")?;
        }
        if let Some((ttl, scope)) = &self.cache {
            map.serialize_entry("ttlMs", ttl)?;
            map.serialize_entry("cacheScope", scope)?;
        }
        match meta.map(|m| (m, mcp_types::json::members(m.get()))) {
            // A `_meta` that is not an object is left as it is.
            Some((meta, None)) => map.serialize_entry("_meta", meta)?,
            members => map.serialize_entry(
                "_meta",
                &MetaWithServer {
                    members: &members.and_then(|(_, m)| m).unwrap_or_default(),
                    info: self.info,
                },
            )?,
        }
        map.end()
    }
}

/// A result's `_meta` with the server's identity set (replacing any the
/// result names).
struct MetaWithServer<'a> {
    members: &'a [(Cow<'a, str>, &'a RawValue)],
    info: &'a RawValue,
}

impl Serialize for MetaWithServer<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.members {
            if key.as_ref() != mcp_types::meta::SERVER_INFO {
                map.serialize_entry(key, value)?;
            }
        }
        map.serialize_entry(mcp_types::meta::SERVER_INFO, self.info)?;
        map.end()
    }
}

/// Tells the unsubscription hook of a listen stream's resources when the
/// stream ends: in a task of the connection's, as the stream's own future
/// may be dropped (the client went away) rather than finish.
struct Unsubscribe {
    uris: Vec<String>,
    session: ServerSession,
    hook: SubscribeFn,
    tasks: tokio_util::task::TaskTracker,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        let (uris, session, hook) = (
            std::mem::take(&mut self.uris),
            self.session.clone(),
            self.hook.clone(),
        );
        // Outside a runtime (the process is ending) there is nothing to
        // tell the hook with.
        if tokio::runtime::Handle::try_current().is_ok() {
            self.tasks.spawn(async move {
                for uri in uris {
                    hook(uri, session.clone()).await;
                }
            });
        }
    }
}

/// A result struct stamped as it is serialized: its fields, then what the
/// stamp adds, as [`Stamped`] writes them. Refused (the caller falls back
/// to [`Stamped`]) when the result is not a struct, or names a member the
/// stamp adds (`resultType`, `_meta`, or the cache hints when it sets them).
struct StampedStruct<'a, T> {
    result: &'a T,
    cache: Option<(u64, CacheScope)>,
    /// The `_meta` written after the fields: the server's identity alone
    /// (such a result has no `_meta` of its own), serialized once.
    meta: &'a RawValue,
}

impl<T: Serialize> Serialize for StampedStruct<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.result.serialize(Stamping {
            inner: serializer,
            cache: self.cache,
            meta: self.meta,
        })
    }
}

/// The serializer [`StampedStruct`] hands its result: a struct becomes a
/// map of the inner serializer; anything else is refused.
struct Stamping<'a, S> {
    inner: S,
    cache: Option<(u64, CacheScope)>,
    meta: &'a RawValue,
}

/// The refusal of [`Stamping`]: the caller stamps the other way.
fn not_stampable<E: serde::ser::Error>() -> E {
    E::custom("not a result struct the stamp can be written into")
}

macro_rules! refuse_scalars {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<S::Ok, S::Error> {
            Err(not_stampable())
        })*
    };
}

impl<'a, S: serde::Serializer> serde::Serializer for Stamping<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = serde::ser::Impossible<S::Ok, S::Error>;
    type SerializeTuple = serde::ser::Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = serde::ser::Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = serde::ser::Impossible<S::Ok, S::Error>;
    type SerializeMap = serde::ser::Impossible<S::Ok, S::Error>;
    type SerializeStruct = StampingStruct<'a, S::SerializeMap>;
    type SerializeStructVariant = serde::ser::Impossible<S::Ok, S::Error>;

    refuse_scalars! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(not_stampable())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_stampable())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_stampable())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_stampable())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_stampable())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_stampable())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_stampable())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Err(not_stampable())
    }

    fn serialize_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        // A name no Rust type has is a serializer's own protocol (serde_json
        // writes a `RawValue` as a struct named `$serde_json::private::…`).
        if name.starts_with('$') {
            return Err(not_stampable());
        }
        // No length: the stamp adds members (and a serializer may write a
        // map of length 0 as `{}` at once).
        Ok(StampingStruct {
            map: self.inner.serialize_map(None)?,
            cache: self.cache,
            meta: self.meta,
        })
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_stampable())
    }
}

/// A result struct's fields going into a map, and the stamp after them.
struct StampingStruct<'a, M> {
    map: M,
    cache: Option<(u64, CacheScope)>,
    meta: &'a RawValue,
}

impl<M: serde::ser::SerializeMap> serde::ser::SerializeStruct for StampingStruct<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        match key {
            "_meta" | "resultType" => Err(not_stampable()),
            "ttlMs" | "cacheScope" if self.cache.is_some() => Err(not_stampable()),
            _ => self.map.serialize_entry(key, value),
        }
    }

    fn end(mut self) -> Result<M::Ok, M::Error> {
        self.map.serialize_entry("resultType", "complete")?;
        if let Some((ttl, scope)) = &self.cache {
            self.map.serialize_entry("ttlMs", ttl)?;
            self.map.serialize_entry("cacheScope", scope)?;
        }
        // Written as it was serialized: no map to build, no key to escape.
        self.map.serialize_entry("_meta", self.meta)?;
        self.map.end()
    }
}

impl Runner {
    /// A 2026-07-28 request: everything the server needs is in it.
    /// `parsed` is the request already read
    /// ([`ClientRequest::parse_any_revision`]), if it was.
    pub(super) async fn stateless(
        &self,
        request: IncomingRequest,
        parsed: Option<Box<ClientRequest>>,
        cx: RequestContext,
        client: Arc<StatelessRequest>,
    ) -> Result<RawJson, ErrorObject> {
        let revision = client.revision;
        let requester = Requester::Stateless(client);
        let mut request = request;
        if !self.registry.extension_requests.is_empty() {
            if let Some(answer) = self.extension_request(&mut request, &cx, &requester).await {
                return answer;
            }
        }
        let parsed = super::parse_at(&mut request, parsed, revision)?;
        record_span(revision);
        match *parsed {
            ClientRequest::Discover(_) => {
                let supported = Revision::ALL
                    .iter()
                    .rev()
                    .map(|r| r.as_str().to_owned())
                    .collect();
                let mut result = DiscoverResult::new(supported, self.registry.capabilities());
                result.instructions = self.registry.instructions.clone();
                self.stamp(&result, Some(self.registry.list_cache))
            }
            // On the heap: a stream's future is large, and this one nests
            // in the future of every request (copied whole when it is boxed).
            ClientRequest::SubscriptionsListen(params) => {
                Box::pin(self.listen(params, &cx, &requester)).await
            }
            // Nothing was moved out of the box: it goes on as it is.
            _ => self.route(parsed, &cx, &requester).await,
        }
    }

    /// A 2026-07-28 result: `resultType` (complete unless the result says
    /// otherwise), the cache hints where the method is cacheable, and the
    /// server's identity in `_meta`.
    pub(super) fn stamp<T: Serialize>(
        &self,
        result: &T,
        cache: Option<(u64, CacheScope)>,
    ) -> Result<RawJson, ErrorObject> {
        let identity = self.registry.identity_json.get_or_init(|| {
            fn json<T: Serialize>(value: &T) -> Box<RawValue> {
                serde_json::value::to_raw_value(value)
                    .unwrap_or_else(|_| RawJson::empty_object().into())
            }
            let info = json(&self.registry.info);
            let meta = json(&MetaWithServer {
                members: &[],
                info: &info,
            });
            IdentityJson { info, meta }
        });
        let (info, meta) = (&*identity.info, &*identity.meta);
        // Most results are structs naming none of the members the stamp
        // adds: those are stamped as they are written, in one serialization.
        if let Ok(raw) = to_raw(&StampedStruct {
            result,
            cache,
            meta,
        }) {
            return Ok(raw);
        }
        // Any other (a map, a result with its own `_meta` or `resultType`):
        // serialized once; its members are copied as they are (only the top
        // level and `_meta` are read, never built into a tree), and the
        // stamped result is written by serde, so it needs no second check.
        let raw = to_raw(result)?;
        let Some(members) = mcp_types::json::members(raw.get()) else {
            // Not an object: nothing to stamp.
            return Ok(raw);
        };
        to_raw(&Stamped {
            members: &members,
            cache,
            info,
        })
    }

    /// `subscriptions/listen`: acknowledges, then forwards the list changes
    /// and task states (`taskIds`, the tasks extension) the client asked
    /// for until it goes away.
    pub(super) async fn listen(
        &self,
        params: SubscriptionsListenRequestParams,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Result<RawJson, ErrorObject> {
        let mut filter = params.notifications;
        let max = self.registry.max_subscriptions;
        if filter
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.len() > max)
        {
            return Err(ErrorObject::invalid_params(format!(
                "`resourceSubscriptions` names more than {max} resources, the most a stream \
                 may follow: follow fewer"
            )));
        }
        let mut changes = self.registry.changes.subscribe();
        let (mut tasks, snapshot) = self.watch_tasks(&mut filter, cx, requester).await?;
        // The hooks hear of the stream's resources as it opens and ends
        // (however it ends: the guard tells of the end when dropped).
        let _subscribed = self
            .subscribed(
                filter.resource_subscriptions.as_deref().unwrap_or_default(),
                self.session(cx, requester),
                requester,
            )
            .await;
        let subscription = serde_json::to_value(&cx.id).unwrap_or(Value::Null);
        let meta = serde_json::json!({ mcp_types::meta::SUBSCRIPTION_ID: subscription });
        let ack = serde_json::json!({ "notifications": filter, "_meta": meta });
        let notify = |method: &'static str, mut params: Value| {
            let peer = cx.peer.clone();
            params["_meta"] = meta.clone();
            async move {
                let params = RawJson::from_serialize(&params).ok();
                peer.notify(method, params).await
            }
        };
        if notify("notifications/subscriptions/acknowledged", ack)
            .await
            .is_err()
        {
            return Err(ErrorObject::internal_error("the client went away"));
        }
        let task_notification = |task: DetailedTask| {
            (
                tasks_ext::TaskStatusNotification::NAME,
                serde_json::to_value(task).unwrap_or(Value::Null),
            )
        };
        for task in snapshot {
            let (method, params) = task_notification(task);
            if notify(method, params).await.is_err() {
                return self.stamp(&serde_json::json!({ "_meta": meta }), None);
            }
        }
        'listen: loop {
            let batch = tokio::select! {
                batch = next_changes(&mut changes, || {
                    filter.resource_subscriptions.clone().unwrap_or_default()
                }) => batch,
                () = cx.cancel.cancelled() => None,
            };
            let Some(batch) = batch else { break };
            for change in batch {
                let sends = match change {
                    ListChange::Tools if filter.tools_list_changed == Some(true) => {
                        vec![("notifications/tools/list_changed", serde_json::json!({}))]
                    }
                    ListChange::Prompts if filter.prompts_list_changed == Some(true) => {
                        vec![("notifications/prompts/list_changed", serde_json::json!({}))]
                    }
                    ListChange::Resources if filter.resources_list_changed == Some(true) => {
                        vec![(
                            "notifications/resources/list_changed",
                            serde_json::json!({}),
                        )]
                    }
                    ListChange::ResourceUpdated(uri)
                        if filter
                            .resource_subscriptions
                            .as_ref()
                            .is_some_and(|uris| uris.contains(&uri)) =>
                    {
                        vec![(
                            "notifications/resources/updated",
                            serde_json::json!({ "uri": uri }),
                        )]
                    }
                    change @ (ListChange::Task { .. } | ListChange::AnyTask) => match &mut tasks {
                        Some(watch) => watch
                            .states(&change)
                            .await
                            .into_iter()
                            .map(task_notification)
                            .collect(),
                        None => Vec::new(),
                    },
                    _ => continue,
                };
                for (method, params) in sends {
                    if notify(method, params).await.is_err() {
                        break 'listen;
                    }
                }
            }
        }
        self.stamp(&serde_json::json!({ "_meta": meta }), None)
    }

    /// Tells the subscription hook of each of `followed` a listen stream of
    /// `session` follows, once each, and only those that name a resource
    /// its client can read (as `resources/subscribe` checks): what a peer
    /// lists reaches the hook only as URIs the server serves, each once
    /// (as a handshake-era session's subscriptions do). The guard
    /// returned tells the unsubscription hook of the same URIs when the
    /// stream ends.
    async fn subscribed(
        &self,
        followed: &[String],
        session: ServerSession,
        requester: &Requester,
    ) -> Option<Unsubscribe> {
        let hook = self.registry.on_subscribe.as_ref()?;
        let catalog = self.registry.catalog.snapshot();
        let mut told = std::collections::HashSet::new();
        let uris: Vec<String> = followed
            .iter()
            .filter(|uri| {
                self.subscribe_target_exists(&catalog, uri, requester) && told.insert(uri.as_str())
            })
            .cloned()
            .collect();
        drop((told, catalog));
        if uris.is_empty() {
            return None;
        }
        for uri in &uris {
            hook(uri.clone(), session.clone()).await;
        }
        let hook = self.registry.on_unsubscribe.clone()?;
        Some(Unsubscribe {
            uris,
            session,
            hook,
            tasks: self.tasks.clone(),
        })
    }

    /// The tasks a listen stream watches: of the `taskIds` asked for, those
    /// that are the client's tasks (the filter is narrowed to them for the
    /// acknowledgement), with their current states. Asking without
    /// declaring the tasks extension is `-32021`; a server without tasks
    /// agrees to none.
    async fn watch_tasks(
        &self,
        filter: &mut SubscriptionFilter,
        cx: &RequestContext,
        requester: &Requester,
    ) -> Result<(Option<TaskWatch>, Vec<DetailedTask>), ErrorObject> {
        let Some(requested) = filter.task_ids.take() else {
            return Ok((None, Vec::new()));
        };
        let declared = match requester {
            Requester::Stateless(request) => request
                .capabilities
                .extensions
                .as_ref()
                .is_some_and(|e| e.contains_key(tasks_ext::EXTENSION_ID)),
            Requester::Session => false,
        };
        if !declared {
            return Err(crate::tasks::missing_extension("listening for task status"));
        }
        let Some(engine) = &self.registry.tasks else {
            return Ok((None, Vec::new()));
        };
        let owner = crate::tasks::owner(&cx.transport, &self.state, true);
        let (watch, snapshot) = TaskWatch::agree(engine.clone(), owner, &requested).await;
        filter.task_ids = Some(watch.ids());
        Ok((Some(watch), snapshot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;

    /// The stamped text of `result` (JSON text, stamped member by member in
    /// its own order): compared as text, so a member written twice shows.
    fn stamped(result: &str, cache: Option<(u64, CacheScope)>) -> String {
        let server = Server::builder("stamper", "1.2.3").build().expect("server");
        let runner = Runner::standalone(&server);
        let result = RawValue::from_string(result.to_owned()).expect("JSON");
        let raw = runner.stamp(&result, cache).expect("stamped");
        raw.get().to_owned()
    }

    const INFO: &str =
        r#""io.modelcontextprotocol/serverInfo":{"name":"stamper","version":"1.2.3"}"#;

    #[test]
    fn a_result_is_stamped_in_order_with_its_own_members_kept() {
        // Members in order, an escaped key kept; `resultType` and `_meta` added.
        assert_eq!(
            stamped(r#"{"b":1,"a\"":[true]}"#, None),
            format!(r#"{{"b":1,"a\"":[true],"resultType":"complete","_meta":{{{INFO}}}}}"#)
        );
        // The result's own `resultType` and `_meta` keys stay; a `serverInfo`
        // it names is replaced by the server's, not written twice.
        assert_eq!(
            stamped(
                r#"{"resultType":"incomplete","_meta":{"x/y":2,"io.modelcontextprotocol/serverInfo":"fake"}}"#,
                None
            ),
            format!(r#"{{"resultType":"incomplete","_meta":{{"x/y":2,{INFO}}}}}"#)
        );
        // Cache hints replace the result's own.
        assert_eq!(
            stamped(
                r#"{"ttlMs":1,"cacheScope":"public","items":[]}"#,
                Some((5000, CacheScope::Private))
            ),
            format!(
                r#"{{"items":[],"resultType":"complete","ttlMs":5000,"cacheScope":"private","_meta":{{{INFO}}}}}"#
            )
        );
        // A `_meta` that is not an object is left as it is; a result that is
        // not an object is not stamped.
        assert_eq!(
            stamped(r#"{"_meta":7}"#, None),
            r#"{"resultType":"complete","_meta":7}"#
        );
        assert_eq!(stamped("[1]", None), "[1]");
    }

    #[test]
    fn a_result_struct_is_stamped_as_it_is_written_as_its_text_would_be() {
        let server = Server::builder("stamper", "1.2.3").build().expect("server");
        let runner = Runner::standalone(&server);
        let mut with_meta = mcp_types::CallToolResult::text("hi");
        with_meta.meta = Some(mcp_types::ResultMeta::default());
        with_meta.meta.as_mut().expect("meta").subscription_id = Some(7.into());
        let mut with_type = mcp_types::CallToolResult::text("hi");
        with_type.result_type = Some(mcp_types::ResultType::Complete);
        let mut with_hints = mcp_types::ListToolsResult::new(Vec::new());
        with_hints.ttl_ms = Some(1);
        // Whether it is stamped in one serialization, then the case.
        type Case<'a> = (bool, &'a dyn erased::Result, Option<(u64, CacheScope)>);
        let results: [Case<'_>; 6] = [
            // One serialization, stamped as it is written.
            (true, &mcp_types::CallToolResult::text("hi"), None),
            (
                true,
                &mcp_types::ListToolsResult::new(Vec::new()),
                Some((5000, CacheScope::Private)),
            ),
            // Members of its own the stamp sets: stamped from its text.
            (false, &with_meta, None),
            (false, &with_type, None),
            (false, &with_hints, Some((5000, CacheScope::Public))),
            // Hints of its own the stamp does not set: kept, in one pass.
            (true, &with_hints, None),
        ];
        for (one_pass, result, cache) in results {
            let text = result.text();
            assert_eq!(
                result.stamp(&runner, cache),
                stamped(&text, cache),
                "{text}"
            );
            // Counted through `stamp` itself: one serialization, or the
            // refused attempt and the text the stamp is read from.
            let serializations = result.serializations(&runner, cache);
            assert_eq!(serializations == 1, one_pass, "{text}");
            assert_eq!(serializations, if one_pass { 1 } else { 2 }, "{text}");
        }
    }

    /// The results of the test above, stamped through their own type.
    mod erased {
        use std::cell::Cell;

        use super::{CacheScope, Runner};

        pub(super) trait Result {
            fn stamp(&self, runner: &Runner, cache: Option<(u64, CacheScope)>) -> String;
            /// How often [`Runner::stamp`] serializes the result: once
            /// when the stamp is written as it is serialized, else also
            /// for the text it is stamped from.
            fn serializations(&self, runner: &Runner, cache: Option<(u64, CacheScope)>) -> usize;
            fn text(&self) -> String;
        }

        /// A result that counts its serializations.
        struct Counted<'a, T> {
            result: &'a T,
            count: &'a Cell<usize>,
        }

        impl<T: serde::Serialize> serde::Serialize for Counted<'_, T> {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                self.count.set(self.count.get() + 1);
                self.result.serialize(serializer)
            }
        }

        impl<T: serde::Serialize> Result for T {
            fn stamp(&self, runner: &Runner, cache: Option<(u64, CacheScope)>) -> String {
                runner.stamp(self, cache).expect("stamped").get().to_owned()
            }
            fn serializations(&self, runner: &Runner, cache: Option<(u64, CacheScope)>) -> usize {
                let count = Cell::new(0);
                let counted = Counted {
                    result: self,
                    count: &count,
                };
                runner.stamp(&counted, cache).expect("stamped");
                count.get()
            }
            fn text(&self) -> String {
                serde_json::to_string(self).expect("json")
            }
        }
    }
}
