//! The extension framework (SEP-2133) end to end, our client against our
//! server, in memory and over HTTP, in both eras: an extension the client
//! did not declare stays invisible, a claimed result reaches the caller
//! typed, and a notification binding receives a vendor notification.

mod common;

use std::time::Duration;

use mcp_client::extension::{ExtensionConfigError, ResultClaim, ToolOutcome};
use mcp_client::{Client, ClientConfig, Error, RequestOptions};
use mcp_server::extension::{CallOutcome, Extension};
use mcp_server::{Args, Context, Server};
use mcp_types::{ErrorCode, ErrorObject, JsonObject, Method, RequestMethod, Revision};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const RECEIPTS: &str = "com.example/receipts";

/// `receipts/count`: a request method of the extension.
#[derive(Debug, Clone, Copy)]
enum CountReceipts {}

impl Method for CountReceipts {
    const NAME: &'static str = "receipts/count";
    const PARAMS_OPTIONAL: bool = true;
    type Params = Option<JsonObject>;
    fn absent_params() -> Option<Self::Params> {
        Some(None)
    }
    fn is_absent(params: &Self::Params) -> bool {
        params.is_none()
    }
}

impl RequestMethod for CountReceipts {
    type Result = JsonObject;
}

/// A vendor notification marker carrying [`PrintedParams`].
macro_rules! receipt_notification {
    ($(#[$doc:meta])* $marker:ident = $wire:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        enum $marker {}

        impl Method for $marker {
            const NAME: &'static str = $wire;
            const PARAMS_OPTIONAL: bool = false;
            type Params = PrintedParams;
            fn absent_params() -> Option<Self::Params> {
                None
            }
            fn is_absent(_: &Self::Params) -> bool {
                false
            }
        }

        impl mcp_types::NotificationMethod for $marker {}
    };
}

receipt_notification! {
    /// `notifications/receipts/printed`: from the server to the client.
    Printed = "notifications/receipts/printed"
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct PrintedParams {
    receipt: String,
}

/// The extension's own `tools/call` result shape.
#[derive(Debug, serde::Deserialize)]
struct Receipt {
    receipt: String,
}

impl ResultClaim for Receipt {
    const EXTENSION: &'static str = RECEIPTS;
    const RESULT_TYPE: &'static str = "receipt";
    const SINCE: Revision = Revision::V2025_06_18;
}

/// The same shape, claimed only from 2026-07-28 on.
#[derive(Debug, serde::Deserialize)]
struct ModernReceipt {
    #[allow(dead_code)]
    receipt: String,
}

impl ResultClaim for ModernReceipt {
    const EXTENSION: &'static str = RECEIPTS;
    const RESULT_TYPE: &'static str = "receipt";
    const SINCE: Revision = Revision::V2026_07_28;
}

/// The arguments of `buy`: `receipt` asks the interceptor for a receipt.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Buy {
    /// Ask for a receipt instead of a plain result.
    #[serde(default)]
    #[allow(dead_code)]
    receipt: bool,
}

async fn count_receipts() -> Result<JsonObject, ErrorObject> {
    let mut result = JsonObject::new();
    result.insert("count".into(), 3.into());
    Ok(result)
}

fn server() -> Server {
    let receipts = Extension::new(RECEIPTS)
        .expect("identifier")
        .tool("print", "Prints a receipt", |cx: Context| async move {
            let params = serde_json::value::to_raw_value(&json!({"receipt": "r-7"}))
                .map(mcp_types::RawJson::from);
            cx.session()
                .peer()
                .notify(Printed::NAME, params.ok())
                .await
                .map(|()| "printed".to_owned())
                .map_err(|e| mcp_server::ToolError::new(e.to_string()))
        })
        .request::<CountReceipts, _, _>(count_receipts)
        .intercept_tool_calls(|call, cx: Context| async move {
            let wants = call
                .params()
                .arguments
                .as_ref()
                .and_then(|a| a.get("receipt"))
                .and_then(Value::as_bool)
                == Some(true);
            if wants && cx.client_supports_extension(RECEIPTS) {
                let mut result = JsonObject::new();
                result.insert("resultType".into(), "receipt".into());
                result.insert("receipt".into(), format!("r-for-{}", call.name()).into());
                return Ok(CallOutcome::Extension(result));
            }
            call.proceed().await
        });
    Server::builder("extensions-test", "1")
        .tool("buy", "Buys", |Args(_): Args<Buy>| async move { "bought" })
        .extension(receipts)
        .build()
        .expect("server")
}

/// How a test reaches the server.
#[derive(Debug, Clone, Copy)]
enum Wire {
    Memory,
    Http,
}

const WIRES: [Wire; 2] = [Wire::Memory, Wire::Http];
const ERAS: [Revision; 2] = [Revision::V2025_11_25, Revision::V2026_07_28];

async fn connect(
    wire: Wire,
    config: ClientConfig,
) -> (Client, Option<tokio::sync::oneshot::Sender<()>>) {
    let connected = match wire {
        Wire::Memory => (Client::connect(server().in_memory(), config).await, None),
        Wire::Http => {
            let (url, stop) = common::serve_http(server()).await;
            (Client::connect_http(&url, config).await, Some(stop))
        }
    };
    (connected.0.expect("connected"), connected.1)
}

fn config(revision: Revision) -> ClientConfig {
    ClientConfig::new("extensions-client", "1")
        .protocol_version(revision)
        .request_timeout(Duration::from_secs(10))
}

async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("listed")
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[tokio::test]
async fn an_extension_the_client_did_not_declare_stays_invisible() {
    for wire in WIRES {
        for revision in ERAS {
            let what = format!("{wire:?} at {revision}");
            let (client, _stop) = connect(wire, config(revision)).await;
            assert_eq!(client.protocol_version(), revision, "{what}");
            assert!(
                client.server_supports_extension(RECEIPTS),
                "{what}: advertised"
            );
            assert_eq!(tool_names(&client).await, ["buy"], "{what}");
            let error = client
                .request::<CountReceipts>(&None, RequestOptions::new())
                .await
                .expect_err("not negotiated");
            let remote = error.remote().expect("a remote error");
            assert_eq!(
                remote.code,
                ErrorCode::METHOD_NOT_FOUND,
                "{what}: {remote:?}"
            );
            let error = client
                .call_tool("print", json!({}))
                .await
                .expect_err("hidden");
            assert_eq!(
                error.remote().map(|e| e.code),
                Some(ErrorCode::INVALID_PARAMS),
                "{what}: {error}"
            );
            // The interceptor leaves a client that did not declare it alone.
            let plain = client
                .call_tool("buy", json!({"receipt": true}))
                .await
                .expect("called");
            assert_eq!(plain.is_error, None, "{what}");
            client.close().await.expect("closed");

            let declared = config(revision)
                .extension(RECEIPTS, JsonObject::new())
                .expect("identifier");
            let (client, _stop) = connect(wire, declared).await;
            assert_eq!(tool_names(&client).await, ["buy", "print"], "{what}");
            let count = client
                .request::<CountReceipts>(&None, RequestOptions::new())
                .await
                .expect("served once declared");
            assert_eq!(count.get("count"), Some(&json!(3)), "{what}");
            client.close().await.expect("closed");
        }
    }
}

#[tokio::test]
async fn a_claimed_result_reaches_the_caller_typed() {
    for wire in WIRES {
        for revision in ERAS {
            let what = format!("{wire:?} at {revision}");
            let claiming = config(revision).claim::<Receipt>().expect("claim");
            let (client, _stop) = connect(wire, claiming).await;
            let outcome = client
                .call_tool_claimed("buy", json!({"receipt": true}), RequestOptions::new())
                .await
                .expect("called");
            let ToolOutcome::Claimed(claimed) = outcome else {
                panic!("{what}: not claimed: {outcome:?}");
            };
            assert_eq!(claimed.extension(), RECEIPTS);
            let receipt = claimed.downcast::<Receipt>().expect("a receipt");
            assert_eq!(receipt.receipt, "r-for-buy", "{what}");
            // Plain call_tool refuses it, carrying the parsed value.
            let error = client
                .call_tool("buy", json!({"receipt": true}))
                .await
                .expect_err("claimed");
            let Error::UnexpectedClaimedResult { result } = error else {
                panic!("{what}: {error}");
            };
            assert_eq!(
                result.downcast_ref::<Receipt>().map(|r| r.receipt.as_str()),
                Some("r-for-buy")
            );
            // An unclaimed answer is the tool's own.
            let outcome = client
                .call_tool_claimed("buy", json!({}), RequestOptions::new())
                .await
                .expect("called");
            assert!(matches!(outcome, ToolOutcome::Complete(_)), "{what}");
            client.close().await.expect("closed");
        }
    }
}

#[tokio::test]
async fn an_extension_whose_claims_are_inactive_is_not_advertised() {
    let config = config(Revision::V2025_11_25)
        .claim::<ModernReceipt>()
        .expect("claim");
    assert!(
        config
            .capabilities_at(Revision::V2025_11_25)
            .extensions
            .is_none()
    );
    assert!(
        config
            .capabilities_at(Revision::V2026_07_28)
            .extensions
            .is_some_and(|e| e.contains_key(RECEIPTS))
    );
    let (client, _stop) = connect(Wire::Memory, config).await;
    // Not advertised at 2025-11-25, so the server keeps the extension hidden.
    assert_eq!(tool_names(&client).await, ["buy"]);
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_notification_binding_receives_a_vendor_notification() {
    for wire in WIRES {
        for revision in ERAS {
            let what = format!("{wire:?} at {revision}");
            let (seen, mut received) = mpsc::channel(4);
            let bound = config(revision)
                .extension(RECEIPTS, JsonObject::new())
                .expect("identifier")
                .bind_notification::<Printed, _, _>(move |params: PrintedParams| {
                    let seen = seen.clone();
                    async move {
                        let _ = seen.send(params.receipt).await;
                    }
                })
                .expect("bound");
            let (client, _stop) = connect(wire, bound).await;
            let result = client.call_tool("print", json!({})).await.expect("printed");
            assert_eq!(result.is_error, None, "{what}");
            let receipt = tokio::time::timeout(Duration::from_secs(10), received.recv())
                .await
                .expect("delivered in time")
                .expect("a receipt");
            assert_eq!(receipt, "r-7", "{what}");
            client.close().await.expect("closed");
        }
    }
}

#[test]
fn claims_and_bindings_refuse_mistakes() {
    #[derive(serde::Deserialize)]
    struct Complete;
    impl ResultClaim for Complete {
        const EXTENSION: &'static str = RECEIPTS;
        const RESULT_TYPE: &'static str = "complete";
        const SINCE: Revision = Revision::V2026_07_28;
    }
    assert_eq!(
        ClientConfig::new("c", "1").claim::<Complete>().err(),
        Some(ExtensionConfigError::CoreResultType {
            extension: RECEIPTS,
            result_type: "complete"
        })
    );
    assert_eq!(
        ClientConfig::new("c", "1")
            .claim::<Receipt>()
            .and_then(|c| c.claim::<ModernReceipt>())
            .err(),
        Some(ExtensionConfigError::DuplicateClaim {
            result_type: "receipt"
        })
    );
    let invalid = ClientConfig::new("c", "1")
        .extension("receipts", JsonObject::new())
        .err()
        .expect("an identifier without a vendor prefix is refused");
    assert_eq!(invalid.id, "receipts");
    let twice = ClientConfig::new("c", "1")
        .bind_notification::<Printed, _, _>(|_| async {})
        .and_then(|c| c.bind_notification::<Printed, _, _>(|_| async {}));
    assert_eq!(
        twice.err(),
        Some(ExtensionConfigError::DuplicateBinding {
            method: Printed::NAME
        })
    );
}

receipt_notification! {
    /// `notifications/receipts/torn`: from the client to the server.
    Torn = "notifications/receipts/torn"
}

#[tokio::test]
async fn a_server_extension_receives_its_notifications_from_a_client_that_declared_it() {
    for wire in WIRES {
        let (torn, mut received) = mpsc::channel::<String>(4);
        let listening = Extension::new(RECEIPTS)
            .expect("identifier")
            .notification::<Torn, _, _>(move |params, _session| {
                let torn = torn.clone();
                async move {
                    let _ = torn.send(params.receipt).await;
                }
            });
        let server = Server::builder("notified", "1")
            .extension(listening)
            .build()
            .expect("server");
        let declared = config(Revision::V2025_11_25)
            .extension(RECEIPTS, JsonObject::new())
            .expect("identifier");
        let (client, _stop) = match wire {
            Wire::Memory => (
                Client::connect(server.in_memory(), declared)
                    .await
                    .expect("connected"),
                None,
            ),
            Wire::Http => {
                let (url, stop) = common::serve_http(server).await;
                (
                    Client::connect_http(&url, declared)
                        .await
                        .expect("connected"),
                    Some(stop),
                )
            }
        };
        let params = PrintedParams {
            receipt: "r-9".into(),
        };
        client.notify::<Torn>(&params).await.expect("sent");
        let receipt = tokio::time::timeout(Duration::from_secs(10), received.recv())
            .await
            .expect("delivered in time")
            .expect("a receipt");
        assert_eq!(receipt, "r-9", "{wire:?}");
        client.close().await.expect("closed");
    }
}
