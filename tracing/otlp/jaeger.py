"""Jaeger's JSON export (the query API's and the UI's "Download JSON"): spans back to OTLP's terms.

Shape: ``{"data": [{"traceID", "spans": [...], "processes": {...}}], ...}``; a span has
``traceID``, ``spanID``, ``operationName``, ``references`` (its parent is the first
``CHILD_OF``), ``startTime`` and ``duration`` in microseconds, typed ``tags`` (``{"key",
"type": "string" | "bool" | "int64" | "float64" | "binary", "value"}``) and ``logs``
(``{"timestamp", "fields"}``). What OpenTelemetry put into tags when the span went to Jaeger is
taken back out, by the OpenTelemetry to Jaeger mapping (the specification's
trace/sdk_exporters/jaeger.md and common/mapping-to-non-otlp.md): ``otel.status_code`` /
``otel.status_description`` (and the ``error`` flag) are the status, ``span.kind`` and
``otel.scope.*`` / ``otel.library.*`` the envelope, the dropped counts bookkeeping; a log's
``event`` field is its event's name; a span's process (``serviceName`` and tags) is its
resource. Jaeger has no arrays or maps: OpenTelemetry writes them as JSON text, and they stay
text here (nothing tells them from a string that looks like JSON).

Ids are hex; Jaeger writes a 64-bit id with 16 digits (or fewer, without leading zeros), so a
shorter hex id is padded on the left; a non-hex id (hand-made files, such as agentevals' samples)
is kept as written, lowercased, since the reader uses ids only to join spans.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from tracing.otel.span_view import SpanEvent, SpanStatus
from tracing.otlp.decode import BadSpan, KnownIds, SpanFields

__all__ = ["jaeger_spans", "span_fields", "trace_resources", "trace_spans"]

_ENVELOPE_TAGS = frozenset(
    {
        "span.kind",
        "otel.status_code",
        "otel.status_description",
        "otel.scope.name",
        "otel.scope.version",
        "otel.library.name",
        "otel.library.version",
        "otel.dropped_attributes_count",
        "otel.dropped_events_count",
        "otel.dropped_links_count",
    }
)
_STATUS: dict[str, SpanStatus] = {"OK": "OK", "ERROR": "ERROR", "UNSET": "UNSET"}
_HEX = frozenset("0123456789abcdef")


def jaeger_spans(document: Mapping[str, Any]) -> tuple[list[Any], list[Mapping[str, Any]]]:
    """The spans of every trace of a Jaeger export, in order, and each one's resource."""
    data = document.get("data")
    if not isinstance(data, list):
        raise BadSpan(f"'data' must be a list of traces, got {type(data).__name__}")
    spans: list[Any] = []
    resources: list[Mapping[str, Any]] = []
    for trace in data:
        found = trace_spans(trace)
        spans += found
        resources += trace_resources(trace, found)
    return spans, resources


def trace_spans(trace: Any) -> list[Any]:
    """The spans of one trace of ``data``."""
    if not isinstance(trace, Mapping):
        raise BadSpan(f"a trace of 'data' must be an object, got {type(trace).__name__}")
    spans = trace.get("spans")
    if not isinstance(spans, list):
        raise BadSpan(f"a trace's 'spans' must be a list, got {type(spans).__name__}")
    return spans


def trace_resources(trace: Mapping[str, Any], spans: list[Any]) -> list[Mapping[str, Any]]:
    """The resource of each of ``spans`` (one trace's): its process, ``processes[processID]``
    (or, in the older model, its own ``process``), as ``service.name`` and the process tags."""
    processes = trace.get("processes")
    known = processes if isinstance(processes, Mapping) else {}
    read: dict[str, Mapping[str, Any]] = {}
    out: list[Mapping[str, Any]] = []
    for span in spans:
        own = span.get("process") if isinstance(span, Mapping) else None
        if isinstance(own, Mapping):
            out.append(_process_resource(own))
            continue
        key = span.get("processID") if isinstance(span, Mapping) else None
        key = key if isinstance(key, str) else ""
        resource = read.get(key)
        if resource is None:
            resource = read[key] = _process_resource(known.get(key))
        out.append(resource)
    return out


