"""harness.assertions.expect_tools: every check passing and failing, its message, and misuse."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.tools import tool

from harness.assertions import ToolExpectations, expect_tools
from harness.models.scripted import ScriptedChatModel
from harness.sample import Sample
from harness.values import Regex
from tests.support.agents import add, build_react_graph, lookup, user_input
from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import ToolCall

pytest_plugins = ["pytester"]


@tool
def get_weather(city: str, day: str = "today") -> str:
    """The forecast for a city."""
    return f"sunny in {city} {day}"


@tool("get_time")
def clock(city: str) -> str:
    """The local time in a city (registered under a custom name)."""
    return "12:00"


def weather_calls() -> list[ToolCall]:
    """What an agent asked for: Berlin's weather, then the time, then one failing lookup."""
    return [
        ToolCall.of("get_weather", city="Berlin", day="tomorrow"),
        ToolCall.of("get_time", city="Berlin"),
    ]


def failure(check: Callable[[], Any]) -> str:
    """Run a check that must fail; return its message."""
    with pytest.raises(AssertionError) as info:
        check()
    return str(info.value)


# --- passing checks -------------------------------------------------------------------------


def test_the_design_example_passes_on_matching_calls() -> None:
    result = (
        expect_tools(weather_calls())
        .called(get_weather, city="Berlin")
        .called("get_time")
        .accuracy_at_least(1.0)
        .no_unexpected_calls()
    )
    assert isinstance(result, ToolExpectations)
    assert [e.describe() for e in result.expected] == ["get_weather(city='Berlin')", "get_time()"]


def test_every_check_passes_on_a_faithful_run() -> None:
    (
        expect_tools(weather_calls())
        .called(get_weather, city="Berlin", day="tomorrow")
        .called(clock, city="Berlin")  # @tool("get_time"): the custom name is used
        .in_order()
        .accuracy_at_least(1.0)
        .argument_correctness_at_least(1.0, strict=True)
        .f1_at_least(1.0)
        .no_unexpected_calls()
        .no_errors()
        .not_called("delete_account")
    )


def test_matchers_as_argument_values() -> None:
    expect_tools(weather_calls()).called(
        "get_weather", city=Regex("^Ber"), day={"$one_of": ["tomorrow", "+1"]}
    ).called("get_time", city={"$icase": "BERLIN"}).accuracy_at_least(1.0)


def test_called_with_json_takes_a_json_object_with_matchers() -> None:
    expect_tools(weather_calls()).called_with_json(
        "get_weather", '{"city": "Berlin", "day": {"$any": true}}'
    ).accuracy_at_least(1.0)


def test_numbers_compare_by_value() -> None:
    expect_tools([ToolCall.of("add", a=2.0, b=3)]).called("add", a=2, b=3.0).accuracy_at_least(1)


def test_partial_thresholds_pass_when_met() -> None:
    checks = expect_tools(weather_calls()).called("get_weather", city="Berlin").called("missing")
    checks.accuracy_at_least(0.5).f1_at_least(0.0)
    with pytest.raises(AssertionError):
        checks.accuracy_at_least(0.51)


# --- failing checks and their messages ------------------------------------------------------


def test_accuracy_failure_shows_reason_table_and_calls() -> None:
    calls = [ToolCall.of("get_weather", city="Paris"), ToolCall.of("delete_account", id=7)]
    message = failure(
        lambda: (
            expect_tools(calls)
            .called(get_weather, city="Berlin")
            .called("get_time")
            .accuracy_at_least(1.0)
        )
    )
    lines = message.splitlines()
    assert lines[0] == "expect_tools(...).accuracy_at_least(1.0) failed:"
    assert lines[1] == (
        "  tool_call_accuracy 0.00 < 1.00: 0/2 expected calls matched; missing: "
        "get_weather(city='Berlin'), get_time()"
    )
    assert lines[2] == "expected 2 calls, the agent made 2 calls:"
    assert re.match(r"^    #  expected +actual +verdict$", lines[3])
    assert re.match(
        r"^    1  get_weather\(city='Berlin'\) +get_weather\(city='Paris'\) +wrong args$", lines[5]
    )
    assert lines[6].strip() == "/city: city='Paris', expected 'Berlin'"
    assert re.match(r"^    2  get_time\(\) +missing +MISSING$", lines[7])
    assert re.match(r"^    -  \(not expected\) +delete_account\(id=7\) +not expected$", lines[8])
    assert lines[9:] == [
        "the agent's calls, in order:",
        "    1. get_weather(city='Paris')",
        "    2. delete_account(id=7)",
    ]


def test_in_order_failure_names_the_misplaced_call() -> None:
    message = failure(
        lambda: expect_tools(weather_calls()).called("get_time").called("get_weather").in_order()
    )
    assert "tool_call_order 0.50 < 1.00: 1/2 expected calls in order" in message
    assert "out of order: get_weather()" in message
    assert "    1. get_weather(city='Berlin', day='tomorrow')\n    2. get_time(city='Berlin')" in (
        message
    )


