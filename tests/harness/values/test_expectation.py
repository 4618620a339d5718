"""Expectation: names from strings and real LangChain tools, argument patterns, coercion."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool

from harness.errors import MatcherError
from harness.expectation import Expectation
from harness.values import ABSENT, AnyValue, Approx, Regex
from tracing.records import InvalidToolCall, ToolCall


@tool
def get_weather(city: str, day: str = "today") -> str:
    """Return the weather for a city."""
    return f"sunny in {city} {day}"


@tool("lookup_order")
def find_order(order_id: str) -> str:
    """Look an order up by id."""
    return order_id


class Named:
    """Anything with a string ``name`` (an MCP tool wrapper, say)."""

    name = "mcp_search"


def test_of_with_a_string_and_keywords() -> None:
    expectation = Expectation.of("get_weather", city="Berlin")
    assert expectation.name == "get_weather"
    assert dict(expectation.args) == {"city": "Berlin"}


def test_of_with_a_tool_function_uses_its_name() -> None:
    assert isinstance(get_weather, BaseTool)
    assert Expectation.of(get_weather, city="Berlin").name == "get_weather"


def test_of_with_a_custom_tool_name_honours_the_override() -> None:
    expectation = Expectation.of(find_order, order_id="1")
    assert expectation.name == "lookup_order"
    assert expectation.accepts(ToolCall.of("lookup_order", order_id="1"))
    assert not expectation.accepts(ToolCall.of("find_order", order_id="1"))


def test_of_with_anything_named() -> None:
    assert Expectation.of(Named()).name == "mcp_search"


def test_of_with_a_json_string_and_mapping_keys_that_are_not_identifiers() -> None:
    assert dict(Expectation.of("f", '{"a": 1, "b": [2]}').args) == {"a": 1, "b": [2]}
    assert dict(Expectation.of("f", {"a-b": 1}, c=2).args) == {"a-b": 1, "c": 2}
    assert dict(Expectation.of("f", {"a": 1}, a=2).args) == {"a": 2}  # keywords win
    assert dict(Expectation.of("f").args) == {}


def test_of_compiles_dollar_mappings_into_matchers() -> None:
    expectation = Expectation.of("f", '{"city": {"$regex": "^Ber"}}', n={"$any": True})
    assert expectation.args == {"city": Regex("^Ber"), "n": AnyValue()}


@pytest.mark.parametrize("bad", ["", None, 3, object()])
def test_of_rejects_what_is_not_a_tool(bad: Any) -> None:
    with pytest.raises(InvalidToolCall):
        Expectation.of(bad)


def test_of_rejects_a_plain_function_with_a_hint() -> None:
    def plain(city: str) -> str:
        return city

    with pytest.raises(InvalidToolCall, match=r"'plain' is a plain function.*@tool"):
        Expectation.of(plain)


def test_of_rejects_arguments_that_are_not_an_object() -> None:
    with pytest.raises(InvalidToolCall, match="arguments must be a JSON object"):
        Expectation.of("f", "[1, 2]")
    with pytest.raises(InvalidToolCall, match="not valid JSON"):
        Expectation.of("f", "{city")


def test_constructor_validates_name_and_compiles_args() -> None:
    with pytest.raises(InvalidToolCall, match="non-empty string name, got ''"):
        Expectation("")
    with pytest.raises(InvalidToolCall, match="got 42"):
        Expectation(42)  # type: ignore[arg-type]
    assert Expectation("f", {"x": {"$approx": 1, "$tol": 0.5}}).args == {"x": Approx(1, tol=0.5)}


def test_malformed_matcher_error_carries_the_path() -> None:
    with pytest.raises(MatcherError) as info:
        Expectation.of("f", city={"$regx": "^B"})
    assert info.value.path == "/city"
    assert "did you mean '$regex'" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_expectations_are_frozen() -> None:
    expectation = Expectation.of("f", a=1)
    with pytest.raises(AttributeError):
        expectation.name = "g"  # type: ignore[misc]
    assert expectation == Expectation("f", {"a": 1})


# --------------------------------------------------------------------------- coerce


def test_coerce_passes_expectations_through() -> None:
    expectation = Expectation.of("f", a=1)
    assert Expectation.coerce(expectation) is expectation


def test_coerce_tool_call_args_become_the_pattern() -> None:
    call = ToolCall.of("f", {"a": 1, "b": {"$regex": "^x"}})
    expectation = Expectation.coerce(call)
    assert expectation.args == {"a": 1, "b": Regex("^x")}
    assert expectation.accepts(ToolCall.of("f", a=1.0, b="xy", c=0))


@pytest.mark.parametrize(
    "item",
    [
        {"name": "f", "args": {"a": 1}},
        {"name": "f", "arguments": '{"a": 1}'},
        {"function": {"name": "f", "arguments": '{"a": 1}'}, "id": "call_1", "type": "function"},
        {"function": {"name": "f", "args": {"a": 1}}},
    ],
)
def test_coerce_mappings(item: Any) -> None:
    assert Expectation.coerce(item) == Expectation("f", {"a": 1})


def test_coerce_name_only_forms() -> None:
    assert Expectation.coerce({"name": "f"}) == Expectation("f")
    assert Expectation.coerce("f") == Expectation("f")  # type: ignore[arg-type]
    assert Expectation.coerce(get_weather) == Expectation("get_weather")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ({"args": {"a": 1}}, "needs a non-empty 'name'"),
        ({"name": "", "args": {}}, "needs a non-empty 'name'"),
        ({"function": "f"}, "'function' must be a mapping"),
        ({"name": "f", "args": {}, "arguments": {}}, "both 'args' and 'arguments'"),
        ({"name": "f", "args": 3}, "arguments must be a mapping"),
        (42, "got int 42"),
    ],
)
def test_coerce_rejects_bad_items(item: Any, fragment: str) -> None:
    with pytest.raises(InvalidToolCall) as info:
        Expectation.coerce(item)
    assert fragment in str(info.value)


# --------------------------------------------------------------------------- accepts / check


def test_accepts_needs_equal_names_case_sensitively() -> None:
    expectation = Expectation.of("get_weather")
    assert expectation.accepts(ToolCall.of("get_weather", city="anything"))
    assert not expectation.accepts(ToolCall.of("Get_Weather"))
    assert not expectation.accepts(ToolCall.of("get_weather_v2"))


def test_accepts_is_a_subset_match_with_top_level_numeric_equivalence() -> None:
    expectation = Expectation.of("add", a=2, b=3)
    assert expectation.accepts(ToolCall.of("add", a=2.0, b=3, note="x"))
    assert not expectation.accepts(ToolCall.of("add", a=2))
    assert not expectation.accepts(ToolCall.of("add", a=True, b=3))
    assert expectation.accepts_exactly(ToolCall.of("add", a=2.0, b=3))
    assert not expectation.accepts_exactly(ToolCall.of("add", a=2, b=3, note="x"))


def test_accepts_absent_versus_none() -> None:
    expectation = Expectation.of("f", a=None, b={"$absent": True})
    assert expectation.accepts(ToolCall.of("f", a=None))
    assert not expectation.accepts(ToolCall.of("f"))
    assert not expectation.accepts(ToolCall.of("f", a=None, b=None))


def test_check_ignores_the_name_and_reports_diffs() -> None:
    expectation = Expectation.of(get_weather, city="Berlin", day={"$one_of": ["tomorrow", "+1"]})
    result = expectation.check(ToolCall.of("other_tool", city="Berlim", units="metric"))
    assert (result.correct, result.total) == (0, 2)
    assert result.extra_keys == ("units",)
    messages = [d.message for d in result.diffs]
    assert messages == ["city='Berlim', expected 'Berlin'", "missing argument 'day'"]
    assert result.diffs[1].actual is ABSENT
    assert expectation.check(ToolCall.of("get_weather", city="Berlin", day="+1")).ok


def test_describe_and_to_dict() -> None:
    expectation = Expectation.of("get_weather", city={"$regex": "^Ber"}, day="tomorrow", n=2)
    assert expectation.describe() == "get_weather(city=$regex '^Ber', day='tomorrow', n=2)"
    assert Expectation.of("ping").describe() == "ping()"
    spelled = expectation.to_dict()
    assert spelled == {
        "name": "get_weather",
        "args": {"city": {"$regex": "^Ber"}, "day": "tomorrow", "n": 2},
    }
    assert Expectation.coerce(spelled) == expectation
