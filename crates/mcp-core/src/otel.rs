//! The bridge from the SDK's `tracing` spans to OpenTelemetry (feature
//! `otel`): trace context across peers, the MCP duration histograms, and a
//! one-call OTLP/HTTP setup.
//!
//! - [`init_otlp`]: one call at start-up; exports spans and metrics over
//!   OTLP/HTTP (protobuf) to the endpoint the standard `OTEL_*` environment
//!   variables name (`OTEL_EXPORTER_OTLP_ENDPOINT`, default
//!   `http://localhost:4318`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//!   `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, and the
//!   per-signal variants) and installs the global subscriber
//!   ([`otlp_pipeline`]: the same export, the subscriber left to you).
//! - [`layer`]: the same for an application that builds its own providers
//!   and subscriber (tests use it with the SDK's in-memory exporters).
//!
//! Span names and attributes follow the semantic conventions for MCP (see
//! [`crate::request_span`]); arguments, results and tokens are never
//! recorded.

use std::str::FromStr;
use std::time::{Duration, Instant};

use opentelemetry::metrics::{Histogram, Meter, MeterProvider as _};
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::span::{SESSION_EVENT_TARGET, SPAN_TARGET};
use crate::trace_context::{self, Propagator, TraceContext};

/// The instrumentation scope of the SDK's spans and metrics.
pub const SCOPE: &str = "mcp-rust-sdk";

/// Bucket boundaries (seconds) the semantic conventions give for the MCP
/// duration histograms.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The span attributes that are also metric attributes (low cardinality).
const METRIC_ATTRIBUTES: [&str; 9] = [
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "mcp.protocol.version",
    "error.type",
    "rpc.response.status_code",
    "network.transport",
    "network.protocol.name",
];

