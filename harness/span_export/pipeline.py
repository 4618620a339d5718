"""The export pipeline: one batched, redacted TracerProvider per run, and its bounded shutdown.

:func:`configure_export` wires the destinations (the ``--trace-file`` first, then the OTLP
backend), each behind a BatchSpanProcessor, a redacting layer and a guard;
:meth:`ExportPipeline.shutdown` flushes them side by side within a bounded time and says, in one
warning, how many spans a destination did not get.
"""

from __future__ import annotations

import atexit
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from harness.errors import ExportConfigError
from harness.redaction import Redactor, SecretBook
from harness.span_export.file_destination import _check_trace_file, _file_exporter
from harness.span_export.guard import (
    DEFAULT_COOLDOWN_S,
    GuardedExporter,
    _EndedSpans,
    _install_catcher,
)
from harness.span_export.redacting import RedactingSpanExporter
from harness.span_export.secrets import _BOOKS
from harness.span_export.settings import (
    DEFAULT_EXPORT_TIMEOUT_S,
    ExportTarget,
    _display,
    _export_timeout,
    _resource,
    capture_content_from_env,
    merged_headers,
    resolve_target,
)

__all__ = ["DEFAULT_SHUTDOWN_TIMEOUT_S", "ExportPipeline", "configure_export"]

DEFAULT_SHUTDOWN_TIMEOUT_S = 5.0


def _otlp_exporter(
    target: ExportTarget, timeout: float | None, headers: Mapping[str, str] | None = None
) -> SpanExporter:
    if target.protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError as exc:
            raise ExportConfigError(
                "OTLP over grpc needs opentelemetry-exporter-otlp-proto-grpc: "
                "pip install 'toolcall-harness[otlp]'"
            ) from exc
        # gRPC metadata keys must be lower case (HTTP/2); HTTP headers are case-insensitive
        metadata = {key.lower(): value for key, value in headers.items()} if headers else None
        return GrpcExporter(endpoint=target.url, timeout=timeout, headers=metadata)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )
    except ImportError as exc:
        raise ExportConfigError(
            "OTLP over http needs opentelemetry-exporter-otlp-proto-http: "
            "pip install 'toolcall-harness[otlp]'"
        ) from exc
    return HttpExporter(
        endpoint=target.url, timeout=timeout, headers=dict(headers) if headers else None
    )


