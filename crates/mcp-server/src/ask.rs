//! Asking the client for input (elicitation, sampling, roots) the same way in
//! either protocol era.
//!
//! A handler asks through its [`Context`](crate::Context) and awaits the answer:
//!
//! - **Handshake era** (up to 2025-11-25): the ask is a server-to-client
//!   request sent mid-call; the handler resumes when the client answers.
//! - **Stateless era** (2026-07-28): the server cannot send requests. The
//!   first unanswered ask ends the call with an `input_required` result that
//!   carries every ask made so far; the client answers them and retries, and
//!   the handler **runs again from the start**. This time each answered ask
//!   resolves at once, from the retry's `inputResponses` or from the answers
//!   of earlier rounds that the server sealed into `requestState` (so each
//!   question is put to the client once).
//!
//! Asks are told apart by the order in which a run makes them, so a handler
//! must ask the same questions in the same order on every run, and should do
//! its side effects (writes, payments, messages) only after its last ask:
//! everything before an unanswered ask runs once per round.

use std::sync::{Mutex, MutexGuard};

use mcp_types::method::Method;
use mcp_types::{
    CreateMessageResult, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitRequestedSchema, ElicitResult, InputRequest, InputRequests, InputResponse,
    InputResponses, JsonObject, ListRootsResult, methods,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;

/// The prefix of the keys the SDK gives its own asks, apart from keys a
/// handler picks for an explicit [`InputRequired`](crate::InputRequired).
const ASK_KEY_PREFIX: &str = "mcp.ask.";

/// The user's answer to a typed form ([`Context::elicit`](crate::Context::elicit)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user filled in the form and submitted it.
    Accepted(T),
    /// The user refused to answer.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

/// The asks of one request: answers known so far, and what this run asked
/// that has no answer yet. Shared by the clones of a request's
/// [`Context`](crate::Context).
#[derive(Debug, Default)]
pub(crate) struct Asks {
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    /// How many asks this run made.
    next: usize,
    /// Answers by key: sealed from earlier rounds, and this retry's.
    answered: InputResponses,
    /// Asks of this run with no answer yet.
    pending: InputRequests,
}

/// What the runner seals into `requestState`: the answers of earlier rounds
/// and the state a handler gave with an explicit `InputRequired`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct SealedInput {
    #[serde(
        rename = "a",
        default,
        skip_serializing_if = "InputResponses::is_empty"
    )]
    pub(crate) answered: InputResponses,
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub(crate) user: Option<String>,
}

