//! Helpers for hand-written `Deserialize` impls of unions: read the object
//! once, look at what tells the variants apart, then read the right variant.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde_json::Value;

use crate::common::JsonObject;

/// Reads a JSON object, with an error naming what was expected.
pub(crate) fn read_object<'de, D: Deserializer<'de>>(
    deserializer: D,
    what: &str,
) -> Result<JsonObject, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Object(map) => Ok(map),
        other => Err(de::Error::custom(format_args!(
            "expected a {what} object, found {}",
            kind_of(&other)
        ))),
    }
}

/// The string member `key` of `map`, or an error listing the known values.
pub(crate) fn tag_of<E: de::Error>(
    map: &JsonObject,
    key: &str,
    what: &str,
    expected: &[&str],
) -> Result<String, E> {
    match map.get(key) {
        Some(Value::String(tag)) => Ok(tag.clone()),
        Some(other) => Err(E::custom(format_args!(
            "{what} `{key}` must be a string, found {}",
            kind_of(other)
        ))),
        None => Err(E::custom(format_args!(
            "{what} has no `{key}`; expected one of {}",
            expected.join(", ")
        ))),
    }
}

/// The error for a tag no variant claims.
pub(crate) fn unknown_tag<E: de::Error>(tag: &str, key: &str, what: &str, expected: &[&str]) -> E {
    E::custom(format_args!(
        "unknown {what} {key} `{tag}`; expected one of {}",
        expected.join(", ")
    ))
}

/// Reads a variant from an object already taken out of the input.
pub(crate) fn from_object<T: DeserializeOwned, E: de::Error>(map: JsonObject) -> Result<T, E> {
    T::deserialize(Value::Object(map)).map_err(E::custom)
}

/// Reads a variant from a value already taken out of the input.
pub(crate) fn from_value<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// A word for the JSON type of a value, for error messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
