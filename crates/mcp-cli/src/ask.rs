//! Answering the server's questions: elicitation asked on the terminal
//! (declined when stdin is not one), sampling answered with
//! `--sampling-reply` or declined (the CLI has no model).

use std::collections::BTreeMap;
use std::io::IsTerminal as _;

use dialoguer::{Confirm, Input, MultiSelect, Select};
use mcp_client::ClientConfig;
use mcp_client::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, ErrorCode,
    ErrorObject, NumberType, PrimitiveSchemaDefinition as Schema, SamplingMessageContentBlock,
};

use crate::output::Output;
use crate::untrusted::{one_line, printable};

/// The code the specification gives a sampling request the user rejected.
const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// Answers elicitation: on a terminal, asks the user field by field;
/// otherwise declines and says why on stderr.
pub(crate) fn answer_elicitation(config: ClientConfig, output: Output) -> ClientConfig {
    config.on_elicitation(move |params, _info| {
        let output = output.clone();
        async move {
            if !std::io::stdin().is_terminal() {
                output.notice(&format!(
                    "declined the server's request for input (stdin is not a terminal): {}",
                    message_of(&params)
                ));
                return Ok(ElicitResult::new(ElicitAction::Decline));
            }
            output.end_progress();
            // dialoguer blocks on the terminal: off the async threads.
            let asked = tokio::task::spawn_blocking(move || ask(&params)).await;
            Ok(asked.unwrap_or(ElicitResult::new(ElicitAction::Cancel)))
        }
    })
}

/// Answers sampling with `reply`, or declines with a message that says how
/// to answer.
pub(crate) fn answer_sampling(
    config: ClientConfig,
    reply: Option<String>,
    output: Output,
) -> ClientConfig {
    config.on_sampling(move |_params, _info| {
        let reply = reply.clone();
        let output = output.clone();
        async move {
            match reply {
                Some(text) => Ok(CreateMessageResult::new(
                    SamplingMessageContentBlock::text(text),
                    "mcp-cli",
                )),
                None => {
                    let message = "the server asked for a model's answer (sampling); the mcp CLI \
                                   has no model and declined: pass --sampling-reply TEXT to answer";
                    output.notice(message);
                    Err(ErrorObject::new(USER_REJECTED, message))
                }
            }
        }
    })
}

fn message_of(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::Form(form) => &form.message,
        ElicitRequestParams::Url(url) => &url.message,
        _ => "a kind of question this CLI does not know",
    }
}

/// Asks on the terminal; Escape or an interrupted prompt cancels.
fn ask(params: &ElicitRequestParams) -> ElicitResult {
    let cancel = || ElicitResult::new(ElicitAction::Cancel);
    match params {
        ElicitRequestParams::Url(url) => {
            eprintln!(
                "The server asks you to visit:\n  {}\n{}",
                one_line(&url.url),
                printable(&url.message)
            );
            match Confirm::new()
                .with_prompt("Done (yes) or decline (no)?")
                .interact_opt()
            {
                Ok(Some(true)) => ElicitResult::new(ElicitAction::Accept),
                Ok(Some(false)) => ElicitResult::new(ElicitAction::Decline),
                _ => cancel(),
            }
        }
        ElicitRequestParams::Form(form) => {
            eprintln!("The server asks: {}", printable(&form.message));
            match Confirm::new()
                .with_prompt("Answer?")
                .default(true)
                .interact_opt()
            {
                Ok(Some(true)) => {}
                Ok(Some(false)) => return ElicitResult::new(ElicitAction::Decline),
                _ => return cancel(),
            }
            let schema = &form.requested_schema;
            let required = schema.required.as_deref().unwrap_or_default();
            let mut content = BTreeMap::new();
            for (name, field) in &schema.properties {
                match ask_field(name, &Field::of(field), required.contains(name)) {
                    Ok(Some(value)) => {
                        content.insert(name.clone(), value);
                    }
                    Ok(None) => {}
                    Err(()) => return cancel(),
                }
            }
            ElicitResult::accept(content)
        }
        _ => {
            eprintln!("The server asks a kind of question this CLI does not know; declining");
            ElicitResult::new(ElicitAction::Decline)
        }
    }
}