@dataclass(eq=False)
class ExportPipeline:
    """A TracerProvider wired to the configured exporters; ``shutdown()`` before exit."""

    tracer_provider: TracerProvider | None
    """None when nothing is exported (no endpoint, no trace file): skip the SpanEmitter."""
    capture_content: bool
    """Whether spans are written with content: some destination keeps it (a destination that
    does not drops the content attributes on the way out)."""
    target: ExportTarget | None = None
    trace_file: Path | None = None
    guard: GuardedExporter | None = None
    shutdown_timeout_s: float = DEFAULT_SHUTDOWN_TIMEOUT_S
    outputs: tuple[tuple[SpanProcessor, GuardedExporter], ...] = ()
    """Each destination's processor and guard (the trace file's first), shut down side by side:
    a black-holed backend cannot keep the trace file from getting its last spans."""
    ended: _EndedSpans | None = None
    """Counts the spans that ended, to tell how many a destination did not get."""
    secrets: SecretBook | None = None
    """The secret values noted during the run (:class:`SecretWatcher`), scrubbed from spans."""
    _closed: bool = field(default=False, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def enabled(self) -> bool:
        """True when spans go somewhere."""
        return self.tracer_provider is not None

    @property
    def export_failed(self) -> bool:
        """True once an OTLP export failed (the one warning was given)."""
        return self.guard is not None and self.guard.warned

    def _run_bounded(self, action: Callable[[], object], timeout_s: float) -> bool:
        """Run ``action`` on a daemon thread; True if it finished within ``timeout_s``."""
        worker = threading.Thread(target=action, name="harness-export-flush", daemon=True)
        worker.start()
        try:
            worker.join(timeout_s)
        except KeyboardInterrupt:
            if self.guard is not None:
                self.guard.abort()
            raise
        return not worker.is_alive()

    def force_flush(self, timeout_s: float | None = None) -> bool:
        """Export what is queued; False if that took longer than the timeout."""
        if self.tracer_provider is None or self._closed:
            return True
        provider = self.tracer_provider
        return self._run_bounded(
            provider.force_flush, self.shutdown_timeout_s if timeout_s is None else timeout_s
        )

    def shutdown(self, timeout_s: float | None = None) -> None:
        """Flush and close, within ``timeout_s``; idempotent; a Ctrl-C here aborts the flush."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.shutdown)
        if self.tracer_provider is None:
            return
        limit = self.shutdown_timeout_s if timeout_s is None else timeout_s
        if not self.outputs:
            if not self._run_bounded(self.tracer_provider.shutdown, limit) and self.guard:
                self.guard.abort()  # still exporting (a slow or black-holed backend): cut it short
            return
        deadline = time.monotonic() + limit
        workers = [
            (
                threading.Thread(
                    target=processor.shutdown, name="harness-export-flush", daemon=True
                ),
                guard,
            )
            for processor, guard in self.outputs
        ]
        for worker, _ in workers:
            worker.start()
        try:
            for worker, _ in workers:
                worker.join(max(deadline - time.monotonic(), 0.0))
        except KeyboardInterrupt:
            for _, guard in workers:
                guard.abort()
            raise
        for worker, guard in workers:
            if worker.is_alive():
                guard.abort()  # still exporting (a slow or black-holed backend): cut it short
            self._tell_lost(guard, worker.is_alive(), limit)
        self._run_bounded(self.tracer_provider.shutdown, 0.5)  # its processors are done

    def _tell_lost(self, guard: GuardedExporter, timed_out: bool, limit: float) -> None:
        """One warning when ``guard``'s destination did not get every span that ended."""
        ended = self.ended.count if self.ended is not None else 0
        lost = ended - guard.exported_spans
        if lost <= 0:
            return
        if timed_out:
            why = f"the export did not finish within the {limit:g}s shutdown timeout"
        elif guard.dropped_spans:
            why = "the export failed"
        else:
            why = "the export queue was full"
        guard.warn_lost(lost, ended, why)


def configure_export(
    endpoint: str | None = None,
    protocol: str | None = None,
    *,
    capture_content: bool | None = None,
    redactor: Redactor | None = None,
    trace_file: str | Path | None = None,
    service_name: str | None = None,
    export_timeout_s: float = DEFAULT_EXPORT_TIMEOUT_S,
    shutdown_timeout_s: float = DEFAULT_SHUTDOWN_TIMEOUT_S,
    cooldown_s: float = DEFAULT_COOLDOWN_S,
    warn: Callable[[str], None] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ExportPipeline:
    """Build the export pipeline for a run from the flags (None: the OTEL_* variables decide).

    ``capture_content``: True/False from a flag, for every destination; None: the backend
    reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (content is opt-in there) and
    the trace file keeps content, since it is local and meant for ``harness eval-traces``,
    which cannot score arguments it was not given (secrets stay masked in both). ``redactor``:
    default key list when
    None. ``warn`` receives the single failure line (default: the ``harness.span_export`` logger).
    ``headers``: ``--otlp-header`` pairs, merged over the OTEL_* headers variables.
    Raises ExportConfigError for a bad URL or protocol.
    """
    target = resolve_target(endpoint, protocol)
    capture = capture_content_from_env() if capture_content is None else capture_content
    file_capture = True if capture_content is None else capture_content
    redactor = Redactor() if redactor is None else redactor
    path = Path(trace_file) if trace_file is not None else None
    if target is None and path is None:
        return ExportPipeline(tracer_provider=None, capture_content=capture)

    if path is not None:
        _check_trace_file(path)
    provider = TracerProvider(resource=_resource(service_name), shutdown_on_exit=False)
    ended = _EndedSpans()
    provider.add_span_processor(ended)
    secrets = SecretBook(redactor)
    _BOOKS[provider] = secrets
    outputs: list[tuple[SpanProcessor, GuardedExporter]] = []
    if path is not None:
        file_guard = GuardedExporter(
            RedactingSpanExporter(
                _file_exporter(path), redactor, capture_content=file_capture, secrets=secrets
            ),
            str(path),
            warn=warn,
            cooldown_s=math.inf,  # a full disk stays full: one warning, no retries
            label=f"writing the trace file {path}",
        )
        outputs.append((BatchSpanProcessor(file_guard), file_guard))
    guard: GuardedExporter | None = None
    if target is not None:
        _install_catcher()
        otlp = _otlp_exporter(target, _export_timeout(export_timeout_s), merged_headers(headers))
        redacting = RedactingSpanExporter(otlp, redactor, capture_content=capture, secrets=secrets)
        guard = GuardedExporter(
            redacting, _display(target), warn=warn, cooldown_s=cooldown_s, probe_url=target.url
        )
        outputs.append((BatchSpanProcessor(guard), guard))
    for processor, _ in outputs:
        provider.add_span_processor(processor)
    pipeline = ExportPipeline(
        tracer_provider=provider,
        capture_content=(target is not None and capture) or (path is not None and file_capture),
        target=target,
        trace_file=path,
        guard=guard,
        shutdown_timeout_s=shutdown_timeout_s,
        outputs=tuple(outputs),
        ended=ended,
        secrets=secrets,
    )
    atexit.register(pipeline.shutdown)
    return pipeline
