//! The guide (`docs/guide/*.md`) as doc tests: every Rust block of every
//! chapter compiles in `cargo test --workspace`, and runs unless it is
//! marked `no_run` (blocks that serve stdio or bind a port). A chapter is
//! one line here; its blocks may use this crate's dependencies and
//! dev-dependencies.

#[doc = include_str!("../docs/guide/index.md")]
mod index {}
#[doc = include_str!("../docs/guide/quickstart-server.md")]
mod quickstart_server {}
#[doc = include_str!("../docs/guide/quickstart-host.md")]
mod quickstart_host {}
#[doc = include_str!("../docs/guide/tools.md")]
mod tools {}
#[doc = include_str!("../docs/guide/resources.md")]
mod resources {}
#[doc = include_str!("../docs/guide/prompts.md")]
mod prompts {}
#[doc = include_str!("../docs/guide/asking-the-client.md")]
mod asking_the_client {}
#[doc = include_str!("../docs/guide/http.md")]
mod http {}
#[doc = include_str!("../docs/guide/authorization.md")]
mod authorization {}
#[doc = include_str!("../docs/guide/browser.md")]
mod browser {}
#[doc = include_str!("../docs/guide/observability.md")]
mod observability {}
#[doc = include_str!("../docs/guide/testing.md")]
mod testing {}
#[doc = include_str!("../docs/guide/deployment.md")]
mod deployment {}
#[doc = include_str!("../docs/guide/cli.md")]
mod cli {}
#[doc = include_str!("../docs/guide/gateway.md")]
mod gateway {}
#[doc = include_str!("../docs/guide/extensions.md")]
mod extensions {}
#[doc = include_str!("../docs/guide/porting.md")]
mod porting {}
