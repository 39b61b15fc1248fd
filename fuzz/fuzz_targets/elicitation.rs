//! The elicitation schema reader: a server's `elicitation/create` params
//! (form or URL mode, the flat form schema and every kind of field), and
//! the client's `ElicitResult` answer the server reads back.
//!
//! Checks: no panic; what reads, writes and reads back as itself (floats
//! within a rounding error: serde_json's default float parsing is not
//! correctly rounded, so a written float may read back one bit off).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_types::{ElicitRequestParams, ElicitResult, PrimitiveSchemaDefinition};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    round_trip::<ElicitRequestParams>(data);
    round_trip::<PrimitiveSchemaDefinition>(data);
    round_trip::<ElicitResult>(data);
});

fn round_trip<T: Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<T>(data) else {
        return;
    };
    let bytes = serde_json::to_vec(&value).expect("what was read writes");
    let again: T = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{} does not read back: {e}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let (first, second) = (
        serde_json::to_value(&value).expect("a value"),
        serde_json::to_value(&again).expect("a value"),
    );
    assert!(same(&first, &second), "{first} read back as {second}");
}

/// Equal, floats within a relative 1e-12.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
