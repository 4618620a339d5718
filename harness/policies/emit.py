"""``eval-traces --rules --emit-otel``: each trace's rule results back to the observability
backend, as the online processor sends them.

One ``gen_ai.evaluation.result`` event per rule result, made by :class:`harness.online.signals.
Signals` (the same attributes, masking and scrubbing as ``harness serve``), parented to the
trace's root span, and exported by the SDK's OTLP/HTTP log exporter where the standard
``OTEL_EXPORTER_OTLP_*`` variables say (default ``http://localhost:4318/v1/logs``). Needs the
``[otlp]`` extra. A result that cannot be sent is counted and said once, never the end of the run.
"""

from __future__ import annotations

import functools

from harness.redaction import Redactor
from harness.rules import RuleResult
from tracing.otel.trace_run import TraceRun

__all__ = ["SERVICE", "ResultEmitter"]

SERVICE = "toolcall-harness"
"""The events' ``service.name`` unless ``OTEL_SERVICE_NAME`` says otherwise."""


class ResultEmitter:
    """A :data:`~harness.policies.run.Progress` sending each trace's results as events."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        """An OTLP/HTTP log pipeline from the environment (ImportError without ``[otlp]``)."""
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import OTELResourceDetector, Resource

        from harness.online.signals import Signals

        resource = Resource({"service.name": SERVICE}).merge(OTELResourceDetector().detect())
        self._provider = LoggerProvider(resource=resource)
        self._provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
        self._signals = Signals(self._provider, NoOpMeterProvider(), redactor)
        self.sent = 0
        self.failed = 0

    def __call__(self, run: TraceRun, results: list[RuleResult], root: str | None) -> None:
        """Queue one event per result of ``run``, linked to its root span; never raises."""
        if not results:
            return
        from harness.online.policy import TraceResult
        from harness.online.signals import trace_context

        try:
            # built on first use: only an explanation needs the trace's scrubber
            scrub = functools.cache(functools.partial(self._signals.scrubber, run))
            context = trace_context(run.trace_id, root)
            for result in results:
                item = TraceResult(result, result.policy or "", run.trace_id, root, True)
                self._signals.result(item, scrub, context)
                self.sent += 1
        except Exception:  # one trace's events, never the run
            self.failed += 1

    def close(self, timeout: float = 30.0) -> bool:
        """Send what is queued and stop; False when the export did not finish in time."""
        flushed = self._provider.force_flush(int(timeout * 1000))
        self._provider.shutdown()
        return bool(flushed)
