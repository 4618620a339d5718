"""Recording fidelity on the agent shapes users write (docs/capture.md "What it records", issue 11).

Each shape of ``tests/support/parity_agents.py`` runs as a real LangGraph / LangChain agent in
every invoke mode, through a ``ToolCallRecorder`` and a ``SpanEmitter`` -> exporter at once;
both must give the shape's ground truth. The foreign span conventions (OpenInference,
Traceloop, the official GenAI instrumentor) run the same shapes in ``tests/tracing/test_parity.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from harness.assertions import expect_tools
from harness.expectation import Expectation, agent_matches
from harness.metrics import NoUnexpectedToolCalls, ToolCallAccuracy, ToolCallF1
from harness.models.scripted import ScriptedChatModel
from harness.sample import Sample
from harness.scoring import check_no_errors
from tests.support.agents import CASES, MODES, build_react_graph, lookup, run_case, user_input
from tests.support.parity_agents import (
    BROKEN_ARGUMENTS,
    EDITED_EMAIL,
    HAS_LANGCHAIN,
    SHAPES,
    ShapeCase,
    run_shape,
    thread_config,
)
from tests.support.paths import FIXTURES
from tracing import Attempt, SpanEmitter, ToolCall, ToolCallRecorder, ToolCallSpanExporter

needs_langchain = pytest.mark.skipif(
    not HAS_LANGCHAIN, reason="create_agent and its middleware need `pip install langchain`"
)


def _capture(case: ShapeCase, mode: str) -> tuple[list[ToolCall], list[ToolCall]]:
    """Run a shape once with a recorder and a SpanEmitter attached: (recorder, span) calls."""
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = ToolCallRecorder()
    emitter = SpanEmitter(provider, capture_content=True)
    run_shape(case, mode, thread_config(case, [recorder, emitter]))
    return recorder.calls(), exporter.calls()


def _truth(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any], str]]:
    return [(call.name, dict(call.args), call.status) for call in calls]


def _shape_row(call: ToolCall) -> tuple[Any, ...]:
    return (
        call.name,
        dict(call.args),
        call.status,
        call.id,
        call.agent,
        call.node,
        tuple(attempt.status for attempt in call.attempts),
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_recorder_and_span_path_give_the_ground_truth(shape: str, mode: str) -> None:
    """Calls, statuses, agents and attempts, identical through the recorder and the spans."""
    case = SHAPES[shape]()
    recorded, spans = _capture(case, mode)
    for calls in (recorded, spans):
        assert _truth(calls) == case.expected
        assert [call.agent for call in calls] == case.agents
        assert [len(call.attempts) for call in calls] == case.attempt_counts()
        if "error_contains" in case.notes:
            errors = [call.error or "" for call in calls]
            assert any(case.notes["error_contains"] in error for error in errors), errors
    assert [_shape_row(c) for c in recorded] == [_shape_row(c) for c in spans]


def _all_cases() -> list[str]:
    return [*CASES, *SHAPES]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", _all_cases())
def test_property_recorder_and_span_path_agree_on_every_parity_agent(name: str, mode: str) -> None:
    """The recorder and SpanEmitter -> exporter give equal call lists on every parity agent."""
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = ToolCallRecorder()
    callbacks = [recorder, SpanEmitter(provider, capture_content=True)]
    if name in SHAPES:
        shape = SHAPES[name]()
        run_shape(shape, mode, thread_config(shape, callbacks))
    else:
        case = CASES[name]()
        try:
            run_case(case, mode, {"callbacks": callbacks})
        except Exception as exc:
            assert case.raises is not None and isinstance(exc, case.raises)
    assert [_shape_row(c) for c in recorder.calls()] == [_shape_row(c) for c in exporter.calls()]


# --- pause and resume ---------------------------------------------------------------------


@needs_langchain
def test_a_paused_tool_is_interrupted_not_an_error() -> None:
    recorded, spans = _capture(SHAPES["interrupt_in_tool_paused"](), "invoke")
    for calls in (recorded, spans):
        (call,) = calls
        assert call.status == "interrupted"
        assert call.error is None and call.attempts == ()
    assert check_no_errors(recorded).passed


@needs_langchain
def test_a_resumed_call_is_one_call_with_the_id_of_its_request() -> None:
    case = SHAPES["interrupt_in_tool"]()
    recorder = ToolCallRecorder()
    run_shape(case, "invoke", thread_config(case, [recorder]))
    (call,) = recorder.calls()
    assert call.status == "ok" and call.result == "booked Rome: yes"
    assert call.id is not None and len(call.attempts) == 1
    # Both runs are top-level runs of the same thread; the call belongs to the first.
    first, second = recorder.calls_by_run().values()
    assert [c.id for c in first] == [call.id] and second == []


@needs_langchain
def test_the_rejected_call_keeps_the_reviewers_reason_and_never_ran() -> None:
    recorded, spans = _capture(SHAPES["hitl_reject"](), "invoke")
    for calls in (recorded, spans):
        email = calls[1]
        assert email.status == "requested" and email.attempts == ()
        assert email.error is not None and "not now" in email.error


@needs_langchain
def test_an_edited_call_records_what_ran() -> None:
    recorded, spans = _capture(SHAPES["hitl_edit"](), "ainvoke")
    for calls in (recorded, spans):
        assert dict(calls[1].args) == EDITED_EMAIL
        assert calls[1].result == f"sent to {EDITED_EMAIL['to']}"


def test_runs_of_different_threads_do_not_join() -> None:
    """A paused request is joined by a later run of its own thread only."""
    case = SHAPES["interrupt_in_node"]()
    recorder = ToolCallRecorder()
    graph = case.graph
    graph.invoke(case.inputs[0], thread_config(case, [recorder], thread="a"))
    other = SHAPES["interrupt_in_node"]()
    other.graph.invoke(other.inputs[0], thread_config(other, [recorder], thread="b"))
    assert [c.status for c in recorder.calls()] == ["interrupted", "interrupted"]
    graph.invoke(case.inputs[1], thread_config(case, [recorder], thread="a"))
    assert [c.status for c in recorder.calls()] == ["ok", "interrupted"]


# --- calls without ids ----------------------------------------------------------------------


def _reply(*calls: dict[str, Any]) -> LLMResult:
    message = AIMessage(content="", tool_calls=list(calls))
    return LLMResult(generations=[[ChatGeneration(message=message)]])


def _request(recorder: ToolCallRecorder, root: Any, *calls: dict[str, Any]) -> None:
    model = uuid4()
    recorder.on_chat_model_start({}, [[]], run_id=model, parent_run_id=root)
    recorder.on_llm_end(_reply(*calls), run_id=model, parent_run_id=root)


def test_a_tool_start_without_tool_call_id_joins_its_request() -> None:
    """langchain-core 0.3.x passes no tool_call_id to on_tool_start: no double entry.

    The events are those langchain-core 0.3.60 / langgraph 0.4 send (replayed here, since the
    installed versions pass the id): an id-less start, then a ToolMessage naming the call.
    """
    recorder = ToolCallRecorder()
    root = uuid4()
    recorder.on_chain_start({"name": "agent"}, {}, run_id=root)
    _request(
        recorder,
        root,
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"},
        {"name": "add", "args": {"a": 5, "b": 5}, "id": "c2", "type": "tool_call"},
    )
    # A ToolNode handing the whole ToolCall: the id is in the inputs.
    tool = uuid4()
    inputs = {"name": "add", "args": {"a": 5, "b": 5}, "id": "c2", "type": "tool_call"}
    recorder.on_tool_start({"name": "add"}, "", run_id=tool, parent_run_id=root, inputs=inputs)
    recorder.on_tool_end(ToolMessage("10", tool_call_id="c2"), run_id=tool, parent_run_id=root)
    # A plain tool.invoke(args): joined by name and equal arguments.
    tool = uuid4()
    recorder.on_tool_start(
        {"name": "add"}, "", run_id=tool, parent_run_id=root, inputs={"a": 1, "b": 2}
    )
    recorder.on_tool_end(3, run_id=tool, parent_run_id=root)
    recorder.on_chain_end({}, run_id=root)
    calls = recorder.calls()
    assert [(c.id, c.status, c.result) for c in calls] == [("c1", "ok", 3), ("c2", "ok", "10")]


def test_an_idless_start_whose_answer_names_a_request_becomes_that_call() -> None:
    """Arguments differ (a tool adds a default), yet the returned ToolMessage names the call."""
    recorder = ToolCallRecorder()
    root = uuid4()
    recorder.on_chain_start({"name": "agent"}, {}, run_id=root)
    _request(recorder, root, {"name": "look", "args": {"q": "x"}, "id": "c9", "type": "tool_call"})
    tool = uuid4()
    recorder.on_tool_start(
        {"name": "look"}, "", run_id=tool, parent_run_id=root, inputs={"q": "x", "limit": 5}
    )
    recorder.on_tool_end(ToolMessage("hit", tool_call_id="c9"), run_id=tool, parent_run_id=root)
    (call,) = recorder.calls()
    assert (call.id, call.status, dict(call.args)) == ("c9", "ok", {"q": "x", "limit": 5})


# --- malformed calls, Command errors, retries -----------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_malformed_call_is_invalid_with_its_raw_text(mode: str) -> None:
    recorded, spans = _capture(SHAPES["invalid_args"](), mode)
    for calls in (recorded, spans):
        bad = calls[1]
        assert bad.status == "invalid" and bad.raw_arguments == BROKEN_ARGUMENTS
        assert bad.error and bad.attempts == ()
    assert "JSON" in (recorded[1].error or "") or "json" in (recorded[1].error or "")


def test_an_invalid_call_matches_no_expectation() -> None:
    """Its arguments were never JSON: not even a name-only expectation takes it."""
    invalid = ToolCall.invalid("get_weather", BROKEN_ARGUMENTS, "not JSON", id="x")
    sample = Sample(tool_calls=[invalid], expected_tool_calls=[Expectation("get_weather")])
    assert not Expectation("get_weather").accepts(invalid)
    assert ToolCallAccuracy().evaluate(sample).value == 0.0
    assert ToolCallF1().evaluate(sample).value == 0.0
    assert not NoUnexpectedToolCalls().evaluate(sample).passed


@pytest.mark.parametrize("mode", MODES)
def test_a_command_error_is_an_error(mode: str) -> None:
    recorded, spans = _capture(SHAPES["command_error"](), mode)
    for calls in (recorded, spans):
        (call,) = calls
        assert call.status == "error" and "card declined" in (call.error or "")


@needs_langchain
@pytest.mark.parametrize("mode", MODES)
def test_a_retried_call_is_one_call_with_its_attempts(mode: str) -> None:
    recorded, spans = _capture(SHAPES["retry"](), mode)
    for calls in (recorded, spans):
        (call,) = calls
        assert call.status == "ok"
        assert [a.status for a in call.attempts] == ["error", "error", "ok"]
        assert all(isinstance(a, Attempt) for a in call.attempts)
        assert "attempt 1 failed" in (call.attempts[0].error or "")
        assert call.failed_attempts == 2
    # The agent recovered: no_errors passes, unless retries are not allowed.
    assert check_no_errors(recorded).passed
    assert not check_no_errors(recorded, retries=False).passed
    expect_tools(recorded).called("fetch", url="a.example").no_errors().no_unexpected_calls()
    with pytest.raises(AssertionError, match="failed 2 times before it succeeded"):
        expect_tools(recorded).no_errors(retries=False)


# --- which agent made the call, scoped expectations -----------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_call_names_its_agent_and_node(mode: str) -> None:
    recorded, spans = _capture(SHAPES["supervisor"](), mode)
    for calls in (recorded, spans):
        assert [c.agent for c in calls] == [
            "supervisor/planner",
            "supervisor/research_agent",
            "supervisor/math_agent",
        ]
        assert {c.node for c in calls} == {"tools"}


def test_agent_patterns_match_a_path_its_tail_or_a_glob() -> None:
    assert agent_matches("research_agent", "supervisor/research_agent")
    assert agent_matches("supervisor/research_agent", "supervisor/research_agent")
    assert agent_matches("supervisor/*", "supervisor/math_agent")
    assert not agent_matches("math_agent", "supervisor/research_agent")
    assert not agent_matches("visor/research_agent", "supervisor/research_agent")
    assert not agent_matches("research_agent", None)


def test_scoped_expectations_match_only_calls_made_there() -> None:
    recorder = ToolCallRecorder()
    case = SHAPES["supervisor"]()
    run_shape(case, "invoke", thread_config(case, [recorder]))
    calls = recorder.calls()
    right = Expectation("lookup", {"key": "france"}, agent="research_agent", node="tools")
    wrong = Expectation("lookup", {"key": "france"}, agent="math_agent")
    assert ToolCallAccuracy().evaluate(Sample(tool_calls=calls, expected_tool_calls=[right])).passed
    assert (
        ToolCallAccuracy().evaluate(Sample(tool_calls=calls, expected_tool_calls=[wrong])).value
        == 0
    )
    assert "in math_agent" in wrong.describe()
    assert Expectation.coerce(right.to_dict()) == right
    # The fluent form: a chain over one agent's calls.
    expect_tools(recorder).in_agent("research_agent").called(
        "lookup", key="france"
    ).accuracy_at_least(1.0).no_unexpected_calls().not_called("add")
    with pytest.raises(AssertionError, match="in supervisor/math_agent"):
        expect_tools(recorder).called("lookup", key="france").no_unexpected_calls()


def test_a_scenario_scopes_calls_and_forbids_per_agent(tmp_path: Path) -> None:
    from harness.scenarios import load_file

    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            suite: scoped
            agent: {FIXTURES / "fixture_agent.py"}:build
            scenarios:
              - name: per_agent
                input: go
                expect:
                  tool_calls:
                    - {{name: note, agent: planner, node: tools}}
                  no_errors: {{retries: false}}
                  agents:
                    research_agent:
                      tool_calls: [{{name: lookup, args: {{key: france}}}}]
                      forbid: [add]
            """
        ).lstrip(),
        encoding="utf-8",
    )
    (scenario,) = load_file(path).scenarios
    # the block's calls are scored on that agent's calls only
    # (tests/harness/run/test_agent_scopes.py)
    (block,) = scenario.agent_blocks
    assert [(e.name, e.agent, e.node) for e in (*scenario.expected, *block.expected)] == [
        ("note", "planner", "tools"),
        ("lookup", "research_agent", None),
    ]
    assert scenario.no_errors and not scenario.no_errors_retries
    assert scenario.agent_forbid == (("research_agent", ("add",)),)