/// Why the OpenTelemetry pipeline could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// An OTLP exporter could not be built (a malformed endpoint or header
    /// in the `OTEL_EXPORTER_OTLP_*` variables, for instance).
    #[error(
        "could not build the OTLP {signal} exporter: {source}; check the OTEL_EXPORTER_OTLP_* variables"
    )]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// What the exporter reported.
        #[source]
        source: opentelemetry_otlp::ExporterBuildError,
    },
    /// The exporter's I/O thread could not start.
    #[error("could not start the OTLP exporter thread: {0}")]
    Thread(#[source] std::io::Error),
    /// A global subscriber is already installed; use [`layer`] in it instead.
    #[error("a global tracing subscriber is already set; add mcp_core::otel::layer to it instead")]
    SubscriberSet(#[source] tracing_subscriber::util::TryInitError),
}

/// The propagator built on `tracing-opentelemetry`: reads a span's
/// OpenTelemetry context and sets a remote parent. [`layer`] and
/// [`init_otlp`] install it; install it yourself with
/// [`crate::set_propagator`] when you compose the layers by hand.
#[derive(Debug, Clone, Copy, Default)]
pub struct OtelPropagator;

impl Propagator for OtelPropagator {
    fn current(&self, span: &tracing::Span) -> Option<TraceContext> {
        let context = span.context();
        let otel = context.span();
        let span_context = otel.span_context();
        if !span_context.is_valid() {
            return None;
        }
        let parent = format!(
            "00-{:032x}-{:016x}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        );
        let state = span_context.trace_state().header();
        TraceContext::parse(&parent, Some(&state))
    }

    fn adopt(&self, span: &tracing::Span, remote: &TraceContext) {
        let (Ok(trace_id), Ok(span_id)) = (
            TraceId::from_hex(remote.trace_id()),
            SpanId::from_hex(remote.parent_id()),
        ) else {
            return;
        };
        let flags = if remote.is_sampled() {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let state = remote
            .tracestate()
            .and_then(|s| TraceState::from_str(s).ok())
            .unwrap_or_default();
        let parent = SpanContext::new(trace_id, span_id, flags, true, state);
        // Fails only when no OpenTelemetry layer records the span: then
        // there is nothing to parent.
        let _ = span.set_parent(Context::new().with_remote_span_context(parent));
    }
}

/// The tracing layer that bridges the SDK's spans to OpenTelemetry: spans
/// to `tracer_provider` (through `tracing-opentelemetry`), the four MCP
/// duration histograms to `meter_provider`. Installs [`OtelPropagator`]
/// (once per process), so trace context crosses to and from peers.
///
/// Add it to your subscriber with a filter that lets the SDK's `debug`
/// spans through (target `mcp_core::span`), as [`init_otlp`] does.
pub fn layer<S>(
    tracer_provider: &SdkTracerProvider,
    meter_provider: &SdkMeterProvider,
) -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    trace_context::set_propagator(OtelPropagator);
    let tracer = tracer_provider.tracer(SCOPE);
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        // Only the semantic conventions' attributes: none of the bridge's
        // own (`target`, `busy_ns`, `idle_ns`, code location, thread).
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .and_then(MetricsLayer::new(&meter_provider.meter(SCOPE)))
}

/// The filter [`init_otlp`] puts on [`layer`]: the SDK's operation spans
/// and session events (at `debug`), and everything else at `info` and above.
pub fn filter() -> tracing_subscriber::filter::Targets {
    tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target(SPAN_TARGET, tracing::Level::DEBUG)
        .with_target(SESSION_EVENT_TARGET, tracing::Level::DEBUG)
}

/// Records the MCP duration histograms from the SDK's spans and session
/// events: `mcp.server.operation.duration` and
/// `mcp.client.operation.duration` (one per request served or sent, with
/// the span's low-cardinality attributes), `mcp.server.session.duration`
/// and `mcp.client.session.duration` (one per handshake-era session).
#[derive(Debug, Clone)]
pub struct MetricsLayer {
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

impl MetricsLayer {
    /// The histograms, made with `meter`.
    pub fn new(meter: &Meter) -> Self {
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(BOUNDARIES.to_vec())
                .build()
        };
        Self {
            server_operation: histogram(
                "mcp.server.operation.duration",
                "Duration of an MCP request or notification as observed by the receiver",
            ),
            client_operation: histogram(
                "mcp.client.operation.duration",
                "Duration of an MCP request or notification as observed by the sender",
            ),
            server_session: histogram(
                "mcp.server.session.duration",
                "Duration of an MCP session as observed by the server",
            ),
            client_session: histogram(
                "mcp.client.session.duration",
                "Duration of an MCP session as observed by the client",
            ),
        }
    }
}

/// What the metrics layer keeps per operation span.
struct Operation {
    started: Instant,
    server: bool,
    attributes: Attributes9,
}

/// The metric attributes seen so far, by position in [`METRIC_ATTRIBUTES`].
#[derive(Default)]
struct Attributes9([Option<String>; 9]);

impl Attributes9 {
    fn to_key_values(&self) -> Vec<KeyValue> {
        METRIC_ATTRIBUTES
            .iter()
            .zip(&self.0)
            .filter_map(|(key, value)| Some(KeyValue::new(*key, value.clone()?)))
            .collect()
    }
}

impl Visit for Attributes9 {
    fn record_str(&mut self, field: &Field, value: &str) {
        if let Some(slot) = METRIC_ATTRIBUTES.iter().position(|k| *k == field.name()) {
            self.0[slot] = Some(value.to_owned());
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// The fields of a session-end event.
#[derive(Default)]
struct SessionEnd {
    server: Option<bool>,
    seconds: Option<f64>,
    attributes: Attributes9,
}

impl Visit for SessionEnd {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "mcp.session.duration" {
            self.seconds = Some(value);
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "mcp.session.side" {
            self.server = Some(value == "server");
        } else {
            self.attributes.record_str(field, value);
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S> Layer<S> for MetricsLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let metadata = attrs.metadata();
        if metadata.target() != SPAN_TARGET {
            return;
        }
        let server = match metadata.name() {
            "mcp.request" => true,
            "mcp.outbound" => false,
            _ => return,
        };
        let mut operation = Operation {
            started: Instant::now(),
            server,
            attributes: Attributes9::default(),
        };
        attrs.record(&mut operation.attributes);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(operation);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(operation) = span.extensions_mut().get_mut::<Operation>() {
                values.record(&mut operation.attributes);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(operation) = span.extensions_mut().remove::<Operation>() else {
            return;
        };
        let histogram = if operation.server {
            &self.server_operation
        } else {
            &self.client_operation
        };
        histogram.record(
            operation.started.elapsed().as_secs_f64(),
            &operation.attributes.to_key_values(),
        );
    }

    fn on_event(&self, event: &Event<'_>, _: LayerContext<'_, S>) {
        if event.metadata().target() != SESSION_EVENT_TARGET {
            return;
        }
        let mut end = SessionEnd::default();
        event.record(&mut end);
        let (Some(server), Some(seconds)) = (end.server, end.seconds) else {
            return;
        };
        let histogram = if server {
            &self.server_session
        } else {
            &self.client_session
        };
        histogram.record(seconds, &end.attributes.to_key_values());
    }
}

/// Where [`init_otlp`] sends telemetry.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OtlpConfig {
    /// The OTLP/HTTP base URL (`http://collector:4318`); `/v1/traces` and
    /// `/v1/metrics` are appended. `None` reads `OTEL_EXPORTER_OTLP_*`.
    pub endpoint: Option<String>,
    /// The `service.name` when `OTEL_SERVICE_NAME` does not set one.
    pub service_name: Option<String>,
    /// How often metrics are exported; `None` reads
    /// `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s).
    pub metric_interval: Option<Duration>,
}

impl OtlpConfig {
    /// Everything from the `OTEL_*` environment variables.
    pub fn from_env() -> Self {
        Self::default()
    }

    /// Sends to this OTLP/HTTP base URL instead of the environment's.
    #[must_use]
    pub fn with_endpoint(self, endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: Some(endpoint.into()),
            ..self
        }
    }

    /// The `service.name` to use when `OTEL_SERVICE_NAME` is unset.
    #[must_use]
    pub fn with_service_name(self, name: impl Into<String>) -> Self {
        Self {
            service_name: Some(name.into()),
            ..self
        }
    }
}

/// The running OpenTelemetry pipeline [`init_otlp`] set up. Keep it for the
/// life of the program; [`Telemetry::shutdown`] (or dropping it) flushes
/// what is buffered.
#[derive(Debug)]
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    io: Option<ExportThread>,
}

impl Telemetry {
    /// The tracer provider, for spans of your own.
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.tracer_provider
    }

    /// The meter provider, for metrics of your own.
    pub fn meter_provider(&self) -> &SdkMeterProvider {
        &self.meter_provider
    }

    /// Flushes and stops the exporters (blocking for at most their timeout);
    /// call it before the program exits.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(io) = self.io.take() {
            if let Err(error) = self.tracer_provider.shutdown() {
                tracing::warn!(%error, "flushing spans at shutdown failed");
            }
            if let Err(error) = self.meter_provider.shutdown() {
                tracing::warn!(%error, "flushing metrics at shutdown failed");
            }
            io.stop();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sets up export over OTLP/HTTP and installs the global subscriber: the
/// SDK's spans (and your own at `info` and above) go to the collector with
/// trace context propagated to and from peers, and the MCP duration
/// histograms are exported every `OTEL_METRIC_EXPORT_INTERVAL`.
///
/// ```no_run
/// # fn main() -> Result<(), mcp_core::otel::OtelError> {
/// let telemetry = mcp_core::otel::init_otlp(
///     mcp_core::otel::OtlpConfig::from_env().with_service_name("weather-server"),
/// )?;
/// // ... serve ...
/// telemetry.shutdown();
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`OtelError::Exporter`] when the OTLP settings are invalid,
/// [`OtelError::SubscriberSet`] when a global subscriber already exists.
pub fn init_otlp(config: OtlpConfig) -> Result<Telemetry, OtelError> {
    let telemetry = otlp_pipeline(config)?;
    tracing_subscriber::registry()
        .with(layer(telemetry.tracer_provider(), telemetry.meter_provider()).with_filter(filter()))
        .try_init()
        .map_err(OtelError::SubscriberSet)?;
    Ok(telemetry)
}

/// The export over OTLP/HTTP of [`init_otlp`], without the subscriber:
/// for a program that has one of its own (a log to stderr, say) and adds
/// [`layer`] of these providers, with [`filter`], beside its own layers.
///
/// # Errors
/// [`OtelError::Exporter`] when the OTLP settings are invalid.
pub fn otlp_pipeline(config: OtlpConfig) -> Result<Telemetry, OtelError> {
    let io = ExportThread::start()?;
    let client = io.client();
    let endpoint = |path: &str| {
        config
            .endpoint
            .as_deref()
            .map(|base| format!("{}/{path}", base.trim_end_matches('/')))
    };
    let mut spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client.clone());
    if let Some(url) = endpoint("v1/traces") {
        spans = spans.with_endpoint(url);
    }
    let spans = spans.build().map_err(|source| OtelError::Exporter {
        signal: "traces",
        source,
    })?;
    let mut metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(client);
    if let Some(url) = endpoint("v1/metrics") {
        metrics = metrics.with_endpoint(url);
    }
    let metrics = metrics.build().map_err(|source| OtelError::Exporter {
        signal: "metrics",
        source,
    })?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        if let Some(name) = &config.service_name {
            resource = resource.with_service_name(name.clone());
        }
    }
    let resource = resource.build();
    let tracer_provider = SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_batch_exporter(spans)
        .build();
    let mut reader = opentelemetry_sdk::metrics::PeriodicReader::builder(metrics);
    if let Some(interval) = config.metric_interval {
        reader = reader.with_interval(interval);
    }
    let meter_provider = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(reader.build())
        .build();
    Ok(Telemetry {
        tracer_provider,
        meter_provider,
        io: Some(io),
    })
}

/// The thread whose Tokio runtime carries the OTLP requests: the SDK's
/// batch processor and metric reader export from plain threads, and the
/// hyper client needs a runtime. Owned by [`Telemetry`], stopped after the
/// last flush.
#[derive(Debug)]
struct ExportThread {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ExportThread {
    fn start() -> Result<Self, OtelError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(OtelError::Thread)?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mcp-otlp-export".into())
            .spawn(move || {
                let _ = runtime.block_on(stopped);
            })
            .map_err(OtelError::Thread)?;
        Ok(Self {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    fn client(&self) -> RuntimeClient {
        RuntimeClient {
            handle: self.handle.clone(),
            inner: opentelemetry_http::hyper::HyperClient::with_default_connector(
                Duration::from_secs(10),
                None,
            ),
        }
    }

    fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The hyper OTLP client, run on the export thread's runtime.
#[derive(Debug, Clone)]
struct RuntimeClient {
    handle: tokio::runtime::Handle,
    inner: opentelemetry_http::hyper::HyperClient,
}

impl opentelemetry_http::HttpClient for RuntimeClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: opentelemetry_http::Request<opentelemetry_http::Bytes>,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<
                        opentelemetry_http::Response<opentelemetry_http::Bytes>,
                        opentelemetry_http::HttpError,
                    >,
                > + Send
                + 'b,
        >,
    >
    where
        'a: 'b,
        Self: 'b,
    {
        let inner = self.inner.clone();
        let task = self
            .handle
            .spawn(async move { inner.send_bytes(request).await });
        Box::pin(async move {
            task.await
                .map_err(|e| Box::new(e) as opentelemetry_http::HttpError)?
        })
    }
}
