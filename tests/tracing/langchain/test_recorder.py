"""ToolCallRecorder on real LangGraph agents driven by ScriptedChatModel."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from harness.models.scripted import ScriptedChatModel, ScriptError
from harness.sample import Sample
from tests.support.agents import (
    CASES,
    MODES,
    AgentCase,
    add,
    bad_args_agent,
    build_react_graph,
    echo,
    lookup,
    nested_agent,
    parallel_calls_agent,
    raising_tool_agent,
    run_case,
    single_call_agent,
    tool_exception_agent,
    unknown_tool_agent,
    user_input,
)
from tracing import ToolCall, ToolCallRecorder


def _run(case: AgentCase, mode: str = "invoke") -> tuple[ToolCallRecorder, dict[str, Any] | None]:
    recorder = ToolCallRecorder()
    if case.raises is not None:
        with pytest.raises(case.raises):
            run_case(case, mode, recorder.config)
        return recorder, None
    return recorder, run_case(case, mode, recorder.config)


def _triples(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any], str]]:
    return [(call.name, dict(call.args), call.status) for call in calls]


def _requested_ids(state: dict[str, Any]) -> list[str | None]:
    return [
        call["id"]
        for message in state["messages"]
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case_name", sorted(CASES))
def test_every_case_gives_expected_calls_in_request_order(case_name: str, mode: str) -> None:
    case = CASES[case_name]()
    recorder, _ = _run(case, mode)
    assert _triples(recorder.calls()) == case.expected
    assert all(call.source == "callback" for call in recorder.calls())


@pytest.mark.parametrize("mode", MODES)
def test_parallel_calls_keep_request_order_and_their_own_results(mode: str) -> None:
    case = parallel_calls_agent()
    recorder, state = _run(case, mode)
    assert state is not None
    calls = recorder.calls()
    # slow_lookup was requested first and finishes last; request order still wins.
    assert [call.name for call in calls] == ["slow_lookup", "add", "echo"]
    assert [call.result for call in calls] == ["first", "3", "after"]
    assert [call.turn for call in calls] == [0, 0, 1]
    assert [call.id for call in calls] == _requested_ids(state)
    assert {call.node for call in calls} == {"tools"}
    for call in calls:
        assert call.run_id is not None and call.parent_run_id is not None
        assert call.started_at is not None and call.ended_at is not None
        assert call.ended_at >= call.started_at


def test_single_call_records_result_and_id() -> None:
    case = single_call_agent()
    recorder, state = _run(case)
    assert state is not None
    (call,) = recorder.calls()
    assert call.result == "5"
    assert call.error is None
    assert call.id == _requested_ids(state)[0]
    assert call.id is not None and call.id.startswith("call_")


def test_plain_exception_fails_the_run_but_keeps_what_was_seen() -> None:
    # LangGraph 1.x's default ToolNode handler only turns argument errors into messages:
    # any other exception propagates and fails the whole run.
    recorder, _ = _run(raising_tool_agent())
    first, failed = recorder.calls()
    assert (first.name, first.status, first.result) == ("add", "ok", "2")
    assert failed.status == "error"
    assert failed.error == "ValueError: explode failed: boom"
    assert failed.result is None
    assert failed.turn == 1


def test_handled_tool_exception_is_an_error_with_its_text() -> None:
    recorder, state = _run(tool_exception_agent())
    assert state is not None and state["messages"][-1].content == "Done."
    (call,) = recorder.calls()
    assert call.status == "error"
    assert call.error == "flaky cannot handle x=7"


def test_arguments_failing_the_schema_are_an_error() -> None:
    recorder, state = _run(bad_args_agent())
    assert state is not None  # ToolNode turns the validation error into a message; run goes on
    (call,) = recorder.calls()
    assert call.status == "error"
    assert call.args == {"a": "1", "b": 2}
    assert call.error is not None and "StrictAddArgs" in call.error


def test_unknown_tool_stays_requested_with_the_error_message() -> None:
    recorder, state = _run(unknown_tool_agent())
    assert state is not None
    ran, missing = recorder.calls()
    assert ran.status == "ok"
    assert missing.status == "requested"
    assert missing.error is not None and "teleport is not a valid tool" in missing.error
    assert missing.run_id is None and missing.started_at is None
    assert missing.node == "agent"  # the node whose model asked for it
    assert [ran.id, missing.id] == _requested_ids(state)


@pytest.mark.parametrize("mode", MODES)
def test_nested_agent_calls_follow_their_parent_call(mode: str) -> None:
    recorder, _ = _run(nested_agent(), mode)
    research, france, japan, later = recorder.calls()
    assert research.name == "research" and research.result == "Paris and Tokyo"
    assert (france.result, japan.result) == ("Paris", "Tokyo")
    # Inner turns count within the inner agent; the outer agent's second turn is turn 1.
    assert [research.turn, france.turn, japan.turn, later.turn] == [0, 0, 0, 1]
    assert france.parent_run_id == japan.parent_run_id != research.parent_run_id
    assert research.started_at is not None and france.started_at is not None
    assert research.started_at <= france.started_at
    assert research.ended_at is not None and japan.ended_at is not None
    assert japan.ended_at <= research.ended_at


def test_reused_ids_join_within_their_turns() -> None:
    # Some providers reuse ids across turns; the oldest pending request takes the execution.
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "echo", "args": {"token": "one"}, "id": "same"}]},
            {"tool_calls": [{"name": "echo", "args": {"token": "two"}, "id": "same"}]},
        ]
    )
    graph = build_react_graph(model, [echo])
    recorder = ToolCallRecorder()
    graph.invoke(user_input("go"), recorder.config)
    calls = recorder.calls()
    assert [(c.args["token"], c.result, c.status, c.turn) for c in calls] == [
        ("one", "one", "ok", 0),
        ("two", "two", "ok", 1),
    ]


def test_direct_tool_invoke_is_recorded_as_its_own_run() -> None:
    recorder = ToolCallRecorder()
    assert add.invoke({"a": 1, "b": 2}, recorder.config) == 3
    message = add.invoke(
        {"name": "add", "args": {"a": 2, "b": 2}, "id": "c-1", "type": "tool_call"},
        recorder.config,
    )
    assert message.content == "4"
    assert echo.invoke("plain text", recorder.config) == "plain text"
    first, second, third = recorder.calls()
    assert (first.name, dict(first.args), first.result, first.id) == (
        "add",
        {"a": 1, "b": 2},
        3,
        None,
    )
    assert (second.id, second.result, second.status) == ("c-1", "4", "ok")
    # A bare string input reaches callbacks without its parameter name: kept under "input".
    assert third.args == {"input": "plain text"}
    assert len(recorder.calls_by_run()) == 3


def test_unrequested_executions_come_in_start_order_within_one_run() -> None:
    def both(_: Any, config: RunnableConfig) -> str:
        lookup.invoke({"key": "beta"}, config)
        lookup.invoke({"key": "alpha"}, config)
        return "ok"

    recorder = ToolCallRecorder()
    RunnableLambda(both).invoke(None, recorder.config)
    calls = recorder.calls()
    assert [c.args["key"] for c in calls] == ["beta", "alpha"]
    assert [c.result for c in calls] == ["second", "first"]
    assert len(recorder.calls_by_run()) == 1


def test_calls_filter_by_top_level_run_id() -> None:
    recorder = ToolCallRecorder()
    first, second = single_call_agent(), parallel_calls_agent()
    run_case(first, "invoke", {"callbacks": [recorder], "run_id": _uuid(1)})
    run_case(second, "invoke", {"callbacks": [recorder], "run_id": _uuid(2)})
    assert _triples(recorder.calls(_uuid(1))) == first.expected
    assert _triples(recorder.calls(str(_uuid(2)))) == second.expected
    assert list(recorder.calls_by_run()) == [str(_uuid(1)), str(_uuid(2))]
    assert _triples(recorder.calls()) == first.expected + second.expected


def _uuid(n: int) -> Any:
    from uuid import UUID

    return UUID(int=n)


def test_sample_and_reset() -> None:
    recorder, _ = _run(single_call_agent())
    sample = Sample.from_recorder(recorder, [ToolCall.of("add", a=2, b=3)], input="What is 2 + 3?")
    assert isinstance(sample, Sample)
    assert sample.output == "Done."
    assert sample.input == "What is 2 + 3?"
    assert sample.tool_calls is not None and [c.name for c in sample.tool_calls] == ["add"]
    assert [e.name for e in sample.expected_tool_calls] == ["add"]
    assert Sample.from_recorder(recorder, output="override").output == "override"
    recorder.reset()
    assert recorder.calls() == []
    assert Sample.from_recorder(recorder).tool_calls == []
    assert recorder.last_output() is None


def test_config_attaches_the_recorder() -> None:
    recorder = ToolCallRecorder()
    assert recorder.config == {"callbacks": [recorder]}
    assert recorder.run_inline is True


# --- ScriptedChatModel ---------------------------------------------------------------------


def test_scripted_model_plays_turn_by_number_of_ai_messages() -> None:
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}, "id": "fixed"}]},
            {"content": "x"},
        ],
        final_answer="bye",
    )
    first = model.invoke([HumanMessage("hi")])
    assert first.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "fixed", "type": "tool_call"}
    ]
    assert model.invoke([HumanMessage("hi"), first]).content == "x"
    assert model.invoke([HumanMessage("hi"), first, first]).content == "bye"
    assert first.usage_metadata is not None and first.usage_metadata["total_tokens"] > 0


def test_scripted_model_gives_missing_ids_fresh_unique_ids() -> None:
    model = ScriptedChatModel([{"tool_calls": [{"name": "add", "args": {}}, {"name": "add"}]}])
    ids = [c["id"] for c in model.invoke([HumanMessage("hi")]).tool_calls]
    again = [c["id"] for c in model.invoke([HumanMessage("hi")]).tool_calls]
    assert len(set(ids + again)) == 4


async def test_scripted_model_streams_tool_calls_as_chunks() -> None:
    model = ScriptedChatModel([{"tool_calls": [{"name": "add", "args": {"a": 1}, "id": "i"}]}])
    chunks = [chunk async for chunk in model.astream([HumanMessage("hi")])]
    assert len(chunks) == 1
    assert chunks[0].tool_calls == [
        {"name": "add", "args": {"a": 1}, "id": "i", "type": "tool_call"}
    ]


def test_scripted_model_bind_tools_records_names_and_binds_schemas() -> None:
    bound = ScriptedChatModel([]).bind_tools([add, lookup], tool_choice="any")
    assert bound.bound.bound_tool_names == ("add", "lookup")  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in bound.kwargs["tools"]] == ["add", "lookup"]  # type: ignore[attr-defined]
    assert bound.kwargs["tool_choice"] == "any"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("turn", "fragment"),
    [
        ("not a turn", "expected an AIMessage or a mapping"),
        (
            {"tool_calls": [{"args": {}}]},
            "turns[0].tool_calls[0]: a tool call needs a non-empty 'name'",
        ),
        ({"tool_calls": [{"name": "f", "args": "[1]"}]}, "'args' of 'f' must be a mapping"),
        ({"tools": []}, "unknown keys ['tools']"),
    ],
)
def test_scripted_model_rejects_bad_turns_with_their_position(turn: Any, fragment: str) -> None:
    with pytest.raises(ScriptError, match=None) as info:
        ScriptedChatModel([turn])
    assert fragment in str(info.value)
