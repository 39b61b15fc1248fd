//! Asking the client to run a request as a task (2025-11-25, the core
//! tasks in the server-to-client direction): a `sampling/createMessage` or
//! `elicitation/create` that carries `task` is answered at once with the
//! client's task, which the server follows with `tasks/get`, fetches with
//! `tasks/result`, lists and cancels. Only for a client that declared
//! `capabilities.tasks.requests.sampling.createMessage` (or
//! `...elicitation.create`), in the handshake era.
//!
//! ```no_run
//! # async fn run(cx: mcp_server::Context) -> Result<(), mcp_server::Error> {
//! use mcp_server::types::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
//!
//! let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Summarize")], 100);
//! let session = cx.session();
//! let task = session.create_message_as_task(&params, None).await?;
//! let answer: CreateMessageResult = session.wait_for_client_task(&task).await?;
//! # let _ = answer;
//! # Ok(())
//! # }
//! ```

use std::time::Duration;

use mcp_core::SendOptions;
use mcp_types::method::Method;
use mcp_types::{
    CreateMessageRequestParams, CreateTaskResult, ElicitRequestParams, ListTasksResult, Task,
    TaskIdParams, TaskMetadata, methods,
};
use serde::de::DeserializeOwned;

use crate::{Error, ServerSession};

/// The shortest polling interval honoured while waiting for a client task.
const MIN_POLL: Duration = Duration::from_millis(10);
/// The longest polling interval honoured while waiting for a client task.
const MAX_POLL: Duration = Duration::from_secs(30);
/// The polling interval when the client suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// The `task` param asking for `ttl`.
fn task_metadata(ttl: Option<Duration>) -> TaskMetadata {
    let mut task = TaskMetadata::new();
    task.ttl = ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
    task
}

impl ServerSession {
    /// Asks the client's model for a completion as a task
    /// (`sampling/createMessage` with `task`, 2025-11-25): answers the
    /// client's task at once; its result is a `CreateMessageResult`
    /// ([`wait_for_client_task`](Self::wait_for_client_task)). `ttl` asks
    /// how long the client keeps it.
    ///
    /// # Errors
    /// [`Error::MissingClientCapability`] when the client did not declare
    /// `tasks.requests.sampling.createMessage` (or sampling itself);
    /// [`Error::NoServerRequests`] in the stateless era; [`Error::Request`]
    /// when the client refuses.
    pub async fn create_message_as_task(
        &self,
        params: &CreateMessageRequestParams,
        ttl: Option<Duration>,
    ) -> Result<Task, Error> {
        let method = methods::CreateMessage::NAME;
        self.check_ask(&mcp_types::InputRequest::CreateMessage(params.clone()))?;
        self.check_client_hosts(method, "tasks.requests.sampling.createMessage", |r| {
            r.sampling.as_ref().and_then(|s| s.create_message.as_ref())
        })?;
        let mut params = params.clone();
        params.task = Some(task_metadata(ttl));
        self.start_client_task::<methods::CreateMessage>(&params)
            .await
    }

    /// Asks the user through the client as a task (`elicitation/create`
    /// with `task`, 2025-11-25): answers the client's task at once; its
    /// result is an `ElicitResult`
    /// ([`wait_for_client_task`](Self::wait_for_client_task)).
    ///
    /// # Errors
    /// As [`create_message_as_task`](Self::create_message_as_task), for
    /// `tasks.requests.elicitation.create`.
    pub async fn elicit_as_task(
        &self,
        params: &ElicitRequestParams,
        ttl: Option<Duration>,
    ) -> Result<Task, Error> {
        let method = methods::Elicit::NAME;
        self.check_ask(&mcp_types::InputRequest::Elicit(params.clone()))?;
        self.check_client_hosts(method, "tasks.requests.elicitation.create", |r| {
            r.elicitation.as_ref().and_then(|e| e.create.as_ref())
        })?;
        let mut params = params.clone();
        let task = Some(task_metadata(ttl));
        match &mut params {
            ElicitRequestParams::Form(form) => form.task = task,
            ElicitRequestParams::Url(url) => url.task = task,
            // A mode this SDK does not know carries no task: the client
            // answers in the request, which is not a task (InvalidResult).
            _ => {}
        }
        self.start_client_task::<methods::Elicit>(&params).await
    }

