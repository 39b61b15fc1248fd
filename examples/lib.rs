//! Runnable examples of the MCP SDK; each file beside this one is one example.
//! List them with `cargo run --example` (no name).
