#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod record;
mod script;

pub use client::{TestClient, TestClientBuilder};
pub use mcp_client::Error;
pub use mcp_types::{Era, InputRequest};
