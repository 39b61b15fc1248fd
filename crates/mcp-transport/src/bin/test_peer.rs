//! A JSON-RPC peer for tests and benchmarks of the stdio transport.
//!
//! `mcp-transport-test-peer [--max-line BYTES]` serves through the dispatcher
//! on stdin/stdout: `echo` answers its params (after `delay_ms`), `hang` never
//! answers, `crash` exits mid-request, `pid` tells its process id.
//! `mcp-transport-test-peer --raw` is the baseline for the benchmark: a plain
//! tokio + serde_json echo with no framework.

use std::time::Duration;

use mcp_core::{
    Connection, DispatcherConfig, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext,
};
use mcp_transport::LineTransport;
use mcp_types::{ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};

struct Peer;

impl Handler for Peer {
    async fn handle_request(
        &self,
        request: IncomingRequest,
        _: RequestContext,
    ) -> Result<RawJson, ErrorObject> {
        match request.method.as_str() {
            "echo" => {
                if let Some(params) = &request.params {
                    if let Ok(Value::Object(map)) = params.parse::<Value>() {
                        if let Some(delay) = map.get("delay_ms").and_then(Value::as_u64) {
                            tokio::time::sleep(Duration::from_millis(delay)).await;
                        }
                    }
                }
                Ok(request.params.unwrap_or_else(RawJson::empty_object))
            }
            "hang" => std::future::pending().await,
            "crash" => std::process::exit(3),
            "pid" => RawJson::from_serialize(&json!({"pid": std::process::id()}))
                .map_err(|e| ErrorObject::internal_error(e.to_string())),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _: IncomingNotification, _: NotificationContext) {}
}

async fn raw_echo() -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut out = BufWriter::with_capacity(64 * 1024, tokio::io::stdout());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).await? == 0 {
            return out.flush().await;
        }
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": request["params"]});
        let mut bytes = serde_json::to_vec(&response)?;
        bytes.push(b'\n');
        out.write_all(&bytes).await?;
        // Write out once the input is drained, as any sensible echo would.
        if input.buffer().is_empty() {
            out.flush().await?;
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--raw") {
        if let Err(error) = raw_echo().await {
            eprintln!("raw echo failed: {error}");
        }
        return;
    }
    let max_line = args
        .iter()
        .position(|a| a == "--max-line")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(mcp_transport::DEFAULT_MAX_LINE);
    let transport = LineTransport::with_max_line(tokio::io::stdin(), tokio::io::stdout(), max_line);
    let connection = Connection::start(transport, Peer, DispatcherConfig::default());
    connection.wait().await;
}
