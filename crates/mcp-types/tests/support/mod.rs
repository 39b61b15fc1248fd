//! Shared machinery for the schema conformance tests: loading the vendored
//! official schemas, validating with a real JSON Schema validator, generating
//! instances of a definition from its schema, and comparing JSON values.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_types::Revision;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// The vendored spec folder of a revision.
pub fn spec_dir(revision: Revision) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spec")
        .join(revision.as_str())
}

/// One revision's official schema document.
pub struct Schema {
    pub revision: Revision,
    pub document: Value,
}

impl Schema {
    pub fn load(revision: Revision) -> Schema {
        let path = spec_dir(revision).join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `cargo xtask sync-spec`", path.display()));
        Schema {
            revision,
            document: serde_json::from_str(&text).expect("schema.json is JSON"),
        }
    }

    fn defs_key(&self) -> &'static str {
        if self.document.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        }
    }

    pub fn definitions(&self) -> &Map<String, Value> {
        self.document[self.defs_key()]
            .as_object()
            .expect("definitions object")
    }

    pub fn definition(&self, name: &str) -> &Value {
        self.definitions()
            .get(name)
            .unwrap_or_else(|| panic!("{} has no definition {name}", self.revision))
    }

    /// A validator for one definition, compiled against the whole document so
    /// every `$ref` resolves.
    pub fn validator(&self, name: &str) -> jsonschema::Validator {
        let mut root = self.document.clone();
        let reference = format!("#/{}/{name}", self.defs_key());
        // `allOf` rather than a sibling `$ref`: draft-07 ignores `$ref` siblings.
        root["allOf"] = json!([{ "$ref": reference }]);
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("{} {name}: schema does not compile: {e}", self.revision))
    }

    fn resolve<'a>(&'a self, node: &'a Value) -> &'a Value {
        let mut node = node;
        for _ in 0..32 {
            match node.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    let name = reference.rsplit('/').next().expect("ref has a name");
                    node = self.definition(name);
                }
                None => return node,
            }
        }
        panic!("reference cycle")
    }
}