    /// The client task's state (`tasks/get` to the client).
    ///
    /// # Errors
    /// [`Error::Request`]: an unknown task is a remote `-32602`.
    pub async fn get_client_task(&self, task_id: &str) -> Result<Task, Error> {
        let result = self
            .send_request::<methods::GetTask>(&TaskIdParams::new(task_id), SendOptions::new())
            .await?;
        Ok(result.task())
    }

    /// The answer of a client task (`tasks/result` to the client; it answers
    /// once the task ended), read as `R` (`CreateMessageResult`,
    /// `ElicitResult`).
    ///
    /// # Errors
    /// [`Error::Request`]: the task's own error when it failed;
    /// [`Error::InvalidResult`] when the answer does not fit `R`.
    pub async fn client_task_result<R: DeserializeOwned>(&self, task_id: &str) -> Result<R, Error> {
        let method = methods::GetTaskPayload::NAME;
        let params = mcp_types::RawJson::from_serialize(&TaskIdParams::new(task_id))
            .map_err(|source| Error::Serialize { method, source })?;
        let raw = self
            .peer()
            .request(method, Some(params), SendOptions::new())
            .await?;
        raw.parse()
            .map_err(|source| Error::InvalidResult { method, source })
    }

    /// One page of the client's tasks (`tasks/list` to the client).
    ///
    /// # Errors
    /// [`Error::Request`] when the client refuses.
    pub async fn list_client_tasks(
        &self,
        cursor: Option<String>,
    ) -> Result<ListTasksResult, Error> {
        let mut params = mcp_types::PaginatedRequestParams::default();
        params.cursor = cursor;
        self.send_request::<methods::ListTasks>(&Some(params), SendOptions::new())
            .await
    }

    /// Cancels a client task (`tasks/cancel` to the client); answers it,
    /// `cancelled`.
    ///
    /// # Errors
    /// [`Error::Request`]: a task already ended is a remote `-32602`.
    pub async fn cancel_client_task(&self, task_id: &str) -> Result<Task, Error> {
        let result = self
            .send_request::<methods::CancelTask>(&TaskIdParams::new(task_id), SendOptions::new())
            .await?;
        Ok(result.task())
    }

    /// Polls the client task with the interval the client suggests until it
    /// ends, then reads its answer as `R`.
    ///
    /// # Errors
    /// As [`get_client_task`](Self::get_client_task) and
    /// [`client_task_result`](Self::client_task_result).
    ///
    /// # Cancel safety
    /// Dropping the future stops polling; the client's task runs on.
    pub async fn wait_for_client_task<R: DeserializeOwned>(&self, task: &Task) -> Result<R, Error> {
        let mut task = task.clone();
        while !task.status.is_terminal() {
            let interval = task
                .poll_interval
                .map_or(DEFAULT_POLL, Duration::from_millis)
                .clamp(MIN_POLL, MAX_POLL);
            tokio::time::sleep(interval).await;
            task = self.get_client_task(&task.task_id).await?;
        }
        self.client_task_result(&task.task_id).await
    }

    /// Checks that the client hosts tasks for `method` (the entry `pick`
    /// finds in its `capabilities.tasks.requests`).
    fn check_client_hosts(
        &self,
        method: &'static str,
        capability: &'static str,
        pick: impl FnOnce(&mcp_types::ClientTaskRequests) -> Option<&mcp_types::JsonObject>,
    ) -> Result<(), Error> {
        if self.is_stateless() {
            return Err(Error::NoServerRequests { method });
        }
        let capabilities = self
            .client_capabilities()
            .ok_or(Error::NotInitialized { method })?;
        let hosted = capabilities
            .tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(pick)
            .is_some();
        if hosted {
            Ok(())
        } else {
            Err(Error::MissingClientCapability { capability, method })
        }
    }

    /// Sends a task-augmented request and reads the client's task.
    async fn start_client_task<M: Method>(&self, params: &M::Params) -> Result<Task, Error> {
        let raw =
            mcp_types::RawJson::from_serialize(params).map_err(|source| Error::Serialize {
                method: M::NAME,
                source,
            })?;
        let answer = self
            .peer()
            .request(M::NAME, Some(raw), SendOptions::new())
            .await?;
        let created: CreateTaskResult = answer.parse().map_err(|source| Error::InvalidResult {
            method: M::NAME,
            source,
        })?;
        Ok(created.task)
    }
}
