"""OTLP export for the runner: one batched, redacted TracerProvider, quiet when the backend is down.

``configure_export`` builds the pipeline from the CLI flags, falling back to the standard
variables (``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``..._PROTOCOL``, ``..._HEADERS``,
``..._TIMEOUT``, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``):

* every exporter sits behind a ``BatchSpanProcessor`` (a Simple one costs a network round trip
  per span on the agent's own thread);
* a redacting layer rewrites each span before it leaves: secret keys inside JSON attributes
  (tool arguments and results, chat messages) and in event attributes become ``"***"``, and
  with content capture off the content attributes are dropped altogether, so neither the wire
  nor the ``--trace-file`` ever sees them (capture is opt-in for the backend; the trace file,
  local and meant for ``harness eval-traces``, keeps content unless ``--no-capture-content``);
* an export failure is reported once, as one warning line, instead of the SDK's per-batch
  retry logs; after a failure batches are dropped for a cool-down instead of each one waiting
  out the retry backoff;
* the redacting layer also masks *by value*: every secret value seen under a redacted key
  while the run goes (the runner's :class:`SecretWatcher` notes tool arguments, results and
  requested calls in a :class:`~harness.redaction.SecretBook`) is scrubbed out of span names,
  status messages, event and span attributes (a tool's exception quoting its password), and
  without content capture the failure reasons (which can quote the final answer or an
  argument) are not sent either;
* ``--trace-file`` is checked before the run (an unwritable path is a configuration error) and
  a write that fails later (a full disk) is one warning, never a cut-off last line;
* ``shutdown`` flushes within a bounded time, is idempotent, and also runs at interpreter exit;
  when spans were not sent (a black-holed backend, a TLS endpoint that never answers, a
  timeout longer than the shutdown's) it says how many, in one warning.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from harness.errors import ExportConfigError
from harness.redaction import Redactor, Scrubber, SecretBook, clean_text
from harness.run_output import OUTPUT_ATTRIBUTE
from harness.text import shorten

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from harness.result import RunResult

__all__ = [
    "CONTENT_ATTRIBUTES",
    "CONTENT_EVENT_ATTRIBUTES",
    "DEFAULT_SERVICE_NAME",
    "ExportConfigError",
    "ExportPipeline",
    "ExportTarget",
    "GuardedExporter",
    "RedactingSpanExporter",
    "SecretWatcher",
    "capture_content_from_env",
    "configure_export",
    "merged_headers",
    "parse_header",
    "record_verdict",
    "resolve_target",
    "secret_watchers",
]

Protocol = Literal["http", "grpc"]

DEFAULT_SERVICE_NAME = "toolcall-harness"
DEFAULT_EXPORT_TIMEOUT_S = 5.0
"""Per-batch export timeout when ``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` is unset (SDK: 10 s)."""
DEFAULT_SHUTDOWN_TIMEOUT_S = 5.0
DEFAULT_COOLDOWN_S = 30.0

CONTENT_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        OUTPUT_ATTRIBUTE,  # the run's final answer on its root span (harness/run_output.py)
    }
)
"""Opt-in content attributes (GenAI's, and the harness's final answer): exported only with
content capture on."""

CONTENT_EVENT_ATTRIBUTES: frozenset[str] = frozenset(
    {"harness.reason", "gen_ai.evaluation.explanation"}
)
"""Event attributes that quote what the run saw (a failure reason can quote the final answer
or an argument): exported only with content capture on, like CONTENT_ATTRIBUTES."""
_VERDICT_STATUS = "harness.status"
"""The root span's verdict attribute (harness/runner.py): its status message is a reason."""
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_TRACES_PATH = "/v1/traces"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event", "event_only"})
_CAPTURE_OFF = frozenset({"", "false", "0", "no", "off", "no_content"})
_SDK_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
)

_log = logging.getLogger("harness.export")


# --- where to --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportTarget:
    """Resolved OTLP destination: full URL for http (with ``/v1/traces``), host URL for grpc."""

    url: str
    protocol: Protocol
    source: str
    """Where the URL came from: ``--otlp-endpoint`` or the variable's name (for messages)."""


def _protocol(flag: str | None, environ: Mapping[str, str]) -> Protocol:
    for source, raw in (
        ("--otlp-protocol", flag),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")),
    ):
        if raw is None or not raw.strip():
            continue
        value = raw.strip().lower()
        if value in ("http", "http/protobuf"):
            return "http"
        if value == "grpc":
            return "grpc"
        raise ExportConfigError(
            f"{source}={raw!r} is not supported: use 'http' (OTLP/HTTP protobuf, the default) "
            "or 'grpc'",
            source=source,
            value=raw,
        )
    return "http"


def _check_url(url: str, source: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ExportConfigError(
            f"{source}={url!r} is not an OTLP endpoint URL: expected e.g. http://127.0.0.1:4318 "
            "(http) or http://127.0.0.1:4317 (grpc)",
            source=source,
            value=url,
        )
    return url


def _with_traces_path(base: str) -> str:
    """Generic endpoint -> signal URL, as the OTel spec says: append ``v1/traces`` to the path."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if path.endswith(_TRACES_PATH):
        return base  # already the signal URL (a friendly reading of --otlp-endpoint)
    return parts._replace(path=path + _TRACES_PATH).geturl()


def resolve_target(
    endpoint: str | None,
    protocol: str | None,
    environ: Mapping[str, str] | None = None,
) -> ExportTarget | None:
    """The OTLP destination from the flags, else the OTEL_* variables; None: export is off."""
    env = os.environ if environ is None else environ
    proto = _protocol(protocol, env)
    candidates = (
        ("--otlp-endpoint", endpoint, False),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), True),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), False),
    )
    for source, raw, is_signal_url in candidates:
        if raw is None or not raw.strip():
            continue
        url = _check_url(raw.strip(), source)
        if proto == "http" and not is_signal_url:
            url = _with_traces_path(url)
        return ExportTarget(url=url, protocol=proto, source=source)
    return None


def capture_content_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` as a bool (unset: off)."""
    env = os.environ if environ is None else environ
    raw = env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    value = raw.strip().lower()
    if value in _CAPTURE_ON:
        return True
    if value in _CAPTURE_OFF:
        return False
    raise ExportConfigError(
        f"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT={raw!r} is not understood: use "
        "'true' or 'false' (or SPAN_ONLY / SPAN_AND_EVENT / NO_CONTENT)",
        source="OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        value=raw,
    )


# --- redaction on the way out ----------------------------------------------------------------


class RedactingSpanExporter(SpanExporter):
    """Rewrites spans before ``inner`` sees them: secrets masked, content kept only if opted in.

    Masked by key (JSON attributes, ``key=value`` text, secret attribute names) and by value:
    ``secrets`` holds the values seen under secret keys so far (a tool's exception that quotes
    its password is scrubbed in the status message and the ``exception`` event). Every string
    (name, status, attributes) is also made writable (lone surrogates escaped) and an int past
    int64 becomes text: one odd value must not cost the whole batch.
    """

    def __init__(
        self,
        inner: SpanExporter,
        redactor: Redactor,
        *,
        capture_content: bool,
        secrets: SecretBook | None = None,
    ) -> None:
        """Wrap ``inner``; ``capture_content=False`` also removes the content attributes."""
        self.inner = inner
        self.redactor = redactor
        self.capture_content = capture_content
        self.secrets = secrets
        self._plain = Scrubber(redactor)

    def _scrubber(self) -> Scrubber:
        return self.secrets.scrubber if self.secrets is not None else self._plain

    def _string(self, text: str, scrub: Scrubber) -> str:
        """By value: the secrets seen so far and the value patterns; lone surrogates escaped.

        (Secret keys inside attribute values are the Redactor's, in ``redact_attributes``.)
        """
        out = clean_text(scrub.text(text))
        return text if out == text else out

    def _value(self, value: Any, scrub: Scrubber) -> Any:
        if isinstance(value, str):
            return self._string(value, scrub)
        if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
            return value
        if isinstance(value, int):
            in_range = _INT64_MIN <= value <= _INT64_MAX
            return value if in_range else f"<int out of int64 range, {value.bit_length()} bits>"
        items = [self._value(item, scrub) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items

    def _attributes(
        self,
        attributes: Mapping[str, Any] | None,
        scrub: Scrubber,
        content: frozenset[str],
    ) -> Mapping[str, Any] | None:
        if not attributes:
            return attributes
        if not self.capture_content and not content.isdisjoint(attributes):
            attributes = {k: v for k, v in attributes.items() if k not in content}
        redacted = self.redactor.redact_attributes(attributes)
        changed: dict[str, Any] | None = None
        for name, value in redacted.items():
            new = self._value(value, scrub)
            if new is not value:
                if changed is None:
                    changed = dict(redacted)
                changed[name] = new
        return redacted if changed is None else changed

    def _status(self, span: ReadableSpan, scrub: Scrubber) -> Status:
        status = span.status
        text = status.description
        if not text:
            return status
        attributes = span.attributes or {}
        if not self.capture_content and attributes.get(_VERDICT_STATUS) == "failed":
            shown = "failed"  # the first failure reason: it can quote the answer or an argument
        else:
            shown = self._string(self.redactor.redact_text(text), scrub)
        return status if shown == text else Status(status.status_code, shown)

    def redact_span(self, span: ReadableSpan) -> ReadableSpan:
        """The span itself when nothing changes, else a copy with the rewritten parts."""
        scrub = self._scrubber()
        attributes = self._attributes(span.attributes, scrub, CONTENT_ATTRIBUTES)
        events: list[Event] = []
        events_changed = False
        for event in span.events:
            event_attributes = self._attributes(event.attributes, scrub, CONTENT_EVENT_ATTRIBUTES)
            if event_attributes is not event.attributes:
                events_changed = True
                event = Event(event.name, event_attributes, event.timestamp)
            events.append(event)
        name = self._string(span.name, scrub)
        status = self._status(span, scrub)
        unchanged = attributes is span.attributes and name == span.name
        if unchanged and not events_changed and status is span.status:
            return span
        return ReadableSpan(
            name=name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=attributes,
            events=events,
            links=span.links,
            kind=span.kind,
            status=status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Redact, then hand on."""
        return self.inner.export([self.redact_span(span) for span in spans])

    def shutdown(self) -> None:
        """Shut the inner exporter down."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the inner exporter."""
        return self.inner.force_flush(timeout_millis)


# --- secrets seen while the run goes ---------------------------------------------------------


class SecretWatcher(BaseCallbackHandler):
    """Notes the secret values of a run's tool calls in a SecretBook as they happen.

    A LangChain callback handler the runner puts before its SpanEmitter (:func:`secret_watchers`):
    a tool's arguments are noted when it starts, so by the time its span ends (and is
    exported) a password its exception quotes is known, with or without content capture.
    """

    run_inline = True  # before the emitter's own handling of the same event, on its thread
    raise_error = False

    def __init__(self, book: SecretBook) -> None:
        """Note into ``book``."""
        super().__init__()
        self.book = book

    def on_tool_start(
        self, serialized: Any, input_str: str, *, inputs: Any = None, **kwargs: Any
    ) -> None:
        """The call's arguments."""
        self.book.note(inputs if inputs is not None else input_str)

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        """The call's result (a ToolMessage's content)."""
        self.book.note(getattr(output, "content", output))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        """The calls a model asked for (also those it never gets to run)."""
        for generations in getattr(response, "generations", ()):
            for generation in generations:
                message = getattr(generation, "message", None)
                for call in getattr(message, "tool_calls", None) or ():
                    self.book.note(call.get("args"))
                for call in getattr(message, "invalid_tool_calls", None) or ():
                    self.book.note(call.get("args"))


_BOOKS: weakref.WeakKeyDictionary[TracerProvider, SecretBook] = weakref.WeakKeyDictionary()
"""The SecretBook of each provider :func:`configure_export` built."""


def secret_watchers(provider: object) -> list[BaseCallbackHandler]:
    """The callback handlers to run before the SpanEmitter on ``provider`` (empty for a provider
    :func:`configure_export` did not build)."""
    book = _BOOKS.get(provider) if isinstance(provider, TracerProvider) else None
    return [] if book is None else [SecretWatcher(book)]


# --- one warning, not a log storm --------------------------------------------------------------


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


# --- the pipeline ----------------------------------------------------------------------------


def _resource(service_name: str | None) -> Resource:
    attributes: dict[str, Any] = {}
    in_env = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if service_name is not None:
        attributes[SERVICE_NAME] = service_name
    elif not in_env:
        attributes[SERVICE_NAME] = DEFAULT_SERVICE_NAME
    return Resource.create(attributes)


def _export_timeout(default: float) -> float | None:
    """None when a variable sets it (the SDK reads it), else our shorter default."""
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        if os.environ.get(name, "").strip():
            return None
    return default


def merged_headers(
    flags: Mapping[str, str] | None, environ: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """``--otlp-header`` over ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``; None when neither is set.

    The SDK reads the variables only when no headers are passed, so once a flag gives one the
    variables' headers are merged in here (the flag wins for the same key).
    """
    if not flags:
        return None
    from opentelemetry.util.re import parse_env_headers

    env = os.environ if environ is None else environ
    merged: dict[str, str] = {}
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        merged.update(parse_env_headers(env.get(name, ""), liberal=True))
    merged.update(flags)
    return merged


def parse_header(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` (``--otlp-header``) as a pair; ExportConfigError for anything else."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ExportConfigError(
            f"--otlp-header {text!r}: expected KEY=VALUE, e.g. x-api-key=...",
            source="--otlp-header",
            value=text,
        )
    return key.strip(), value.strip()


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


def _file_exporter(path: Path) -> SpanExporter:
    from tracing.otlp_json import OtlpJsonFileExporter

    return OtlpJsonFileExporter(path)


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
    None. ``warn`` receives the single failure line (default: the ``harness.export`` logger).
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


def _check_trace_file(path: Path) -> None:
    """Fail before the run when the trace file cannot be written (no permission, a file where
    its folder should be, a folder in its place): ExportConfigError naming the reason."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, FileExistsError):
            reason = "a file is where its folder should be"
        raise ExportConfigError(
            f"--trace-file {path}: cannot write it: {reason}",
            source="--trace-file",
            value=str(path),
        ) from None


def _display(target: ExportTarget) -> str:
    """The URL as shown in the warning: without credentials or query."""
    parts = urlsplit(target.url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    base = f"{parts.scheme}://{netloc}"
    if target.protocol == "http":
        path = parts.path
        if path.endswith(_TRACES_PATH):
            path = path[: -len(_TRACES_PATH)]
        return base + path.rstrip("/")
    return base


# --- verdicts as GenAI evaluation events -------------------------------------------------------

EVALUATION_EVENT = "gen_ai.evaluation.result"
"""The OTel GenAI semantic conventions' evaluation event, one per metric (and check) result."""
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"


def record_verdict(span: Span, run: RunResult, scrub: Scrubber) -> None:
    """Put a run's metric and check results on its root span as evaluation events, and its
    status: ERROR with the error (an errored run) or the first reason (a failed one).

    ``scrub`` is the run's scrubber: explanations are masked as in every report.
    Backends that read the GenAI conventions (Phoenix, LangSmith, Langfuse) show the scores
    next to the trace without knowing the ``harness.*`` attributes.
    """
    from opentelemetry.trace import Status as SpanStatus
    from opentelemetry.trace import StatusCode

    for score in run.scores:
        span.add_event(
            EVALUATION_EVENT,
            {
                EVALUATION_NAME: score.name,
                EVALUATION_SCORE_VALUE: float(score.value),
                EVALUATION_SCORE_LABEL: "pass" if score.passed else "fail",
                EVALUATION_EXPLANATION: scrub.text(score.reason),
            },
        )
    for check in run.checks:
        span.add_event(
            EVALUATION_EVENT,
            {
                EVALUATION_NAME: check.name,
                EVALUATION_SCORE_VALUE: 1.0 if check.passed else 0.0,
                EVALUATION_SCORE_LABEL: "pass" if check.passed else "fail",
                EVALUATION_EXPLANATION: scrub.text(check.reason),
            },
        )
    if run.error is not None:
        span.set_status(SpanStatus(StatusCode.ERROR, scrub.text(run.error.summary())))
    elif not run.passed:
        reasons = run.reasons()
        first = scrub.text(reasons[0]) if reasons else "failed"
        span.set_status(SpanStatus(StatusCode.ERROR, first))