# --- final answers as content blocks ----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_final_answer_of_content_blocks_is_its_text(mode: str) -> None:
    blocks = [{"type": "text", "text": "Paris"}, {"type": "text", "text": " it is."}]
    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "lookup", "args": {"key": "france"}}]}, AIMessage(blocks)]
    )
    graph = build_react_graph(model, [lookup], name="blocks")
    recorder = ToolCallRecorder()
    from tests.support.agents import AgentCase

    state = run_case(AgentCase("blocks", graph, user_input("?"), []), mode, recorder.config)
    assert recorder.last_output() == "Paris it is."
    assert Sample.from_recorder(recorder).output == "Paris it is."
    if state:
        assert Sample.from_messages(state["messages"]).output == "Paris it is."


@needs_langchain
@pytest.mark.parametrize("mode", MODES)
def test_a_swarm_names_the_agent_of_every_call(mode: str) -> None:
    """langgraph-swarm: alice looks up, hands off to bob, bob adds; each call names its agent."""
    swarm = pytest.importorskip("langgraph_swarm", reason="pip install langgraph-swarm")
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.support.agents import add

    alice = create_agent(
        ScriptedChatModel(
            [
                {"tool_calls": [{"name": "lookup", "args": {"key": "alpha"}}]},
                {"tool_calls": [{"name": "transfer_to_bob", "args": {}}]},
            ]
        ),
        [lookup, swarm.create_handoff_tool(agent_name="bob")],
        name="alice",
    )
    # bob sees alice's two AI messages first: its own first turn is turn 2 of the script.
    bob = create_agent(
        ScriptedChatModel(
            [{}, {}, {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 1}}]}],
            final_answer="2",
        ),
        [add],
        name="bob",
    )
    graph = swarm.create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=InMemorySaver(), name="swarm"
    )
    case = ShapeCase(
        "swarm",
        graph,
        [user_input("go")],
        [
            ("lookup", {"key": "alpha"}, "ok"),
            ("transfer_to_bob", {}, "ok"),
            ("add", {"a": 1, "b": 1}, "ok"),
        ],
        ["swarm/alice", "swarm/alice", "swarm/bob"],
    )
    recorded, spans = _capture(case, mode)
    for calls in (recorded, spans):
        assert _truth(calls) == case.expected
        assert [call.agent for call in calls] == case.agents
    assert [_shape_row(c) for c in recorded] == [_shape_row(c) for c in spans]
