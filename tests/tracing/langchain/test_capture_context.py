"""``capture_tool_calls()``: runs recorded without passing a config, sync, async and in tasks."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from harness.assertions import NO_RUN_RECORDED, expect_tools
from harness.demo.calculator import build
from harness.models import make_model
from tracing import ToolCallRecorder, capture_tool_calls
from tracing.langchain.capture import active_recorder

QUESTION = {"messages": [("user", "What is 2 plus 3?")]}


def my_app(question: str) -> str:
    """An app that builds and calls its agent deep inside, never taking a config."""
    agent = build(model=make_model("demo"))
    state = agent.invoke({"messages": [("user", question)]})
    return str(state["messages"][-1].content)


async def my_async_app(question: str) -> str:
    agent = build(model=make_model("demo"))
    state = await agent.ainvoke({"messages": [("user", question)]})
    return str(state["messages"][-1].content)


def _names(recorder: ToolCallRecorder) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, dict(call.args)) for call in recorder.calls()]


def test_sync_block_records_an_app_that_passes_no_config() -> None:
    with capture_tool_calls() as recorder:
        answer = my_app("What is 2 plus 3?")
    assert "5" in answer
    assert _names(recorder) == [("add", {"a": 2, "b": 3})]
    # outside the block nothing is captured any more
    assert active_recorder() is None
    my_app("What is 4 plus 4?")
    assert len(recorder.calls()) == 1


async def test_async_block_records_this_task_and_the_tasks_it_starts() -> None:
    async with capture_tool_calls() as recorder:
        await my_async_app("What is 2 plus 3?")
        await asyncio.gather(my_async_app("What is 1 plus 1?"), my_async_app("What is 7 plus 8?"))
    assert sorted(call.args["a"] for call in recorder.calls()) == [1, 2, 7]
    assert len(recorder.calls_by_run()) == 3


async def test_async_turns_split_the_calls_of_one_recorder() -> None:
    async with capture_tool_calls() as recorder:
        async with recorder.turn() as first:
            await my_async_app("What is 2 plus 3?")
        async with recorder.turn() as second:
            await my_async_app("What is 4 plus 4?")
    assert [call.args["a"] for call in first] == [2]
    assert [call.args["a"] for call in second] == [4]
    assert len(first.run_ids) == len(second.run_ids) == 1
    assert active_recorder() is None


def test_executor_threads_that_copy_the_context_are_captured() -> None:
    import contextvars

    with capture_tool_calls() as recorder, ThreadPoolExecutor(2) as pool:
        context = contextvars.copy_context()
        pool.submit(context.run, my_app, "What is 2 plus 3?").result()
    assert _names(recorder) == [("add", {"a": 2, "b": 3})]


def test_explicit_config_inside_a_block_is_not_recorded_twice() -> None:
    with capture_tool_calls() as recorder:
        build(model=make_model("demo")).invoke(QUESTION, recorder.config)
    assert _names(recorder) == [("add", {"a": 2, "b": 3})]


def test_blocks_nest_and_restore() -> None:
    with capture_tool_calls() as outer:
        my_app("What is 1 plus 2?")
        with capture_tool_calls() as inner:
            my_app("What is 3 plus 4?")
        assert active_recorder() is outer
        my_app("What is 5 plus 6?")
    assert [call.args["a"] for call in outer.calls()] == [1, 5]
    assert [call.args["a"] for call in inner.calls()] == [3]


def test_an_existing_recorder_can_be_used() -> None:
    mine = ToolCallRecorder()
    with capture_tool_calls(mine) as recorder:
        my_app("What is 2 plus 3?")
    assert recorder is mine and len(mine.calls()) == 1


def test_tool_recorder_fixture_captures_without_config(tool_recorder: ToolCallRecorder) -> None:
    my_app("What is 2 plus 3?")
    expect_tools(tool_recorder).called("add", a=2, b=3).no_unexpected_calls()


async def test_tool_recorder_fixture_in_async_tests(tool_recorder: ToolCallRecorder) -> None:
    await my_async_app("What is 2 plus 3?")
    expect_tools(tool_recorder).called("add", a=2, b=3).accuracy_at_least(1.0)


def test_no_run_at_all_says_how_to_attach_the_recorder() -> None:
    recorder = ToolCallRecorder()
    my_app("What is 2 plus 3?")  # neither config nor capture: the recorder saw nothing
    with pytest.raises(AssertionError) as caught:
        expect_tools(recorder).called("add").accuracy_at_least(1.0)
    message = str(caught.value)
    assert NO_RUN_RECORDED in message
    assert message.splitlines()[1].strip() == NO_RUN_RECORDED


def test_a_run_without_tool_calls_keeps_the_usual_message() -> None:
    with capture_tool_calls() as recorder:
        build(model=make_model("demo")).invoke({"messages": [("user", "hello there")]})
    with pytest.raises(AssertionError) as caught:
        expect_tools(recorder).called("add").accuracy_at_least(1.0)
    assert NO_RUN_RECORDED not in str(caught.value)
