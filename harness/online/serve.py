"""``harness serve``: the online rules beside the app, as an OTLP/HTTP receiver (issue 28).

The team points its OTel Collector or exporter at it; every trace it receives goes through the
same :class:`~harness.online.processor.RuleProcessor` as in the app, and the evaluation events
and counters leave through the SDK's OTLP/HTTP exporters: to ``otlp_endpoint`` (a base URL,
``/v1/logs`` and ``/v1/metrics`` appended), else where the standard ``OTEL_EXPORTER_OTLP_*``
variables say. Needs the ``[otlp]`` extra. The command line is :mod:`harness.cli.serve`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from harness.online.policy import OnlinePolicy

__all__ = ["serve"]


def serve(
    policies: Iterable[OnlinePolicy],
    stop: threading.Event,
    *,
    host: str = "127.0.0.1",
    port: int = 4318,
    trace_timeout: float = 30.0,
    root_grace: float = 5.0,
    otlp_endpoint: str | None = None,
    metric_interval: float = 10.0,
    ready: Callable[[str], object] | None = None,
) -> int:
    """Receive and evaluate until ``stop`` is set, then flush; the number of spans received.

    ``ready`` gets the receiver's URL once it listens (OSError when it cannot bind). A trace is
    evaluated ``root_grace`` seconds after its root arrives: other services' spans of the same
    trace may come in later batches (the SDK's batch processor sends every 5 s by default).
    """
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    from harness.online.processor import RuleProcessor
    from harness.online.receiver import OtlpReceiver

    base = otlp_endpoint.rstrip("/") if otlp_endpoint else None
    resource = Resource.create({"service.name": "harness-serve"})
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{base}/v1/logs" if base else None))
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None),
        export_interval_millis=metric_interval * 1000,
    )
    metrics = MeterProvider(resource=resource, metric_readers=[reader])
    processor = RuleProcessor(
        policies,
        trace_timeout=trace_timeout,
        root_grace=root_grace,
        logger_provider=logs,
        meter_provider=metrics,
    )
    try:
        receiver = OtlpReceiver(processor, host, port)
    except OSError:
        processor.shutdown()
        logs.shutdown()
        metrics.shutdown()
        raise
    receiver.start()
    try:
        if ready is not None:
            ready(receiver.url)
        while not stop.wait(0.5):  # a short wait: signals reach the main thread between waits
            pass
    finally:
        receiver.close()
        processor.shutdown()  # evaluates what is pending, then the events and counters go out
        logs.shutdown()
        metrics.shutdown()
    return receiver.spans
