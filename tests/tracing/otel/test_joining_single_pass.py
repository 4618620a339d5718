"""The joiner's single pass for the common trace gives the calls the full join gives.

``tracing.otel.joining._join`` hands traces without chat spans whose tool spans all succeeded at the
top level to ``_unrequested``; every trace, of that shape or not, must come out as
``_join_requests`` (the rules of the module docstring) joins it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracing.otel.conventions import AGENT_PATH, TRACELOOP_NAMESPACE, classify
from tracing.otel.joining import _gather, _join, _join_requests, calls_from_spans
from tracing.otel.span_view import SpanView
from tracing.records import Attempt

TRACE = "ab" * 16
ROOT = "00000000000000aa"
AGENT_SPAN = "00000000000000bb"  # a chain span between the root and the tools: a parent link
PARENTS = {AGENT_SPAN: ROOT}


def _tool_attributes(draw: Any, index: int) -> dict[str, Any]:
    name = draw(st.sampled_from(["lookup", "search", "get_time"]))
    args = draw(st.sampled_from([None, "{}", '{"city": "Berlin"}', '"bare"', "not json"]))
    if draw(st.booleans()):  # GenAI (SpanEmitter)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.result": draw(st.sampled_from(["ok", '{"n": 1}'])),
        }
        if args is not None:
            attributes["gen_ai.tool.call.arguments"] = args
        if draw(st.booleans()):
            attributes["gen_ai.tool.call.id"] = draw(st.sampled_from(["c1", "c2", f"c{index}"]))
    else:  # Traceloop: keeps a LangGraph namespace
        inputs = {"inputs": json.loads(args)} if args in ("{}", '{"city": "Berlin"}') else {}
        attributes = {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": name,
            "traceloop.entity.input": json.dumps(inputs),
        }
        namespace = draw(st.sampled_from([None, "", "tools:1", "research:7|tools:2"]))
        if namespace is not None:
            attributes[TRACELOOP_NAMESPACE] = namespace
    if draw(st.integers(0, 3)) == 0:
        attributes[AGENT_PATH] = draw(st.sampled_from(["", "bench", "supervisor/research"]))
    if draw(st.integers(0, 5)) == 0:
        attributes["error.type"] = draw(st.sampled_from(["ValueError", "GraphInterrupt"]))
    return attributes


@st.composite
def _traces(draw: Any) -> list[SpanView]:
    """A root, and tool spans under it (or under one another), at times that often tie."""
    root_attributes = draw(
        st.sampled_from([{}, {"gen_ai.agent.name": "bench"}, {"harness.scenario": "s"}])
    )
    spans = [SpanView(TRACE, ROOT, "invoke_agent bench", root_attributes, 1, 100)]
    tool_ids: list[str] = []
    for index in range(draw(st.integers(0, 5))):
        span_id = f"{index + 1:016x}"
        parents = [ROOT, AGENT_SPAN] * 3 + tool_ids  # mostly top-level, sometimes nested
        start = draw(st.integers(2, 6))
        spans.append(
            SpanView(
                TRACE,
                span_id,
                "execute_tool x",
                _tool_attributes(draw, index),
                start,
                start + draw(st.integers(0, 3)),
                draw(st.sampled_from(parents)),
                draw(st.sampled_from(["UNSET", "UNSET", "UNSET", "OK", "ERROR"])),
            )
        )
        tool_ids.append(span_id)
    if draw(st.integers(0, 4)) == 0:  # a chat span asking for a call: the full join only
        messages = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "lookup"}]}]
        chat = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(messages)}
        spans.append(SpanView(TRACE, "00000000000000cc", "chat m", chat, 1, 2, AGENT_SPAN))
    return draw(st.permutations(spans))


def _gathered(spans: list[SpanView]) -> Any:
    return _gather([(span, classify(span.attributes)) for span in spans], PARENTS)


@settings(max_examples=400, deadline=None)
@given(_traces())
def test_the_single_pass_joins_as_the_full_join(spans: list[SpanView]) -> None:
    """Same calls, same order, same fields, whichever path the trace takes."""
    assert _join(*_gathered(spans)) == _join_requests(*_gathered(spans))


def test_the_common_trace_takes_the_single_pass_and_keeps_every_field() -> None:
    """Two top-level tool spans that succeeded: one call each, in start order, each with its
    one attempt, the root's agent, and no request (turn 0)."""
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": "r"}
    spans = [
        SpanView(TRACE, "0000000000000002", "t", {**tool, "gen_ai.tool.name": "b"}, 5, 6, ROOT),
        SpanView(
            TRACE,
            "0000000000000001",
            "t",
            {**tool, "gen_ai.tool.name": "a", "gen_ai.tool.call.arguments": '{"x": 1}'},
            3,
            4,
            AGENT_SPAN,
        ),
        SpanView(TRACE, ROOT, "r", {"gen_ai.agent.name": "bench"}, 1, 9),
    ]
    chats, executions, links, info = _gathered(spans)
    assert not chats and all(e.status == "ok" for e in executions)
    first, second = calls_from_spans(spans, PARENTS)
    assert (first.name, first.args, first.turn, first.agent) == ("a", {"x": 1}, 0, "bench")
    assert first.attempts == (Attempt("ok", None, 3, 4),)
    assert (first.run_id, first.parent_run_id, first.source) == (
        "0000000000000001",
        AGENT_SPAN,
        "otel",
    )
    assert (second.name, second.args, second.started_at, second.ended_at) == ("b", {}, 5, 6)
    assert _join(chats, executions, links, info) == _join_requests(*_gathered(spans))
