//! Typed methods and the frames that carry them.
//!
//! Each MCP method has a marker type implementing [`Method`] (in
//! [`crate::methods`]) that ties its wire name to its params type and, for
//! requests, its result type. The frames are generic over that marker:
//! [`Request<M>`] is a full JSON-RPC request of method `M` (the schema's
//! `CallToolRequest` is `Request<methods::CallTool>`), [`Notification<M>`] a
//! notification, [`MethodCall<M>`] the bare `{method, params}` shape of a
//! 2026-07-28 input request, and [`ResultResponse<R>`] a successful response.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::jsonrpc::{JsonRpcVersion, RequestId};

/// An MCP method: its wire name and the type of its `params`.
///
/// Methods whose `params` may be omitted use `Option<P>` as [`Method::Params`]
/// and return `true` from [`Method::PARAMS_OPTIONAL`].
pub trait Method: 'static {
    /// The method name on the wire, such as `"tools/call"`.
    const NAME: &'static str;
    /// Whether the `params` member may be absent.
    const PARAMS_OPTIONAL: bool;
    /// The `params` type.
    type Params: Serialize + DeserializeOwned + Clone + fmt::Debug + PartialEq + JsonSchema;

    /// The value of absent `params`, if absence is allowed.
    fn absent_params() -> Option<Self::Params>;
    /// Whether `params` should be left out of the serialized message.
    fn is_absent(params: &Self::Params) -> bool;
}

/// A method that is a request, with the type of its successful result.
pub trait RequestMethod: Method {
    /// The `result` type of a successful response.
    type Result: Serialize + DeserializeOwned + Clone + fmt::Debug + PartialEq + JsonSchema;
}

/// A method that is a notification.
pub trait NotificationMethod: Method {}

