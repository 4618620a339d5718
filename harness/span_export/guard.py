"""One warning, not a log storm: exporters that never raise and say once what failed.

Each destination's exporter sits behind a :class:`GuardedExporter`: the OTLP SDK's per-batch
retry logs are caught and turned into one warning line naming the cause, batches are dropped for
a cool-down after a failure, and :class:`_EndedSpans` counts what every destination should have
received, so a shutdown can say how many spans were not sent.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from harness.text import shorten

__all__ = ["DEFAULT_COOLDOWN_S", "GuardedExporter"]

DEFAULT_COOLDOWN_S = 30.0
_SDK_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
)

_log = logging.getLogger("harness.span_export")


class _SdkLogCatcher(logging.Filter):
    """On the OTLP exporters' loggers: hands records to the guard exporting on this thread."""

    def __init__(self) -> None:
        super().__init__()
        self.active = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        guard: GuardedExporter | None = getattr(self.active, "guard", None)
        if guard is None:
            return True
        guard._note(record)
        return False


_catcher = _SdkLogCatcher()
_catcher_lock = threading.Lock()
_catcher_installed = False


def _install_catcher() -> None:
    global _catcher_installed
    with _catcher_lock:
        if _catcher_installed:
            return
        for name in _SDK_LOGGERS:
            logging.getLogger(name).addFilter(_catcher)
        _catcher_installed = True


def _reason(record: logging.LogRecord | None) -> str:
    """A short cause from the SDK's own failure log record."""
    if record is None:
        return "the exporter reported a failure"
    args = record.args if isinstance(record.args, tuple) else ()
    text = " ".join(str(arg) for arg in args) + " " + record.getMessage()
    lowered = text.lower()
    for needle, reason in (
        ("connection refused", "connection refused"),
        ("name or service not known", "host not found"),
        ("nodename nor servname", "host not found"),
        ("failed to resolve", "host not found"),
        ("timed out", "timed out"),
        ("deadline_exceeded", "timed out"),
        ("unavailable", "unavailable (is the collector listening?)"),
    ):
        if needle in lowered:
            return reason
    for arg in args:
        if isinstance(arg, int) and 100 <= arg < 600:
            return f"HTTP {arg}"
    message = record.getMessage()
    return shorten(message, 160, placeholder="...")


def _probe(url: str, timeout_s: float = 1.0) -> str | None:
    """Why a TCP connection to the URL's host fails, or None when it connects."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout_s):
            return None
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror:
        return "host not found"
    except TimeoutError:
        return "timed out"
    except OSError as exc:
        return exc.strerror or str(exc)


class GuardedExporter(SpanExporter):
    """Never raises, warns once on the first failure, and drops batches for a cool-down after."""

    def __init__(
        self,
        inner: SpanExporter,
        target: str,
        *,
        warn: Callable[[str], None] | None = None,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        probe_url: str | None = None,
        label: str | None = None,
    ) -> None:
        """Guard ``inner``, which exports to ``target`` (named in the warning).

        ``probe_url``: where to try a TCP connection to explain a failure the SDK did not.
        ``label``: what the warning says failed (default ``OTLP export to {target}``).
        """
        self.inner = inner
        self.target = target
        self.label = label or f"OTLP export to {target}"
        self.probe_url = probe_url
        self._warn = warn or _log.warning
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._last_record: logging.LogRecord | None = None
        self._retry_at = 0.0
        self._aborted = False
        self._inner_shut = False
        self.warned = False
        self.exported_spans = 0
        self.dropped_spans = 0

    def _note(self, record: logging.LogRecord) -> None:
        # The first record of a failed export names the cause; later ones say "max retries".
        if self._last_record is None:
            self._last_record = record

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export via ``inner``; on failure warn (once) and start the cool-down."""
        if self._aborted or time.monotonic() < self._retry_at:
            self.dropped_spans += len(spans)
            return SpanExportResult.FAILURE
        _catcher.active.guard = self
        self._last_record = None
        try:
            result = self.inner.export(spans)
            error: BaseException | None = None
        except Exception as exc:  # an exporter bug must not take the run down
            result, error = SpanExportResult.FAILURE, exc
        finally:
            _catcher.active.guard = None
        if result is SpanExportResult.SUCCESS:
            self.exported_spans += len(spans)
            return result
        self.dropped_spans += len(spans)
        self._retry_at = time.monotonic() + self.cooldown_s
        self._warn_once(_error_text(error) if error is not None else self._explain())
        return SpanExportResult.FAILURE

    def _explain(self) -> str:
        record = self._last_record
        generic = record is None or "due to timeout, max retries" in record.getMessage()
        if generic and self.probe_url is not None:
            # The SDK gave up before logging a cause (short timeout): ask the network ourselves.
            found = _probe(self.probe_url)
            if found is not None:
                return found
        return _reason(record)

    def _warn_once(self, reason: str) -> None:
        with self._lock:
            if self.warned:
                return
            self.warned = True
        self._warn(f"{self.label} failed: {reason} — results and reports are still written")

    def warn_lost(self, lost: int, ended: int, why: str) -> None:
        """Say (once, unless a failure was already told) that spans were not exported."""
        with self._lock:
            if self.warned:
                return
            self.warned = True
        self._warn(
            f"{self.label}: {lost} of {ended} spans were not sent ({why}) — results and reports "
            "are still written"
        )

    def abort(self) -> None:
        """Give up: later batches are dropped and a retry backoff in progress is cut short."""
        self._aborted = True
        self.shutdown()

    def shutdown(self) -> None:
        """Shut ``inner`` down once (its own shutdown warns when called twice)."""
        with self._lock:
            if self._inner_shut:
                return
            self._inner_shut = True
        _catcher.active.guard = self
        try:
            self.inner.shutdown()
        except Exception as exc:  # shutting down must not raise either
            self._warn_once(f"shutdown failed: {exc}")
        finally:
            _catcher.active.guard = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush ``inner`` (OTLP exporters hold nothing)."""
        try:
            return self.inner.force_flush(timeout_millis)
        except Exception:
            return False


def _error_text(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror  # "No space left on device", not "[Errno 28] ..."
    return str(error) or type(error).__name__


class _EndedSpans(SpanProcessor):
    """Counts the sampled spans that ended: what every exporter should have received."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is not None and context.trace_flags.sampled:
            with self._lock:
                self.count += 1
