"""The spans one open trace collected -> the :class:`~tracing.otel.trace_run.TraceRun` rules read.

Spans arrive two ways: the SDK's ``ReadableSpan`` (the processor inside the app) and the
:class:`~tracing.otel.span_view.SpanView` an OTLP request decodes to (``harness serve``). Both are
kept as they came, on the app's thread, and converted here on the processor's worker thread:
the app pays for a list append, not for a copy of every attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from tracing import SpanView
from tracing.otel.event_content import content_attributes
from tracing.otel.producers import agent_name_of
from tracing.otel.span_reading import keeps
from tracing.otel.span_view import SpanEvent
from tracing.otel.trace_run import SERVICE_NAME, AgentMark, TraceRun, read_run

__all__ = ["Received", "SpanItem", "read_trace", "root_only", "span_hex_id"]


@dataclass(frozen=True, slots=True)
class Received:
    """A span decoded from an OTLP request, with its resource's attributes."""

    view: SpanView
    resource: Mapping[str, Any]


SpanItem = ReadableSpan | Received


def span_hex_id(item: SpanItem) -> str:
    """The span id of an item as 16 lowercase hex digits."""
    if isinstance(item, Received):
        return item.view.span_id
    context = item.context
    return format(context.span_id, "016x") if context is not None else "0" * 16


def _parent_id(span: ReadableSpan) -> str | None:
    parent = span.parent
    return format(parent.span_id, "016x") if parent is not None else None


def read_trace(
    trace_id: str,
    items: Sequence[SpanItem],
    root: SpanItem | None,
    events: Sequence[tuple[str, SpanEvent]] = (),
) -> TraceRun:
    """The run of one trace: ``items`` every span it collected (``root`` among them, or None
    when the trace is read without its root); ``events`` the log events received for its spans
    as (span id, event), joined to them as eval-traces ``--logs`` joins a log file."""
    if events:
        items = _joined(items, events)
        root = next((i for i in items if _same(i, root)), None) if root is not None else None
    views: list[SpanView] = []
    parents: dict[str, str | None] = {}
    agents: list[AgentMark] = []
    resource: Mapping[str, Any] = {}
    root_view: SpanView | None = None
    for item in items:
        if isinstance(item, Received):
            view = item.view
            if item is root:
                root_view, resource = view, item.resource
                continue
            named = ((e.name, e.attributes) for e in view.events)
            if keeps(view.attributes, view.parent_id, named):
                views.append(view)
            else:
                _link(view.span_id, view.parent_id, view.attributes, view.start_ns, parents, agents)
            continue
        if item is root:
            root_view, resource = SpanView.from_readable(item), item.resource.attributes
            continue
        attributes = item.attributes or {}
        parent_id = _parent_id(item)
        named = ((e.name, e.attributes or {}) for e in item.events)
        if keeps(attributes, parent_id, named):
            views.append(SpanView.from_readable(item))
        else:
            span_id = span_hex_id(item)
            _link(span_id, parent_id, attributes, item.start_time or 0, parents, agents)
    if root_view is None and items:
        first = items[0]
        resource = first.resource if isinstance(first, Received) else first.resource.attributes
    return read_run(trace_id, views, parents, root_view, resource=dict(resource), agents=agents)


def root_only(trace_id: str, root: SpanItem) -> TraceRun:
    """What a trace's root span and resource say before its spans are read (no calls): enough
    for a selector's ``service``, ``root`` and ``attributes`` keys."""
    if isinstance(root, Received):
        name, attributes, resource = root.view.name, root.view.attributes, root.resource
    else:
        name, attributes, resource = root.name, root.attributes or {}, root.resource.attributes
    service = resource.get(SERVICE_NAME)
    return TraceRun(
        trace_id=trace_id,
        calls=(),
        service=service if isinstance(service, str) else None,
        root_name=name,
        root_attributes=attributes,
        resource=resource,
    )


def _same(item: SpanItem, root: SpanItem) -> bool:
    return span_hex_id(item) == span_hex_id(root)


def _joined(items: Sequence[SpanItem], events: Sequence[tuple[str, SpanEvent]]) -> list[SpanItem]:
    """``items`` with each span's log events among its own, in time order (its own first on a
    tie), and the messages they carry as the span's attributes, as :mod:`tracing.otlp.logs`
    joins them."""
    by_span: dict[str, list[SpanEvent]] = {}
    for span_id, event in events:
        by_span.setdefault(span_id, []).append(event)
    out: list[SpanItem] = []
    for item in items:
        extra = by_span.get(span_hex_id(item))
        if not extra:
            out.append(item)
            continue
        if isinstance(item, Received):
            view, resource = item.view, item.resource
        else:
            view, resource = SpanView.from_readable(item), item.resource.attributes
        merged = sorted((*view.events, *extra), key=lambda event: event.time_ns)
        attributes = view.attributes
        content = content_attributes(merged, attributes)  # messages sent as events
        if content:
            attributes = {**attributes, **content}
        out.append(Received(replace(view, attributes=attributes, events=tuple(merged)), resource))
    return out


def _link(
    span_id: str,
    parent_id: str | None,
    attributes: Mapping[str, Any],
    start_ns: int,
    parents: dict[str, str | None],
    agents: list[AgentMark],
) -> None:
    """Keep a span the conversion does not read: its parent link, and the agent it names."""
    parents[span_id] = parent_id
    agent = agent_name_of(attributes)
    if agent is not None:
        agents.append((start_ns, agent))
