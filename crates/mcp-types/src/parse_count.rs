//! Not API: a count of the parses of one watched JSON text, for tests that
//! prove a request's params are parsed once (issue 30). Compiled only with
//! the `parse-count` feature, which no crate's own build turns on: a
//! test enables it through its dev-dependency on `mcp-types`.
//!
//! Every parse of raw params goes through [`RawJson::parse`](crate::RawJson::parse),
//! which reports here the type it parsed into when the text holds the
//! watched marker; a test puts a marker no other message holds into a
//! request's params, serves the request, and reads the list.

use std::sync::{Mutex, MutexGuard};

/// The watched marker and the types each text holding it was parsed into.
struct Watch {
    marker: String,
    parses: Vec<&'static str>,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<Watch>> {
    WATCH.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts counting the parses of texts that contain `marker` (and forgets
/// any earlier watch).
pub fn watch(marker: &str) {
    *lock() = Some(Watch {
        marker: marker.to_owned(),
        parses: Vec::new(),
    });
}

/// The type names (`std::any::type_name`) the watched texts were parsed
/// into since [`watch`], in order.
pub fn parses() -> Vec<&'static str> {
    lock()
        .as_ref()
        .map(|w| w.parses.clone())
        .unwrap_or_default()
}

/// Called by every `RawJson::parse`: notes a parse of `text` into `T`.
pub(crate) fn note<T>(text: &str) {
    if let Some(watch) = lock().as_mut() {
        if text.contains(watch.marker.as_str()) {
            watch.parses.push(std::any::type_name::<T>());
        }
    }
}
