"""SpanView: the read-only model of a finished span that every span reader shares.

The SDK exporter (:mod:`tracing.otel.tool_call_exporter`, from ``ReadableSpan``) and the OTLP JSON
reader (:mod:`tracing.otlp.file_format`, from file lines) both build these views, so the tool-call
conversion (:mod:`tracing.otel.span_reading`, :mod:`tracing.otel.joining`) reads one shape whatever
the source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry.trace import StatusCode

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["SpanEvent", "SpanStatus", "SpanView"]

SpanStatus = Literal["UNSET", "OK", "ERROR"]


@dataclass(slots=True)
class SpanEvent:
    """One span event: its name, attributes and time (ns since the epoch; 0 when unknown)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int = 0


@dataclass(slots=True)
class SpanView:
    """The parts of a finished span the tool-call conversion reads; ids are lowercase hex."""

    trace_id: str
    span_id: str
    name: str
    attributes: Mapping[str, Any]
    start_ns: int = 0
    end_ns: int = 0
    parent_id: str | None = None
    status: SpanStatus = "UNSET"
    status_message: str | None = None
    events: tuple[SpanEvent, ...] = ()

    @classmethod
    def from_readable(cls, span: ReadableSpan) -> SpanView:
        """View an SDK span (as handed to exporters and processors)."""
        context = span.context
        if context is None:
            raise ValueError(f"span {span.name!r} has no span context; cannot tell its trace")
        parent = span.parent
        code = span.status.status_code
        return cls(
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            name=span.name,
            attributes=dict(span.attributes or {}),
            start_ns=span.start_time or 0,
            end_ns=span.end_time or 0,
            parent_id=format(parent.span_id, "016x") if parent is not None else None,
            status="ERROR"
            if code is StatusCode.ERROR
            else "OK"
            if code is StatusCode.OK
            else "UNSET",
            status_message=span.status.description,
            events=tuple(
                SpanEvent(e.name, dict(e.attributes or {}), e.timestamp or 0) for e in span.events
            ),
        )
