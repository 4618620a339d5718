"""OTLP JSON, as the OpenTelemetry Collector's file exporter writes it: the format and its writer.

Format: one ``ExportTraceServiceRequest`` JSON object per line (``resourceSpans`` ->
``scopeSpans`` -> ``spans``), ids as lowercase hex, times as decimal strings of nanoseconds,
attributes as ``{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" |
"arrayValue" | "kvlistValue" | "bytesValue"}}``, enums as integers, empty fields left out.

This module writes the format (:func:`span_to_otlp`, :func:`write_spans`,
:class:`OtlpJsonFileExporter`) and re-exports the reader: :mod:`tracing.otlp.decode` turns
one span of a line into a SpanView, :mod:`tracing.otlp.reader` streams a file into traces.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode

from tracing.otlp.reader import (  # the reader, re-exported where it always was
    FileSlice,
    OtlpJsonError,
    OtlpJsonReader,
    OtlpJsonWarning,
    OtlpTrace,
    iter_spans,
    iter_trace_calls,
)

__all__ = [
    "FileSlice",
    "OtlpJsonError",
    "OtlpJsonFileExporter",
    "OtlpJsonReader",
    "OtlpJsonWarning",
    "OtlpTrace",
    "iter_spans",
    "iter_trace_calls",
    "span_to_otlp",
    "write_spans",
]

_STATUS_CODES: dict[StatusCode, int] = {StatusCode.UNSET: 0, StatusCode.OK: 1, StatusCode.ERROR: 2}


# --- writing ------------------------------------------------------------------------------


def _any_value(value: Any) -> dict[str, Any]:
    """One attribute value as an OTLP ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 is a string in proto3 JSON
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_any_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in (attributes or {}).items()]


def span_to_otlp(span: ReadableSpan) -> dict[str, Any]:
    """One SDK span as an OTLP JSON ``Span`` object (empty fields left out, as the Collector)."""
    context = span.context
    if context is None:
        raise ValueError(f"span {span.name!r} has no span context; it cannot be written")
    out: dict[str, Any] = {
        "traceId": format(context.trace_id, "032x"),
        "spanId": format(context.span_id, "016x"),
    }
    if context.trace_state:
        out["traceState"] = context.trace_state.to_header()
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
    out["flags"] = 0x100 | int(context.trace_flags)  # bit 8: the has-is-remote flag is known
    out["name"] = span.name
    out["kind"] = _kind(span.kind)
    out["startTimeUnixNano"] = str(span.start_time or 0)
    out["endTimeUnixNano"] = str(span.end_time or 0)
    if span.attributes:
        out["attributes"] = _attributes(span.attributes)
    if span.events:
        out["events"] = [
            {
                "timeUnixNano": str(event.timestamp),
                "name": event.name,
                **({"attributes": _attributes(event.attributes)} if event.attributes else {}),
            }
            for event in span.events
        ]
    if span.links:
        out["links"] = [
            {
                "traceId": format(link.context.trace_id, "032x"),
                "spanId": format(link.context.span_id, "016x"),
                **({"attributes": _attributes(link.attributes)} if link.attributes else {}),
            }
            for link in span.links
        ]
    status: dict[str, Any] = {}
    if span.status.description:
        status["message"] = span.status.description
    code = _STATUS_CODES[span.status.status_code]
    if code:
        status["code"] = code
    out["status"] = status
    return out


def _kind(kind: SpanKind) -> int:
    # The API's SpanKind starts at INTERNAL = 0; OTLP's at UNSPECIFIED = 0, INTERNAL = 1.
    return int(kind.value) + 1


def _request(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """Group spans by resource, then scope, in first-seen order: one ExportTraceServiceRequest."""
    resources: dict[int, tuple[Any, dict[tuple[str, str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = resources.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (scope.name, scope.version or "", scope.schema_url or "") if scope else ("", "", "")
        scopes.setdefault(key, []).append(span_to_otlp(span))
    resource_spans = []
    for resource, scopes in resources.values():
        scope_spans = []
        for (name, version, schema_url), items in scopes.items():
            scope_obj: dict[str, Any] = {"name": name}
            if version:
                scope_obj["version"] = version
            entry: dict[str, Any] = {"scope": scope_obj, "spans": items}
            if schema_url:
                entry["schemaUrl"] = schema_url
            scope_spans.append(entry)
        block: dict[str, Any] = {
            "resource": {"attributes": _attributes(resource.attributes if resource else None)},
            "scopeSpans": scope_spans,
        }
        if resource is not None and resource.schema_url:
            block["schemaUrl"] = resource.schema_url
        resource_spans.append(block)
    return {"resourceSpans": resource_spans}


def write_spans(spans: Iterable[ReadableSpan], fp: IO[str]) -> int:
    """Write spans as one OTLP JSON line (one ExportTraceServiceRequest); return the count."""
    items = list(spans)
    if not items:
        return 0
    fp.write(json.dumps(_request(items), separators=(",", ":"), ensure_ascii=False))
    fp.write("\n")
    return len(items)


class OtlpJsonFileExporter(SpanExporter):
    """A SpanExporter appending each batch to a file as one OTLP JSON line. Thread-safe."""

    def __init__(self, path: str | Path) -> None:
        """Append to ``path`` (created on the first export, with its parent folders)."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write the batch as one line and flush it; a failed write leaves no partial line.

        Raises OSError when the line cannot be written (disk full, file gone): the file then
        ends after the last whole line, as if the batch had never come.
        """
        with self._lock:
            if self._closed:
                return SpanExportResult.FAILURE
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # unbuffered: a line is written here or not at all, never flushed later in part
                self._file = self.path.open("ab", buffering=0)
            buffer = io.StringIO()
            write_spans(spans, buffer)
            # a lone surrogate becomes its JSON escape (\udc80): UTF-8 cannot carry it raw
            line = memoryview(buffer.getvalue().encode("utf-8", "backslashreplace"))
            start = os.fstat(self._file.fileno()).st_size
            try:
                while line:
                    line = line[self._file.write(line) or 0 :]
            except OSError:
                with contextlib.suppress(OSError):  # back to the end of the last whole line
                    os.ftruncate(self._file.fileno(), start)
                raise
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Close the file; later exports fail."""
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Every export is flushed as it is written."""
        return True
