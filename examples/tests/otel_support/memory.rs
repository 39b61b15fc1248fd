//! Runs async work under our OpenTelemetry layer with the SDK's in-memory
//! span and metric exporters, on a current-thread runtime whose thread has
//! the subscriber as its default, so every span of every peer in this
//! process is recorded.

use std::future::Future;
use std::time::Duration;

use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// The bound on one recorded run.
pub const LIMIT: Duration = Duration::from_secs(60);

/// What a run exported.
pub struct Recorded {
    pub spans: Vec<SpanData>,
    pub metrics: Vec<ResourceMetrics>,
}

/// A second dispatcher registered for the whole process. With only one
/// registered, tracing takes a new callsite's interest from the default of
/// whichever thread meets it first, and a test thread with no subscriber
/// answers "never" for every thread: the recorder would miss that span.
static SECOND: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();

/// Runs `work` to its end (within [`LIMIT`]) and answers what it exported.
pub fn record<F: Future<Output = ()>>(work: impl FnOnce() -> F) -> Recorded {
    SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let subscriber = tracing_subscriber::registry().with(
        mcp_core::otel::layer(&tracer_provider, &meter_provider)
            .with_filter(mcp_core::otel::filter()),
    );
    let guard = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            tokio::time::timeout(LIMIT, work())
                .await
                .expect("the traced work finished in time");
        });
    drop(guard);
    tracer_provider.force_flush().expect("spans flushed");
    meter_provider.force_flush().expect("metrics flushed");
    Recorded {
        spans: spans.get_finished_spans().expect("spans"),
        metrics: metrics.get_finished_metrics().expect("metrics"),
    }
}
