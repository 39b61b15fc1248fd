//! `mcp gateway`: the servers of `--stdio`, `--url` or `--config` served
//! as one, over streamable HTTP (`--listen`) and/or stdio (`--stdio-out`),
//! until stdin closes (with `--stdio-out`), Ctrl-C or SIGTERM; then every
//! upstream process is stopped and reaped.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_client::ClientConfig;
use mcp_gateway::naming::EntryKind;
use mcp_gateway::{Gateway, GatewayConfig, GatewayHttpService, UpstreamConfig, UpstreamTransport};
use mcp_server::{CancellationToken, HttpServerConfig, ServeConfig, Server};
use mcp_transport::http::{BearerGuard, Health, HttpBody};

use crate::args::{Era, GatewayArgs, ServerArgs};
use crate::connect::{authorizer, headers, stdio_command};
use crate::deploy::Deploy;
use crate::error::{CliError, UsageError};

/// The upstream's name when there is one, from `--stdio` or `--url`.
const SINGLE: &str = "server";

/// Runs the gateway until it is told to stop; 0 when it stopped cleanly.
pub(crate) async fn run(server: &ServerArgs, args: &GatewayArgs) -> Result<u8, CliError> {
    if args.listen.is_none() && !args.stdio_out {
        return Err(UsageError::Gateway(
            "say where to serve: --listen ADDR (streamable HTTP) and/or --stdio-out",
        )
        .into());
    }
    let (config, single, file) = config(server, args)?;
    let deploy = Deploy::read(
        file.as_ref()
            .zip(args.config.as_deref())
            .map(|(root, path)| (path, root)),
        args,
    )?;
    // Held to the end: dropping it flushes the spans.
    let _telemetry = crate::log::init()?;
    // Redis is reached before anything starts: a replica that cannot
    // share its sessions serves none.
    let http = match args.listen {
        Some(_) => {
            let hosts = args.allowed_hosts.iter();
            let base = hosts.fold(HttpServerConfig::new(), |config, host| {
                config.allow_host(host.clone())
            });
            Some(deploy.http(base).await?)
        }
        None => None,
    };
    let connect_timeout = config.limits.connect_timeout;
    let version = env!("CARGO_PKG_VERSION");
    let mut builder = Gateway::builder(config).client(ClientConfig::new("mcp-gateway", version));
    if single {
        // One server: its names as they are.
        builder = builder.naming(|_: &str, _: EntryKind, name: &str| name.to_owned());
    }
    if let (Some(url), None) = (&server.url, &args.config) {
        // Signed in as the other commands are (tokens kept per server),
        // when the server asks for it.
        builder = builder.authorizer(SINGLE, authorizer(url, server.no_browser)?);
    }
    if !args.ready.is_empty() {
        builder = builder.ready_requires(args.ready.iter().cloned());
    }
    let gateway = builder.start().map_err(|e| gateway_error("starting", e))?;
    // A client that connects at once (a host over stdio does) sees every
    // upstream's entries: serve once they connected, or after the connect
    // timeout with what there is (the rest is announced as it comes).
    if tokio::time::timeout(connect_timeout, gateway.ready())
        .await
        .is_err()
    {
        tracing::warn!(
            "not every upstream connected within {connect_timeout:?}; serving what there is"
        );
    }
    let served = serve(&gateway, args, &deploy, http).await;
    gateway.shutdown().await;
    served.map(|()| 0)
}

/// Serves until stdin closes (`--stdio-out`), Ctrl-C or SIGTERM.
async fn serve(
    gateway: &Gateway,
    args: &GatewayArgs,
    deploy: &Deploy,
    http: Option<HttpServerConfig>,
) -> Result<(), CliError> {
    let version = env!("CARGO_PKG_VERSION");
    let server = gateway
        .server(deploy.server(Server::builder("mcp-gateway", version)))
        .map_err(|e| gateway_error("building its server", e))?;
    let stop = CancellationToken::new();
    let signals = {
        let stop = stop.clone();
        async move {
            tokio::select! {
                () = mcp_server::shutdown_signal() => stop.cancel(),
                () = stop.cancelled() => {}
            }
        }
    };
    let http = async {
        let (Some(addr), Some(config)) = (args.listen, http) else {
            return Ok(());
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| connection(&format!("listening on {addr}"), e))?;
        let bound = listener.local_addr().map_or(addr, |a| a);
        eprintln!("mcp gateway: serving http://{bound}/mcp");
        let served = match &deploy.auth {
            None => {
                gateway
                    .serve_http(&server, listener, config, stop.cancelled())
                    .await
            }
            Some(guard) => {
                let service = gateway.http_service(&server, config);
                let serve = ServeConfig::new().service_shutdown(service.inner().shutdown_handle());
                let guarded = Guarded {
                    probes: service.clone(),
                    guard: BearerGuard::new(
                        service,
                        guard.resource.clone(),
                        guard.verifier.clone(),
                    ),
                };
                mcp_transport::http::serve(listener, guarded, serve, stop.cancelled()).await
            }
        };
        // The HTTP side failing stops the stdio side too.
        stop.cancel();
        served.map_err(|e| connection("serving HTTP", e))
    };
    let stdio = async {
        if !args.stdio_out {
            return Ok(());
        }
        let served = server.serve_stdio(stop.cancelled()).await;
        // The host closed stdin: nobody is left to serve.
        stop.cancel();
        served.map_err(|e| connection("serving stdio", e))
    };
    let (_, http, stdio) = tokio::join!(signals, http, stdio);
    http.and(stdio)
}