def test_argument_correctness_failure_names_the_wrong_argument() -> None:
    message = failure(
        lambda: (
            expect_tools(weather_calls())
            .called("get_weather", city="Bern", day="tomorrow")
            .argument_correctness_at_least(0.9)
        )
    )
    assert "tool_argument_correctness 0.50 < 0.90" in message
    assert "get_weather called with city='Berlin', expected 'Bern'." in message


def test_strict_argument_correctness_fails_on_an_extra_argument() -> None:
    checks = expect_tools(weather_calls()).called("get_weather", city="Berlin")
    checks.argument_correctness_at_least(1.0)
    message = failure(lambda: checks.argument_correctness_at_least(0.5, strict=True))
    assert message.startswith(
        "expect_tools(...).argument_correctness_at_least(0.5, strict=True) failed:"
    )
    assert "day" in message


def test_f1_failure_counts_extra_arguments_and_calls() -> None:
    message = failure(
        lambda: expect_tools(weather_calls()).called("get_weather", city="Berlin").f1_at_least(0.5)
    )
    assert "tool_call_f1 0.00 < 0.50" in message
    assert "unexpected: get_weather(city='Berlin', day='tomorrow'), get_time(city='Berlin')" in (
        message
    )


def test_no_unexpected_calls_failure_lists_the_extras() -> None:
    message = failure(
        lambda: expect_tools(weather_calls()).called("get_weather").no_unexpected_calls()
    )
    assert "1 unexpected call: get_time(city='Berlin')" in message
    assert re.search(r"-  \(not expected\) +get_time\(city='Berlin'\) +not expected", message)


def test_not_called_failure_lists_each_call_of_the_tool() -> None:
    calls = [*weather_calls(), ToolCall.of("get_time", city="Paris")]
    message = failure(lambda: expect_tools(calls).not_called(clock))
    assert message.splitlines()[:2] == [
        "expect_tools(...).not_called('get_time') failed:",
        "  get_time was called 2 times: #2 get_time(city='Berlin'), #3 get_time(city='Paris')",
    ]
    expect_tools(calls).not_called("delete_account")


def test_no_errors_failure_shows_the_tool_error() -> None:
    calls = [
        ToolCall.of("get_weather", city="Berlin"),
        ToolCall("lookup", {"key": "x"}, status="error", error="KeyError: 'x'"),
    ]
    message = failure(lambda: expect_tools(calls).no_errors())
    assert "  lookup(key='x') failed: KeyError: 'x'" in message
    assert "    2. lookup(key='x') [error]" in message


def test_a_chain_stops_at_the_first_failing_check() -> None:
    message = failure(
        lambda: (
            expect_tools(weather_calls())
            .called("get_weather", city="Paris")
            .no_errors()
            .accuracy_at_least(1.0)
            .f1_at_least(0.0)
        )
    )
    assert "accuracy_at_least(1.0) failed" in message


def test_no_calls_at_all_is_a_failure_not_an_error() -> None:
    message = failure(lambda: expect_tools([]).called("get_weather").accuracy_at_least(1.0))
    assert "(no tool calls were made)" in message
    assert "the agent's calls, in order:\n    (none)" in message


# --- sources --------------------------------------------------------------------------------


def test_recorder_source_is_read_live_from_a_real_agent_run() -> None:
    recorder = ToolCallRecorder()
    checks = expect_tools(recorder).called(add, a=2, b=3).called(lookup, key="alpha")
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]},
            {"tool_calls": [{"name": "lookup", "args": {"key": "alpha"}}]},
            {"content": "5 and first"},
        ]
    )
    build_react_graph(model, [add, lookup]).invoke(user_input("go"), recorder.config)
    checks.in_order().accuracy_at_least(1.0).no_unexpected_calls().no_errors()
    assert [call.name for call in checks.calls] == ["add", "lookup"]


def test_sample_source_starts_from_its_expectations() -> None:
    sample = Sample(tool_calls=weather_calls(), expected_tool_calls=[{"name": "get_weather"}])
    checks = expect_tools(sample)
    assert [e.name for e in checks.expected] == ["get_weather"]
    checks.accuracy_at_least(1.0)
    with pytest.raises(AssertionError, match="1 unexpected call: get_time"):
        checks.no_unexpected_calls()


def test_list_source_may_hold_langchain_tool_call_dicts() -> None:
    calls = [{"name": "get_weather", "args": {"city": "Berlin"}, "id": "c1"}]
    expect_tools(calls).called("get_weather", city="Berlin").no_unexpected_calls()


def test_sample_with_nothing_recorded_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"sample.tool_calls is None, so nothing was recorded"):
        expect_tools(Sample(tool_calls=None))


