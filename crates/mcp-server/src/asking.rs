//! The asks of a handler's [`Context`]: elicit, elicit_form, elicit_url,
//! create_message and list_roots, each asking the client once in either
//! era (see [`crate::ask`] for how). Apart from ask.rs, which holds the
//! plain parts (the request's book of asks, the shapes of one ask) that
//! session.rs keeps too.

use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestedSchema,
    ElicitResult, InputRequest, InputResponse, ListRootsResult,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::ask::{
    Elicitation, answers, elicitation_schema, elicited, form_ask, rooted, sampled, url_ask,
};
use crate::session::Context;

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

    /// Asks the client `request`, whatever its kind (sampling, elicitation,
    /// roots), and returns its answer as it came: the ask the typed methods
    /// ([`create_message`](Self::create_message),
    /// [`elicit_form`](Self::elicit_form), …) make, for a handler that
    /// passes on an ask it was given (a gateway forwarding an upstream
    /// server's request to its own client). Checked first against what the
    /// client declared, as those are.
    ///
    /// In the handshake era it is a server-to-client request, related to
    /// the request being served. In the stateless era (2026-07-28) it is an
    /// `input_required` round: the first time, this returns
    /// [`Error::AwaitingInput`] (return it with `?`), the call is answered
    /// with the ask, and the client sends the call again with its answer;
    /// **the handler then runs again from the start**, and this returns the
    /// answer. So a stateless handler must ask the same things in the same
    /// order each run, and do nothing before its last ask that it cannot do
    /// twice (a gateway that forwards an upstream's asks keeps the
    /// upstream's call across the rounds, or replays it).
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] (stateless:
    /// [`Error::MissingRequiredClientCapability`]) when the client cannot
    /// answer this kind of ask; [`Error::AwaitingInput`] in the stateless
    /// era until the client answered; [`Error::InputMismatch`] when the
    /// client's answer at this place is of another kind;
    /// [`Error::NoServerRequests`] for a kind of request the handshake era
    /// cannot send; [`Error::Request`] when the client fails.
    ///
    /// # Cancel safety
    /// Dropping the future (the handler's own future, when the call is cancelled)
    /// cancels the ask: in the handshake era the client is sent
    /// `notifications/cancelled`; in the stateless era nothing was sent yet.
    pub async fn ask(&self, request: InputRequest) -> Result<InputResponse, Error> {
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
