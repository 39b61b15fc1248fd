//! Asking the client for input (elicitation, sampling, roots) the same way in
//! either protocol era.
//!
//! A handler asks through its [`Context`] and awaits the answer:
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
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestFormParams,
    ElicitRequestParams, ElicitRequestUrlParams, ElicitRequestedSchema, ElicitResult, InputRequest,
    InputRequests, InputResponse, InputResponses, JsonObject, ListRootsResult, methods,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Context, Error};

/// The prefix of the keys the SDK gives its own asks, apart from keys a
/// handler picks for an explicit [`InputRequired`](crate::InputRequired).
const ASK_KEY_PREFIX: &str = "mcp.ask.";

/// The user's answer to a typed form ([`Context::elicit`]).
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
/// that has no answer yet. Shared by the clones of a request's [`Context`].
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
    fn next(&self) -> (String, Option<InputResponse>) {
        let mut book = self.lock();
        let key = format!("{ASK_KEY_PREFIX}{}", book.next);
        book.next += 1;
        let answer = book.answered.get(&key).cloned();
        (key, answer)
    }

    fn pend(&self, key: String, request: InputRequest) {
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

impl Context {
    /// Asks the user to fill in a form shaped like `T` and reads the answer
    /// into `T`. `T`'s schema must be a flat object of primitive fields
    /// (strings, numbers, booleans, enums), as elicitation allows.
    ///
    /// Works in either era (see the [module docs](crate::ask)): in the
    /// stateless era the handler may run again before this returns.
    ///
    /// # Examples
    /// ```
    /// use mcp_server::{Context, Elicitation, Server, ToolError};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Name { name: String }
    ///
    /// async fn greet(cx: Context) -> Result<String, ToolError> {
    ///     Ok(match cx.elicit::<Name>("What is your name?").await? {
    ///         Elicitation::Accepted(Name { name }) => format!("hello {name}"),
    ///         Elicitation::Declined | Elicitation::Cancelled => "hello, stranger".into(),
    ///     })
    /// }
    ///
    /// let server = Server::builder("greeter", "1.0.0")
    ///     .tool("greet", "Greets the user by name", greet)
    ///     .build();
    /// assert!(server.is_ok());
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidElicitationSchema`] when `T` is not a flat form;
    /// [`Error::InvalidElicitationAnswer`] when the submitted values do not
    /// fit `T`; as [`elicit_form`](Self::elicit_form) otherwise.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: &str,
    ) -> Result<Elicitation<T>, Error> {
        let schema = elicitation_schema::<T>()?;
        let answer = self.elicit_form(message, schema).await?;
        match answer.action {
            ElicitAction::Accept => {
                let content = serde_json::to_value(answer.content.unwrap_or_default())
                    .map_err(|source| Error::InvalidElicitationAnswer { source })?;
                serde_json::from_value(content)
                    .map(Elicitation::Accepted)
                    .map_err(|source| Error::InvalidElicitationAnswer { source })
            }
            ElicitAction::Decline => Ok(Elicitation::Declined),
            // Cancel, and any action a newer revision adds: not an answer.
            _ => Ok(Elicitation::Cancelled),
        }
    }

    /// Asks the user to fill in a form (`elicitation/create`, form mode), in
    /// either era (see the [module docs](crate::ask)).
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] (or, stateless,
    /// [`Error::MissingRequiredClientCapability`]) when the client cannot
    /// elicit forms; [`Error::AwaitingInput`] in the stateless era until the
    /// client answered (return it with `?`); [`Error::Request`] when the
    /// client fails.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn elicit_form(
        &self,
        message: &str,
        requested_schema: ElicitRequestedSchema,
    ) -> Result<ElicitResult, Error> {
        elicited(self.ask(form_ask(message, requested_schema)).await?)
    }

    /// Asks the user to visit `url` (`elicitation/create`, URL mode), in
    /// either era, for interactions that must not pass through the client,
    /// such as signing in.
    ///
    /// # Errors
    /// As [`elicit_form`](Self::elicit_form), for the `elicitation.url` capability.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn elicit_url(
        &self,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> Result<ElicitResult, Error> {
        elicited(self.ask(url_ask(message, url, elicitation_id)).await?)
    }

    /// Asks the client's model for a completion (`sampling/createMessage`),
    /// in either era. Checked first against what the client declared:
    /// sampling itself, and `sampling.tools` when `params` offers tools.
    ///
    /// # Errors
    /// As [`elicit_form`](Self::elicit_form), for the `sampling` capability.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn create_message(
        &self,
        params: &CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        sampled(
            self.ask(InputRequest::CreateMessage(params.clone()))
                .await?,
        )
    }

    /// Asks for the client's roots (`roots/list`), in either era.
    ///
    /// # Errors
    /// As [`elicit_form`](Self::elicit_form), for the `roots` capability.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn list_roots(&self) -> Result<ListRootsResult, Error> {
        rooted(self.ask(InputRequest::list_roots()).await?)
    }

    /// One ask: sent now in the handshake era; in the stateless era
    /// answered from what the client sent, or recorded for the
    /// `input_required` result.
    async fn ask(&self, request: InputRequest) -> Result<InputResponse, Error> {
        self.session().check_ask(&request)?;
        if !self.is_stateless() {
            return self.session().send_ask(request).await;
        }
        let (key, answer) = self.asks().next();
        match answer {
            Some(answer) if answers(&request, &answer) => Ok(answer),
            Some(_) => Err(Error::InputMismatch { key }),
            None => {
                let method = request.method();
                self.asks().pend(key, request);
                Err(Error::AwaitingInput { method })
            }
        }
    }
}

/// Whether `answer` is of the kind `request` asks for.
fn answers(request: &InputRequest, answer: &InputResponse) -> bool {
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
fn elicitation_schema<T: JsonSchema>() -> Result<ElicitRequestedSchema, Error> {
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
