//! The method tables agree with every revision's official schema: the
//! request, notification and result unions are read from the schema files,
//! never from a hand-written list.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mcp_types::{METHODS, MessageKind, MethodInfo, Revision, Side};
use serde_json::Value;

fn schema(revision: Revision) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spec")
        .join(revision.as_str())
        .join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `cargo xtask sync-spec`", path.display()));
    serde_json::from_str(&text).expect("schema.json is JSON")
}

fn definitions(schema: &Value) -> &serde_json::Map<String, Value> {
    schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .expect("schema has definitions")
}

fn ref_name(node: &Value) -> Option<&str> {
    node.get("$ref")?.as_str()?.rsplit('/').next()
}

/// The definition names a union stands for: its `anyOf` members, the one
/// definition it references, or (when the union is itself a single message
/// definition, as 2026-07-28's `ClientNotification` is) its own name.
fn union_members(defs: &serde_json::Map<String, Value>, union: &str) -> Vec<String> {
    let Some(node) = defs.get(union) else {
        return vec![];
    };
    if let Some(any_of) = node.get("anyOf").and_then(Value::as_array) {
        return any_of
            .iter()
            .filter_map(ref_name)
            .map(str::to_owned)
            .collect();
    }
    if let Some(name) = ref_name(node) {
        return vec![name.to_owned()];
    }
    vec![union.to_owned()]
}

fn method_of(defs: &serde_json::Map<String, Value>, definition: &str) -> String {
    let node = if defs.contains_key(definition) {
        &defs[definition]
    } else {
        panic!("no definition {definition}")
    };
    node.pointer("/properties/method/const")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{definition} has no constant method"))
        .to_owned()
}

fn schema_methods(revision: Revision, union: &str) -> BTreeSet<String> {
    let schema = schema(revision);
    let defs = definitions(&schema);
    union_members(defs, union)
        .iter()
        .map(|member| {
            // The 2026 single-definition unions inline the message itself.
            if defs[member].pointer("/properties/method/const").is_some() {
                method_of(defs, member)
            } else {
                panic!("{union} member {member} names no method")
            }
        })
        .collect()
}

fn table_methods(revision: Revision, kind: MessageKind, sender: Side) -> BTreeSet<String> {
    METHODS
        .iter()
        .filter(|m| m.kind == kind && m.is_sent_by(sender, revision))
        .map(|m| m.name.to_owned())
        .collect()
}

#[test]
fn requests_and_notifications_match_each_schema() {
    let cases = [
        ("ClientRequest", MessageKind::Request, Side::Client),
        ("ServerRequest", MessageKind::Request, Side::Server),
        (
            "ClientNotification",
            MessageKind::Notification,
            Side::Client,
        ),
        (
            "ServerNotification",
            MessageKind::Notification,
            Side::Server,
        ),
    ];
    let mut checked = 0;
    for revision in Revision::ALL {
        for (union, kind, sender) in cases {
            let from_schema = schema_methods(revision, union);
            let from_table = table_methods(revision, kind, sender);
            assert_eq!(
                from_table, from_schema,
                "{union} at {revision}: the table (left) disagrees with the schema (right)"
            );
            checked += from_schema.len();
        }
    }
    // Guard against a schema reader that silently finds nothing.
    assert!(checked > 100, "only {checked} methods checked");
}

#[test]
fn results_match_each_schema() {
    // The schema's result unions leave out `CreateTaskResult`, which the
    // tasks page says answers a task-augmented request (2025-11-25).
    let outside_unions = ["CreateTaskResult"];
    for revision in Revision::ALL {
        let schema = schema(revision);
        let defs = definitions(&schema);
        for (union, asker) in [
            ("ServerResult", Side::Client),
            ("ClientResult", Side::Server),
        ] {
            let from_schema: BTreeSet<String> = union_members(defs, union).into_iter().collect();
            let mut from_table: BTreeSet<String> = METHODS
                .iter()
                .filter(|m| m.kind == MessageKind::Request && m.is_sent_by(asker, revision))
                .flat_map(|m| m.results_at(revision))
                .filter(|name| !outside_unions.contains(name))
                .map(str::to_owned)
                .collect();
            // Every union admits the empty result, whether or not a method returns it.
            from_table.insert("Result".to_owned());
            assert_eq!(
                from_table, from_schema,
                "{union} at {revision}: the table (left) disagrees with the schema (right)"
            );
        }
    }
}

#[test]
fn every_schema_message_definition_is_in_the_table() {
    for revision in Revision::ALL {
        let schema = schema(revision);
        for (name, def) in definitions(&schema) {
            if let Some(method) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                let info = MethodInfo::find(method).unwrap_or_else(|| {
                    panic!("{name} ({method}) at {revision} is not in the table")
                });
                assert!(
                    info.exists_at(revision),
                    "{method} should exist at {revision}"
                );
            }
        }
    }
}

#[test]
fn input_requests_match_the_stateless_schema() {
    for revision in Revision::ALL {
        let from_schema = if definitions(&schema(revision)).contains_key("InputRequest") {
            schema_methods(revision, "InputRequest")
        } else {
            BTreeSet::new()
        };
        let from_table: BTreeSet<String> = METHODS
            .iter()
            .filter(|m| m.as_input_request.contains(revision))
            .map(|m| m.name.to_owned())
            .collect();
        assert_eq!(from_table, from_schema, "input requests at {revision}");
    }
}