impl Asks {
    /// A request retried with `answered` known (earlier rounds' answers
    /// and this retry's `inputResponses`).
    pub(crate) fn resume(answered: InputResponses) -> Self {
        Self {
            book: Mutex::new(Book {
                answered,
                ..Book::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The key of the next ask, and its answer if the client gave one.
    pub(crate) fn next(&self) -> (String, Option<InputResponse>) {
        let mut book = self.lock();
        let key = format!("{ASK_KEY_PREFIX}{}", book.next);
        book.next += 1;
        let answer = book.answered.get(&key).cloned();
        (key, answer)
    }

    pub(crate) fn pend(&self, key: String, request: InputRequest) {
        self.lock().pending.insert(key, request);
    }

    /// The asks this run left unanswered (empty when it needs nothing more).
    pub(crate) fn take_pending(&self) -> InputRequests {
        std::mem::take(&mut self.lock().pending)
    }

    /// Every answer known, to seal for the next round.
    pub(crate) fn answered(&self) -> InputResponses {
        self.lock().answered.clone()
    }
}

/// Whether `answer` is of the kind `request` asks for.
pub(crate) fn answers(request: &InputRequest, answer: &InputResponse) -> bool {
    matches!(
        (request, answer),
        (InputRequest::Elicit(_), InputResponse::Elicit(_))
            | (
                InputRequest::CreateMessage(_),
                InputResponse::CreateMessage(_)
            )
            | (InputRequest::ListRoots(_), InputResponse::ListRoots(_))
    )
}

/// `elicitation/create` in form mode.
pub(crate) fn form_ask(message: &str, requested_schema: ElicitRequestedSchema) -> InputRequest {
    InputRequest::Elicit(ElicitRequestParams::Form(ElicitRequestFormParams::new(
        message,
        requested_schema,
    )))
}

/// `elicitation/create` in URL mode.
pub(crate) fn url_ask(message: &str, url: &str, elicitation_id: &str) -> InputRequest {
    let mut params = ElicitRequestUrlParams::new(message, url);
    params.elicitation_id = Some(elicitation_id.to_owned());
    InputRequest::Elicit(ElicitRequestParams::Url(params))
}

/// The answer to an elicitation.
pub(crate) fn elicited(answer: InputResponse) -> Result<ElicitResult, Error> {
    match answer {
        InputResponse::Elicit(result) => Ok(result),
        _ => Err(mismatch(methods::Elicit::NAME)),
    }
}

/// The answer to a sampling request.
pub(crate) fn sampled(answer: InputResponse) -> Result<CreateMessageResult, Error> {
    match answer {
        InputResponse::CreateMessage(result) => Ok(result),
        _ => Err(mismatch(methods::CreateMessage::NAME)),
    }
}

/// The answer to `roots/list`.
pub(crate) fn rooted(answer: InputResponse) -> Result<ListRootsResult, Error> {
    match answer {
        InputResponse::ListRoots(result) => Ok(result),
        _ => Err(mismatch(methods::ListRoots::NAME)),
    }
}

fn mismatch(method: &'static str) -> Error {
    Error::InputMismatch {
        key: method.to_owned(),
    }
}

/// The flat form schema of `T` for `elicitation/create`.
pub(crate) fn elicitation_schema<T: JsonSchema>() -> Result<ElicitRequestedSchema, Error> {
    let invalid = |reason: String| Error::InvalidElicitationSchema {
        type_name: std::any::type_name::<T>(),
        reason,
    };
    let schema = crate::input_schema_for::<T>().map_err(|e| invalid(e.to_string()))?;
    let mut form = JsonObject::new();
    form.insert("type".into(), "object".into());
    for field in ["properties", "required"] {
        if let Some(value) = schema.get(field) {
            form.insert(field.into(), value.clone());
        }
    }
    // An `Option` field is `"type": [T, "null"]` in the generated schema; a
    // form says "optional" by leaving the field out of `required` instead.
    if let Some(serde_json::Value::Object(properties)) = form.get_mut("properties") {
        for property in properties.values_mut() {
            let Some(kind) = property.get_mut("type") else {
                continue;
            };
            if let serde_json::Value::Array(kinds) = kind {
                let named: Vec<_> = kinds
                    .iter()
                    .filter(|k| k.as_str() != Some("null"))
                    .collect();
                if let [only] = named.as_slice() {
                    *kind = (*only).clone();
                }
            }
        }
    }
    serde_json::from_value(serde_json::Value::Object(form)).map_err(|e| {
        invalid(format!(
            "an elicitation form has only primitive fields (string, number, integer, boolean, \
             enum): {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Flat {
        name: String,
        age: Option<u32>,
        subscribe: bool,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Flat,
    }

    #[test]
    fn flat_types_make_forms_and_nested_ones_are_refused() {
        let form = elicitation_schema::<Flat>().expect("a flat form");
        assert_eq!(form.properties.len(), 3);
        assert_eq!(
            form.required.as_deref(),
            Some(&["name".to_owned(), "subscribe".to_owned()][..])
        );
        let refused = elicitation_schema::<Nested>().expect_err("nested");
        assert!(
            matches!(refused, Error::InvalidElicitationSchema { .. }),
            "{refused}"
        );
    }

    #[test]
    fn asks_are_keyed_by_order_and_resolve_from_known_answers() {
        let mut known = InputResponses::new();
        known.insert(
            format!("{ASK_KEY_PREFIX}0"),
            InputResponse::ListRoots(ListRootsResult::new(Vec::new())),
        );
        let asks = Asks::resume(known);
        let (first, answer) = asks.next();
        assert_eq!(first, "mcp.ask.0");
        assert!(answer.is_some());
        let (second, answer) = asks.next();
        assert_eq!(second, "mcp.ask.1");
        assert!(answer.is_none());
        asks.pend(second, InputRequest::list_roots());
        assert_eq!(asks.take_pending().len(), 1);
        assert!(asks.take_pending().is_empty());
    }
}
