//! OpenTelemetry test support: the SDK's in-memory exporters behind our
//! layer ([`memory`]), and an OTLP/HTTP collector for child processes
//! ([`collector`]). Each test binary uses the part it needs.
#![allow(dead_code, unreachable_pub)]

pub mod collector;
pub mod memory;
