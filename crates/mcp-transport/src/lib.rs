#![doc = include_str!("../README.md")]
#![doc = document_features::document_features!()]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
#[cfg(feature = "stdio")]
mod framing;
#[cfg(feature = "stdio")]
pub mod stdio;

#[cfg(any(feature = "http-server", feature = "http-client"))]
pub mod http;
#[cfg(feature = "http-server")]
pub mod store;

pub use error::Error;
#[cfg(feature = "stdio")]
pub use framing::{DEFAULT_MAX_LINE, LineReceiver, LineSender, LineTransport};
