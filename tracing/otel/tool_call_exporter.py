"""ToolCallSpanExporter: finished OpenTelemetry spans of any of three conventions -> ToolCalls.

The exporter only collects: it groups the spans the conversion needs by trace (tool and chat
spans, each trace's root, the spans where LangGraph paused a run; the parent link of every other
span) and converts on read. Traces of one conversation (the same LangGraph thread: a run paused
by ``interrupt()`` and the run resuming it) are converted together, so a call requested in one
and executed in the next is one call; it belongs to the trace that requested it. So are the
traces of separate runs that call ids link: a tool-calling loop written by hand (the model, then
each tool with the model's call, each invoked on its own) joins its executions to the requests
they answer by id, as the recorder does (:func:`~tracing.otel.joining.join_traces`). The conversion
works on :class:`~tracing.otel.span_view.SpanView`, shared with the OTLP JSON reader; reading one
span is :mod:`tracing.otel.span_reading`, joining requests and executions is
:mod:`tracing.otel.joining`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracing.otel.joining import Joined, calls_from_spans, join_traces
from tracing.otel.producers import agent_name_of
from tracing.otel.span_reading import RAW_ARGUMENTS_KEY, conversation_of, keeps, relevant_role
from tracing.otel.span_view import SpanEvent, SpanStatus, SpanView
from tracing.records import ToolCall

if TYPE_CHECKING:
    from opentelemetry.context import Context

    from tracing.otel.trace_run import TraceRun

# The conversion's names stay importable from here, where callers first found them.
__all__ = [
    "RAW_ARGUMENTS_KEY",
    "SpanEvent",
    "SpanStatus",
    "SpanView",
    "ToolCallSpanExporter",
    "calls_from_spans",
    "relevant_role",
]


@dataclass(slots=True)
class _Trace:
    """What one trace needs for tool calls: its tool and chat spans, and every span's parent."""

    spans: list[SpanView] = field(default_factory=list)
    parents: dict[str, str | None] = field(default_factory=dict)
    conversation: str | None = None
    """The LangGraph thread its spans name, if any."""
    relevant: bool = False
    """Whether a tool or chat span arrived (a trace of roots and pauses only has no calls)."""
    resource: Mapping[str, Any] = field(default_factory=dict)
    """The attributes of its root span's resource."""
    agents: list[tuple[int, str]] = field(default_factory=list)
    """(start, name) of its other spans naming an agent."""