/// Declares a method marker type. Used by [`crate::methods`].
macro_rules! declare_method {
    (
        $(#[$doc:meta])*
        $marker:ident = $wire:literal, request, params: $params:ty, result: $result:ty
    ) => {
        declare_method!(@marker $(#[$doc])* $marker = $wire, required $params);
        impl $crate::method::RequestMethod for $marker {
            type Result = $result;
        }
    };
    (
        $(#[$doc:meta])*
        $marker:ident = $wire:literal, request, optional params: $params:ty, result: $result:ty
    ) => {
        declare_method!(@marker $(#[$doc])* $marker = $wire, optional $params);
        impl $crate::method::RequestMethod for $marker {
            type Result = $result;
        }
    };
    (
        $(#[$doc:meta])*
        $marker:ident = $wire:literal, notification, params: $params:ty
    ) => {
        declare_method!(@marker $(#[$doc])* $marker = $wire, required $params);
        impl $crate::method::NotificationMethod for $marker {}
    };
    (
        $(#[$doc:meta])*
        $marker:ident = $wire:literal, notification, optional params: $params:ty
    ) => {
        declare_method!(@marker $(#[$doc])* $marker = $wire, optional $params);
        impl $crate::method::NotificationMethod for $marker {}
    };
    (@marker $(#[$doc:meta])* $marker:ident = $wire:literal, required $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $marker {}
        impl $crate::method::Method for $marker {
            const NAME: &'static str = $wire;
            const PARAMS_OPTIONAL: bool = false;
            type Params = $params;
            fn absent_params() -> Option<Self::Params> {
                None
            }
            fn is_absent(_: &Self::Params) -> bool {
                false
            }
        }
    };
    (@marker $(#[$doc:meta])* $marker:ident = $wire:literal, optional $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $marker {}
        impl $crate::method::Method for $marker {
            const NAME: &'static str = $wire;
            const PARAMS_OPTIONAL: bool = true;
            type Params = Option<$params>;
            fn absent_params() -> Option<Self::Params> {
                Some(None)
            }
            fn is_absent(params: &Self::Params) -> bool {
                params.is_none()
            }
        }
    };
}
pub(crate) use declare_method;

/// The members a frame may carry, read before the method is checked.
#[derive(Deserialize)]
#[serde(bound = "P: DeserializeOwned")]
struct FrameFields<P> {
    #[serde(default)]
    jsonrpc: Option<JsonRpcVersion>,
    #[serde(default)]
    id: Option<RequestId>,
    method: String,
    #[serde(default)]
    params: Option<P>,
}

impl<P> FrameFields<P> {
    fn check_method<M: Method<Params = P>, E: de::Error>(&self) -> Result<(), E> {
        if self.method == M::NAME {
            Ok(())
        } else {
            Err(E::custom(format_args!(
                "expected method `{}`, found `{}`",
                M::NAME,
                self.method
            )))
        }
    }

    fn take_params<M: Method<Params = P>, E: de::Error>(self) -> Result<P, E> {
        match self.params {
            Some(params) => Ok(params),
            None => M::absent_params().ok_or_else(|| {
                E::custom(format_args!(
                    "`{}` requires `params`; none were given",
                    M::NAME
                ))
            }),
        }
    }
}

/// A JSON-RPC request of method `M`, with id and typed params.
///
/// # Examples
/// ```
/// use mcp_types::{Request, RequestId, methods};
/// let text = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
/// let ping: Request<methods::Ping> = serde_json::from_str(text).unwrap();
/// assert_eq!(ping.id, RequestId::Number(1));
/// assert_eq!(serde_json::to_string(&ping).unwrap(), text);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Request<M: Method> {
    /// The id the response will echo.
    pub id: RequestId,
    /// The typed parameters.
    pub params: M::Params,
}

impl<M: Method> Request<M> {
    /// A request with the given id and params.
    pub fn new(id: impl Into<RequestId>, params: M::Params) -> Self {
        Self {
            id: id.into(),
            params,
        }
    }

    /// The method name on the wire.
    pub fn method(&self) -> &'static str {
        M::NAME
    }
}

impl<M: Method> Serialize for Request<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let absent = M::is_absent(&self.params);
        let mut map = serializer.serialize_map(Some(if absent { 3 } else { 4 }))?;
        map.serialize_entry("jsonrpc", &JsonRpcVersion)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", M::NAME)?;
        if !absent {
            map.serialize_entry("params", &self.params)?;
        }
        map.end()
    }
}

impl<'de, M: Method> Deserialize<'de> for Request<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = FrameFields::<M::Params>::deserialize(deserializer)?;
        fields.check_method::<M, D::Error>()?;
        if fields.jsonrpc.is_none() {
            return Err(de::Error::missing_field("jsonrpc"));
        }
        let id = fields
            .id
            .clone()
            .ok_or_else(|| de::Error::missing_field("id"))?;
        let params = fields.take_params::<M, D::Error>()?;
        Ok(Self { id, params })
    }
}

/// A JSON-RPC notification of method `M`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Notification<M: Method> {
    /// The typed parameters.
    pub params: M::Params,
}

impl<M: Method> Notification<M> {
    /// A notification with the given params.
    pub fn new(params: M::Params) -> Self {
        Self { params }
    }

    /// The method name on the wire.
    pub fn method(&self) -> &'static str {
        M::NAME
    }
}

impl<M: Method> Serialize for Notification<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let absent = M::is_absent(&self.params);
        let mut map = serializer.serialize_map(Some(if absent { 2 } else { 3 }))?;
        map.serialize_entry("jsonrpc", &JsonRpcVersion)?;
        map.serialize_entry("method", M::NAME)?;
        if !absent {
            map.serialize_entry("params", &self.params)?;
        }
        map.end()
    }
}

impl<'de, M: Method> Deserialize<'de> for Notification<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = FrameFields::<M::Params>::deserialize(deserializer)?;
        fields.check_method::<M, D::Error>()?;
        if fields.jsonrpc.is_none() {
            return Err(de::Error::missing_field("jsonrpc"));
        }
        if fields.id.is_some() {
            return Err(de::Error::custom("a notification must not carry an `id`"));
        }
        let params = fields.take_params::<M, D::Error>()?;
        Ok(Self { params })
    }
}

/// A bare `{method, params}` call with no JSON-RPC framing.
///
/// This is the shape of a 2026-07-28 input request inside an
/// `InputRequiredResult`, and of the request and notification definitions of
/// the 2024-11-05 to 2025-06-18 schemas.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MethodCall<M: Method> {
    /// An `id` some senders attach even without JSON-RPC framing (one of the
    /// official 2026-07-28 examples does); kept so the call reads back as sent.
    pub id: Option<RequestId>,
    /// The typed parameters.
    pub params: M::Params,
    marker: PhantomData<M>,
}

impl<M: Method> MethodCall<M> {
    /// A call with the given params.
    pub fn new(params: M::Params) -> Self {
        Self {
            id: None,
            params,
            marker: PhantomData,
        }
    }

    /// The method name on the wire.
    pub fn method(&self) -> &'static str {
        M::NAME
    }
}

