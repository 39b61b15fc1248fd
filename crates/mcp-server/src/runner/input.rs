//! Handlers that ask the client for input, in either era: answers and
//! state from a retried request, the asks a run left open, and the
//! handshake era's fulfilment of an explicit `InputRequired`.

use std::future::Future;
use std::sync::Arc;

use mcp_core::RequestContext;
use mcp_types::{ErrorObject, RequestMeta};
use mcp_types::{InputRequiredResult, InputResponses, ResultOrInputRequired};

use crate::ask::SealedInput;
use crate::request_state::Binding;
use crate::session::{Context, RequestInput};

use super::{Answer, Requester, Runner};

/// Rounds of explicit `InputRequired` a handshake-era handler may go
/// through (each fulfilled with server-to-client requests) before the
/// request fails.
const MAX_HANDSHAKE_INPUT_ROUNDS: usize = 8;

impl Runner {
    /// Verifies a retried request's `requestState` and hands the answers to
    /// the handler's context.
    pub(super) fn with_input<'a>(
        &self,
        context: Context,
        binding: impl FnOnce() -> &'a Binding,
        responses: Option<InputResponses>,
        request_state: Option<String>,
    ) -> Result<Context, ErrorObject> {
        let sealed = match request_state {
            // A first call: the context's fresh asks and absent input are
            // what it needs.
            None if responses.is_none() => return Ok(context),
            None => SealedInput::default(),
            Some(sealed) => {
                let opened = self
                    .registry
                    .sealer
                    .open(binding(), &sealed)
                    .map_err(|refusal| {
                        // The request span names the method and target; the
                        // state itself is attacker input and stays out.
                        tracing::warn!(%refusal, "refused a requestState");
                        ErrorObject::invalid_params(refusal.to_string())
                    })?;
                serde_json::from_str(&opened).map_err(|_| {
                    ErrorObject::invalid_params("requestState is not one this server issued")
                })?
            }
        };
        let input = RequestInput {
            responses,
            state: sealed.user,
        };
        Ok(context.with_input(input, sealed.answered))
    }

    /// What a stateless handler's run answers: its unanswered asks first
    /// (they win over whatever the handler made of the `AwaitingInput`
    /// error), else its own answer; any input-required answer carries the
    /// answers so far and the handler's state, sealed for `binding`.
    pub(super) fn finish<'a, R>(
        &self,
        answer: Answer<R>,
        context: &Context,
        binding: impl FnOnce() -> &'a Binding,
    ) -> Answer<R> {
        let pending = context.asks().take_pending();
        let mut input = if pending.is_empty() {
            match answer? {
                ResultOrInputRequired::InputRequired(input) => input,
                complete => return Ok(complete),
            }
        } else {
            let mut input = InputRequiredResult::new();
            input.input_requests = Some(pending);
            input
        };
        let sealed = SealedInput {
            answered: context.asks().answered(),
            user: input.request_state.take(),
        };
        let payload = serde_json::to_string(&sealed).map_err(|e| {
            ErrorObject::internal_error(format!("could not serialize the request state: {e}"))
        })?;
        input.request_state = Some(self.registry.sealer.seal(binding(), &payload));
        Ok(ResultOrInputRequired::InputRequired(input))
    }

    /// Runs a handler that may ask the client for input, in the request's
    /// era. Stateless: one run, with the retry's answers, its state bound
    /// to what `bind` makes; what it still needs goes back in an
    /// input-required result. Handshake: an explicit `InputRequired` is
    /// fulfilled with server-to-client requests and the handler runs again
    /// with the answers.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_asking<R, F, Fut>(
        &self,
        cx: &RequestContext,
        requester: &Requester,
        meta: Option<Arc<RequestMeta>>,
        retry: (Option<InputResponses>, Option<String>),
        target: &str,
        bind: impl Fn() -> Binding,
        run: F,
    ) -> Answer<R>
    where
        F: Fn(Context) -> Fut,
        Fut: Future<Output = Answer<R>>,
    {
        let context = self.context(cx, requester, meta.clone());
        if let Requester::Stateless(_) = requester {
            // The binding hashes the arguments: only worth it when a state
            // comes in or goes out, not on every call.
            let binding = std::sync::OnceLock::new();
            let bound = || binding.get_or_init(&bind);
            let (responses, request_state) = retry;
            let context = self.with_input(context, bound, responses, request_state)?;
            let answer = run(context.clone()).await;
            return self.finish(answer, &context, bound);
        }
        // The context goes to the handler whole: a handler that asks for
        // input gets the session to ask through from `input_rounds`, so the
        // calls that do not ask (nearly all) clone nothing.
        let answer = run(context).await?;
        if !matches!(answer, ResultOrInputRequired::InputRequired(_)) {
            return Ok(answer);
        }
        // On the heap: the rounds hold asks and answers across awaits, which
        // would otherwise size the future of every call (copied whole when
        // it is boxed) for a path few handlers take.
        Box::pin(self.input_rounds(cx, requester, meta, target, answer, &run)).await
    }

    /// The handshake era's rounds of explicit `InputRequired`: each one's
    /// asks are sent to the client, and the handler runs again with the
    /// answers, until it answers without asking.
    async fn input_rounds<R, F, Fut>(
        &self,
        cx: &RequestContext,
        requester: &Requester,
        meta: Option<Arc<RequestMeta>>,
        target: &str,
        mut answer: ResultOrInputRequired<R>,
        run: &F,
    ) -> Answer<R>
    where
        F: Fn(Context) -> Fut,
        Fut: Future<Output = Answer<R>>,
    {
        // The session the handler's own context has (`Runner::context`).
        let session = self.session(cx, requester);
        for _ in 0..MAX_HANDSHAKE_INPUT_ROUNDS {
            let ResultOrInputRequired::InputRequired(input) = answer else {
                return Ok(answer);
            };
            let mut responses = InputResponses::new();
            for (key, request) in input.input_requests.unwrap_or_default() {
                session.check_ask(&request)?;
                responses.insert(key, session.send_ask(request).await?);
            }
            let again = self.context(cx, requester, meta.clone()).with_input(
                RequestInput {
                    responses: Some(responses),
                    state: input.request_state,
                },
                InputResponses::new(),
            );
            answer = run(again).await?;
        }
        Err(ErrorObject::internal_error(format!(
            "`{target}` still asked for input after {MAX_HANDSHAKE_INPUT_ROUNDS} rounds"
        )))
    }
}