def _process_resource(process: Any) -> Mapping[str, Any]:
    """A process as resource attributes (the OpenTelemetry to Jaeger mapping in reverse:
    ``service.name`` is its ``serviceName``, the other attributes its tags); a process that
    cannot be read has none (it names the service, it holds no call)."""
    if not isinstance(process, Mapping):
        return {}
    try:
        attributes = _tags(process.get("tags"), "process tags")
    except BadSpan:
        attributes = {}
    service = process.get("serviceName")
    if isinstance(service, str) and service:
        attributes["service.name"] = service
    return attributes


def _id(value: Any, size: int, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadSpan(f"{what} missing or not a string: {value!r:.60}")
    lowered = value.lower()
    if len(lowered) <= size * 2 and _HEX.issuperset(lowered):
        return lowered.rjust(size * 2, "0")
    return lowered


def _tag_value(tag: Mapping[str, Any]) -> Any:
    kind = tag.get("type")
    value = tag.get("value")
    key = tag.get("key")
    if kind is None or kind == "string":
        if kind is None and isinstance(value, (str, bool, int, float)):
            return value
        if isinstance(value, str):
            return value
    elif kind == "bool":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
    elif kind == "int64":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
    elif kind == "float64":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif kind == "binary" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            pass
    else:
        raise BadSpan(f"tag {key!r} has an unknown type {kind!r}")
    raise BadSpan(f"tag {key!r} of type {kind or 'untyped'} has the value {value!r:.60}")


def _tags(raw: Any, what: str) -> dict[str, Any]:
    if not raw:
        return {}
    if not isinstance(raw, list):
        raise BadSpan(f"{what} must be a list of {{key, type, value}}, got {type(raw).__name__}")
    out: dict[str, Any] = {}
    for tag in raw:
        if not isinstance(tag, Mapping) or not isinstance(tag.get("key"), str):
            raise BadSpan(f"{what}: a tag without a string key: {tag!r:.60}")
        out[tag["key"]] = _tag_value(tag)
    return out


def _parent(span: Mapping[str, Any]) -> str | None:
    for ref in span.get("references") or ():
        if isinstance(ref, Mapping) and ref.get("refType") == "CHILD_OF":
            return _id(ref.get("spanID"), 8, "references[].spanID")
    parent = span.get("parentSpanID")  # the older JSON model kept it on the span
    if parent and parent != "0":
        return _id(parent, 8, "parentSpanID")
    return None


def _micros(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadSpan(f"{what} must be a number of microseconds, got {value!r:.60}")
    return int(value) * 1000


def _events(logs: Any) -> tuple[SpanEvent, ...]:
    if not logs:
        return ()
    if not isinstance(logs, list):
        raise BadSpan(f"'logs' must be a list, got {type(logs).__name__}")
    events = []
    for log in logs:
        if not isinstance(log, Mapping):
            raise BadSpan(f"a log must be an object, got {type(log).__name__}")
        fields = _tags(log.get("fields"), "a log's fields")
        name = fields.pop("event", "")
        events.append(SpanEvent(str(name), fields, _micros(log.get("timestamp"), "timestamp")))
    return tuple(events)


def span_fields(span: Any, trace_ids: KnownIds, span_ids: KnownIds) -> SpanFields:
    """One Jaeger span's SpanView fields (raises BadSpan naming what is wrong)."""
    if not isinstance(span, Mapping):
        raise BadSpan(f"a span must be an object, got {type(span).__name__}")
    tags = _tags(span.get("tags"), "tags")
    code = tags.get("otel.status_code")
    status: SpanStatus = _STATUS.get(str(code).upper(), "UNSET") if code is not None else "UNSET"
    if tags.get("error") is True and status != "OK":
        status = "ERROR"  # the error flag the mapping adds to an ERROR status
        del tags["error"]
    message = tags.get("otel.status_description")
    start = _micros(span.get("startTime"), "startTime")
    name = span.get("operationName", "")
    return (
        _id(span.get("traceID"), 16, "traceID"),
        _id(span.get("spanID"), 8, "spanID"),
        name if isinstance(name, str) else str(name),
        {key: value for key, value in tags.items() if key not in _ENVELOPE_TAGS},
        start,
        start + _micros(span.get("duration"), "duration"),
        _parent(span),
        status,
        message if isinstance(message, str) and message else None,
        _events(span.get("logs")),
    )
