"""The OpenTelemetry Collector file exporter's ``format: proto``: length-prefixed trace messages.

Framing, as the exporter writes it (exporter/fileexporter, ``exportMessageAsBuffer``): each
message is preceded by its size as a 4-byte unsigned big-endian integer. A message is a
``TracesData`` (``ptrace.ProtoMarshaler``), whose wire form is that of an
``ExportTraceServiceRequest``: field 1, the repeated ``ResourceSpans``. Messages are parsed with
``opentelemetry-proto``'s classes (what the OTLP exporters use), one at a time.

Each message is a record (a trace whose root it holds is complete at its end), counted from 1
in errors; a span goes with its ``ResourceSpans``' resource attributes (``service.name``, ...).
A message that does not parse, or whose spans carry no trace and span ids (a logs or metrics
file has the same framing and parses as garbage spans), is reported and skipped; a size that
runs past the end of the file ends it (truncated, or not this format at all).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, TracesData

from tracing.otel.span_view import SpanEvent, SpanStatus
from tracing.otlp.decode import BadSpan, KnownIds, SpanFields
from tracing.otlp.sources import (
    READ_ERRORS,
    Batch,
    Report,
    Resources,
    decode_batch,
    why_unreadable,
)

__all__ = ["any_value", "key_values", "proto_batches", "read_frames", "span_fields"]

_STATUS: dict[int, SpanStatus] = {0: "UNSET", 1: "OK", 2: "ERROR"}
_BLOCK = 1024 * 1024


def any_value(value: AnyValue) -> Any:
    """An ``AnyValue`` as the JSON reader gives it: arrays as tuples, maps as dicts."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "int_value":
        return value.int_value
    if which == "bool_value":
        return value.bool_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return tuple(any_value(item) for item in value.array_value.values)
    if which == "kvlist_value":
        return key_values(value.kvlist_value.values)
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return None


def key_values(items: Sequence[KeyValue]) -> dict[str, Any]:
    """Repeated ``KeyValue`` as a dict."""
    return {item.key: any_value(item.value) for item in items}


def _hex(value: bytes, size: int, what: str) -> str:
    if len(value) != size:
        raise BadSpan(f"{what} of {len(value)} bytes, not {size}")
    return value.hex()


def span_fields(span: Span, trace_ids: KnownIds, span_ids: KnownIds) -> SpanFields:
    """One protobuf span's SpanView fields (raises BadSpan naming what is wrong)."""
    status = span.status
    return (
        _hex(span.trace_id, 16, "trace_id"),
        _hex(span.span_id, 8, "span_id"),
        span.name,
        key_values(span.attributes),
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        _hex(span.parent_span_id, 8, "parent_span_id") if span.parent_span_id else None,
        _STATUS.get(status.code, "UNSET"),
        status.message or None,
        tuple(
            SpanEvent(event.name, key_values(event.attributes), event.time_unix_nano)
            for event in span.events
        ),
    )


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes, read in blocks: a wrong size never allocates it at once."""
    parts: list[bytes] = []
    left = size
    while left > 0:
        data = stream.read(min(left, _BLOCK))
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def read_frames(
    stream: IO[bytes], report: Callable[[int, str], None]
) -> Iterator[tuple[int, bytes]]:
    """``(record number, message bytes)`` per length-prefixed message; a cut ends the stream."""
    record = 0
    try:
        while True:
            record += 1
            prefix = _read_exactly(stream, 4)
            if not prefix:
                return
            size = int.from_bytes(prefix, "big") if len(prefix) == 4 else -1
            body = _read_exactly(stream, size) if size >= 0 else b""
            if size < 0 or len(body) < size:
                report(
                    record,
                    "truncated: "
                    + (
                        f"its 4-byte size says {size:,} bytes, {len(body):,} follow"
                        if size >= 0
                        else f"{len(prefix)} byte(s) where a 4-byte size was expected"
                    )
                    + " (a file cut short, or not the Collector's length-prefixed protobuf)",
                )
                return
            yield record, body
    except READ_ERRORS as exc:
        report(record, why_unreadable(exc))


def proto_batches(stream: IO[bytes], report: Report) -> Iterator[Batch]:
    """The spans of each message of a ``format: proto`` file."""
    for record, body in read_frames(stream, report):
        message = TracesData()
        try:
            message.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            report(record, f"not an OTLP trace message (TracesData): {exc or 'cannot parse'}")
            continue
        spans = [
            span
            for resource_spans in message.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]
        if (body and not message.resource_spans) or (
            spans and not any(len(span.trace_id) == 16 for span in spans)
        ):
            report(
                record,
                "not a trace export: the message has no spans with trace ids (an OTLP logs or "
                "metrics file has the same framing; give logs with --logs)",
            )
            continue
        yield decode_batch(record, spans, span_fields, report, _resources(message))


def _resources(message: TracesData) -> Resources:
    """The resource attributes of a message's spans: one mapping for one resource, else one
    per span."""
    blocks = [
        (sum(len(scope.spans) for scope in block.scope_spans), block.resource.attributes)
        for block in message.resource_spans
    ]
    if len(blocks) == 1:
        return key_values(blocks[0][1])
    each: list[Mapping[str, Any]] = []
    for count, items in blocks:
        each += [key_values(items)] * count  # one mapping, shared by the block's spans
    return each
