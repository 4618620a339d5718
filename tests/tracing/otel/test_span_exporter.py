"""ToolCallSpanExporter: finished spans of the three conventions -> ToolCalls, per trace.

Real OTel SDK throughout. Agent runs go through the real SpanEmitter; the convention edge cases
(what another instrumentor writes) are spans made with a real SDK tracer carrying the attributes
those instrumentors write (see tracing/otel/conventions.py for the source of each name).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExportResult,
)
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.support.agents import (
    add,
    echo_agent,
    nested_agent,
    parallel_calls_agent,
    run_case,
    unknown_tool_agent,
)
from tracing.otel.emitter import SpanEmitter
from tracing.otel.tool_call_exporter import RAW_ARGUMENTS_KEY, ToolCallSpanExporter
from tracing.records import ToolCall


def _rows(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any], str]]:
    return [(c.name, dict(c.args), c.status) for c in calls]


@contextmanager
def _collecting(kind: str = "direct") -> Iterator[tuple[TracerProvider, ToolCallSpanExporter]]:
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    if kind == "simple":
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif kind == "batch":
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    else:
        provider.add_span_processor(exporter)
    try:
        yield provider, exporter
    finally:
        provider.shutdown()


# --- real agents through the SpanEmitter --------------------------------------------------


@pytest.mark.parametrize("processor", ["simple", "batch", "direct"])
@pytest.mark.parametrize("build", [parallel_calls_agent, nested_agent, unknown_tool_agent])
def test_agent_run_gives_expected_calls(processor: str, build: Any) -> None:
    """Behind Simple / Batch processors and as a processor itself: one trace, calls in order."""
    case = build()
    with _collecting(processor) as (provider, exporter):
        emitter = SpanEmitter(provider, capture_content=True)
        run_case(case, "invoke", emitter.config)
        provider.force_flush()
        [trace_id] = exporter.trace_ids()
        calls = exporter.calls(trace_id)
    assert _rows(calls) == [(n, a, s) for n, a, s in case.expected]
    assert all(call.source == "otel" for call in calls)
    executed = [call for call in calls if call.status != "requested"]
    assert all(call.id and call.run_id and call.started_at and call.ended_at for call in executed)
    assert all(call.started_at <= call.ended_at for call in executed)  # type: ignore[operator]


def test_parallel_results_belong_to_their_arguments() -> None:
    """Parallel calls finish out of order; each call keeps its own result."""
    case = parallel_calls_agent()
    with _collecting() as (provider, exporter):
        run_case(case, "invoke", SpanEmitter(provider, capture_content=True).config)
        calls = exporter.calls(exporter.trace_ids()[0])
    assert [c.result for c in calls] == ["first", "3", "after"]


def test_one_trace_per_run() -> None:
    """Each run is a trace of its own calls, in arrival order; an unknown trace has none."""
    with _collecting() as (provider, exporter):
        emitter = SpanEmitter(provider, capture_content=True)
        for token in ("a", "b"):
            run_case(echo_agent(token), "invoke", emitter.config)
        trace_ids = exporter.trace_ids()
        tokens = [[call.args["token"] for call in exporter.calls(tid)] for tid in trace_ids]
        assert tokens == [["a-a", "a-b", "a-c"], ["b-a", "b-b", "b-c"]]
        assert exporter.calls(trace_ids[1].upper()) == exporter.calls(trace_ids[1])
        assert exporter.calls("0" * 32) == []


def test_direct_tool_invoke_without_a_model() -> None:
    """A tool invoked directly has no request: it still comes out, with its own arguments."""
    with _collecting() as (provider, exporter):
        add.invoke({"a": 2, "b": 5}, SpanEmitter(provider, capture_content=True).config)
        [call] = exporter.calls()
    assert (call.name, dict(call.args), call.status, call.result) == (
        "add",
        {"a": 2, "b": 5},
        "ok",
        "7",
    )


def test_concurrent_runs_do_not_cross() -> None:
    """16 threads through one emitter and one exporter: each trace has its own three calls."""
    with _collecting("batch") as (provider, exporter):
        emitter = SpanEmitter(provider, capture_content=True)
        tokens = [f"t{i}" for i in range(16)]
        threads = [
            threading.Thread(target=run_case, args=(echo_agent(t), "invoke", emitter.config))
            for t in tokens
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        provider.force_flush()
        per_trace = [exporter.calls(t) for t in exporter.trace_ids()]
    assert len(per_trace) == len(tokens)
    seen = set()
    for calls in per_trace:
        token = calls[0].args["token"].split("-")[0]
        assert [c.args["token"] for c in calls] == [f"{token}-a", f"{token}-b", f"{token}-c"]
        assert all(c.result == c.args["token"] for c in calls)
        seen.add(token)
    assert seen == set(tokens)


def test_clear_and_shutdown() -> None:
    """clear() forgets; after shutdown export refuses new spans."""
    with _collecting() as (provider, exporter):
        add.invoke({"a": 1, "b": 1}, SpanEmitter(provider).config)
        assert exporter.trace_ids()
        exporter.clear()
        assert exporter.trace_ids() == [] and exporter.calls() == []
        exporter.shutdown()
        assert exporter.export([]) is SpanExportResult.FAILURE
        assert exporter.force_flush() is True


# --- convention edge cases: spans as other instrumentors write them -----------------------


def _span(
    tracer: Tracer,
    name: str,
    attributes: Mapping[str, Any],
    *,
    error: str | None = None,
    children: Any = None,
) -> None:
    with tracer.start_as_current_span(
        name, attributes=dict(attributes), record_exception=False, set_status_on_exception=False
    ) as span:
        if children is not None:
            children()
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))


def _trace(build: Any) -> list[ToolCall]:
    with _collecting() as (provider, exporter):
        tracer = provider.get_tracer("test")
        _span(tracer, "root", {"some.attribute": 1}, children=lambda: build(tracer))
        [trace_id] = exporter.trace_ids()
        return exporter.calls(trace_id)


def test_non_tool_spans_are_ignored() -> None:
    """Spans of no convention never make a trace appear."""
    with _collecting() as (provider, exporter):
        tracer = provider.get_tracer("test")
        _span(tracer, "GET /", {"http.method": "GET"}, children=lambda: _span(tracer, "db", {}))
        assert exporter.trace_ids() == []


@pytest.mark.parametrize(
    "raw",
    ['{"city": "Ber', "[1, 2]", "not json at all"],
)
def test_unparsable_genai_arguments_become_raw_text(raw: str) -> None:
    """A GenAI tool span whose arguments are not a JSON object: raw text kept, error says why."""
    calls = _trace(
        lambda tracer: _span(
            tracer,
            "execute_tool weather",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": raw,
            },
        )
    )
    [call] = calls
    assert call.args == {RAW_ARGUMENTS_KEY: raw}
    assert call.error is not None and "JSON" in call.error
    assert call.id == "c1" and call.status == "ok"


def _openinference_llm(tracer: Tracer, calls: list[tuple[str, str, str]]) -> None:
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
    prefix = "llm.output_messages.0.message.tool_calls"
    for index, (call_id, name, arguments) in enumerate(calls):
        attributes[f"{prefix}.{index}.tool_call.id"] = call_id
        attributes[f"{prefix}.{index}.tool_call.function.name"] = name
        attributes[f"{prefix}.{index}.tool_call.function.arguments"] = arguments
    _span(tracer, "ChatModel", attributes)


def _openinference_tool(
    tracer: Tracer, name: str, input_value: str, output: Any = None, error: str | None = None
) -> None:
    attributes: dict[str, Any] = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "input.value": input_value,
    }
    if output is not None:
        attributes["output.value"] = json.dumps(output)
    _span(tracer, name, attributes, error=error)


def test_openinference_flattened_argument_is_recovered_from_the_request() -> None:
    """input.value = "Berlin" (one string argument) and no id: both come from the request."""

    def build(tracer: Tracer) -> None:
        _openinference_llm(tracer, [("c1", "weather", '{"city": "Berlin"}')])
        _openinference_tool(tracer, "weather", "Berlin", error="boom")

    [call] = _trace(build)
    assert (call.name, dict(call.args), call.id, call.status) == (
        "weather",
        {"city": "Berlin"},
        "c1",
        "error",
    )
    assert call.error == "boom"


def test_openinference_flattened_argument_without_request_is_kept_raw() -> None:
    """No request in the trace: the bare value is kept raw, with an error naming the cause."""
    [call] = _trace(lambda tracer: _openinference_tool(tracer, "weather", "Berlin"))
    assert call.args == {RAW_ARGUMENTS_KEY: "Berlin"}
    assert call.error is not None and "OpenInference" in call.error


def test_openinference_tool_message_gives_id_and_error_status() -> None:
    """The returned ToolMessage in output.value carries the id and an error status."""
    message = {
        "type": "tool",
        "data": {"content": "cannot", "tool_call_id": "c9", "status": "error", "type": "tool"},
    }

    def build(tracer: Tracer) -> None:
        _openinference_llm(tracer, [("c9", "flaky", '{"x": 7}')])
        _openinference_tool(tracer, "flaky", '{"x": 7}', output=message)

    [call] = _trace(build)
    assert (call.id, call.status, call.result, call.error) == ("c9", "error", "cannot", "cannot")


def test_openinference_same_name_calls_join_in_order() -> None:
    """Two id-less executions of one tool join the two requests in request order."""

    def build(tracer: Tracer) -> None:
        _openinference_llm(
            tracer, [("c1", "lookup", '{"key": "a"}'), ("c2", "lookup", '{"key": "b"}')]
        )
        _openinference_tool(tracer, "lookup", "a")
        _openinference_tool(tracer, "lookup", "b")

    calls = _trace(build)
    assert [(c.id, c.args["key"]) for c in calls] == [("c1", "a"), ("c2", "b")]


def test_requested_never_executed_in_each_convention() -> None:
    """A request no tool span runs stays `requested`, from each convention's chat span shape."""

    def build(tracer: Tracer) -> None:
        output = [
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "id": "g1", "name": "fly", "arguments": {"to": "x"}}
                ],
            }
        ]
        _span(
            tracer,
            "chat m",
            {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(output)},
        )
        _openinference_llm(tracer, [("o1", "swim", '{"in": "lake"}')])
        _span(
            tracer,
            "ChatModel.chat",
            {
                "llm.request.type": "chat",
                "gen_ai.completion.0.tool_calls.0.id": "t1",
                "gen_ai.completion.0.tool_calls.0.name": "run",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"km": 5}',
            },
        )

    calls = _trace(build)
    assert [(c.name, dict(c.args), c.id, c.status) for c in calls] == [
        ("fly", {"to": "x"}, "g1", "requested"),
        ("swim", {"in": "lake"}, "o1", "requested"),
        ("run", {"km": 5}, "t1", "requested"),
    ]


