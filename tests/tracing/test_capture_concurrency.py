"""One recorder and one SpanEmitter shared by 64 concurrent runs (threads, then asyncio tasks)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.agents import (
    SHARED_ECHO_IDS,
    AgentCase,
    arun_case,
    echo_agent,
    parallel_calls_agent,
    run_case,
)
from tracing import SpanEmitter, ToolCall, ToolCallRecorder

RUNS = 64
MODEL_LATENCY = 0.005  # seconds per model call, so the runs overlap


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def emitter(exporter: InMemorySpanExporter) -> Iterator[SpanEmitter]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield SpanEmitter(provider, capture_content=True)
    provider.shutdown()


def _cases() -> list[AgentCase]:
    # Odd runs reuse the same call ids, so a join by id that ignored the run would cross them.
    return [
        echo_agent(f"t{index:02d}", latency=MODEL_LATENCY, shared_ids=index % 2 == 1)
        for index in range(RUNS)
    ]


def _check_recorder(recorder: ToolCallRecorder, cases: list[AgentCase]) -> None:
    runs = recorder.calls_by_run()
    assert len(runs) == RUNS
    calls = [call for run in runs.values() for call in run]
    tokens = Counter(str(call.args["token"]) for call in calls)
    # Every call recorded exactly once, none lost, none duplicated.
    assert tokens == Counter(
        token for case in cases for _, args, _ in case.expected for token in [args["token"]]
    )
    for call in calls:
        assert call.status == "ok"
        assert call.result == call.args["token"]  # its own result, not a neighbour's
    fresh_ids = [call.id for call in calls if call.id not in SHARED_ECHO_IDS]
    assert len(fresh_ids) == len(set(fresh_ids)) == len(calls) // 2
    expected_by_prefix = {case.expected[0][1]["token"][:-2]: case.expected for case in cases}
    for run in runs.values():
        prefix = str(run[0].args["token"])[:-2]
        assert _triples(run) == expected_by_prefix[prefix]  # request order within each run
        assert [call.turn for call in run] == [0, 0, 1]
        ids = tuple(call.id for call in run)
        assert ids == SHARED_ECHO_IDS or not set(ids) & set(SHARED_ECHO_IDS)


def _triples(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any], str]]:
    return [(call.name, dict(call.args), call.status) for call in calls]


def _check_spans(exporter: InMemorySpanExporter) -> None:
    spans = exporter.get_finished_spans()
    index = {span.context.span_id: span for span in spans if span.context is not None}
    roots = {
        span.context.trace_id: span
        for span in spans
        if span.parent is None and span.context is not None
    }
    assert len(roots) == RUNS  # one trace per run, one root per trace
    tools = [
        s
        for s in spans
        if s.attributes and s.attributes.get("gen_ai.operation.name") == "execute_tool"
    ]
    assert len(tools) == RUNS * 3
    per_trace: Counter[int] = Counter()
    for span in tools:
        assert span.context is not None and span.attributes is not None
        root = _root_of(span, index)
        assert root is roots[span.context.trace_id]
        token = json.loads(str(span.attributes["gen_ai.tool.call.arguments"]))["token"]
        assert span.attributes["gen_ai.tool.call.result"] == token
        assert root.attributes is not None
        assert root.attributes["gen_ai.agent.name"] == f"echo_{token[:-2]}"
        per_trace[span.context.trace_id] += 1
    assert set(per_trace.values()) == {3}


def _root_of(span: ReadableSpan, index: dict[int, ReadableSpan]) -> ReadableSpan:
    while span.parent is not None:
        span = index[span.parent.span_id]
    return span


def test_64_threads_share_one_recorder_and_one_emitter(
    emitter: SpanEmitter, exporter: InMemorySpanExporter
) -> None:
    recorder = ToolCallRecorder()
    cases = _cases()
    start = threading.Barrier(RUNS)
    config: Any = {"callbacks": [recorder, emitter]}

    def drive(case: AgentCase) -> None:
        start.wait()
        run_case(case, "invoke", config)

    with ThreadPoolExecutor(max_workers=RUNS) as pool:
        list(pool.map(drive, cases))
    _check_recorder(recorder, cases)
    _check_spans(exporter)


async def test_64_asyncio_tasks_share_one_recorder_and_one_emitter(
    emitter: SpanEmitter, exporter: InMemorySpanExporter
) -> None:
    recorder = ToolCallRecorder()
    cases = _cases()
    config: Any = {"callbacks": [recorder, emitter]}
    modes = ["ainvoke", "astream"]
    await asyncio.gather(
        *(arun_case(case, modes[index % 2], config) for index, case in enumerate(cases))
    )
    _check_recorder(recorder, cases)
    _check_spans(exporter)


def test_one_graph_and_one_model_shared_by_concurrent_runs() -> None:
    # The scripted model is stateless, so one compiled graph serves concurrent runs.
    case = parallel_calls_agent(latency=MODEL_LATENCY)
    recorder = ToolCallRecorder()
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(lambda _: run_case(case, "invoke", recorder.config), range(16)))
    runs = recorder.calls_by_run()
    assert len(runs) == 16
    for run in runs.values():
        assert _triples(run) == case.expected
        assert [call.result for call in run] == ["first", "3", "after"]
