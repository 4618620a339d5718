"""SpanEmitter on real LangGraph agents, into the OTel SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.tools import tool
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from harness.models.scripted import ScriptedChatModel
from tests.support.agents import (
    MODES,
    AgentCase,
    add,
    bad_args_agent,
    build_react_graph,
    nested_agent,
    parallel_calls_agent,
    raising_tool_agent,
    run_case,
    single_call_agent,
    tool_exception_agent,
    unknown_tool_agent,
    user_input,
)
from tracing import SpanEmitter


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


def _run(emitter: SpanEmitter, case: AgentCase, mode: str = "invoke") -> None:
    if case.raises is not None:
        with pytest.raises(case.raises):
            run_case(case, mode, emitter.config)
        return
    run_case(case, mode, emitter.config)


def _by_id(spans: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {span.context.span_id: span for span in spans if span.context is not None}


def _ancestors(span: ReadableSpan, index: dict[int, ReadableSpan]) -> list[ReadableSpan]:
    out: list[ReadableSpan] = []
    while span.parent is not None:
        span = index[span.parent.span_id]
        out.append(span)
    return out


def _attr(span: ReadableSpan, key: str) -> Any:
    assert span.attributes is not None
    return span.attributes.get(key)


def _tools(spans: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    tools = [s for s in spans if _attr(s, "gen_ai.operation.name") == "execute_tool"]
    return sorted(tools, key=lambda s: s.start_time or 0)


def _trace_ids(spans: tuple[ReadableSpan, ...]) -> set[int]:
    return {span.context.trace_id for span in spans if span.context is not None}


@pytest.mark.parametrize("mode", MODES)
def test_single_call_spans_names_attributes_and_links(
    provider: TracerProvider, exporter: InMemorySpanExporter, mode: str
) -> None:
    _run(SpanEmitter(provider), single_call_agent(), mode)
    spans = exporter.get_finished_spans()
    assert sorted(s.name for s in spans) == [
        "chat scripted",
        "chat scripted",
        "execute_tool add",
        "invoke_agent single_call",
    ]
    assert len(_trace_ids(spans)) == 1
    index = _by_id(spans)
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent single_call"
    assert _attr(root, "gen_ai.operation.name") == "invoke_agent"
    assert _attr(root, "gen_ai.agent.name") == "single_call"
    (tool_span,) = _tools(spans)
    assert _ancestors(tool_span, index) == [root]
    assert _attr(tool_span, "gen_ai.tool.name") == "add"
    assert _attr(tool_span, "gen_ai.tool.type") == "function"
    assert str(_attr(tool_span, "gen_ai.tool.call.id")).startswith("call_")
    assert _attr(tool_span, "gen_ai.tool.call.arguments") is None  # content is opt-in
    assert _attr(tool_span, "gen_ai.tool.call.result") is None
    chats = [s for s in spans if s.name == "chat scripted"]
    for chat in chats:
        assert _ancestors(chat, index) == [root]
        assert _attr(chat, "gen_ai.operation.name") == "chat"
        assert _attr(chat, "gen_ai.request.model") == "scripted"
        assert _attr(chat, "gen_ai.provider.name") == "scripted"
        assert _attr(chat, "gen_ai.usage.input_tokens") > 0
        assert _attr(chat, "gen_ai.usage.output_tokens") > 0
        assert _attr(chat, "gen_ai.output.messages") is None
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)


def test_content_capture_puts_arguments_result_and_requested_calls(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    _run(SpanEmitter(provider, capture_content=True), parallel_calls_agent())
    spans = exporter.get_finished_spans()
    tools = {_attr(s, "gen_ai.tool.name"): s for s in _tools(spans)}
    assert json.loads(_attr(tools["slow_lookup"], "gen_ai.tool.call.arguments")) == {"key": "alpha"}
    assert _attr(tools["slow_lookup"], "gen_ai.tool.call.result") == "first"
    assert json.loads(_attr(tools["add"], "gen_ai.tool.call.arguments")) == {"a": 1, "b": 2}
    assert _attr(tools["add"], "gen_ai.tool.call.result") == "3"
    chats = sorted((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_time or 0)
    first_reply = json.loads(_attr(chats[0], "gen_ai.output.messages"))
    requested = [p for p in first_reply[0]["parts"] if p["type"] == "tool_call"]
    assert [(p["name"], p["arguments"]) for p in requested] == [
        ("slow_lookup", {"key": "alpha"}),
        ("add", {"a": 1, "b": 2}),
    ]
    # The span's call id is the id the model gave the request.
    assert [p["id"] for p in requested] == [
        _attr(tools["slow_lookup"], "gen_ai.tool.call.id"),
        _attr(tools["add"], "gen_ai.tool.call.id"),
    ]
    assert first_reply[0]["finish_reason"] == "tool_call"
    second_input = json.loads(_attr(chats[1], "gen_ai.input.messages"))
    assert [m["role"] for m in second_input] == ["user", "assistant", "tool", "tool"]


@pytest.mark.parametrize("mode", ["invoke", "astream"])
def test_parallel_tool_spans_share_the_agent_parent(
    provider: TracerProvider, exporter: InMemorySpanExporter, mode: str
) -> None:
    _run(SpanEmitter(provider), parallel_calls_agent(), mode)
    spans = exporter.get_finished_spans()
    (root,) = [s for s in spans if s.parent is None]
    tools = _tools(spans)
    assert sorted(_attr(s, "gen_ai.tool.name") for s in tools) == ["add", "echo", "slow_lookup"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in tools)
    assert len(_trace_ids(spans)) == 1


def test_raising_tool_marks_tool_and_agent_spans_failed(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    _run(SpanEmitter(provider), raising_tool_agent())
    spans = exporter.get_finished_spans()
    tools = {_attr(s, "gen_ai.tool.name"): s for s in _tools(spans)}
    failed = tools["explode"]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "explode failed: boom"
    assert _attr(failed, "error.type") == "ValueError"
    assert [e.name for e in failed.events] == ["exception"]
    assert tools["add"].status.status_code is StatusCode.UNSET
    (root,) = [s for s in spans if s.parent is None]
    assert root.status.status_code is StatusCode.ERROR
    assert _attr(root, "error.type") == "ValueError"


@pytest.mark.parametrize(
    ("build", "error_type"),
    [
        (tool_exception_agent, "tool_error"),
        (bad_args_agent, "pydantic_core._pydantic_core.ValidationError"),
    ],
)
def test_handled_tool_errors_mark_the_tool_span_only(
    provider: TracerProvider, exporter: InMemorySpanExporter, build: Any, error_type: str
) -> None:
    _run(SpanEmitter(provider), build())
    spans = exporter.get_finished_spans()
    (tool_span,) = _tools(spans)
    assert tool_span.status.status_code is StatusCode.ERROR
    assert _attr(tool_span, "error.type") == error_type
    (root,) = [s for s in spans if s.parent is None]
    assert root.status.status_code is StatusCode.UNSET  # the agent went on and answered


def test_unknown_tool_has_no_tool_span_but_is_in_the_reply(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    _run(SpanEmitter(provider, capture_content=True), unknown_tool_agent())
    spans = exporter.get_finished_spans()
    assert [_attr(s, "gen_ai.tool.name") for s in _tools(spans)] == ["add"]
    replies = [
        json.loads(_attr(s, "gen_ai.output.messages")) for s in spans if s.name.startswith("chat")
    ]
    names = [p["name"] for r in replies for p in r[0]["parts"] if p["type"] == "tool_call"]
    assert names == ["add", "teleport"]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_agent_used_as_tool_nests_its_agent_span_under_the_tool_span(
    provider: TracerProvider, exporter: InMemorySpanExporter, mode: str
) -> None:
    _run(SpanEmitter(provider), nested_agent(), mode)
    spans = exporter.get_finished_spans()
    assert len(_trace_ids(spans)) == 1
    index = _by_id(spans)
    names = {s.name: s for s in spans}
    outer, inner = names["invoke_agent nested"], names["invoke_agent researcher"]
    research = names["execute_tool research"]
    assert _ancestors(inner, index) == [research, outer]
    lookups = [s for s in spans if s.name == "execute_tool lookup"]
    assert len(lookups) == 2
    for span in lookups:
        assert _ancestors(span, index) == [inner, research, outer]


def test_start_scenario_wraps_runs_and_root_span_takes_attributes(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    emitter = SpanEmitter(provider, agent_name="weather")
    run_id = UUID(int=7)

    @tool
    def probe() -> str:
        """Mark the run's agent span from inside the run, as a runner would."""
        span = emitter.root_span(run_id)
        assert span is not None
        span.set_attribute("harness.probe", True)
        return "probed"

    graph = build_react_graph(ScriptedChatModel([{"tool_calls": [{"name": "probe"}]}]), [probe])
    with emitter.start_scenario("rain", {"harness.suite": "weather"}) as scenario:
        graph.invoke(user_input("probe"), {"callbacks": [emitter], "run_id": run_id})
        scenario.set_attribute("harness.score.accuracy", 1.0)
    spans = exporter.get_finished_spans()
    names = {s.name: s for s in spans}
    scenario_span, agent = names["scenario rain"], names["invoke_agent weather"]
    assert scenario_span.parent is None
    assert _attr(scenario_span, "harness.scenario") == "rain"
    assert _attr(scenario_span, "harness.suite") == "weather"
    assert _attr(scenario_span, "harness.score.accuracy") == 1.0
    assert agent.parent is not None and agent.parent.span_id == scenario_span.context.span_id
    assert _attr(agent, "harness.probe") is True
    assert emitter.root_span(run_id) is None  # ended with the run
    assert emitter.trace_id(run_id) == format(agent.context.trace_id, "032x")
    assert len(_trace_ids(spans)) == 1


def test_each_run_gets_its_own_trace(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    emitter = SpanEmitter(provider)
    _run(emitter, single_call_agent())
    _run(emitter, single_call_agent())
    spans = exporter.get_finished_spans()
    assert len(_trace_ids(spans)) == 2
    assert len([s for s in spans if s.parent is None]) == 2


def test_direct_tool_invoke_is_a_root_tool_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    emitter = SpanEmitter(provider, capture_content=True)
    add.invoke({"a": 1, "b": 1}, emitter.config)
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool add" and span.parent is None
    assert json.loads(_attr(span, "gen_ai.tool.call.arguments")) == {"a": 1, "b": 1}
    assert _attr(span, "gen_ai.tool.call.result") == "2"