/// What one form field asks for, read from its schema.
#[derive(Debug, PartialEq)]
struct Field<'a> {
    title: Option<&'a str>,
    description: Option<&'a str>,
    kind: Kind,
}

/// The answer a field takes; choices are (value, label) pairs.
#[derive(Debug, PartialEq)]
enum Kind {
    Text,
    Integer,
    Number,
    Boolean(Option<bool>),
    One(Vec<(String, String)>),
    Many(Vec<(String, String)>),
}

impl<'a> Field<'a> {
    fn of(schema: &'a Schema) -> Self {
        let plain = |values: &[String]| values.iter().map(|v| (v.clone(), v.clone())).collect();
        let (title, description, kind) = match schema {
            Schema::String(s) => (&s.title, &s.description, Kind::Text),
            Schema::Number(n) => {
                let kind = match n.kind {
                    NumberType::Integer => Kind::Integer,
                    _ => Kind::Number,
                };
                (&n.title, &n.description, kind)
            }
            Schema::Boolean(b) => (&b.title, &b.description, Kind::Boolean(b.default)),
            Schema::UntitledSingleSelect(e) => (&e.title, &e.description, one(plain(&e.values))),
            Schema::TitledSingleSelect(e) => (&e.title, &e.description, one(labelled(&e.one_of))),
            Schema::LegacyTitled(e) => {
                let names = e.enum_names.as_deref().unwrap_or_default();
                let choices = e
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v.clone(), names.get(i).unwrap_or(v).clone()))
                    .collect();
                (&e.title, &e.description, one(choices))
            }
            Schema::UntitledMultiSelect(e) => {
                (&e.title, &e.description, Kind::Many(plain(&e.items.values)))
            }
            Schema::TitledMultiSelect(e) => (
                &e.title,
                &e.description,
                Kind::Many(labelled(&e.items.any_of)),
            ),
            // A field kind newer than this CLI: asked as text.
            _ => (&None, &None, Kind::Text),
        };
        Self {
            title: title.as_deref(),
            description: description.as_deref(),
            kind,
        }
    }
}

/// A single choice, or text when there is nothing to choose from.
fn one(choices: Vec<(String, String)>) -> Kind {
    if choices.is_empty() {
        Kind::Text
    } else {
        Kind::One(choices)
    }
}

fn labelled(options: &[mcp_client::types::EnumOption]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|o| (o.value.clone(), o.title.clone()))
        .collect()
}

impl Field<'_> {
    /// The prompt for the field called `name`: its title (else its name)
    /// and description, on one printable line.
    fn prompt(&self, name: &str) -> String {
        let title = one_line(self.title.unwrap_or(name));
        match self.description {
            Some(description) => format!("{title} ({})", one_line(description)),
            None => title.into_owned(),
        }
    }
}

/// The labels of `choices`, each on one printable line.
fn labels(choices: &[(String, String)]) -> Vec<String> {
    choices
        .iter()
        .map(|(_, label)| one_line(label).into_owned())
        .collect()
}

