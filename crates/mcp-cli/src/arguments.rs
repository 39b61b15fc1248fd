//! Arguments from the command line: `--args JSON`, or `key=value` pairs
//! typed by the tool's input schema.

use std::collections::BTreeMap;

use mcp_client::types::JsonObject;
use serde_json::Value;

use crate::error::UsageError;

/// `--args`: a JSON object.
pub(crate) fn json_object(text: &str) -> Result<JsonObject, UsageError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(UsageError::ArgsJson("it is not an object".into())),
        Err(error) => Err(UsageError::ArgsJson(error.to_string())),
    }
}

/// `key=value` pairs as strings (prompt arguments are strings).
pub(crate) fn string_pairs(pairs: &[String]) -> Result<BTreeMap<String, String>, UsageError> {
    pairs
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| UsageError::Pair(pair.clone()))
        })
        .collect()
}

/// `key=value` pairs typed by `schema`: a property the schema says is a
/// number, integer or boolean is parsed as one (and refused when it is not
/// one); an array or object property is parsed as JSON; anything else,
/// including a key the schema does not name, stays a string.
pub(crate) fn typed_pairs(
    pairs: &[String],
    schema: Option<&JsonObject>,
) -> Result<JsonObject, UsageError> {
    let mut arguments = JsonObject::new();
    for (key, value) in string_pairs(pairs)? {
        let property = schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(&key));
        let typed = match property.map(schema_type) {
            Some(Some("number")) => number(&key, &value, "a number", |v| {
                v.parse::<f64>().ok().and_then(serde_json::Number::from_f64)
            })?,
            Some(Some("integer")) => number(&key, &value, "an integer", |v| {
                v.parse::<i64>().ok().map(serde_json::Number::from)
            })?,
            Some(Some("boolean")) => match value.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => {
                    return Err(UsageError::Typed {
                        key,
                        expected: "true or false",
                        value,
                    });
                }
            },
            Some(Some("array" | "object")) => {
                serde_json::from_str(&value).unwrap_or(Value::String(value))
            }
            _ => Value::String(value),
        };
        arguments.insert(key, typed);
    }
    Ok(arguments)
}

/// The JSON type a property schema names; the first that is not `null`
/// when it names several.
fn schema_type(property: &Value) -> Option<&str> {
    match &property["type"] {
        Value::String(kind) => Some(kind),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null"),
        _ => None,
    }
}

fn number(
    key: &str,
    value: &str,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<serde_json::Number>,
) -> Result<Value, UsageError> {
    parse(value).map(Value::Number).ok_or(UsageError::Typed {
        key: key.to_owned(),
        expected,
        value: value.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_take_their_type_from_the_schema() {
        let schema = json!({"properties": {
            "a": {"type": "integer"}, "b": {"type": ["number", "null"]},
            "flag": {"type": "boolean"}, "tags": {"type": "array"}, "name": {"type": "string"}
        }});
        let schema = schema.as_object().cloned();
        let pairs: Vec<String> = [
            "a=2",
            "b=1.5",
            "flag=true",
            "tags=[\"x\"]",
            "name=42",
            "extra=7",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let typed = typed_pairs(&pairs, schema.as_ref()).expect("typed");
        assert_eq!(
            Value::Object(typed),
            json!({"a": 2, "b": 1.5, "flag": true, "tags": ["x"], "name": "42", "extra": "7"})
        );
        let refused = typed_pairs(&["a=two".to_owned()], schema.as_ref());
        assert!(matches!(
            refused,
            Err(UsageError::Typed {
                expected: "an integer",
                ..
            })
        ));
        assert!(matches!(
            typed_pairs(&["novalue".to_owned()], None),
            Err(UsageError::Pair(_))
        ));
    }
}