@pytest.mark.parametrize("source", ["get_weather", 42, {"name": "x"}, [ToolCall.of("f"), 3]])
def test_a_source_of_the_wrong_kind_is_a_type_error(source: Any) -> None:
    with pytest.raises(TypeError, match=r"expect_tools\(\) takes a ToolCallRecorder"):
        expect_tools(source)


# --- misuse ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "check",
    [
        "in_order",
        "accuracy_at_least",
        "argument_correctness_at_least",
        "f1_at_least",
        "no_unexpected_calls",
    ],
)
def test_a_metric_check_before_any_expected_call_is_a_value_error(check: str) -> None:
    method = getattr(expect_tools(weather_calls()), check)
    args = () if check in ("in_order", "no_unexpected_calls") else (1.0,)
    with pytest.raises(ValueError, match=r"no expected calls declared yet.*called\("):
        method(*args)


def test_checks_without_expectations_are_fine_where_they_need_none() -> None:
    expect_tools(weather_calls()).no_errors().not_called("delete_account")


@pytest.mark.parametrize("threshold", [1.5, -0.1, float("nan")])
def test_a_threshold_outside_zero_one_is_a_value_error(threshold: float) -> None:
    checks = expect_tools(weather_calls()).called("get_weather")
    with pytest.raises(ValueError, match=r"accuracy_at_least\(.*\): the threshold must be within"):
        checks.accuracy_at_least(threshold)
    with pytest.raises(ValueError, match=r"f1_at_least"):
        checks.f1_at_least(threshold)
    with pytest.raises(ValueError, match=r"argument_correctness_at_least"):
        checks.argument_correctness_at_least(threshold)


@pytest.mark.parametrize("threshold", ["1.0", True, None])
def test_a_threshold_that_is_not_a_number_is_a_type_error(threshold: Any) -> None:
    checks = expect_tools(weather_calls()).called("get_weather")
    with pytest.raises(TypeError, match=r"the threshold must be a number in \[0, 1\]"):
        checks.accuracy_at_least(threshold)


def test_strict_must_be_a_bool() -> None:
    checks = expect_tools(weather_calls()).called("get_weather")
    with pytest.raises(TypeError, match="strict must be True or False"):
        checks.argument_correctness_at_least(0.5, strict="yes")  # type: ignore[arg-type]


def plain_function(city: str) -> str:
    """Not decorated with @tool."""
    return city


@pytest.mark.parametrize(
    ("tool_arg", "error", "pattern"),
    [
        (42, TypeError, r"called\(\) takes a tool name \(str\), a LangChain BaseTool"),
        (None, TypeError, r"got NoneType None"),
        (plain_function, TypeError, r"'plain_function' is a plain function, not a tool"),
        ("", ValueError, r"the tool name is empty"),
    ],
)
def test_called_with_something_that_is_not_a_tool(
    tool_arg: Any, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        expect_tools(weather_calls()).called(tool_arg)


def test_not_called_with_a_non_tool_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"not_called\(\) takes a tool name"):
        expect_tools(weather_calls()).not_called(3.5)


def test_called_with_json_rejects_a_mapping_and_bad_json() -> None:
    checks = expect_tools(weather_calls())
    with pytest.raises(TypeError, match=r"must be a JSON object as a string, got dict"):
        checks.called_with_json("get_weather", {"city": "Berlin"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not valid JSON"):
        checks.called_with_json("get_weather", "{city: Berlin}")
    with pytest.raises(ValueError, match="must be a JSON object"):
        checks.called_with_json("get_weather", "[1, 2]")


def test_an_unknown_matcher_key_is_an_error_not_a_literal() -> None:
    with pytest.raises(ValueError, match=r"\$regexp"):
        expect_tools(weather_calls()).called("get_weather", city={"$regexp": "^B"})


# --- what pytest shows ----------------------------------------------------------------------


def test_pytest_shows_the_whole_message_without_harness_frames(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_agent="""
        from harness.assertions import expect_tools
        from tracing.records import ToolCall

        def test_weather():
            calls = [ToolCall.of("get_weather", city="Paris")] + [
                ToolCall.of("noise", n=i) for i in range(12)
            ]
            expect_tools(calls).called("get_weather", city="Berlin").called(
                "get_time"
            ).accuracy_at_least(1.0)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: expect_tools(...).accuracy_at_least(1.0) failed:",
            "E*  tool_call_accuracy 0.00 < 1.00: 0/2 expected calls matched; missing: "
            "get_weather(city='Berlin'), get_time()",
            "E*expected 2 calls, the agent made 13 calls:",
            "E*1  get_weather(city='Berlin')*get_weather(city='Paris')*wrong args",
            "E*     /city: city='Paris', expected 'Berlin'",
            "E*2  get_time()*missing*MISSING",
            "E*-  (not expected)*noise(n=11)*not expected",
            "E*the agent's calls, in order:",
            "E*13. noise(n=11)",
            "test_agent.py:10: AssertionError",
        ]
    )
    text = result.stdout.str()
    assert "harness/assertions.py" not in text
    assert "truncated" not in text
