"""Whole JSON documents (pretty-printed or too long for one line), read by a streaming parser.

A document is an OTLP request (``resourceSpans``), a Tempo export (``batches`` or ``{"trace":
...}``) or a Jaeger export (``data``); several documents may follow one another. The parser
(``ijson``, over the C ``yajl2`` backend) walks it event by event and builds only one span (or,
for Jaeger, one trace) at a time, so the text of a document is never held whole. A span goes
with its resource's attributes (``service.name``, ...; for Jaeger, its process).

Records (what completes a trace, see :mod:`tracing.otlp.sources`): each trace of a Jaeger
export is a record (Jaeger groups a trace's spans together); an OTLP or Tempo document is one
record, as a line of the file exporter is: its spans may come in any order (Tempo groups them
by service), so a trace whose root it holds is complete at the document's end. The reader then
holds the kept spans of a document's traces until its end (what a tool-call conversion needs
of them, not the document's text); a Jaeger export costs one trace at a time.

A record counts from 1: the Jaeger traces in order, or the documents. An error names it
(``path: record N: what``); the parser cannot go on past a syntax error, so that ends the file
(the traces already complete still come out, the ones it held come out at the end).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any

import ijson

from tracing.otlp import jaeger
from tracing.otlp.decode import BadSpan, resource_attributes, span_fields
from tracing.otlp.sources import READ_ERRORS, Batch, Report, decode_batch, why_unreadable
from tracing.otlp.tempo import RESOURCE_KEYS, SCOPE_KEYS

__all__ = ["CHUNK", "document_batches"]

CHUNK = 512
"""Spans decoded and handed on together (a document's spans are not held as text)."""

_BLOCK_PREFIXES = frozenset(
    f"{wrapper}{resources}.item" for wrapper in ("", "trace.") for resources in RESOURCE_KEYS
)
_RESOURCE_PREFIXES = frozenset(f"{block}.resource" for block in _BLOCK_PREFIXES)
_SPAN_PREFIXES = frozenset(
    f"{block}.{scopes}.item.spans.item" for block in _BLOCK_PREFIXES for scopes in SCOPE_KEYS
)
_JAEGER_TRACE = "data.item"
_KNOWN = frozenset({*RESOURCE_KEYS, "trace", "data"})
_OPEN = frozenset({"start_map", "start_array"})
_CLOSE = frozenset({"end_map", "end_array"})


def _build(events: Iterator[tuple[str, str, Any]], first: str) -> Any:
    """The value whose first event was ``first``, built from the events up to its end."""
    builder = ijson.ObjectBuilder()
    builder.event(first, None)
    depth = 1
    for _, event, value in events:
        builder.event(event, value)
        if event in _OPEN:
            depth += 1
        elif event in _CLOSE:
            depth -= 1
            if not depth:
                break
    return builder.value


class _Document:
    """The walk's state: the record, the spans not yet handed on (and their resources), the
    resource block being read, the top-level keys."""

    def __init__(self) -> None:
        self.record = 1
        self.pending: list[Any] = []
        self.resources: list[Mapping[str, Any]] = []
        # the attributes of the resource block being read, filled in when its "resource" comes
        # (in place: a writer may put it after the spans, which then hold this same dict)
        self.block: dict[str, Any] = {}
        self.position = 0  # the first pending span's place in its record
        self.keys: list[str] = []
        self.jaeger = False

    def flush(self, report: Report, ends: bool) -> Batch:
        batch = decode_batch(
            self.record,
            self.pending,
            span_fields,
            report,
            self.resources,
            ends=ends,
            first=self.position,
        )
        self.position = 0 if ends else self.position + len(self.pending)
        self.pending = []
        self.resources = []
        return batch


def document_batches(stream: IO[bytes], report: Report) -> Iterator[Batch]:
    """The spans of the JSON documents in ``stream``, record by record."""
    doc = _Document()
    events = iter(ijson.parse(stream, multiple_values=True, use_float=True))
    try:
        for prefix, event, value in events:
            if prefix in _SPAN_PREFIXES and event == "start_map":
                doc.pending.append(_build(events, event))
                doc.resources.append(doc.block)
                if len(doc.pending) >= CHUNK:
                    yield doc.flush(report, False)
            elif prefix in _BLOCK_PREFIXES and event == "start_map":
                doc.block = {}
            elif prefix in _RESOURCE_PREFIXES and event == "start_map":
                doc.block.update(resource_attributes(_build(events, event)))
            elif prefix == _JAEGER_TRACE and event == "start_map":
                doc.jaeger = True
                yield from _jaeger_trace(_build(events, event), doc, report)
            elif prefix == "" and event == "map_key":
                doc.keys.append(value)
            elif prefix == "" and event in _CLOSE:
                yield from _document_end(doc, report, event)
    except (ijson.JSONError, ValueError) as exc:  # IncompleteJSONError too
        report(doc.record, f"not valid JSON: {exc}")
    except READ_ERRORS as exc:
        report(doc.record, why_unreadable(exc))
    except RecursionError:
        report(doc.record, "not valid JSON: nested too deeply to read")
    else:
        return
    if doc.pending:  # what the broken record held so far: its traces end with the file
        yield doc.flush(report, False)


def _jaeger_trace(trace: Any, doc: _Document, report: Report) -> Iterator[Batch]:
    try:
        raw_spans = jaeger.trace_spans(trace)
    except BadSpan as exc:
        report(doc.record, f"trace skipped: {exc}")
    else:
        resources = jaeger.trace_resources(trace, raw_spans)
        yield decode_batch(doc.record, raw_spans, jaeger.span_fields, report, resources)
    doc.record += 1


def _document_end(doc: _Document, report: Report, event: str) -> Iterator[Batch]:
    """A top-level value ended: its record ends too (a Jaeger export's records are its traces)."""
    keys, doc.keys = doc.keys, []
    if doc.jaeger:
        doc.jaeger = False
        return
    if doc.pending or _KNOWN.intersection(keys):
        yield doc.flush(report, True)
    elif "resourceLogs" in keys:
        report(doc.record, "an OTLP logs export, not traces: give it with --logs")
    elif event == "end_array":
        report(doc.record, "not a trace export: a JSON array of values, not an export object")
    else:
        shown = ", ".join(repr(key) for key in keys[:5]) or "none"
        report(
            doc.record,
            f"not a trace export: an object with the keys {shown}; expected resourceSpans "
            "(OTLP), batches or trace (Tempo), or data (Jaeger)",
        )
    doc.record += 1
