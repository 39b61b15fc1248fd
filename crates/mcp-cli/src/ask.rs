//! Answering the server's questions: elicitation asked on the terminal
//! (declined when stdin is not one), sampling answered with
//! `--sampling-reply` or declined (the CLI has no model).

use std::collections::BTreeMap;
use std::io::IsTerminal as _;

use dialoguer::{Confirm, Input, MultiSelect, Select};
use mcp_client::ClientConfig;
use mcp_client::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, ErrorCode,
    ErrorObject, SamplingMessageContentBlock,
};
use serde_json::Value;

use crate::output::Output;

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
                url.url, url.message
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
            eprintln!("The server asks: {}", form.message);
            match Confirm::new()
                .with_prompt("Answer?")
                .default(true)
                .interact_opt()
            {
                Ok(Some(true)) => {}
                Ok(Some(false)) => return ElicitResult::new(ElicitAction::Decline),
                _ => return cancel(),
            }
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or(Value::Null);
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut content = BTreeMap::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, field) in properties {
                    match ask_field(name, field, required.contains(&name.as_str())) {
                        Ok(Some(value)) => {
                            content.insert(name.clone(), value);
                        }
                        Ok(None) => {}
                        Err(()) => return cancel(),
                    }
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

/// One field of a form; `Ok(None)` when an optional field is left empty,
/// `Err` when the user cancelled.
fn ask_field(name: &str, field: &Value, required: bool) -> Result<Option<ElicitValue>, ()> {
    let title = field["title"].as_str().unwrap_or(name);
    let prompt = match field["description"].as_str() {
        Some(description) => format!("{title} ({description})"),
        None => title.to_owned(),
    };
    let choices = choices(field);
    match field["type"].as_str() {
        Some("boolean") => {
            let mut confirm = Confirm::new().with_prompt(prompt);
            if let Some(default) = field["default"].as_bool() {
                confirm = confirm.default(default);
            }
            let answer = confirm.interact_opt().map_err(|_| ())?.ok_or(())?;
            Ok(Some(ElicitValue::Boolean(answer)))
        }
        Some("array") => {
            let items = choices_of_array(field);
            let picked = MultiSelect::new()
                .with_prompt(prompt)
                .items(items.iter().map(|(_, label)| label).collect::<Vec<_>>())
                .interact_opt()
                .map_err(|_| ())?
                .ok_or(())?;
            let values = picked.into_iter().map(|i| items[i].0.clone()).collect();
            Ok(Some(ElicitValue::StringArray(values)))
        }
        Some("string") if !choices.is_empty() => {
            let picked = Select::new()
                .with_prompt(prompt)
                .items(choices.iter().map(|(_, label)| label).collect::<Vec<_>>())
                .default(0)
                .interact_opt()
                .map_err(|_| ())?
                .ok_or(())?;
            Ok(Some(ElicitValue::String(choices[picked].0.clone())))
        }
        kind => {
            let text: String = Input::new()
                .with_prompt(prompt)
                .allow_empty(!required)
                .validate_with(|input: &String| -> Result<(), String> {
                    if input.is_empty() && !required {
                        return Ok(());
                    }
                    match kind {
                        Some("integer") => input
                            .parse::<i64>()
                            .map(drop)
                            .map_err(|_| "a whole number, please".to_owned()),
                        Some("number") => input
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
                Some("integer") => ElicitValue::Integer(text.parse().map_err(|_| ())?),
                Some("number") => ElicitValue::Number(text.parse().map_err(|_| ())?),
                _ => ElicitValue::String(text),
            }))
        }
    }
}

/// A single-select field's (value, label) pairs: `enum` (with
/// `enumNames`), or `oneOf` of `const`/`title`.
fn choices(field: &Value) -> Vec<(String, String)> {
    if let Some(values) = field["enum"].as_array() {
        let names = field["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let value = v.as_str()?.to_owned();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .unwrap_or(&value)
                    .to_owned();
                Some((value, label))
            })
            .collect();
    }
    field["oneOf"]
        .as_array()
        .map(|options| {
            options
                .iter()
                .filter_map(|o| {
                    let value = o["const"].as_str()?.to_owned();
                    let label = o["title"].as_str().unwrap_or(&value).to_owned();
                    Some((value, label))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn choices_of_array(field: &Value) -> Vec<(String, String)> {
    let items = &field["items"];
    let from_any_of = items["anyOf"].as_array().map(|options| {
        options
            .iter()
            .filter_map(|o| {
                let value = o["const"].as_str()?.to_owned();
                let label = o["title"].as_str().unwrap_or(&value).to_owned();
                Some((value, label))
            })
            .collect::<Vec<_>>()
    });
    from_any_of.unwrap_or_else(|| choices(items))
}
