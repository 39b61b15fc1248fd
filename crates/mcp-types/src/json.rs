//! Reading JSON text without building it into a tree: a string borrowed
//! from the input, and an object's members as raw JSON. Every layer that
//! reads a few members of a message (the envelope, `_meta`, a result it
//! stamps) uses these instead of a `serde_json::Value`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A JSON string (an object's key, say), borrowed from the input unless it
/// holds escapes. A plain `Cow<str>` is always copied: serde borrows only
/// through `#[serde(borrow)]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JsonStr<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// The members of the JSON object `json`, in order, each value as raw
/// JSON; `None` when `json` is not an object (or not JSON).
pub fn members(json: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Self::Value, A::Error> {
                    let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                    while let Some(JsonStr(key)) = map.next_key()? {
                        members.push((key, map.next_value()?));
                    }
                    Ok(Members(members))
                }
            }
            deserializer.deserialize_map(Visit)
        }
    }
    serde_json::from_str::<Members<'_>>(json).ok().map(|m| m.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_string_is_borrowed_and_an_escaped_one_decoded() {
        let plain: JsonStr<'_> = serde_json::from_str(r#""name""#).expect("a string");
        assert!(matches!(plain.0, Cow::Borrowed("name")));
        let escaped: JsonStr<'_> = serde_json::from_str(r#""n\u0061me""#).expect("a string");
        assert!(matches!(&escaped.0, Cow::Owned(s) if s == "name"));
    }

    #[test]
    fn members_come_in_order_as_raw_json_and_only_from_an_object() {
        let json = r#"{"b": [1, 2], "a\"": {"x": null}, "b": 3}"#;
        let found: Vec<(String, String)> = members(json)
            .expect("an object")
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.get().to_owned()))
            .collect();
        assert_eq!(
            found,
            [
                ("b".to_owned(), "[1, 2]".to_owned()),
                ("a\"".to_owned(), r#"{"x": null}"#.to_owned()),
                ("b".to_owned(), "3".to_owned()),
            ]
        );
        assert!(members("[1]").is_none());
        assert!(members("{").is_none());
        assert_eq!(members("{}").map(|m| m.len()), Some(0));
    }
}
