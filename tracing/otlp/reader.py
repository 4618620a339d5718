"""Stream a trace file (the format of :mod:`tracing.otlp.file_format`, or any other a
:mod:`tracing.otlp` source reads) into spans and traces.

Reading streams line by line (record by record, for sources that are not JSON lines: a
"line" below is a record there) and never holds the file. Which traces are held, and when a
trace is complete (the rule):

* Only *open* traces are held, and of each only what the tool-call conversion needs (its tool and
  chat spans, and the parent link of every span), so memory is bounded by the open traces, not
  by the file.
* A trace is complete at the end of the line that brought its root span (a span without a
  parent). Exporters write a span when it ends and a root ends after its children, so a file
  written by an SDK or by the Collector has every span of a trace before (or on the line of) its
  root. A trace whose root is not in the file (its root lives in another service) is complete
  at the end of the file.
* A span that arrives after its trace was complete is reported as an error and skipped (at
  least the last 32,768 and at most 65,536 completed trace ids are remembered for this, about
  9 MB at most; an older trace would be yielded a second time, at the end of the file). Pass
  ``complete_on_root=False`` for files that break the rule: then every trace is held to the
  end of the file, and memory grows with it.

A line that is not valid JSON, or not shaped like a request, is reported as an
:class:`OtlpJsonError` (``path:line: what``) in ``reader.errors`` (or as a warning through the
module functions) and skipped; every other line and trace still comes out.

:meth:`OtlpJsonReader.iter_traces` hands out each complete trace (its tool and chat spans, the
parent links, its root span, the root's resource as the source gave it, the agents its spans
name, and the line that completed it) for callers that need more than the calls, e.g. ``harness
eval-traces`` reading the root's ``harness.scenario`` attribute.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracing.otel.conventions import ERROR_TYPE, CallSpanKind, classify
from tracing.otel.joining import calls_from_classified
from tracing.otel.producers import agent_name_of
from tracing.otel.span_reading import holds_structure, keeps
from tracing.otel.span_view import SpanView
from tracing.otlp.sources import Batch, SpanSource, open_source
from tracing.records import ToolCall

__all__ = [
    "REMEMBERED_COMPLETE",
    "FileSlice",
    "OtlpJsonError",
    "OtlpJsonReader",
    "OtlpJsonWarning",
    "OtlpTrace",
    "RecentTraces",
    "iter_spans",
    "iter_trace_calls",
]

REMEMBERED_COMPLETE = 65_536


@dataclass(frozen=True, slots=True)
class OtlpJsonError:
    """A line (or a span on it) that could not be read; the rest of the file still is."""

    path: str
    line: int
    message: str
    unit: str = "line"
    """What ``line`` counts: ``line``, or ``record`` / ``page`` for sources read otherwise."""

    def __str__(self) -> str:
        """``path:line: message``, like a compiler (``path: record N: message`` otherwise)."""
        if self.unit == "line":
            return f"{self.path}:{self.line}: {self.message}"
        return f"{self.path}: {self.unit} {self.line}: {self.message}"


class OtlpJsonWarning(UserWarning):
    """Issued for each unreadable line when no error list is given to the module functions."""


@dataclass(slots=True)
class _OpenTrace:
    views: list[SpanView] = field(default_factory=list)
    kinds: list[CallSpanKind | None] = field(default_factory=list)
    parents: dict[str, str | None] = field(default_factory=dict)
    root: SpanView | None = None
    resource: Mapping[str, Any] = field(default_factory=dict)
    agents: list[tuple[int, str]] = field(default_factory=list)
    first: int = 0


@dataclass(slots=True)
class OtlpTrace:
    """One complete trace as the reader hands it out: what scoring needs, nothing more."""

    trace_id: str
    spans: tuple[SpanView, ...]
    """Its tool and chat spans (the spans a tool-call convention claims), and the spans where
    LangGraph paused the run, in file order."""
    parents: Mapping[str, str | None]
    """Parent span id of each of its other spans (to find a tool span's agent node)."""
    root: SpanView | None
    """Its root span (no parent), or None when the root is not in the file."""
    line: int
    """The line that completed it (brought its root); 0 when it was complete at end of file."""
    kinds: tuple[CallSpanKind | None, ...] = ()
    """:func:`~tracing.otel.conventions.classify` of each of ``spans``, as the reader found it
    (empty: worked out when needed), so no span is classified twice."""
    resource: Mapping[str, Any] = field(default_factory=dict)
    """The attributes of its root's resource (``service.name``, ...); empty without a root."""
    agents: tuple[tuple[int, str], ...] = ()
    """(start, name) of each of its other spans naming an agent (``gen_ai.agent.name``)."""
    first_line: int = 0
    """The line of its first span read (a worker's slice tells the parent with it whether it
    saw the whole trace: harness.parallel.traces)."""

    @property
    def root_attributes(self) -> Mapping[str, Any]:
        """The root span's attributes (empty without a root)."""
        return self.root.attributes if self.root is not None else {}

    @property
    def span_kinds(self) -> tuple[CallSpanKind | None, ...]:
        """:func:`~tracing.otel.conventions.classify` of each of ``spans``."""
        if len(self.kinds) == len(self.spans):
            return self.kinds
        return tuple(classify(span.attributes) for span in self.spans)

    @property
    def has_calls(self) -> bool:
        """Whether it has a tool or chat span (its root may be one: a tool or model invoked on
        its own is a trace of one span)."""
        if any(kind is not None for kind in self.span_kinds):
            return True
        return self.root is not None and classify(self.root.attributes) is not None

    def calls(self) -> list[ToolCall]:
        """Its tool calls in request order (empty without tool spans).

        One trace at a time: the runs of a conversation are not joined here (a call paused in
        one run and resumed in the next is two calls); ToolCallSpanExporter joins them.
        """
        kinds = self.span_kinds
        root = self.root
        # a kind is a (role, convention) pair, never false; else None
        if root is None:
            return calls_from_classified(self.spans, kinds, self.parents) if any(kinds) else []
        root_kind = classify(root.attributes)
        if root_kind is None and not any(kinds):
            return []
        spans = (*self.spans, root)
        return calls_from_classified(spans, (*kinds, root_kind), self.parents)


@dataclass(frozen=True, slots=True)
class FileSlice:
    """Consecutive whole lines of an OTLP JSON file, for readers working on parts in parallel.

    ``start`` is the byte offset where line ``first_line`` begins; ``line_count`` lines are read
    (None: to the end). Line numbers in errors and traces stay those of the whole file. Used as
    a path (``os.fspath``, ``str``) it is the file's.

    A *lead-in* gives the slice the earlier spans of the traces it completes: the lines from
    byte ``lead_in`` (where line ``lead_in_line`` begins) up to ``start`` are read first, only
    for that: a trace completed there is not handed out and what cannot be read there is not
    reported (the slice before reports it). ``lead_ids``: only these traces' spans are read in
    the lead-in (None: every span); ``complete``: (trace id, root line) of the traces complete
    before ``start``, oldest first, as the reader of the whole file would remember them.
    """

    path: str | Path
    start: int = 0
    first_line: int = 1
    line_count: int | None = None
    lead_in: int | None = None
    lead_in_line: int = 1
    lead_ids: frozenset[str] | None = None
    complete: tuple[tuple[str, int], ...] = ()

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)


