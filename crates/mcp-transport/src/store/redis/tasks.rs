//! Tasks on Redis (feature `redis`), the [`TaskStore`] of `mcp-tasks`
//! beside the other shared stores: each task a hash
//! `{prefix}:task:{digest of "{owner length}:{owner}:{task id}"}` with
//! fields `record` (the JSON [`TaskRecord`]) and `version`, expiring with
//! its TTL; each owner's tasks in creation order in a sorted set
//! `{prefix}:tasks:{digest of "{owner length}:{owner}"}` (digests by
//! [`RedisConfig::key`], so no owner, which may name a session, shows in a
//! key listing). A transition reads the record,
//! applies the state machine ([`apply`]) here and
//! writes it back only if its version is unchanged (a compare-and-set
//! script), so two processes never both move a task.

use std::sync::Arc;

use mcp_tasks::{
    DEFAULT_MAX_TASKS, StoreFuture, TaskPage, TaskRecord, TaskStore, TaskStoreError, TaskUpdate,
    apply, cursor_after, cursor_at,
};

use super::{RedisConfig, RedisConnection, bounded};
use crate::Error;

/// Writes `record` as version `ARGV[3]` if the stored version is `ARGV[1]`.
const CAS: &str = "if redis.call('HGET', KEYS[1], 'version') == ARGV[1] then \
    redis.call('HSET', KEYS[1], 'record', ARGV[2], 'version', ARGV[3]) return 1 \
    else return 0 end";
/// How often a transition retries when another process changed the task
/// between its read and its write.
const CAS_ATTEMPTS: usize = 16;

/// The Redis [`TaskStore`].
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: RedisConnection,
    config: Arc<RedisConfig>,
    max_tasks: usize,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("max_tasks", &self.max_tasks)
            .finish_non_exhaustive()
    }
}

fn backend(error: Error) -> TaskStoreError {
    TaskStoreError::Backend(Box::new(error))
}

fn unreadable(error: serde_json::Error) -> TaskStoreError {
    backend(Error::StoreData {
        store: "task",
        source: error,
    })
}

