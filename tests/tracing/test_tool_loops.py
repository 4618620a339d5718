"""LangChain's tool-calling loop written by hand: every model and tool call a run of its own.

The guide calls the model, then each tool with the model's tool call, then the model again,
each an ``invoke`` of its own, so each is a top-level run (and a trace). An execution joins the
request its call id names in another top-level run: the only one waiting with that id, else the
only one made in a run of the same asyncio task or OS thread, else none
(``tracing.langchain.call_tree.find_elsewhere``; ``tracing.otel.joining.join_traces`` on spans).
Concurrent loops through one recorder must never cross, even when the provider reuses ids.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.agents import MODES, add
from tests.support.parity_agents import LOOP_CALLS, LOOP_QUESTION, loop_model, multiply
from tracing import SpanEmitter, ToolCall, ToolCallRecorder, ToolCallSpanExporter
from tracing.langchain.capture import capture_tool_calls
from tracing.otlp.file_format import OtlpJsonFileExporter, iter_trace_calls

TOOLS = {"add": add, "multiply": multiply}
REUSED_IDS = ("call_1", "call_2")
"""The ids every loop's model gives, as a provider that numbers calls per reply does."""


def _rows(calls: list[ToolCall]) -> list[tuple[Any, ...]]:
    return [(c.name, dict(c.args), c.status, c.id, c.result, c.agent, c.node) for c in calls]


@contextmanager
def _span_path() -> Iterator[tuple[SpanEmitter, ToolCallSpanExporter]]:
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield SpanEmitter(provider, capture_content=True), exporter
    provider.shutdown()


# --- the guide, literally ----------------------------------------------------------------------


def test_the_guide_loop_without_a_config_records_each_call_once() -> None:
    """The guide's code as written (no config at all), inside ``capture_tool_calls()``."""
    llm_with_tools = loop_model()
    with capture_tool_calls() as recorder:
        messages: list[BaseMessage] = [HumanMessage(LOOP_QUESTION)]
        ai_msg = llm_with_tools.invoke(messages)
        assert isinstance(ai_msg, AIMessage)
        messages.append(ai_msg)
        for tool_call in ai_msg.tool_calls:
            selected_tool = {"add": add, "multiply": multiply}[tool_call["name"].lower()]
            tool_msg = selected_tool.invoke(tool_call)
            messages.append(tool_msg)
        llm_with_tools.invoke(messages)
    calls = recorder.calls()
    assert [(c.name, dict(c.args), c.status, c.result) for c in calls] == [
        ("multiply", {"a": 3, "b": 12}, "ok", "36"),
        ("add", {"a": 11, "b": 49}, "ok", "60"),
    ]
    assert [c.id for c in calls] == [call["id"] for call in ai_msg.tool_calls]
    assert all(len(c.attempts) == 1 and c.agent is None for c in calls)
    # four top-level runs; the calls belong to the model run that requested them
    assert [len(run) for run in recorder.calls_by_run().values()] == [2, 0, 0, 0]


async def test_the_async_guide_loop_without_a_config_records_each_call_once() -> None:
    llm_with_tools = loop_model()
    async with capture_tool_calls() as recorder:
        messages: list[BaseMessage] = [HumanMessage(LOOP_QUESTION)]
        ai_msg = await llm_with_tools.ainvoke(messages)
        assert isinstance(ai_msg, AIMessage)
        messages.append(ai_msg)
        for tool_call in ai_msg.tool_calls:
            messages.append(await TOOLS[tool_call["name"]].ainvoke(tool_call))
        await llm_with_tools.ainvoke(messages)
    assert [(c.name, c.status, c.result) for c in recorder.calls()] == [
        ("multiply", "ok", "36"),
        ("add", "ok", "60"),
    ]


