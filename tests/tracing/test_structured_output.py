"""Structured output is the agent's answer, not a tool call, on every capture path.

``create_agent(..., response_format=ToolStrategy(Schema))`` makes the model call a tool named
after the schema, which the agent answers itself (tracing/langchain/final_answer.py). The recorder
leaves that call out; SpanEmitter notes it in a ``harness.structured_output`` event, so the exporter
and the OTLP file reader leave it out too. OpenInference and Traceloop runs of the same agent:
tests/tracing/test_parity.py (shape ``structured_output``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness.models.scripted import ScriptedChatModel
from tests.support.agents import MODES
from tests.support.parity_agents import (
    HAS_LANGCHAIN,
    REPORT,
    SHAPES,
    WeatherReport,
    get_weather,
    run_shape,
    thread_config,
)
from tracing import SpanEmitter, ToolCall, ToolCallRecorder, ToolCallSpanExporter
from tracing.otel.conventions import STRUCTURED_CALL_IDS, STRUCTURED_OUTPUT_EVENT
from tracing.otlp.file_format import OtlpJsonFileExporter, iter_trace_calls

pytestmark = pytest.mark.skipif(
    not HAS_LANGCHAIN, reason="create_agent and ToolStrategy need `pip install langchain`"
)


def _rows(calls: list[ToolCall]) -> list[tuple[Any, ...]]:
    return [(c.name, dict(c.args), c.status, c.id, c.agent, c.node) for c in calls]


def _every_path(case: Any, mode: str, folder: Path) -> tuple[list[ToolCall], ...]:
    """(recorder, exporter, file reader) calls of one run, and the spans it wrote."""
    path = folder / "spans.jsonl"
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    spans = InMemorySpanExporter()
    for processor in (exporter, spans, OtlpJsonFileExporter(path)):
        provider.add_span_processor(SimpleSpanProcessor(processor))
    recorder = ToolCallRecorder()
    emitter = SpanEmitter(provider, capture_content=True)
    run_shape(case, mode, thread_config(case, [recorder, emitter]))
    provider.shutdown()
    read = [call for _, calls in iter_trace_calls(path, errors=[]) for call in calls]
    events = [
        event
        for span in spans.get_finished_spans()
        for event in span.events
        if event.name == STRUCTURED_OUTPUT_EVENT
    ]
    assert events, "SpanEmitter noted no structured-output call"
    named = {i for event in events for i in (event.attributes or {})[STRUCTURED_CALL_IDS]}
    return recorder.calls(), exporter.calls(), read, [ToolCall(REPORT[0], id=i) for i in named]


@pytest.mark.parametrize("mode", MODES)
def test_the_structured_output_call_is_left_out_on_every_path(mode: str, tmp_path: Path) -> None:
    case = SHAPES["structured_output"]()
    recorded, exported, read, named = _every_path(case, mode, tmp_path)
    assert [(c.name, dict(c.args), c.status) for c in recorded] == case.expected
    assert _rows(exported) == _rows(recorded) == _rows(read)
    # the event names the WeatherReport call (and the answered get_weather call it keeps)
    assert len(named) == 2 and recorded[0].id in {c.id for c in named}


def _weather_desk(model_turns: list[Any]) -> BaseTool:
    """A ``create_agent`` with ``ToolStrategy`` output, used as a tool by another agent."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    inner = create_agent(
        ScriptedChatModel(model_turns),
        [get_weather],
        response_format=ToolStrategy(WeatherReport),
        name="desk",
    )

    @tool
    def weather_desk(city: str) -> str:
        """Ask the weather desk for a report on a city."""
        report = inner.invoke({"messages": [("user", city)]})["structured_response"]
        return f"{report.city}: {report.conditions}"

    return weather_desk


@pytest.mark.parametrize("mode", ["invoke", "astream"])
def test_an_agent_used_as_a_tool_leaves_its_structured_output_call_out(
    mode: str, tmp_path: Path
) -> None:
    """The inner agent's WeatherReport call is its answer to the outer agent's tool call."""
    from langchain.agents import create_agent

    from tests.support.parity_agents import ShapeCase

    desk = _weather_desk(
        [
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}]},
            {"tool_calls": [{"name": REPORT[0], "args": {"city": "Oslo", "conditions": "rain"}}]},
        ]
    )
    outer = create_agent(
        ScriptedChatModel(
            [{"tool_calls": [{"name": "weather_desk", "args": {"city": "Oslo"}}]}],
            final_answer="Rain in Oslo.",
        ),
        [desk],
        name="planner",
    )
    case = ShapeCase(
        "nested_structured_output",
        outer,
        [{"messages": [("user", "Oslo?")]}],
        [("weather_desk", {"city": "Oslo"}, "ok"), ("get_weather", {"city": "Oslo"}, "ok")],
        ["planner", "planner/weather_desk"],
    )
    recorded, exported, read, _ = _every_path(case, mode, tmp_path)
    assert [(c.name, dict(c.args), c.status) for c in recorded] == case.expected
    assert [c.agent for c in recorded] == case.agents
    assert _rows(exported) == _rows(recorded) == _rows(read)