impl RedisTaskStore {
    /// A store on the Redis of `config` (its prefix, its timeout), keeping
    /// at most [`DEFAULT_MAX_TASKS`] tasks per owner.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(config: RedisConfig) -> Result<Self, Error> {
        let connection = config.connection().await?;
        Ok(Self {
            connection,
            config: Arc::new(config),
            max_tasks: DEFAULT_MAX_TASKS,
        })
    }

    /// At most `max_tasks` live tasks per owner.
    pub fn with_max_tasks(mut self, max_tasks: usize) -> Self {
        self.max_tasks = max_tasks.max(1);
        self
    }

    fn task_key(&self, owner: &str, task_id: &str) -> String {
        // The owner's length keeps owner and id apart whatever they hold.
        self.config
            .key("task", &format!("{}:{owner}:{task_id}", owner.len()))
    }

    /// How many tasks the owner's list `list` holds (expired ones included
    /// until a listing drops them).
    async fn live_tasks(&self, list: &str) -> Result<usize, TaskStoreError> {
        bounded(
            &self.config,
            "task",
            "count tasks",
            redis::cmd("ZCARD")
                .arg(list)
                .query_async(&mut self.connection.clone()),
        )
        .await
        .map_err(backend)
    }

    fn list_key(&self, owner: &str) -> String {
        self.config
            .key("tasks", &format!("{}:{owner}", owner.len()))
    }

    async fn read(
        &self,
        owner: &str,
        task_id: &str,
    ) -> Result<Option<(TaskRecord, u64)>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(self.task_key(owner, task_id))
            .arg("record")
            .arg("version");
        let (json, version): (Option<String>, Option<u64>) = bounded(
            &self.config,
            "task",
            "read a task",
            cmd.query_async(&mut connection),
        )
        .await
        .map_err(backend)?;
        let Some(json) = json else {
            return Ok(None);
        };
        let record = serde_json::from_str(&json).map_err(unreadable)?;
        Ok(Some((record, version.unwrap_or(0))))
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let list = self.list_key(&record.owner);
            let mut live = self.live_tasks(&list).await?;
            if live >= self.max_tasks {
                // Entries of expired tasks linger in the list until a
                // listing drops them; a full list is checked once.
                self.list(&record.owner, None, self.max_tasks).await?;
                live = self.live_tasks(&list).await?;
            }
            TaskStoreError::check_room(live, self.max_tasks, "RedisTaskStore::with_max_tasks")?;
            let json = serde_json::to_string(&record).map_err(unreadable)?;
            let key = self.task_key(&record.owner, &record.task_id);
            let sequence = self.config.key("task-sequence", "");
            let order: u64 = bounded(
                &self.config,
                "task",
                "number a task",
                redis::cmd("INCR")
                    .arg(&sequence)
                    .query_async(&mut connection),
            )
            .await
            .map_err(backend)?;
            let mut pipe = redis::pipe();
            pipe.atomic()
                .hset_multiple(&key, &[("record", json), ("version", "0".to_owned())])
                .ignore();
            if let Some(ttl) = record.ttl_ms {
                pipe.pexpire(&key, i64::try_from(ttl).unwrap_or(i64::MAX))
                    .ignore();
            }
            pipe.zadd(&list, &record.task_id, order).ignore();
            bounded(
                &self.config,
                "task",
                "create a task",
                pipe.exec_async(&mut connection),
            )
            .await
            .map_err(backend)
        })
    }

    fn get<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { Ok(self.read(owner, task_id).await?.map(|(r, _)| r)) })
    }

    fn transition<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, Result<TaskRecord, TaskStoreError>> {
        Box::pin(async move {
            let key = self.task_key(owner, task_id);
            for _ in 0..CAS_ATTEMPTS {
                let Some((mut record, version)) = self.read(owner, task_id).await? else {
                    return Err(TaskStoreError::not_found(task_id));
                };
                apply(&mut record, update.clone(), now_ms)?;
                let json = serde_json::to_string(&record).map_err(unreadable)?;
                let mut connection = self.connection.clone();
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(CAS)
                    .arg(1)
                    .arg(&key)
                    .arg(version)
                    .arg(json)
                    .arg(version + 1);
                let written: u64 = bounded(
                    &self.config,
                    "task",
                    "update a task",
                    cmd.query_async(&mut connection),
                )
                .await
                .map_err(backend)?;
                if written == 1 {
                    return Ok(record);
                }
            }
            Err(backend(Error::StoreTimeout {
                store: "task",
                operation: "update a task other processes keep changing",
                after: self.config_timeout(),
            }))
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskStoreError>> {
        Box::pin(async move {
            let limit = limit.max(1);
            let list = self.list_key(owner);
            let min = cursor_after(cursor).map_or_else(|| "-inf".to_owned(), |a| format!("({a}"));
            let mut connection = self.connection.clone();
            let mut cmd = redis::cmd("ZRANGEBYSCORE");
            cmd.arg(&list)
                .arg(min)
                .arg("+inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(limit + 1);
            let ids: Vec<(String, u64)> = bounded(
                &self.config,
                "task",
                "list tasks",
                cmd.query_async(&mut connection),
            )
            .await
            .map_err(backend)?;
            let more = ids.len() > limit;
            let mut page = TaskPage::default();
            let mut last = None;
            for (task_id, order) in ids.into_iter().take(limit) {
                match self.read(owner, &task_id).await? {
                    Some((record, _)) => page.tasks.push(record),
                    None => {
                        // Expired: its list entry goes too.
                        let mut cmd = redis::cmd("ZREM");
                        cmd.arg(&list).arg(&task_id);
                        let _ = bounded(
                            &self.config,
                            "task",
                            "drop an expired task",
                            cmd.query_async::<u64>(&mut connection),
                        )
                        .await;
                    }
                }
                last = Some(order);
            }
            if more {
                page.next_cursor = last.map(cursor_at);
            }
            Ok(page)
        })
    }
}

impl RedisTaskStore {
    fn config_timeout(&self) -> std::time::Duration {
        self.config.timeout_duration()
    }
}