class OtlpJsonReader:
    """Stream spans, or tool calls per trace, out of a trace file (or any span source); errors
    collect here."""

    def __init__(
        self, path: str | Path | FileSlice | SpanSource, *, complete_on_root: bool = True
    ) -> None:
        """Read ``path`` (or that part of a file, or that source: :mod:`tracing.otlp`); see the
        module docstring for when a trace counts as complete."""
        self.source = open_source(path)
        self.path = Path(self.source.name)
        self.complete_on_root = complete_on_root
        self.errors: list[OtlpJsonError] = []
        # a slice with a lead-in owns its lines from first_line on (see FileSlice)
        part = path if isinstance(path, FileSlice) else None
        self._owned = part.first_line if part is not None and part.lead_in is not None else 0
        self._complete = part.complete if part is not None else ()

    def _error(
        self, location: int, message: str, *, name: str | None = None, unit: str | None = None
    ) -> None:
        if location < self._owned and name is None:
            return  # in a lead-in: the slice that owns the line reports it
        source = self.source
        error = OtlpJsonError(name or source.name, location, message, unit or source.unit)
        self.errors.append(error)

    def _lines(self) -> Iterator[Batch]:
        """(location, the spans read there, whether a record ends, their resources) per batch
        of the source; what cannot be read becomes an error."""
        return self.source.batches(self._error)

    def iter_spans(self) -> Iterator[SpanView]:
        """Every readable span, in file order."""
        for _, spans, _, _ in self._lines():
            for fields in spans:
                yield SpanView(*fields)

    def iter_traces(self) -> Iterator[OtlpTrace]:
        """Every trace, tool calls or not, as soon as it is complete (see the module docstring).

        Traces complete on a line come out in the order their roots appear on it; traces still
        open at the end of the file come out last, with ``line`` 0.
        """
        open_traces: dict[str, _OpenTrace] = {}
        complete = RecentTraces(REMEMBERED_COMPLETE)
        for known, line in self._complete:  # what the reader of the file before knew
            complete.add(known, line)
        completed = complete.lines
        on_root = self.complete_on_root
        owned = self._owned
        finished: list[str] = []
        for number, spans, ends, resources in self._lines():
            for position, fields in enumerate(spans):
                trace_id, span_id, _, attributes, _, _, parent_id, _, _, events = fields
                root_line = completed.get(trace_id)
                if root_line is not None:
                    self._error(
                        number,
                        f"span {span_id} of trace {trace_id} arrives after the trace "
                        f"was complete (root span on {self.source.unit} {root_line}); skipped",
                    )
                    continue
                trace = open_traces.get(trace_id)
                if trace is None:
                    trace = open_traces[trace_id] = _OpenTrace(first=number)
                if parent_id is None:  # a root: held as the root, and as a parent link
                    trace.parents[span_id] = None
                    trace.root = SpanView(*fields)
                    trace.resource = (
                        resources[position] if isinstance(resources, list) else resources
                    )
                    if on_root:
                        finished.append(trace_id)
                    continue
                # keeps(), with the span classified once for the conversion; only the spans
                # kept become SpanViews, the others are a parent link
                kind = classify(attributes)
                if (
                    kind is not None
                    or (
                        (events or ERROR_TYPE in attributes)
                        and keeps(attributes, parent_id, [(e.name, e.attributes) for e in events])
                    )
                    or holds_structure(attributes)
                ):
                    trace.views.append(SpanView(*fields))
                    trace.kinds.append(kind)
                else:
                    trace.parents[span_id] = parent_id
                    agent = agent_name_of(attributes)
                    if agent is not None:  # the agent the trace ran (TraceRun.agent)
                        trace.agents.append((fields[4], agent))
            if not ends:
                continue  # more of this record to come: its traces are not complete yet
            for trace_id in finished:
                trace = open_traces.pop(trace_id, None)
                if trace is None:
                    continue  # two roots on one line
                complete.add(trace_id, number)
                if number >= owned:  # (one completed in a lead-in belongs to the slice before)
                    yield _record(trace_id, trace, number)
            finished = []
        for trace_id, trace in open_traces.items():
            yield _record(trace_id, trace, 0)

    def iter_trace_calls(self) -> Iterator[tuple[str, list[ToolCall]]]:
        """(trace id, its calls in request order) per trace with tool or chat spans."""
        for trace in self.iter_traces():
            if trace.has_calls:
                yield trace.trace_id, trace.calls()