def test_the_exporter_joins_the_loop_as_its_spans_arrive() -> None:
    """Read between the runs: the requests wait, then each execution joins its own."""
    recorder = ToolCallRecorder()
    with _span_path() as (emitter, exporter):
        config = RunnableConfig(callbacks=[recorder, emitter])
        llm = loop_model()
        reply = llm.invoke([HumanMessage(LOOP_QUESTION)], config)
        assert isinstance(reply, AIMessage)
        (first,) = exporter.trace_ids()
        assert [c.status for c in exporter.calls(first)] == ["requested", "requested"]
        multiply.invoke(reply.tool_calls[0], config)
        assert [c.status for c in exporter.calls(first)] == ["ok", "requested"]
        add.invoke(reply.tool_calls[1], config)
        first_trace, *tool_traces = exporter.trace_ids()
        assert [(c.name, c.status, c.result) for c in exporter.calls(first_trace)] == [
            ("multiply", "ok", "36"),
            ("add", "ok", "60"),
        ]
        assert [exporter.calls(t) for t in tool_traces] == [[], []]
        assert [c.turn for c in exporter.calls()] == [0, 0]
    assert [row[:5] for row in _rows(recorder.calls())] == [
        row[:5] for row in _rows(exporter.calls())
    ]


@pytest.mark.parametrize("enclosed", [True, False])
def test_an_otlp_file_reads_the_loop_right_when_one_span_holds_it(
    tmp_path: Path, enclosed: bool
) -> None:
    """The file reader joins within a trace only: inside one enclosing span (``harness run``'s
    scenario span, a web request's span) the loop is one trace and reads as two calls; without
    one it is four traces, read apart (the exporter, holding them all, joins them)."""
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    emitter = SpanEmitter(provider, capture_content=True)
    llm = loop_model()
    if enclosed:
        with emitter.start_scenario("loop"):
            asyncio.run(_guide(llm, "invoke", emitter.config))
    else:
        asyncio.run(_guide(llm, "invoke", emitter.config))
    provider.shutdown()
    from_file = dict(iter_trace_calls(path, errors=[]))
    read = [(c.name, c.status) for calls in from_file.values() for c in calls]
    assert [(c.name, c.status) for c in exporter.calls()] == [("multiply", "ok"), ("add", "ok")]
    if enclosed:
        assert len(from_file) == 1 and read == [("multiply", "ok"), ("add", "ok")]
    else:
        assert len(from_file) == 4
        assert read == [
            ("multiply", "requested"),
            ("add", "requested"),
            ("multiply", "ok"),
            ("add", "ok"),
        ]


async def _guide(
    llm: Runnable[Any, BaseMessage],
    mode: str,
    config: RunnableConfig,
    first_run: UUID | None = None,
    parallel_tools: bool = False,
) -> None:
    """The guide's loop in ``mode``; ``first_run``: the run id of the first model call;
    ``parallel_tools``: the tools run on other threads or tasks than the model."""
    messages: list[BaseMessage] = [HumanMessage(LOOP_QUESTION)]
    first = RunnableConfig(**config, run_id=first_run) if first_run else config
    if mode == "invoke":
        reply = llm.invoke(messages, first)
    else:
        reply = await llm.ainvoke(messages, first)
    assert isinstance(reply, AIMessage)
    messages.append(reply)
    calls = reply.tool_calls
    answers: list[Any]
    if mode == "invoke" and parallel_tools:
        with ThreadPoolExecutor(len(calls)) as pool:
            answers = list(pool.map(lambda c: TOOLS[c["name"]].invoke(c, config), calls))
    elif mode == "invoke":
        answers = [TOOLS[call["name"]].invoke(call, config) for call in calls]
    elif parallel_tools:
        answers = await asyncio.gather(*(TOOLS[c["name"]].ainvoke(c, config) for c in calls))
    else:
        answers = [await TOOLS[call["name"]].ainvoke(call, config) for call in calls]
    assert all(isinstance(answer, ToolMessage) for answer in answers)
    messages.extend(answers)
    if mode == "invoke":
        llm.invoke(messages, config)
    else:
        await llm.ainvoke(messages, config)


