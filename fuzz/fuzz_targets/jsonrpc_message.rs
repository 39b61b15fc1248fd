//! The JSON-RPC envelope decoder every transport runs on a peer's bytes:
//! `JsonRpcMessage::from_slice` and, for 2025-03-26 batches,
//! `JsonRpcPayload::from_slice`.
//!
//! Checks: no panic; both decoders agree on a single message; a decoded
//! message encodes on one line within `encoded_len_bound` and decodes back
//! to itself; every refusal builds its error answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_types::{DecodeErrorKind, JsonRpcMessage, JsonRpcPayload};

fuzz_target!(|data: &[u8]| {
    let single = JsonRpcMessage::from_slice(data);
    let payload = JsonRpcPayload::from_slice(data);
    match (&single, &payload) {
        (Ok(message), Ok(JsonRpcPayload::Single(same))) => assert_eq!(message, same),
        (Ok(_), other) => panic!("a message the batch decoder read otherwise: {other:?}"),
        (Err(error), Ok(JsonRpcPayload::Batch(members))) => {
            assert_eq!(error.kind, DecodeErrorKind::Batch);
            assert!(!members.is_empty());
        }
        (Err(error), Ok(JsonRpcPayload::Single(_))) => {
            panic!("only the batch decoder read it: {error}")
        }
        // An array the single decoder refuses for its syntax or encoding
        // is refused alike as a batch, without its first member's id.
        (Err(error), Err(again)) if error.kind != DecodeErrorKind::Batch => {
            if data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
                assert_eq!((error.kind, &error.message), (again.kind, &again.message));
                assert_eq!(again.answer_id(), None);
            } else {
                assert_eq!(error, again)
            }
        }
        (Err(_), Err(again)) => assert_eq!(again.answer_id(), None),
    }
    let errors = [single.as_ref().err(), payload.as_ref().err()];
    for error in errors.into_iter().flatten() {
        serde_json::to_vec(&error.to_response()).expect("an error answer encodes");
    }
    if let Ok(message) = &single {
        round_trip(message);
    }
    if let Ok(JsonRpcPayload::Batch(members)) = &payload {
        members.iter().for_each(round_trip);
    }
});

fn round_trip(message: &JsonRpcMessage) {
    let bytes = message.to_vec().expect("a decoded message encodes");
    assert!(
        bytes.len() < message.encoded_len_bound(),
        "encoded_len_bound {} under the encoding's {} bytes and a newline",
        message.encoded_len_bound(),
        bytes.len()
    );
    assert!(
        !bytes.iter().any(|b| matches!(b, b'\n' | b'\r')),
        "an encoded message holds a line break: {}",
        String::from_utf8_lossy(&bytes)
    );
    let again = JsonRpcMessage::from_slice(&bytes).expect("an encoded message decodes");
    assert_eq!(&again, message);
}