/// Validates `instance` and returns every error as one string.
pub fn validate(validator: &jsonschema::Validator, instance: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`), as JSON
/// itself does not tell them apart.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Reads `instance` into `T` and writes it back out.
pub fn roundtrip<T: Serialize + DeserializeOwned>(instance: &Value) -> Result<Value, String> {
    let text = instance.to_string();
    let typed: T = serde_json::from_str(&text).map_err(|e| format!("does not deserialize: {e}"))?;
    serde_json::to_value(&typed).map_err(|e| format!("does not serialize: {e}"))
}

/// Generates instances of a schema node: a minimal one (required members
/// only), a maximal one (every member), and one per alternative of each
/// union reachable without recursion, within a fixed budget.
pub struct Generator<'a> {
    schema: &'a Schema,
}

const MAX_DEPTH: usize = 7;
const MAX_VARIANTS: usize = 24;

impl<'a> Generator<'a> {
    pub fn new(schema: &'a Schema) -> Self {
        Generator { schema }
    }

    pub fn instances(&self, name: &str) -> Vec<Value> {
        let node = self.schema.definition(name);
        let mut out = self.generate(node, 0, true);
        out.extend(self.generate(node, 0, false));
        out.iter_mut().for_each(fix_result_type);
        dedup(&mut out);
        out.truncate(MAX_VARIANTS);
        out
    }

    /// Every variant this node can take; `full` fills optional members too.
    fn generate(&self, node: &Value, depth: usize, full: bool) -> Vec<Value> {
        let node = self.schema.resolve(node);
        if let Some(value) = node.get("const") {
            return vec![value.clone()];
        }
        if let Some(values) = node.get("enum").and_then(Value::as_array) {
            return values.clone();
        }
        if let Some(branches) = node
            .get("anyOf")
            .or_else(|| node.get("oneOf"))
            .and_then(Value::as_array)
        {
            let mut out = vec![];
            for branch in branches {
                let variants = self.generate(branch, depth + 1, full);
                if depth < 2 {
                    out.extend(variants);
                } else {
                    out.extend(variants.into_iter().take(1));
                }
            }
            dedup(&mut out);
            return out;
        }
        if let Some(parts) = node.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for part in parts {
                if let Some(Value::Object(fields)) =
                    self.generate(part, depth + 1, full).into_iter().next()
                {
                    merge(&mut merged, fields);
                }
            }
            return vec![Value::Object(merged)];
        }
        let types: Vec<&str> = match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if node.get("properties").is_some() => vec!["object"],
            // An unconstrained schema (`{}` or `true`): any value will do.
            _ => return vec![json!({"any": ["json", 1, true]})],
        };
        let mut out = vec![];
        for t in types {
            out.extend(self.generate_typed(node, t, depth, full));
        }
        out
    }

    fn generate_typed(&self, node: &Value, ty: &str, depth: usize, full: bool) -> Vec<Value> {
        match ty {
            "string" => vec![sample_string(node)],
            "integer" => vec![json!(sample_number(node, true))],
            "number" => vec![sample_number_value(node)],
            "boolean" => vec![json!(true)],
            "null" => vec![Value::Null],
            "array" => {
                let min_items = node.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                if (!full && min_items == 0) || depth >= MAX_DEPTH {
                    return vec![json!([])];
                }
                let items = node.get("items").map_or_else(
                    || vec![json!("item")],
                    |items| self.generate(items, depth + 1, full),
                );
                if items.is_empty() {
                    return vec![json!([])];
                }
                // One array holding every item variant, plus a one-item array
                // per variant so each union member is seen alone too.
                let mut out = vec![Value::Array(items.clone())];
                if depth < 3 {
                    out.extend(items.into_iter().map(|item| json!([item])));
                }
                out
            }
            "object" => self.generate_object(node, depth, full),
            other => panic!("unknown type {other}"),
        }
    }

    fn generate_object(&self, node: &Value, depth: usize, full: bool) -> Vec<Value> {
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = node.get("properties").and_then(Value::as_object);
        let fill_optional = full && depth < MAX_DEPTH;
        let mut base = Map::new();
        let mut alternatives: Vec<(String, Vec<Value>)> = vec![];
        if let Some(properties) = properties {
            for (key, property) in properties {
                if !fill_optional && !required.contains(&key.as_str()) {
                    continue;
                }
                let mut variants = self.generate(property, depth + 1, full);
                if variants.is_empty() {
                    continue;
                }
                base.insert(key.clone(), variants.remove(0));
                if !variants.is_empty() && depth < 3 {
                    alternatives.push((key.clone(), variants));
                }
            }
        }
        // A rule the schema states only in prose (InputRequiredResult).
        let prose = node
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        if prose.contains("At least one of `inputRequests` or `requestState`")
            && !base.contains_key("inputRequests")
            && !base.contains_key("requestState")
        {
            base.insert("requestState".into(), json!("opaque-state"));
        }
        // An open object keeps keys the schema does not name: prove it.
        if fill_optional && is_open(node) && properties.is_none_or(|p| p.is_empty()) {
            base.insert("com.example/extra".into(), json!({"kept": true}));
        }
        let mut out = vec![Value::Object(base.clone())];
        for (key, variants) in alternatives {
            for variant in variants {
                let mut copy = base.clone();
                copy.insert(key.clone(), variant);
                out.push(Value::Object(copy));
            }
        }
        out
    }
}

/// The schema types `resultType` as any string; the prose fixes its values:
/// `"input_required"` on an input-required result, `"complete"` otherwise.
fn fix_result_type(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("resultType") {
                let input_required =
                    map.contains_key("inputRequests") || map.contains_key("requestState");
                map.insert(
                    "resultType".into(),
                    json!(if input_required {
                        "input_required"
                    } else {
                        "complete"
                    }),
                );
            }
            map.values_mut().for_each(fix_result_type);
        }
        Value::Array(items) => items.iter_mut().for_each(fix_result_type),
        _ => {}
    }
}

fn is_open(node: &Value) -> bool {
    match node.get("additionalProperties") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Object(o)) => o.is_empty(),
        Some(_) => false,
    }
}

fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(existing)), Value::Object(more)) => merge(existing, more),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

fn dedup(values: &mut Vec<Value>) {
    let mut seen = BTreeMap::new();
    values.retain(|v| seen.insert(v.to_string(), ()).is_none());
}

fn sample_string(node: &Value) -> Value {
    let format = node.get("format").and_then(Value::as_str).unwrap_or("");
    let text = match format {
        "uri" | "uri-reference" | "iri" => "https://example.com/item",
        "byte" => "aGVsbG8=",
        "date-time" => "2025-01-02T03:04:05Z",
        "date" => "2025-01-02",
        "email" => "someone@example.com",
        _ => "text",
    };
    let min = node.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut text = text.to_owned();
    while text.len() < min {
        text.push('x');
    }
    json!(text)
}

fn bounds(node: &Value) -> (Option<f64>, Option<f64>) {
    (
        node.get("minimum").and_then(Value::as_f64),
        node.get("maximum").and_then(Value::as_f64),
    )
}

fn sample_number(node: &Value, _integer: bool) -> i64 {
    match bounds(node) {
        (Some(min), _) => min.ceil() as i64,
        (None, Some(max)) => max.floor() as i64,
        (None, None) => 3,
    }
}

fn sample_number_value(node: &Value) -> Value {
    match bounds(node) {
        (Some(min), Some(max)) => json!((min + max) / 2.0),
        (Some(min), None) => json!(min + 0.5),
        (None, Some(max)) => json!(max - 0.5),
        (None, None) => json!(0.25),
    }
}