# --- concurrent loops reusing ids --------------------------------------------------------------


def _loop_calls(loop: int) -> list[tuple[str, dict[str, Any]]]:
    """Loop ``loop``'s two calls: its number is the ``a`` of both, so a crossed join shows."""
    return [("multiply", {"a": loop, "b": 3}), ("add", {"a": loop, "b": 4})]


def _result(name: str, args: dict[str, Any]) -> str:
    return str(args["a"] * args["b"] if name == "multiply" else args["a"] + args["b"])


def _check_loops(
    by_run: dict[int, list[ToolCall]], everything: list[ToolCall], loops: int, joined: bool
) -> None:
    """Never crossed: a loop's model run holds its own two calls (requested, or joined with
    one of its own executions), every execution is recorded once with its own result."""
    for loop, calls in by_run.items():
        assert [(c.name, c.id) for c in calls] == list(
            zip(("multiply", "add"), REUSED_IDS, strict=True)
        )
        assert [c.args["a"] for c in calls] == [loop, loop], "a call crossed into another loop"
        if joined:
            assert [c.status for c in calls] == ["ok", "ok"]
    executed = [c for c in everything if c.status == "ok"]
    assert sorted((c.name, c.args["a"]) for c in executed) == sorted(
        (name, loop) for loop in range(loops) for name in ("multiply", "add")
    )
    assert all(c.result == _result(c.name, dict(c.args)) for c in executed)
    # a request left apart stays in its loop's run (above); its execution is a call of its own
    requested = [c for c in everything if c.status == "requested"]
    assert len(everything) == 2 * loops + len(requested)
    if joined:
        assert requested == []


def _run_loops(
    loops: int, asynchronous: bool, parallel_tools: bool, latency: float
) -> tuple[ToolCallRecorder, ToolCallSpanExporter, SpanEmitter, list[UUID]]:
    recorder = ToolCallRecorder()
    runs = [uuid4() for _ in range(loops)]
    models = [loop_model(_loop_calls(i), REUSED_IDS, latency) for i in range(loops)]
    with _span_path() as (emitter, exporter):
        config = RunnableConfig(callbacks=[recorder, emitter])
        if asynchronous:

            async def everything() -> None:
                await asyncio.gather(
                    *(
                        _guide(m, "ainvoke", config, run, parallel_tools)
                        for m, run in zip(models, runs, strict=True)
                    )
                )

            asyncio.run(everything())
        else:
            start = threading.Barrier(loops)

            def one(loop: int) -> None:
                start.wait()
                asyncio.run(_guide(models[loop], "invoke", config, runs[loop], parallel_tools))

            with ThreadPoolExecutor(loops) as pool:
                list(pool.map(one, range(loops)))
    return recorder, exporter, emitter, runs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    loops=st.integers(2, 4),
    asynchronous=st.booleans(),
    parallel_tools=st.booleans(),
    latency=st.sampled_from([0.0, 0.002]),
)
def test_concurrent_loops_reusing_ids_never_cross(
    loops: int, asynchronous: bool, parallel_tools: bool, latency: float
) -> None:
    """Loops on threads or asyncio tasks, all with the ids ``call_1``, ``call_2``, through one
    recorder and one SpanEmitter: each call stays its loop's, on both paths.

    Tools run where the model ran, or handed on from there (``asyncio.gather``, LangChain's
    executor thread for a sync tool's ``ainvoke``), join their own request. Tools on a thread
    pool that copies no context join only an id no other loop has waiting, else stay apart;
    there, which requests wait at a tool's start can differ by a span's timing, so the two
    paths are compared call for call where every call is joined."""
    recorder, exporter, emitter, runs = _run_loops(loops, asynchronous, parallel_tools, latency)
    joined = asynchronous or not parallel_tools
    recorded = recorder.calls_by_run()
    by_run = {loop: recorded[str(run)] for loop, run in enumerate(runs)}
    _check_loops(by_run, recorder.calls(), loops, joined)
    traces = [emitter.trace_id(run) or "" for run in runs]
    spans = {loop: exporter.calls(trace) for loop, trace in enumerate(traces)}
    _check_loops(spans, exporter.calls(), loops, joined)
    if joined:
        for loop in range(loops):
            assert [r[:5] for r in _rows(by_run[loop])] == [r[:5] for r in _rows(spans[loop])]