/// One field of a form; `Ok(None)` when an optional field is left empty,
/// `Err` when the user cancelled.
fn ask_field(name: &str, field: &Field<'_>, required: bool) -> Result<Option<ElicitValue>, ()> {
    let prompt = field.prompt(name);
    match &field.kind {
        Kind::Boolean(default) => {
            let mut confirm = Confirm::new().with_prompt(prompt);
            if let Some(default) = default {
                confirm = confirm.default(*default);
            }
            let answer = confirm.interact_opt().map_err(|_| ())?.ok_or(())?;
            Ok(Some(ElicitValue::Boolean(answer)))
        }
        Kind::Many(items) => {
            let picked = MultiSelect::new()
                .with_prompt(prompt)
                .items(labels(items))
                .interact_opt()
                .map_err(|_| ())?
                .ok_or(())?;
            let values = picked.into_iter().map(|i| items[i].0.clone()).collect();
            Ok(Some(ElicitValue::StringArray(values)))
        }
        Kind::One(choices) => {
            let picked = Select::new()
                .with_prompt(prompt)
                .items(labels(choices))
                .default(0)
                .interact_opt()
                .map_err(|_| ())?
                .ok_or(())?;
            Ok(Some(ElicitValue::String(choices[picked].0.clone())))
        }
        kind @ (Kind::Text | Kind::Integer | Kind::Number) => {
            let text: String = Input::new()
                .with_prompt(prompt)
                .allow_empty(!required)
                .validate_with(|input: &String| -> Result<(), String> {
                    if input.is_empty() && !required {
                        return Ok(());
                    }
                    match kind {
                        Kind::Integer => input
                            .parse::<i64>()
                            .map(drop)
                            .map_err(|_| "a whole number, please".to_owned()),
                        Kind::Number => input
                            .parse::<f64>()
                            .map(drop)
                            .map_err(|_| "a number, please".to_owned()),
                        _ => Ok(()),
                    }
                })
                .interact_text()
                .map_err(|_| ())?;
            if text.is_empty() && !required {
                return Ok(None);
            }
            Ok(Some(match kind {
                Kind::Integer => ElicitValue::Integer(text.parse().map_err(|_| ())?),
                Kind::Number => ElicitValue::Number(text.parse().map_err(|_| ())?),
                _ => ElicitValue::String(text),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(schema: serde_json::Value) -> Kind {
        let schema: Schema = serde_json::from_value(schema).expect("a field schema");
        Field::of(&schema).kind
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(v, l)| ((*v).to_owned(), (*l).to_owned()))
            .collect()
    }

    #[test]
    fn prompts_and_choices_show_server_text_escaped_on_one_line() {
        let schema: Schema = serde_json::from_value(json!({
            "type": "string",
            "title": "Name\u{1b}]0;title\u{7}",
            "description": "yours\n\u{202e}evil\u{9b}2J"
        }))
        .expect("schema");
        assert_eq!(
            Field::of(&schema).prompt("name"),
            r"Name\x1b]0;title\x07 (yours\x0a\u{202e}evil\u{9b}2J)"
        );
        let untitled: Schema = serde_json::from_value(json!({"type": "integer"})).expect("schema");
        assert_eq!(Field::of(&untitled).prompt("n\u{1b}[2J"), r"n\x1b[2J");
        assert_eq!(
            labels(&pairs(&[("a", "A\u{1b}[31m"), ("b", "B\r\n")])),
            [r"A\x1b[31m", r"B\x0d\x0a"]
        );
    }

    #[test]
    fn form_fields_are_read_from_their_typed_schema() {
        let schema: Schema = serde_json::from_value(
            json!({"type": "string", "title": "Name", "description": "yours"}),
        )
        .expect("schema");
        let name = Field::of(&schema);
        assert_eq!(
            (name.title, name.description),
            (Some("Name"), Some("yours"))
        );
        assert_eq!(name.kind, Kind::Text);
        assert_eq!(field(json!({"type": "integer"})), Kind::Integer);
        assert_eq!(field(json!({"type": "number"})), Kind::Number);
        assert_eq!(
            field(json!({"type": "boolean", "default": true})),
            Kind::Boolean(Some(true))
        );
        assert_eq!(
            field(json!({"type": "string", "enum": ["a", "b"]})),
            Kind::One(pairs(&[("a", "a"), ("b", "b")]))
        );
        assert_eq!(
            field(json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]})),
            Kind::One(pairs(&[("a", "A"), ("b", "b")]))
        );
        assert_eq!(
            field(json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]})),
            Kind::One(pairs(&[("a", "A")]))
        );
        assert_eq!(
            field(json!({"type": "string", "enum": []})),
            Kind::Text,
            "nothing to choose from is asked as text"
        );
        assert_eq!(
            field(json!({"type": "array", "items": {"type": "string", "enum": ["x"]}})),
            Kind::Many(pairs(&[("x", "x")]))
        );
        assert_eq!(
            field(json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}})),
            Kind::Many(pairs(&[("x", "X")]))
        );
    }
}
