"""The agent path of a call's run: written on its span, or rebuilt from the scopes above it.

Used by :mod:`tracing.otel.joining` (its module docstring states the rule): SpanEmitter writes the
path itself (``harness.agent.path``); otherwise it is the root span's agent name, the names of
the tools whose runs hold the span (an agent used as a tool), and the LangGraph namespace the
convention keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tracing.agent_paths import agent_path
from tracing.otel.span_reading import ExecutedCall, Where
from tracing.otel.span_view import SpanView

__all__ = ["MAX_DEPTH", "Agents", "top_agent"]

MAX_DEPTH = 10_000
"""The deepest chain of scopes followed (a cycle of parent links ends there)."""


class Agents:
    """The agent path of each span's run: written on the span, or rebuilt from its scopes."""

    def __init__(
        self,
        tools: Mapping[str, ExecutedCall],
        scope_of: Callable[[SpanView], str | None],
        root_names: Mapping[str, str | None],
    ) -> None:
        self._tools = tools
        self._scope_of = scope_of
        self._root_names = root_names
        self._places: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def path(self, span: SpanView, scope: str | None, where: Where | None) -> str | None:
        """The agent path of the run behind ``span`` (in ``scope``, read at ``where``)."""
        if scope is None:
            return top_agent(where, self._root_names.get(span.trace_id))
        if where is not None and where.agent is not None:
            return where.agent
        prefix, base = self._place(scope, span.trace_id, 0)
        return agent_path(prefix, base, where.namespace if where is not None else ())

    def _place(
        self, scope: str | None, trace_id: str, depth: int
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if scope is None or depth > MAX_DEPTH:
            name = self._root_names.get(trace_id)
            return ((name,) if name else ()), ()
        known = self._places.get(scope)
        if known is not None:
            return known
        tool = self._tools[scope]
        where = tool.where
        agent = where.agent if where is not None else None
        if agent is None:
            prefix, base = self._place(self._scope_of(tool.span), trace_id, depth + 1)
            agent = agent_path(prefix, base, where.namespace if where is not None else ())
            outer = tuple(agent.split("/")) if agent else prefix
        else:
            outer = tuple(agent.split("/"))
        place = ((*outer, tool.name), where.namespace if where is not None else ())
        self._places[scope] = place
        return place


def top_agent(where: Where | None, root_name: str | None) -> str | None:
    """The agent path of a top-level run (in no tool's scope): written on the span, else the
    root's agent name and the namespace the convention keeps."""
    if where is not None and where.agent is not None:
        return where.agent
    namespace = where.namespace if where is not None else ()
    if not namespace:
        return root_name or None
    return agent_path((root_name,) if root_name else (), (), namespace)