def test_traceloop_envelope_with_only_input_str() -> None:
    """Traceloop's input_str is str(dict): read back without evaluating code; id from kwargs."""
    envelope = {"input_str": "{'a': 1, 'b': 'x'}", "kwargs": {"tool_call_id": "t7"}}
    calls = _trace(
        lambda tracer: _span(
            tracer,
            "execute_tool add",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "add",
                "traceloop.entity.input": json.dumps(envelope),
                "gen_ai.operation.name": "execute_tool",
                "error.type": "ValueError",
            },
        )
    )
    [call] = calls
    assert (call.name, dict(call.args), call.id, call.status) == (
        "add",
        {"a": 1, "b": "x"},
        "t7",
        "error",
    )


def test_traceloop_unreadable_envelope_never_crashes() -> None:
    """A Traceloop tool span whose input is not JSON: raw text, error, no exception."""
    [call] = _trace(
        lambda tracer: _span(
            tracer,
            "x",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "x",
                "traceloop.entity.input": "<<garbage",
            },
        )
    )
    assert call.args == {RAW_ARGUMENTS_KEY: "<<garbage"}
    assert call.error is not None and "traceloop.entity.input" in call.error


def test_tool_named_agent_is_still_a_tool_in_openinference() -> None:
    """OpenInference marks a tool whose name contains "agent" as AGENT; tool.name still counts."""
    calls = _trace(
        lambda tracer: _span(
            tracer,
            "research_agent",
            {
                "openinference.span.kind": "AGENT",
                "tool.name": "research_agent",
                "input.value": '{"q": "x", "n": 1}',
            },
        )
    )
    assert _rows(calls) == [("research_agent", {"q": "x", "n": 1}, "ok")]
