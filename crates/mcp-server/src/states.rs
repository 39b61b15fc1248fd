//! The application's states ([`ServerBuilder::with_state`](crate::ServerBuilder::with_state)):
//! plain values by type, which the registry holds and every handler's
//! [`Context`](crate::Context) reads.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// The application's states, shared by every handler.
pub(crate) type AppState = Arc<States>;

/// The states handed to [`ServerBuilder::with_state`](crate::ServerBuilder::with_state):
/// one value per type.
#[derive(Clone, Default)]
pub(crate) struct States(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl States {
    pub(crate) fn insert<S: Send + Sync + 'static>(&mut self, state: S) {
        self.0.insert(TypeId::of::<S>(), Arc::new(state));
    }

    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.0.contains_key(&type_id)
    }

    pub(crate) fn get<S: 'static>(&self) -> Option<&S> {
        self.0.get(&TypeId::of::<S>())?.downcast_ref()
    }

    pub(crate) fn shared<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.0.get(&TypeId::of::<S>())?.clone().downcast().ok()
    }
}