class RecentTraces:
    """The line of each recently completed trace (``lines``: trace id -> line): at least the
    last ``size // 2``, at most ``size`` of them, oldest forgotten first."""

    __slots__ = ("_half", "_size", "lines")

    def __init__(self, size: int) -> None:
        self._half = max(size // 2, 1)
        self._size = 2 * self._half
        # one plain dict, changed in place, so the reader looks an id up without a call
        self.lines: dict[str, int] = {}

    def add(self, trace_id: str, line: int) -> None:
        lines = self.lines
        if len(lines) >= self._size:  # forget the oldest, keeping the newest half
            for old in list(itertools.islice(lines, len(lines) - self._half)):
                del lines[old]
        lines[trace_id] = line

    def get(self, trace_id: str) -> int | None:
        return self.lines.get(trace_id)


def _record(trace_id: str, trace: _OpenTrace, line: int) -> OtlpTrace:
    return OtlpTrace(
        trace_id,
        tuple(trace.views),
        trace.parents,
        trace.root,
        line,
        tuple(trace.kinds),
        trace.resource,
        tuple(trace.agents),
        trace.first,
    )


def _report(reader: OtlpJsonReader, errors: list[OtlpJsonError] | None, seen: int) -> int:
    for error in reader.errors[seen:]:
        if errors is not None:
            errors.append(error)
        else:
            warnings.warn(str(error), OtlpJsonWarning, stacklevel=3)
    return len(reader.errors)


def iter_spans(
    path: str | Path, *, errors: list[OtlpJsonError] | None = None
) -> Iterator[SpanView]:
    """Stream every span of an OTLP JSON file; unreadable lines go to ``errors`` (or warn)."""
    reader = OtlpJsonReader(path)
    seen = 0
    for view in reader.iter_spans():
        seen = _report(reader, errors, seen)
        yield view
    _report(reader, errors, seen)


def iter_trace_calls(
    path: str | Path,
    *,
    errors: list[OtlpJsonError] | None = None,
    complete_on_root: bool = True,
) -> Iterator[tuple[str, list[ToolCall]]]:
    """Stream (trace id, calls) out of an OTLP JSON file; unreadable lines go to ``errors``."""
    reader = OtlpJsonReader(path, complete_on_root=complete_on_root)
    seen = 0
    for item in reader.iter_trace_calls():
        seen = _report(reader, errors, seen)
        yield item
    _report(reader, errors, seen)