/// What [`config`] read: the gateway's config, whether it is one server
/// of `--stdio` / `--url`, and the config file's JSON (for its `gateway`
/// section).
type Read = (GatewayConfig, bool, Option<serde_json::Value>);

/// The gateway's config: the `--config` file, or the one server of
/// `--stdio` / `--url`.
fn config(server: &ServerArgs, args: &GatewayArgs) -> Result<Read, CliError> {
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path)
            .map_err(|e| connection(&format!("reading {}", path.display()), e))?;
        let config = GatewayConfig::from_json(&text).map_err(|e| CliError::Protocol {
            doing: format!("reading {}", path.display()),
            source: Box::new(e),
        })?;
        if config.upstreams.is_empty() {
            return Err(UsageError::Gateway("the config's `mcpServers` names no server").into());
        }
        // Read whole (and bounded) by `from_json` already: JSON.
        let root = serde_json::from_str(&text).ok();
        return Ok((config, false, root));
    }
    let transport = match (&server.stdio, &server.url) {
        (Some(command), None) => {
            let (program, args) = stdio_command(server, command)?;
            UpstreamTransport::stdio(program, args)
        }
        (None, Some(url)) => UpstreamTransport::Http {
            url: url.clone(),
            headers: headers(server)?.into_iter().collect(),
        },
        _ => {
            return Err(UsageError::Gateway(
                "say what to serve: --stdio \"<command> <args>\", --url <endpoint> or --config FILE",
            )
            .into());
        }
    };
    let era = match server.era {
        Era::Auto => mcp_gateway::EraPreference::Auto,
        Era::Stateless => mcp_gateway::EraPreference::Stateless,
        Era::Handshake => mcp_gateway::EraPreference::Handshake,
    };
    let config = GatewayConfig::new()
        .upstream(SINGLE, UpstreamConfig::new(transport).with_era(era))
        .map_err(|e| gateway_error("configuring", e))?;
    Ok((config, true, None))
}

fn gateway_error(doing: &str, error: mcp_gateway::Error) -> CliError {
    CliError::Protocol {
        doing: format!("the gateway: {doing}"),
        source: Box::new(error),
    }
}

fn connection(doing: &str, error: impl std::error::Error + Send + Sync + 'static) -> CliError {
    CliError::Connection {
        doing: doing.to_owned(),
        source: Box::new(error),
    }
}

/// The guarded endpoint with its health probes left open: a balancer or
/// an orchestrator probes without a token (the probes carry no data).
#[derive(Clone)]
struct Guarded {
    probes: GatewayHttpService,
    guard: BearerGuard<GatewayHttpService>,
}

impl<B> tower_service::Service<http::Request<B>> for Guarded
where
    GatewayHttpService: tower_service::Service<
            http::Request<B>,
            Response = http::Response<HttpBody>,
            Error = Infallible,
        >,
    BearerGuard<GatewayHttpService>: tower_service::Service<
            http::Request<B>,
            Response = http::Response<HttpBody>,
            Error = Infallible,
        >,
    <GatewayHttpService as tower_service::Service<http::Request<B>>>::Future: Send + 'static,
    <BearerGuard<GatewayHttpService> as tower_service::Service<http::Request<B>>>::Future:
        Send + 'static,
{
    type Response = http::Response<HttpBody>;
    type Error = Infallible;
    type Future =
        Pin<Box<dyn Future<Output = Result<http::Response<HttpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both are always ready (neither holds back requests).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        // Exactly the requests the probes answer (GET or HEAD of their
        // paths): anything else there is the guard's.
        if Health::is_probe(request.method(), request.uri().path()) {
            Box::pin(self.probes.call(request))
        } else {
            Box::pin(self.guard.call(request))
        }
    }
}
