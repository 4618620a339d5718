"""JSON lines: each line one record, read with a C parser; the record's shape picks its decoder.

A line holds an OTLP request (``resourceSpans``, what the Collector's file exporter and
``harness run --trace-file`` write), a Tempo export (``batches``, ``{"trace": ...}``), a Jaeger
export (``data``) or one bare span (an object with ``traceId`` / ``spanId``). Every line is one
record: a trace whose root it brought is complete at its end. A line that is not JSON, or not
one of these, is reported (``path:line: what``) and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from tracing.otlp import jaeger
from tracing.otlp.decode import BadSpan, span_fields
from tracing.otlp.sources import (
    READ_ERRORS,
    Batch,
    Decode,
    Report,
    Resources,
    decode_batch,
    why_unreadable,
)
from tracing.otlp.tempo import request_spans, resources_of

__all__ = ["line_batches", "loads", "record_spans"]

_EXPECTED = (
    "expected an object with resourceSpans (OTLP), batches or trace (Tempo), data (Jaeger), "
    "or one span (traceId, spanId)"
)


def loads(line: str | bytes) -> Any:
    """Parse one line: orjson (C, several times faster), else the standard parser.

    The standard one decides what orjson refuses (NaN and Infinity literals, lone surrogate
    escapes), so such lines read as they always did and a bad line's error is the standard
    parser's message. One difference remains: orjson reads an integer past 64 bits as a float;
    no OTLP field holds one (they are int64 / fixed64, written as strings).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def record_spans(record: Any) -> tuple[list[Any], Decode, Resources]:
    """The raw spans of one JSON record, their decoder and their resources; raises BadSpan for
    another shape."""
    if type(record) is not dict and not isinstance(record, Mapping):
        raise BadSpan(f"not a trace export: a JSON {type(record).__name__}; {_EXPECTED}")
    resources = resources_of(record)
    if resources is not None:
        spans, attributes = request_spans(resources)
        return spans, span_fields, attributes
    if "data" in record:
        spans, processes = jaeger.jaeger_spans(record)
        return spans, jaeger.span_fields, processes
    if "spanId" in record or "traceId" in record:
        return [record], span_fields, {}  # a bare span: no resource
    if "resourceLogs" in record:
        raise BadSpan("an OTLP logs export, not traces: give it with --logs")
    keys = ", ".join(repr(key) for key in list(record)[:5]) or "none"
    raise BadSpan(f"not a trace export: an object with the keys {keys}; {_EXPECTED}")


def line_batches(lines: Iterable[str], first: int, report: Report) -> Iterator[Batch]:
    """``(line number, its spans, True, their resources)`` per readable line, numbered from
    ``first``."""
    number = first - 1
    try:
        for number, line in enumerate(lines, first):
            if line.isspace():  # a blank line (the file's lines are never empty)
                continue
            try:
                raw_spans, decode, resources = record_spans(loads(line))
            except ValueError as exc:  # JSONDecodeError and BadSpan
                report(number, f"not an OTLP JSON request: {exc}")
                continue
            except RecursionError:  # 100,000 nested brackets: Python's parser gives up
                report(number, "not an OTLP JSON request: nested too deeply to read")
                continue
            yield decode_batch(number, raw_spans, decode, report, resources)
    except READ_ERRORS as exc:  # a .gz cut short or corrupt, found while reading a line
        report(number + 1, why_unreadable(exc))