class ToolCallSpanExporter(SpanExporter, SpanProcessor):
    """Collect tool calls from finished spans, grouped by trace: an exporter and a processor.

    Use it behind ``SimpleSpanProcessor`` / ``BatchSpanProcessor``
    (``provider.add_span_processor(SimpleSpanProcessor(exporter))``) or directly as a processor
    (``provider.add_span_processor(exporter)``). Thread-safe.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self._traces: dict[str, _Trace] = {}
        self._joined: dict[str, Joined] = {}
        """Converted conversations, by group (the thread, else the trace id); dropped when one
        of its traces gets a span."""
        self._waiting: dict[str, set[str]] = {}
        """Call id -> the converted groups where a top-level request with it waits."""
        self._unrequested: dict[str, set[str]] = {}
        """Call id -> the converted groups where a top-level execution with it joined nothing."""
        self._unions: dict[frozenset[str], dict[str, list[ToolCall]]] = {}
        """Groups linked by call ids (a hand-written tool loop), converted together."""
        self._stale: set[str] = set()
        """Groups with spans not converted yet (their open ids are not indexed)."""
        self._shut_down = False

    # SpanExporter
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep the tool and chat spans of a batch, and the parent links of every span."""
        if self._shut_down:
            return SpanExportResult.FAILURE
        views: list[SpanView] = []
        links: list[tuple[str, str, str | None]] = []
        resources: dict[str, dict[str, Any]] = {}
        agents: list[tuple[str, int, str]] = []
        for span in spans:
            context = span.context
            if context is None:
                continue
            parent = span.parent
            parent_id = format(parent.span_id, "016x") if parent is not None else None
            events = ((e.name, e.attributes or {}) for e in span.events)
            trace_id = format(context.trace_id, "032x")
            if parent_id is None:
                resources[trace_id] = dict(span.resource.attributes)
            if keeps(span.attributes or {}, parent_id, events):
                views.append(SpanView.from_readable(span))
                continue
            agent = agent_name_of(span.attributes or {})
            if agent is not None:
                agents.append((trace_id, span.start_time or 0, agent))
            links.append((trace_id, format(context.span_id, "016x"), parent_id))
        self.add(views, links)
        with self._lock:  # what a TraceRun reads beyond the calls (run())
            for trace_id, resource in resources.items():
                self._traces.setdefault(trace_id, _Trace()).resource = resource
            for trace_id, start, agent in agents:
                self._traces.setdefault(trace_id, _Trace()).agents.append((start, agent))
        return SpanExportResult.SUCCESS

    def add(
        self,
        views: Iterable[SpanView],
        links: Iterable[tuple[str, str, str | None]] = (),
    ) -> None:
        """Add span views, and (trace id, span id, parent id) links of other spans."""
        with self._lock:
            touched: set[str] = set()
            for trace_id, span_id, parent_id in links:
                trace = self._traces.get(trace_id)
                if trace is None:
                    trace = self._traces[trace_id] = _Trace()
                trace.parents[span_id] = parent_id
                touched.add(trace_id)
            for view in views:
                trace = self._traces.get(view.trace_id)
                if trace is None:
                    trace = self._traces[view.trace_id] = _Trace()
                trace.spans.append(view)
                touched.add(view.trace_id)
                if trace.conversation is None:
                    trace.conversation = conversation_of(view)
                    if trace.conversation is not None:  # its group was the trace alone
                        self._forget(view.trace_id)
                        self._stale.discard(view.trace_id)
                if not trace.relevant and relevant_role(view.attributes) is not None:
                    trace.relevant = True
            for trace_id in touched:
                key = self._key(trace_id)
                self._forget(key)
                self._stale.add(key)
            if touched:
                self._unions.clear()

    # SpanProcessor
    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Take a span as it ends (when used as a SpanProcessor)."""
        self.export((span,))

    def shutdown(self) -> None:
        """Stop accepting spans; what was collected stays readable."""
        self._shut_down = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: always flushed."""
        return True

    # Reading
    def trace_ids(self) -> list[str]:
        """Trace ids (hex) with tool or chat spans, in the order their first span arrived."""
        with self._lock:
            return [trace_id for trace_id, trace in self._traces.items() if trace.relevant]

    def conversation(self, trace_id: str) -> list[str]:
        """The trace ids of the conversation ``trace_id`` belongs to (itself alone, if none)."""
        with self._lock:
            return list(self._group(trace_id.lower()))

    def calls(self, trace_id: str | None = None) -> list[ToolCall]:
        """The calls of one trace in request order (all traces, one after the other, if None).

        A trace's calls are those it requested (or executed unrequested), joined with the other
        traces of its conversation, and with the traces call ids link it to: a call paused in
        one run and resumed in the next, or requested in one and executed in another, is one
        call.
        """
        if trace_id is None:
            return [call for tid in self.trace_ids() for call in self.calls(tid)]
        key = trace_id.lower()
        with self._lock:
            trace = self._traces.get(key)
            if trace is None or not trace.relevant:
                return []
            return list(self._linked(self._key(key)).get(key, []))

    def run(self, trace_id: str) -> TraceRun:
        """One trace as a run for rules (:class:`~tracing.otel.trace_run.TraceRun`): its calls
        joined with its conversation's, its model calls, the user's input, the answer."""
        from tracing.otel.trace_run import read_run

        calls = self.calls(trace_id)
        key = trace_id.lower()
        with self._lock:
            trace = self._traces.get(key) or _Trace()
            spans = [view for view in trace.spans if view.parent_id is not None]
            root = next((view for view in trace.spans if view.parent_id is None), None)
            parents = dict(trace.parents)
            resource, agents = trace.resource, list(trace.agents)
        return read_run(key, spans, parents, root, resource=resource, agents=agents, calls=calls)

    def _key(self, trace_id: str) -> str:
        """The group of a trace: its conversation (LangGraph thread), else itself."""
        trace = self._traces.get(trace_id)
        conversation = trace.conversation if trace is not None else None
        return f"conversation:{conversation}" if conversation is not None else trace_id

    def _group(self, trace_id: str) -> tuple[str, ...]:
        """The traces sharing this trace's conversation, in arrival order (caller holds lock)."""
        conversation = self._traces[trace_id].conversation if trace_id in self._traces else None
        if conversation is None:
            return (trace_id,)
        return tuple(t for t, trace in self._traces.items() if trace.conversation == conversation)

    def _members(self, key: str) -> tuple[str, ...]:
        """The traces of a group, in arrival order (caller holds the lock)."""
        if key in self._traces and self._traces[key].conversation is None:
            return (key,)
        return tuple(t for t in self._traces if self._key(t) == key)

    def _forget(self, key: str) -> None:
        """Drop a group's conversion and its open ids (caller holds the lock)."""
        joined = self._joined.pop(key, None)
        if joined is None:
            return
        indexed = ((self._waiting, joined.waiting), (self._unrequested, joined.unrequested))
        for index, ids in indexed:
            for call_id in ids:
                groups = index.get(call_id)
                if groups is not None:
                    groups.discard(key)
                    if not groups:
                        del index[call_id]

    def _converted(self, key: str) -> Joined:
        """A group's calls per trace and open ids (cached and indexed; caller holds the lock)."""
        joined = self._joined.get(key)
        if joined is None:
            self._stale.discard(key)
            joined = self._joined[key] = self._join(self._members(key))
            for call_id in joined.waiting:
                self._waiting.setdefault(call_id, set()).add(key)
            for call_id in joined.unrequested:
                self._unrequested.setdefault(call_id, set()).add(key)
        return joined

    def _join(self, traces: Iterable[str], groups: dict[str, str] | None = None) -> Joined:
        items = [self._traces[t] for t in traces]
        spans = [view for trace in items for view in trace.spans]
        parents = {k: v for trace in items for k, v in trace.parents.items()}
        return join_traces(spans, parents, groups)

    def _linked(self, key: str) -> dict[str, list[ToolCall]]:
        """The calls per trace of a group, joined with the groups whose requests its
        executions answer by call id, or whose executions answer its requests (a tool loop
        written by hand, each model and tool call a run of its own; caller holds the lock)."""
        own = self._converted(key)
        if not own.waiting and not own.unrequested:
            return own.calls
        for other in list(self._stale):
            self._converted(other)  # every group's open ids are indexed before linking
        component = {key}
        todo = [key]
        while todo:
            joined = self._converted(todo.pop())
            found = {g for i in joined.unrequested for g in self._waiting.get(i, ())}
            found |= {g for i in joined.waiting for g in self._unrequested.get(i, ())}
            todo.extend(found - component)
            component |= found
        if len(component) == 1:
            return own.calls
        linked = frozenset(component)
        calls = self._unions.get(linked)
        if calls is None:
            groups = {t: other for other in linked for t in self._members(other)}
            traces = list(groups)
            calls = self._unions[linked] = self._join(traces, groups).calls
        return calls

    def clear(self) -> None:
        """Forget every collected span."""
        with self._lock:
            self._traces.clear()
            self._joined.clear()
            self._waiting.clear()
            self._unrequested.clear()
            self._unions.clear()
            self._stale.clear()
