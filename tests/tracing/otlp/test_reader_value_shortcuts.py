"""The reader's second round of cheaper paths give what the general ones give.

* ``_read_attributes`` reads a one-key ``stringValue`` / ``intValue`` value without a call: the
  same value, or the same error, as ``_read_attribute`` (the general path) gives;
* ``json_value`` skips the search for a 19-digit run in a shorter text: the same value or
  error as ``json.loads``;
* ``ToolCall``'s check lets a plain str and dict through first: every other name and args are
  accepted or refused as before, with the same message;
* ``_uncaptured`` looks spans up only for calls without arguments: the indices the one-dict
  algorithm it replaces gives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.traces.evaluate import _lacks_arguments, _uncaptured
from tracing.otel.conventions import GENAI, OPENINFERENCE, CallSpanKind, classify
from tracing.otel.span_reading import json_value
from tracing.otel.span_view import SpanView
from tracing.otlp.decode import _read_attribute, _read_attributes
from tracing.records import InvalidToolCall, ToolCall

# --- attributes --------------------------------------------------------------------------------

_VALUES = st.one_of(
    st.text(max_size=5),
    st.integers(-(2**70), 2**70),
    st.sampled_from(["12", "-3", "x", "", "1e3", " 7 ", None, True, [1], {"a": 1}, 1.5]),
)
_KINDS = st.sampled_from(
    ["stringValue", "intValue", "boolValue", "doubleValue", "bytesValue", "other"]
)


@st.composite
def _attribute(draw: Any) -> Any:
    """An attribute as a file may spell it: mostly right, sometimes wrong in any part."""
    value: Any = {draw(_KINDS): draw(_VALUES) for _ in range(draw(st.integers(0, 2)))}
    value = draw(st.sampled_from([value, value, value, None, "s", [value], 3]))
    key = draw(st.sampled_from(["k", "k", "other", "", 7, None, ["k"]]))
    item: Any = {"key": key, "value": value}
    if draw(st.booleans()):
        del item[draw(st.sampled_from(["key", "value"]))]
    return draw(st.sampled_from([item, item, item, "item", None, [item]]))


def _outcome(read: Any, items: list[Any]) -> Any:
    try:
        return read(items)
    except (ValueError, TypeError, ArithmeticError) as exc:
        return type(exc), str(exc)


def _general(items: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        _read_attribute(item, out)
    return out


@settings(max_examples=500, deadline=None)
@given(st.lists(_attribute(), min_size=1, max_size=4))
def test_attributes_read_as_the_general_path_reads_them(items: list[Any]) -> None:
    """The fast path's value for every attribute it takes, the general path's error else."""
    assert _outcome(_read_attributes, items) == _outcome(_general, items)


def test_the_common_shapes_take_the_fast_path() -> None:
    items = [
        {"key": "s", "value": {"stringValue": "v"}},
        {"key": "i", "value": {"intValue": "42"}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "two", "value": {"intValue": "1", "stringValue": "x"}},  # first known key wins
    ]
    assert _read_attributes(items) == {"s": "v", "i": 42, "b": True, "two": 1}
    with pytest.raises(ValueError, match="invalid literal for int"):
        _read_attributes([{"key": "i", "value": {"intValue": "x"}}])


# --- JSON texts --------------------------------------------------------------------------------


def _decoded(text: str) -> Any:
    try:
        return "value", json_value(text)
    except ValueError as exc:
        return "error", type(exc), str(exc)


def _standard(text: str) -> Any:
    try:
        return "value", json.loads(text)
    except ValueError as exc:
        return "error", type(exc), str(exc)


_SHORT = st.one_of(
    st.text(alphabet='{}[]":,0123456789.eE-+ ntrufals\\', max_size=18),
    st.sampled_from(["{}", '{"a": 1}', "1" * 18, "-" + "9" * 17, "[" * 18, "NaN", "1e999"]),
)


@settings(max_examples=500, deadline=None)
@given(_SHORT)
def test_short_texts_decode_as_the_standard_parser_decodes_them(text: str) -> None:
    assert _decoded(text) == _standard(text)


# --- ToolCall's check --------------------------------------------------------------------------


class _Name(str):
    pass


class _Args(dict[str, Any]):
    pass


@pytest.mark.parametrize(
    "name, args",
    [
        ("t", {"a": 1}),
        (_Name("t"), {}),
        ("t", _Args(a=1)),
        ("t", MappingProxyType({"a": 1})),
    ],
)
def test_a_call_of_any_string_name_and_any_mapping_is_built(name: Any, args: Any) -> None:
    call = ToolCall(name, args)
    assert call.name == name and call.args is args


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("", {}, "tool call needs a non-empty string name, got ''"),
        (_Name(""), {}, "tool call needs a non-empty string name, got ''"),
        (None, {}, "tool call needs a non-empty string name, got None"),
        ("t", [("a", 1)], "tool call 't': args must be a mapping, got list: [('a', 1)]"),
        ("t", "{}", "tool call 't': args must be a mapping, got str: {}"),
    ],
)
def test_a_call_without_a_name_or_mapping_is_refused(name: Any, args: Any, message: str) -> None:
    with pytest.raises(InvalidToolCall) as caught:
        ToolCall(name, args)
    assert str(caught.value) == message


# --- calls recorded without their arguments ----------------------------------------------------


def _one_dict(
    calls: Sequence[ToolCall],
    views: Sequence[SpanView],
    kinds: Sequence[CallSpanKind | None],
) -> tuple[int, ...]:
    """The algorithm _uncaptured replaced: one dict of every span, then a look-up per call."""
    empty = [i for i, call in enumerate(calls) if not call.args and call.run_id is not None]
    if not empty:
        return ()
    spans: Mapping[str | None, tuple[SpanView | None, CallSpanKind | None]] = {
        view.span_id: (view, kind) for view, kind in zip(views, kinds, strict=True)
    }
    return tuple(i for i in empty if _lacks_arguments(*spans.get(calls[i].run_id, (None, None))))


_IDS = st.sampled_from(["a", "b", "c"])
_ATTRIBUTES = st.sampled_from(
    [
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "t",
            GENAI.arguments: "{}",
        },
        {"tool.name": "t"},
        {"tool.name": "t", OPENINFERENCE.arguments: "{}"},
        {"gen_ai.operation.name": "chat"},
        {},
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_IDS, _ATTRIBUTES), max_size=5),
    st.lists(st.tuples(st.one_of(st.none(), _IDS), st.booleans()), max_size=5),
)
def test_uncaptured_calls_are_those_the_one_dict_algorithm_finds(
    spans: list[tuple[str, dict[str, Any]]], calls: list[tuple[str | None, bool]]
) -> None:
    """Spans sharing an id (the last one counts), calls without a span or without an id."""
    views = [SpanView("t", span_id, "s", attributes) for span_id, attributes in spans]
    kinds = [classify(view.attributes) for view in views]
    records = [ToolCall("t", {"a": 1} if has else {}, run_id=run_id) for run_id, has in calls]
    expected = _one_dict(records, views, kinds)
    assert _uncaptured(records, views, kinds) == expected
    assert _uncaptured(records, views) == expected  # kinds worked out when not given
