"""A call whose arguments were not JSON is named as the likely cause of what it failed.

The calls come from a real ``create_agent`` agent and a scripted model that, like
langchain-openai, parses each raw call with LangChain's ``parse_tool_call`` and puts the ones
that fail in ``AIMessage.invalid_tool_calls`` (``tests/support/parity_agents.py``). Such a call
is recorded ``invalid`` and pairs with no expectation (docs/metrics.md, "Call statuses"), so
without the cause a reason would only say the expected call is missing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Expectation, Sample, ToolCall
from harness.metrics import (
    NoUnexpectedToolCalls,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
    ToolCallSequenceAccuracy,
    ToolSelectionAccuracy,
)
from harness.metrics.base import Score
from tests.support.parity_agents import (
    OpenAIStyleChatModel,
    get_weather,
    lookup,
    raw_call,
)
from tracing.langchain.capture import capture_tool_calls

BROKEN = "{city: 'Berlin'}"  # an unquoted key: not JSON, even to a partial-JSON parser
CAUSE = "get_weather: the model's arguments were not valid JSON: \"{city: 'Berlin'}\""

EXPECTED = [
    Expectation.of("lookup", key="beta"),
    Expectation.of("get_weather", city="Berlin"),
]

# Every metric whose reason can list a missing expectation, and its Ragas twins.
METRICS: list[Any] = [
    ToolCallAccuracy(),
    ToolArgumentCorrectness(),
    ToolCallF1(),
    ToolCallF1(compat="ragas"),
    ToolCallSequenceAccuracy(order="strict"),
    ToolCallSequenceAccuracy(order="flexible"),
    ToolCallSequenceAccuracy(order="strict", compat="ragas"),
    ToolSelectionAccuracy(ordered=True),
    NoUnexpectedToolCalls(),
    ToolCallOrder(),
]


def _recorded(*raw_calls: dict[str, Any]) -> list[ToolCall]:
    """The calls a real create_agent agent makes when its model sends ``raw_calls``."""
    pytest.importorskip("langchain")
    from langchain.agents import create_agent

    model = OpenAIStyleChatModel(raw_turns=[list(raw_calls)], final_answer="Done.")
    agent = create_agent(model, tools=[get_weather, lookup])
    with capture_tool_calls() as recorder:
        agent.invoke({"messages": [{"role": "user", "content": "Weather in Berlin, and beta?"}]})
    return recorder.calls()


@pytest.fixture(scope="module")
def made() -> list[ToolCall]:
    """lookup(key='beta') (run), and get_weather with broken arguments (never run)."""
    calls = _recorded(
        raw_call("lookup", '{"key": "beta"}', "call_lookup"),
        raw_call("get_weather", BROKEN, "call_weather"),
    )
    assert [(c.name, c.status) for c in calls] == [("lookup", "ok"), ("get_weather", "invalid")]
    return calls


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: f"{m.name}:{m.__class__.__name__}")
def test_every_failing_reason_names_the_invalid_call_as_the_likely_cause(
    metric: Any, made: list[ToolCall]
) -> None:
    score = metric.evaluate(Sample(tool_calls=made, expected_tool_calls=EXPECTED))
    assert not score.passed
    assert score.reason.count(CAUSE) == 1, score.reason
    assert f"ikely cause: {CAUSE}" in score.reason  # "; likely cause" or ". Likely cause"
    (issue,) = [i for i in score.details.issues if i.code == "invalid_args"]
    assert (issue.message, issue.actual_index) == (CAUSE, 1)
    assert "invalid_args" in score.codes
    # nothing blames the arguments of a call that never had readable ones
    about_it = {i.code for i in score.details.issues if i.actual_index == 1}
    assert about_it <= {"invalid_args", "unexpected_call"}


def test_the_reasons_read_as_the_issue_asks(made: list[ToolCall]) -> None:
    sample = Sample(tool_calls=made, expected_tool_calls=EXPECTED)
    assert ToolCallAccuracy().evaluate(sample).reason == (
        f"1/2 expected calls matched; missing: get_weather(city='Berlin'); likely cause: {CAUSE}"
    )
    # a reason made of sentences gets a sentence
    assert ToolArgumentCorrectness().evaluate(sample).reason == (
        f"expected get_weather(city='Berlin') but no such call was made. Likely cause: {CAUSE}."
    )
    # the strict sequence pairs the invalid call by position: no diff of arguments it never had
    strict = ToolCallSequenceAccuracy(order="strict").evaluate(sample).reason
    assert "called without city" not in strict and strict.endswith(f"; likely cause: {CAUSE}")
    # an invalid call is not the expected tool "out of order": it is the missing one's cause
    assert ToolSelectionAccuracy(ordered=True).evaluate(sample).reason == (
        f"1 of 2 tool names in order; missing: get_weather; likely cause: {CAUSE}"
    )


def test_an_invalid_call_of_a_tool_nobody_expected_is_no_cause(made: list[ToolCall]) -> None:
    sample = Sample(tool_calls=made, expected_tool_calls=EXPECTED[:1])
    extra = NoUnexpectedToolCalls().evaluate(sample)
    assert not extra.passed and "likely cause" not in extra.reason
    assert extra.reason == f"1 unexpected call: get_weather(__raw__={BROKEN!r})"
    # and it takes nothing from a score it does not lower
    assert ToolCallAccuracy().evaluate(sample).reason == "1/1 expected calls matched"


def test_naming_the_cause_changes_no_verdict(made: list[ToolCall]) -> None:
    sample = Sample(tool_calls=made, expected_tool_calls=EXPECTED)
    score = ToolCallAccuracy(threshold=0.5).evaluate(sample)
    assert score.passed and score.value == 0.5
    assert "invalid_args" in score.codes  # its explanation, built when read, still says why
    # an eagerly explained metric spends nothing on a passing sample's cause
    selection = ToolSelectionAccuracy(threshold=0.5, ordered=True).evaluate(sample)
    assert selection.passed and "likely cause" not in selection.reason


def test_a_scoped_expectation_names_only_an_invalid_call_in_its_agent(
    made: list[ToolCall],
) -> None:
    looked_up, broken = made
    elsewhere = replace(broken, agent="billing")
    scoped = [EXPECTED[0], Expectation("get_weather", {"city": "Berlin"}, agent="weather")]
    there = ToolCallAccuracy().evaluate(
        Sample(tool_calls=[looked_up, replace(broken, agent="weather")], expected_tool_calls=scoped)
    )
    assert CAUSE in there.reason
    other = ToolCallAccuracy().evaluate(
        Sample(tool_calls=[looked_up, elsewhere], expected_tool_calls=scoped)
    )
    assert "likely cause" not in other.reason and "invalid_args" not in other.codes


def test_json_that_is_not_an_object_is_said_so() -> None:
    # LangChain's own parser refuses such a reply; a trace's chat span can still carry one
    listed = ToolCall.invalid("get_weather", '["Berlin"]', None, source="otel")
    score = ToolCallAccuracy().evaluate(
        Sample(tool_calls=[listed], expected_tool_calls=EXPECTED[1:])
    )
    assert score.reason.endswith(
        "likely cause: get_weather: the model's arguments were not a JSON object: '[\"Berlin\"]'"
    )


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("get_weather", {"city": "Berlin"}, agent="billing"),
        ToolCall.invalid("get_weather", BROKEN, None),
    ],
    ids=["in another agent", "invalid"],
)
def test_a_flexible_sequence_whose_names_align_but_nothing_pairs_explains_itself(
    call: ToolCall,
) -> None:
    # the tool names open the gate, but scope (or unreadable arguments) keeps the pair apart:
    # reading the reason divided by zero pairs
    expected = [Expectation("get_weather", {"city": "Berlin"}, agent="weather")]
    score = ToolCallSequenceAccuracy(order="flexible").evaluate(
        Sample(tool_calls=[call], expected_tool_calls=expected)
    )
    assert score.value == 0.0
    assert "argument accuracy 0.00 over 0 pair(s); coverage 0/1" in score.reason


# --- reasons known up front stay the explained ones -------------------------------------------

_NAMES = st.sampled_from(["get_weather", "lookup"])
_ARGS = st.dictionaries(st.sampled_from(["city", "key"]), st.sampled_from(["Berlin", "beta"]))


@st.composite
def _calls(draw: st.DrawFn) -> ToolCall:
    name = draw(_NAMES)
    if draw(st.booleans()):
        return ToolCall.invalid(name, draw(st.sampled_from([BROKEN, "[1]", '{"a": '])), None)
    return ToolCall(name, draw(_ARGS))


def _explained(score: Score) -> str:
    explain = score._explain
    return explain()[0] if explain is not None else score.reason


@settings(max_examples=150, deadline=None)
@given(
    expected=st.lists(st.builds(Expectation, _NAMES, _ARGS), min_size=1, max_size=4),
    actual=st.lists(_calls(), min_size=1, max_size=4),
)
def test_a_reason_given_up_front_is_the_explained_one(
    expected: list[Expectation], actual: list[ToolCall]
) -> None:
    sample = Sample(tool_calls=actual, expected_tool_calls=expected)
    for metric in METRICS:
        first = metric.evaluate(sample)
        assert first.reason == _explained(metric.evaluate(sample)), metric.name
        if "likely cause" in first.reason.lower():  # only an invalid call of an expected tool
            invalid = {c.name for c in actual if c.status == "invalid"}
            assert invalid & {e.name for e in expected}
