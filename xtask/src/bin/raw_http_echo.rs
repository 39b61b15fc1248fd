//! The raw HTTP baseline of `cargo xtask bench`: a JSON-RPC echo on hyper 1
//! (http1) and serde_json, nothing else.
//!
//! Every POST body is parsed into a `serde_json::Value`, and answered
//! `200 application/json` with `{"jsonrpc":"2.0","id":<id>,"result":{"content":
//! [{"type":"text","text":<params.arguments.message>}]}}`: the same result an
//! MCP `echo` tool sends. A GET is answered `200 text/event-stream` with a
//! body that never sends anything: the raw counterpart of an idle SSE
//! stream, for the scale rows. Accepted sockets set `TCP_NODELAY`, as any
//! HTTP server should. Prints `127.0.0.1:PORT` on stdout once it accepts.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// A response body that stays open and never yields a frame.
struct Idle;

impl hyper::body::Body for Idle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        // Nothing will ever wake it: the stream ends with its connection.
        Poll::Pending
    }
}

type Body = Either<Full<Bytes>, Idle>;

async fn echo(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    if request.method() == Method::GET {
        let mut response = Response::new(Either::Right(Idle));
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        return Ok(response);
    }
    let answer = |status: StatusCode, body: Vec<u8>| {
        let mut response = Response::new(Either::Left(Full::new(Bytes::from(body))));
        *response.status_mut() = status;
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        Ok(response)
    };
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return answer(StatusCode::BAD_REQUEST, Vec::new()),
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return answer(StatusCode::BAD_REQUEST, Vec::new());
    };
    let text = &message["params"]["arguments"]["message"];
    let response = json!({
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": {"content": [{"type": "text", "text": text}]},
    });
    match serde_json::to_vec(&response) {
        Ok(bytes) => answer(StatusCode::OK, bytes),
        Err(_) => answer(StatusCode::INTERNAL_SERVER_ERROR, Vec::new()),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    // Each connection runs until its client closes it; finished ones are
    // reaped here, and the rest end with the process when the benchmark
    // kills it.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                stream.set_nodelay(true)?;
                connections.spawn(async move {
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(echo))
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
