//! Notification bindings: each bound vendor notification's bounded FIFO
//! and the task that drains it into the host's handler.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use mcp_core::BoxFuture;
use mcp_types::RawJson;
use tokio::sync::Notify;

/// The default capacity of each notification binding's FIFO.
pub const DEFAULT_BINDING_QUEUE: usize = 64;

pub(crate) type BindingFn = Arc<dyn Fn(Option<RawJson>) -> BoxFuture<()> + Send + Sync>;

/// One notification binding: its handler and FIFO capacity.
#[derive(Clone)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    pub(crate) handler: BindingFn,
    pub(crate) capacity: usize,
}

/// A binding's FIFO between the connection's reader and its consumer task.
pub(crate) struct BindingQueue {
    binding: Binding,
    queue: Mutex<VecDeque<Option<RawJson>>>,
    ready: Notify,
}

impl BindingQueue {
    /// Enqueues without waiting (the reader must never block); drops the
    /// oldest when full.
    pub(crate) fn push(&self, params: Option<RawJson>) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.len() >= self.binding.capacity {
            queue.pop_front();
            tracing::warn!(
                method = self.binding.method,
                capacity = self.binding.capacity,
                "notification queue is full; dropped the oldest notification (raise the capacity \
                 given to ClientConfig::bind_notification_with_capacity, or make the handler faster)"
            );
        }
        queue.push_back(params);
        drop(queue);
        self.ready.notify_one();
    }

    /// Delivers queued notifications to the handler, in order, forever.
    async fn drain(self: Arc<Self>) {
        loop {
            let next = self
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front();
            match next {
                Some(params) => (self.binding.handler)(params).await,
                None => self.ready.notified().await,
            }
        }
    }
}

/// The bindings of a session, with their running consumers.
pub(crate) struct Bindings {
    pub(crate) queues: HashMap<&'static str, Arc<BindingQueue>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Bindings {
    /// Starts one consumer task per binding; they end when the session
    /// closes or is dropped.
    pub(crate) fn start(bindings: &[Binding]) -> Self {
        let mut queues = HashMap::new();
        let mut tasks = Vec::new();
        for binding in bindings {
            let queue = Arc::new(BindingQueue {
                binding: binding.clone(),
                queue: Mutex::new(VecDeque::new()),
                ready: Notify::new(),
            });
            tasks.push(tokio::spawn(queue.clone().drain()));
            queues.insert(binding.method, queue);
        }
        Self { queues, tasks }
    }

    /// Stops the consumers and waits for them.
    pub(crate) async fn stop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
    }
}

impl Drop for Bindings {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(n: u32) -> Option<RawJson> {
        Some(RawJson::from_serialize(&n).expect("json"))
    }

    #[test]
    fn a_full_binding_queue_drops_its_oldest_notification() {
        let handler: BindingFn = Arc::new(|_| Box::pin(async {}));
        let queue = BindingQueue {
            binding: Binding {
                method: "com.example/ping",
                handler,
                capacity: 2,
            },
            queue: Mutex::new(VecDeque::new()),
            ready: Notify::new(),
        };
        for n in 1..=3 {
            queue.push(raw(n));
        }
        let kept: Vec<_> = queue.queue.lock().expect("queue").drain(..).collect();
        assert_eq!(kept, [raw(2), raw(3)], "the oldest is dropped, order kept");
    }
}