impl<M: Method> Serialize for MethodCall<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let absent = M::is_absent(&self.params);
        let mut map = serializer.serialize_map(None)?;
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("method", M::NAME)?;
        if !absent {
            map.serialize_entry("params", &self.params)?;
        }
        map.end()
    }
}

impl<'de, M: Method> Deserialize<'de> for MethodCall<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = FrameFields::<M::Params>::deserialize(deserializer)?;
        fields.check_method::<M, D::Error>()?;
        if fields.jsonrpc.is_some() {
            return Err(de::Error::custom(
                "a bare method call carries no `jsonrpc`; read a JSON-RPC message as `Request` or `Notification`",
            ));
        }
        let id = fields.id.clone();
        let params = fields.take_params::<M, D::Error>()?;
        Ok(Self {
            id,
            ..Self::new(params)
        })
    }
}

fn frame_schema<M: Method>(
    generator: &mut schemars::SchemaGenerator,
    with_jsonrpc: bool,
    with_id: bool,
) -> schemars::Schema {
    let mut properties = serde_json::Map::new();
    let mut required = vec![];
    if with_jsonrpc {
        properties.insert(
            "jsonrpc".into(),
            serde_json::json!({"type": "string", "const": "2.0"}),
        );
        required.push("jsonrpc");
    }
    if with_id {
        properties.insert(
            "id".into(),
            generator.subschema_for::<RequestId>().to_value(),
        );
        required.push("id");
    }
    properties.insert(
        "method".into(),
        serde_json::json!({"type": "string", "const": M::NAME}),
    );
    required.push("method");
    properties.insert(
        "params".into(),
        generator.subschema_for::<M::Params>().to_value(),
    );
    if !M::PARAMS_OPTIONAL {
        required.push("params");
    }
    schemars::json_schema!({
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

impl<M: Method> JsonSchema for Request<M> {
    fn schema_name() -> Cow<'static, str> {
        format!("Request<{}>", M::NAME).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        frame_schema::<M>(generator, true, true)
    }
}

impl<M: Method> JsonSchema for Notification<M> {
    fn schema_name() -> Cow<'static, str> {
        format!("Notification<{}>", M::NAME).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        frame_schema::<M>(generator, true, false)
    }
}

impl<M: Method> JsonSchema for MethodCall<M> {
    fn schema_name() -> Cow<'static, str> {
        format!("MethodCall<{}>", M::NAME).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        frame_schema::<M>(generator, false, false)
    }
}

/// A successful JSON-RPC response carrying a typed result, such as the
/// schema's `CallToolResultResponse`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ResultResponse<R> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The typed result.
    pub result: R,
}

impl<R> ResultResponse<R> {
    /// A response carrying `result` for request `id`.
    pub fn new(id: impl Into<RequestId>, result: R) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            result,
        }
    }
}

/// A bare `{method, params}` pair of any method, params unparsed: the shape of
/// the schema's generic `Request` and `Notification` definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RawCall {
    /// The method name.
    pub method: String,
    /// The parameters, unparsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<crate::jsonrpc::RawJson>,
}

impl RawCall {
    /// A call of `method` with `params`.
    pub fn new(method: impl Into<String>, params: Option<crate::jsonrpc::RawJson>) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }
}
