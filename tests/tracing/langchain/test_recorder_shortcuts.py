"""The recorder's shortcuts for a tool invoked directly give what the general path gives.

``agent_path`` answers a run outside any subgraph without slicing; ``on_tool_start`` skips the
request and retry searches in a new scope that holds nothing; ``on_tool_end`` reads a plain
result without ``tool_outcome``. Each is checked against the general rule it stands in for.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from opentelemetry.sdk.trace import TracerProvider

from tracing import ToolCall, ToolCallRecorder
from tracing.langchain.events import agent_path, tool_outcome
from tracing.otel.emitter import SpanEmitter
from tracing.otel.tool_call_exporter import ToolCallSpanExporter

_NAMES = st.sampled_from(["graph", "research", "tools", "agent"])
_PATHS = st.lists(_NAMES, max_size=3).map(tuple)


def _general_agent_path(
    prefix: Sequence[str], base: Sequence[str], namespace: Sequence[str]
) -> str | None:
    """docs/architecture.md "Capture": the scope's agents, then the subgraphs below its base
    (the namespace's last entry is a node, not an agent)."""
    inner = list(namespace[len(base) :]) if tuple(namespace[: len(base)]) == tuple(base) else []
    parts = [*prefix, *inner[:-1]]
    return "/".join(parts) if parts else None


@given(_PATHS, _PATHS, _PATHS)
def test_agent_path_agrees_with_the_general_rule(
    prefix: tuple[str, ...], base: tuple[str, ...], namespace: tuple[str, ...]
) -> None:
    assert agent_path(prefix, base, namespace) == _general_agent_path(prefix, base, namespace)


@tool
def reported_failure(reason: str) -> ToolMessage:
    """Return an error ToolMessage without a tool_call_id, as a hand-written tool might."""
    return ToolMessage(content=f"refused: {reason}", tool_call_id="", status="error")


@tool
def plain_value(n: int) -> dict[str, int]:
    """Return a plain dict."""
    return {"n": n}


def test_a_direct_error_message_is_still_an_error_with_its_text() -> None:
    recorder = ToolCallRecorder()
    output = reported_failure.invoke({"reason": "quota"}, recorder.config)
    (call,) = recorder.calls()
    assert (call.status, call.result, call.error) == ("error", "refused: quota", "refused: quota")
    assert (call.result, call.error) == tool_outcome(output)


def test_a_plain_result_is_kept_as_it_is_and_each_invoke_is_its_own_call() -> None:
    recorder = ToolCallRecorder()
    for n in (1, 1, 2):
        plain_value.invoke({"n": n}, recorder.config)
    calls = recorder.calls()
    # three top-level runs: equal arguments in separate runs are never joined or retried
    assert [(c.status, c.result, len(c.attempts)) for c in calls] == [
        ("ok", {"n": 1}, 1),
        ("ok", {"n": 1}, 1),
        ("ok", {"n": 2}, 1),
    ]
    assert [c.agent for c in calls] == [None, None, None]
    assert len(recorder.calls_by_run()) == 3


def test_direct_invokes_give_the_same_calls_through_the_recorder_and_the_span_path() -> None:
    """Parity for the shape these shortcuts serve: tools invoked directly, one run each."""
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(exporter)
    recorder = ToolCallRecorder()
    emitter = SpanEmitter(provider, capture_content=True)
    config = RunnableConfig(callbacks=[recorder, emitter])
    try:
        plain_value.invoke({"n": 3}, config)
        reported_failure.invoke({"reason": "quota"}, config)
        whole_call = {"name": "plain_value", "args": {"n": 4}, "id": "c-9", "type": "tool_call"}
        plain_value.invoke(whole_call, config)
        with pytest.raises(ValueError):
            plain_value.invoke({"n": "not a number"}, config)
        spans = exporter.calls()
    finally:
        provider.shutdown()

    def shape(calls: Sequence[ToolCall]) -> list[tuple[object, ...]]:
        return [(c.name, dict(c.args), c.status, c.id, c.agent, len(c.attempts)) for c in calls]

    recorded = recorder.calls()
    assert [c.status for c in recorded] == ["ok", "error", "ok", "error"]
    assert shape(spans) == shape(recorded)