def test_two_loops_in_step_each_join_their_own_request() -> None:
    """Both loops ask for ``call_1`` before either runs a tool: each execution has two
    requests to choose from, and takes the one made on its own thread."""
    recorder = ToolCallRecorder()
    asked = threading.Barrier(2)
    runs = [uuid4(), uuid4()]
    models = [loop_model(_loop_calls(i)[:1], REUSED_IDS[:1]) for i in range(2)]
    with _span_path() as (emitter, exporter):
        config = RunnableConfig(callbacks=[recorder, emitter])

        def loop(index: int) -> None:
            reply = models[index].invoke(
                [HumanMessage(LOOP_QUESTION)], RunnableConfig(**config, run_id=runs[index])
            )
            asked.wait()  # both requests wait now
            assert isinstance(reply, AIMessage)
            multiply.invoke(reply.tool_calls[0], config)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(loop, range(2)))
        by_run = recorder.calls_by_run()
        for index, run in enumerate(runs):
            for calls in (by_run[str(run)], exporter.calls(emitter.trace_id(run) or "")):
                assert [(c.args["a"], c.status, c.result) for c in calls] == [
                    (index, "ok", str(index * 3))
                ]


def test_two_loops_interleaved_in_one_thread_are_left_apart() -> None:
    """Two conversations by hand in one thread, both asking for ``call_1`` before running it:
    nothing tells which request an execution answers, so none is joined (never crossed)."""
    recorder = ToolCallRecorder()
    with _span_path() as (emitter, exporter):
        config = RunnableConfig(callbacks=[recorder, emitter])
        models = [loop_model(_loop_calls(i)[:1], REUSED_IDS[:1]) for i in range(2)]
        replies = [m.invoke([HumanMessage(LOOP_QUESTION)], config) for m in models]
        for reply in replies:
            assert isinstance(reply, AIMessage)
            multiply.invoke(reply.tool_calls[0], config)
        for calls in (recorder.calls(), exporter.calls()):
            assert [(c.args["a"], c.status) for c in calls] == [
                (0, "requested"),
                (1, "requested"),
                (0, "ok"),
                (1, "ok"),
            ]


def test_a_later_loop_reusing_ids_joins_its_own_requests() -> None:
    """Loops one after another with the same ids: each request is the only one waiting."""
    recorder = ToolCallRecorder()
    with _span_path() as (emitter, exporter):
        config = RunnableConfig(callbacks=[recorder, emitter])
        for loop in range(3):
            asyncio.run(_guide(loop_model(_loop_calls(loop), REUSED_IDS), "invoke", config))
        for calls in (recorder.calls(), exporter.calls()):
            assert [(c.args["a"], c.status, c.id) for c in calls] == [
                (loop, "ok", call_id) for loop in range(3) for call_id in REUSED_IDS
            ]


@pytest.mark.parametrize("mode", MODES)
def test_the_loop_and_the_chain_record_the_same_calls(mode: str) -> None:
    """The loop by hand (four runs) and inside one ``@chain`` (one run) give the same calls."""
    from tests.support.parity_agents import SHAPES, run_shape, thread_config

    rows = []
    for name in ("tool_loop", "tool_loop_chain"):
        shape = SHAPES[name]()
        recorder = ToolCallRecorder()
        run_shape(shape, mode, thread_config(shape, [recorder]))
        rows.append([(c.name, dict(c.args), c.status, c.result) for c in recorder.calls()])
    assert (
        rows[0] == rows[1] == [(name, args, "ok", _result(name, args)) for name, args in LOOP_CALLS]
    )
