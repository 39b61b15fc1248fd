//! The dispatcher's per-key rate limit: a connection over its limit is
//! answered with RATE_LIMITED, and a connection with its own key is not.

use std::sync::Arc;

use mcp_core::limit::{Limiter, RateLimit};
use mcp_core::{
    Connection, DispatcherConfig, Error, Handler, IncomingNotification, IncomingRequest,
    MemoryTransport, NotificationContext, RequestContext, SendOptions,
};
use mcp_types::{ErrorCode, ErrorObject, RawJson};

struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        _: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        Ok(RawJson::empty_object())
    }
    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

#[tokio::test]
async fn a_connection_over_its_rate_is_refused_and_another_is_not() {
    // One limiter shared by two server connections: each has its own key.
    let limiter = Arc::new(Limiter::new(RateLimit::per_minute(2)));
    let config = DispatcherConfig::default().with_rate_limit(limiter);
    let (a_server, a_client) = MemoryTransport::pair(16);
    let (b_server, b_client) = MemoryTransport::pair(16);
    let servers = [
        Connection::start(a_server, Echo, config.clone()),
        Connection::start(b_server, Echo, config),
    ];
    let a = Connection::start(a_client, Echo, DispatcherConfig::default());
    let b = Connection::start(b_client, Echo, DispatcherConfig::default());
    for _ in 0..2 {
        a.peer()
            .request("ping", None, SendOptions::new())
            .await
            .expect("within the limit");
    }
    let refused = a
        .peer()
        .request("ping", None, SendOptions::new())
        .await
        .expect_err("over the limit");
    let Error::Remote(error) = refused else {
        panic!("expected the server's error, got {refused:?}");
    };
    assert_eq!(error.code, ErrorCode::RATE_LIMITED);
    let data = error.data.expect("retry data");
    assert!(data["retryAfterSeconds"].as_u64().is_some_and(|s| s >= 1));
    assert_eq!(data["limit"], "rate");
    b.peer()
        .request("ping", None, SendOptions::new())
        .await
        .expect("another connection has its own allowance");
    a.shutdown().await;
    b.shutdown().await;
    for server in servers {
        server.wait().await;
    }
}
