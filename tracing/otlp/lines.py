"""JSON lines: each line one record, read with a C parser; the record's shape picks its decoder.

A line holds an OTLP request (``resourceSpans``, what the Collector's file exporter and
``harness run --trace-file`` write), a Tempo export (``batches``, ``{"trace": ...}``), a Jaeger
export (``data``) or one bare span (an object with ``traceId`` / ``spanId``). Every line is one
record: a trace whose root it brought is complete at its end. A line that is not JSON, or not
one of these, is reported (``path:line: what``) and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from tracing.otlp.reader import FileSlice

__all__ = ["lead_in_batches", "line_batches", "loads", "numbered_batches", "record_spans"]

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
    return numbered_batches(enumerate(lines, first), report)


_TRACE_ID = re.compile(r'"traceId"\s*:\s*"([^"]*)"')
_HEX_ID = re.compile(r"[0-9a-fA-F]{32}")


def lead_in_batches(lines: Iterable[str], part: FileSlice, report: Report) -> Iterator[Batch]:
    """The batches of a slice's lead-in (:class:`~tracing.otlp.reader.FileSlice`): with
    ``lead_ids``, only those traces' spans, and a line that plainly names none of them (every
    ``traceId`` on it hex, none of them wanted) is not parsed at all."""
    numbered: Iterable[tuple[int, str]] = enumerate(lines, part.lead_in_line)
    wanted = part.lead_ids
    if wanted is None:
        yield from numbered_batches(numbered, report)
        return
    numbered = ((number, line) for number, line in numbered if _may_hold(line, wanted))
    for number, spans, ends, resources in numbered_batches(numbered, report):
        keep = [index for index, fields in enumerate(spans) if fields[0] in wanted]
        if len(keep) < len(spans):
            spans = [spans[index] for index in keep]
            if isinstance(resources, list):
                resources = [resources[index] for index in keep]
        yield number, spans, ends, resources


def _may_hold(line: str, wanted: frozenset[str]) -> bool:
    """Could ``line`` hold a span of a ``wanted`` trace (the decoder, not this, decides)?"""
    found = _TRACE_ID.findall(line)
    if not found:
        return True  # another shape of the id (Jaeger's traceID): read it
    # base64 ids (Tempo) are decoded before they are compared
    return any(not _HEX_ID.fullmatch(raw) or raw.lower() in wanted for raw in found)


def numbered_batches(numbered: Iterable[tuple[int, str]], report: Report) -> Iterator[Batch]:
    """:func:`line_batches` of ``(line number, line)`` pairs."""
    number = 0
    try:
        for number, line in numbered:
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
