"""ToolCall construction, parsing helpers and their error messages."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from harness import Sample, SampleError, ToolCall
from tracing.records import InvalidToolCall


def test_of_accepts_mapping_keywords_or_both() -> None:
    assert ToolCall.of("f", {"a-b": 1}).args == {"a-b": 1}
    assert ToolCall.of("f", x=1).args == {"x": 1}
    assert ToolCall.of("f", {"a": 1}, b=2).args == {"a": 1, "b": 2}
    assert ToolCall.of("f").args == {}


def test_of_parses_a_json_object_string() -> None:
    assert ToolCall.of("f", '{"city": "Berlin"}').args == {"city": "Berlin"}


def test_of_rejects_json_that_is_not_an_object() -> None:
    with pytest.raises(InvalidToolCall, match=r"tool call 'f': arguments must be a JSON object"):
        ToolCall.of("f", "[1, 2]")


def test_of_rejects_invalid_json_and_names_the_call() -> None:
    with pytest.raises(InvalidToolCall, match=r"tool call 'f': arguments are not valid JSON"):
        ToolCall.of("f", "{city: Berlin}")


def test_a_call_without_a_name_is_rejected() -> None:
    with pytest.raises(InvalidToolCall, match="non-empty string name"):
        ToolCall(name="", args={})
    with pytest.raises(InvalidToolCall, match="non-empty string name"):
        ToolCall(name=None, args={})  # type: ignore[arg-type]


def test_args_that_are_not_a_mapping_are_rejected() -> None:
    with pytest.raises(InvalidToolCall, match=r"tool call 'f': args must be a mapping, got list"):
        ToolCall(name="f", args=[1, 2])  # type: ignore[arg-type]


def test_unknown_status_is_rejected() -> None:
    with pytest.raises(InvalidToolCall, match="status must be one of"):
        ToolCall(name="f", status="done")  # type: ignore[arg-type]


def test_records_are_frozen() -> None:
    call = ToolCall.of("f", x=1)
    with pytest.raises(AttributeError):
        call.name = "g"  # type: ignore[misc]


def test_from_openai_nested_function_with_json_arguments() -> None:
    call = ToolCall.from_openai(
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Berlin"}'},
        }
    )
    assert (call.name, call.args, call.id, call.status) == (
        "get_weather",
        {"city": "Berlin"},
        "call_1",
        "requested",
    )


def test_from_openai_bad_arguments_name_the_call_and_id() -> None:
    with pytest.raises(InvalidToolCall, match=r"tool call 'f' \(id 'c9'\): arguments must be"):
        ToolCall.from_openai({"id": "c9", "function": {"name": "f", "arguments": '"x"'}})


def test_from_openai_without_name() -> None:
    with pytest.raises(InvalidToolCall, match="without a name"):
        ToolCall.from_openai({"function": {"arguments": "{}"}})


def test_from_langchain_dict() -> None:
    call = ToolCall.from_langchain(
        {"name": "add", "args": {"a": 1}, "id": "x", "type": "tool_call"}
    )
    assert (call.name, call.args, call.id) == ("add", {"a": 1}, "x")


def test_from_langchain_errors_name_their_dialect_and_the_call() -> None:
    with pytest.raises(InvalidToolCall, match="LangChain tool call without a name"):
        ToolCall.from_langchain({"args": {}, "id": "x"})
    with pytest.raises(InvalidToolCall, match=r"tool call 'f' \(id 'c9'\): arguments must be"):
        ToolCall.from_langchain({"name": "f", "args": '"x"', "id": "c9"})


def test_from_openai_and_from_langchain_agree_on_one_call() -> None:
    openai = ToolCall.from_openai(
        {"id": "c1", "function": {"name": "add", "arguments": '{"a": 1}'}}, turn=2
    )
    langchain = ToolCall.from_langchain({"name": "add", "args": {"a": 1}, "id": "c1"}, turn=2)
    assert openai == langchain
    assert (openai.status, openai.source, openai.turn) == ("requested", "messages", 2)


def test_describe_renders_name_and_args() -> None:
    assert ToolCall.of("f", city="Berlin", n=2).describe() == "f(city='Berlin', n=2)"


def test_duration() -> None:
    assert ToolCall("f", started_at=10, ended_at=25).duration_ns == 15
    assert ToolCall("f").duration_ns is None


def test_sample_from_langchain_messages_collects_calls_in_order() -> None:
    messages = [
        HumanMessage("weather and time in Berlin?"),
        AIMessage(
            "",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Berlin"}, "id": "1"},
                {"name": "get_time", "args": {}, "id": "2"},
            ],
        ),
        ToolMessage("sunny", tool_call_id="1"),
        ToolMessage("12:00", tool_call_id="2"),
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "3"}]),
        ToolMessage("rain", tool_call_id="3"),
        AIMessage("Sunny in Berlin at noon."),
    ]
    sample = Sample.from_messages(messages)
    assert sample.tool_calls is not None
    assert [(c.name, dict(c.args), c.turn) for c in sample.tool_calls] == [
        ("get_weather", {"city": "Berlin"}, 0),
        ("get_time", {}, 0),
        ("get_weather", {"city": "Paris"}, 1),
    ]
    assert sample.output == "Sunny in Berlin at noon."


def test_sample_from_openai_dicts_parses_json_arguments() -> None:
    messages = [
        {"role": "user", "content": "add 2 and 3"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "5"},
        {"role": "assistant", "content": "5"},
    ]
    sample = Sample.from_messages(messages)
    assert sample.tool_calls == [
        ToolCall("add", {"a": 2, "b": 3}, id="a", status="requested", source="messages")
    ]
    assert sample.output == "5"


def test_sample_from_messages_with_non_object_arguments_names_the_call() -> None:
    messages = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "q", "function": {"name": "lookup", "arguments": "42"}}],
        }
    ]
    with pytest.raises(SampleError, match=r"messages\[0\]: tool call 'lookup' \(id 'q'\)"):
        Sample.from_messages(messages)


def test_sample_keeps_none_apart_from_empty() -> None:
    assert Sample(tool_calls=None).tool_calls is None
    assert Sample(tool_calls=[]).tool_calls == []
    with pytest.raises(SampleError, match="nothing was recorded"):
        Sample(tool_calls=None).require_recorded()


def test_sample_accepts_dicts_as_calls_and_names_a_bad_one() -> None:
    sample = Sample(tool_calls=[{"name": "f", "args": {"x": 1}}])
    assert sample.tool_calls == [ToolCall("f", {"x": 1}, status="requested", source="messages")]
    with pytest.raises(SampleError, match=r"tool_calls\[1\]"):
        Sample(tool_calls=[{"name": "f"}, {"args": {}}])
