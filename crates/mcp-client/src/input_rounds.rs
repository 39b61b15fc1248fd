//! The stateless era's Multi Round-Trip Requests, one loop for every method
//! that may answer `input_required` (`tools/call`, `resources/read`,
//! `prompts/get`): answer the input requests through the config's callbacks
//! and retry with `inputResponses` and the server's `requestState`.

use mcp_types::method::Method;
use mcp_types::tasks_ext;
use mcp_types::{
    CallToolRequestParams, GetPromptRequestParams, InputResponses, ReadResourceRequestParams,
    ResultOrInputRequired,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::extension::claims::Claim;
use crate::options::RequestOptions;
use crate::session::{ClientSession, parse_result, to_raw};

/// Rounds of input requests a call may go through before it is given up.
pub(crate) const MAX_INPUT_ROUNDS: usize = 8;

/// Params of a request that can be retried with answers to input requests.
pub(crate) trait Retryable: Serialize {
    /// The method's name.
    const METHOD: &'static str;
    /// Carries the answers and the server's state into the retry.
    fn retry_with(&mut self, responses: InputResponses, request_state: Option<String>);
}

macro_rules! retryable {
    ($params:ty, $method:literal) => {
        impl Retryable for $params {
            const METHOD: &'static str = $method;
            fn retry_with(&mut self, responses: InputResponses, request_state: Option<String>) {
                self.input_responses = Some(responses);
                self.request_state = request_state;
            }
        }
    };
}

retryable!(CallToolRequestParams, "tools/call");
retryable!(ReadResourceRequestParams, "resources/read");
retryable!(GetPromptRequestParams, "prompts/get");

impl ClientSession {
    /// One exchange, without answering input requests.
    pub(crate) async fn exchange<P: Retryable, R: DeserializeOwned>(
        &self,
        params: &P,
        options: RequestOptions,
    ) -> Result<ResultOrInputRequired<R>, Error> {
        let raw = to_raw(P::METHOD, params)?;
        // A call declaring the tasks extension for itself accepts its handle.
        let declares_tasks = options.declares_extension(tasks_ext::EXTENSION_ID);
        let answer = self.request_raw(P::METHOD, Some(raw), options).await?;
        if P::METHOD == mcp_types::methods::CallTool::NAME {
            let revision = self.shared.lock().revision;
            let invalid = |source| Error::InvalidResult {
                method: P::METHOD,
                source,
            };
            let also = declares_tasks.then(Claim::of::<tasks_ext::CreateTaskResult>);
            let claimed = self
                .config
                .extensions
                .claims
                .claimed(&answer, revision, also.as_ref())
                .map_err(invalid)?;
            if let Some(result) = claimed {
                return Err(Error::UnexpectedClaimedResult { result });
            }
        }
        parse_result(P::METHOD, &answer)
    }

    /// Exchanges until the server answers with a result, fulfilling its
    /// input requests in between (at most [`MAX_INPUT_ROUNDS`] rounds).
    pub(crate) async fn with_input_rounds<P: Retryable, R: DeserializeOwned>(
        &self,
        mut params: P,
        options: RequestOptions,
    ) -> Result<R, Error> {
        let mut round = 0;
        loop {
            match self.exchange(&params, options.clone()).await? {
                ResultOrInputRequired::Complete(result) => return Ok(result),
                ResultOrInputRequired::InputRequired(input) => {
                    round += 1;
                    if round > MAX_INPUT_ROUNDS {
                        return Err(Error::TooManyInputRounds {
                            method: P::METHOD,
                            rounds: MAX_INPUT_ROUNDS,
                        });
                    }
                    let responses = self
                        .answer_input_requests(input.input_requests.unwrap_or_default())
                        .await?;
                    params.retry_with(responses, input.request_state);
                }
            }
        }
    }
}
