"""literal_key / args_key: hashable keys that agree with value equivalence (docs/metrics.md)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.values import (
    AnyValue,
    args_equal,
    args_key,
    args_match,
    compile_args,
    equivalent,
    literal_key,
    strict_equal,
)

NAN = float("nan")


def test_top_level_numbers_key_by_value_across_types() -> None:
    keys = {literal_key(v) for v in (3, 3.0, Decimal("3.00"), Fraction(6, 2))}
    assert len(keys) == 1
    assert literal_key(3) != literal_key(3.5)
    assert literal_key(0.1 + 0.2) != literal_key(0.3)


def test_bool_none_and_strings_stay_apart_from_numbers() -> None:
    assert literal_key(True) != literal_key(1)
    assert literal_key(False) != literal_key(0)
    assert literal_key(None) != literal_key("None")
    assert literal_key(None) != literal_key(False)
    assert literal_key("3") != literal_key(3)
    assert literal_key(True) == literal_key(True)


def test_nested_values_are_type_strict() -> None:
    assert literal_key([3]) != literal_key([3.0])
    assert literal_key({"a": True}) != literal_key({"a": 1})
    assert literal_key(3, top=False) != literal_key(3.0, top=False)
    assert literal_key({"a": Decimal("1.0")}) == literal_key({"a": Decimal("1")})


def test_dict_order_is_ignored_and_list_order_is_not() -> None:
    assert literal_key({"a": 1, "b": [1, 2]}) == literal_key({"b": [1, 2], "a": 1})
    assert literal_key([1, 2]) != literal_key([2, 1])
    assert literal_key([1, 2]) == literal_key((1, 2))  # strict_equal treats them alike
    assert literal_key({"a": [1]}) != literal_key([{"a": 1}])


def test_nan_anywhere_has_no_key() -> None:
    for value in (NAN, Decimal("NaN"), Decimal("sNaN"), [1, NAN], {"a": {"b": NAN}}):
        assert literal_key(value) is None
    assert args_key({"x": [NAN]}) is None


def test_unknown_types_subclasses_and_matchers_have_no_key() -> None:
    class Text(str):
        pass

    assert literal_key(object()) is None
    assert literal_key(Text("a")) is None
    assert literal_key({1, 2}) is None
    assert literal_key(AnyValue()) is None
    assert args_key(compile_args({"city": {"$regex": "^B"}})) is None


def test_args_key_matches_args_equal() -> None:
    pattern = compile_args({"a": 2, "b": {"c": [1, "x"]}})
    assert args_key(pattern) == args_key({"b": {"c": [1, "x"]}, "a": 2.0})
    assert args_key(pattern) != args_key({"a": 2, "b": {"c": [1.0, "x"]}})
    assert args_key(pattern) != args_key({"a": 2, "b": {"c": [1, "x"]}, "extra": None})
    assert args_key({}) == args_key({})


# Values built to collide: 3 / 3.0 / True / 1 / NaN / Decimal / Fraction, nested both ways.
_scalars = st.sampled_from(
    [0, 1, 3, 3.0, 1.0, -0.0, True, False, None, "3", "a", "", NAN, Decimal("3.00"), Fraction(3)]
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(_values, _values)
def test_literal_key_equality_is_equivalence(left: Any, right: Any) -> None:
    top_l, top_r = literal_key(left), literal_key(right)
    if top_l is not None and top_r is not None:
        assert (top_l == top_r) == equivalent(left, right)
        assert (top_l == top_r) == equivalent(right, left)
    deep_l, deep_r = literal_key(left, False), literal_key(right, False)
    if deep_l is not None and deep_r is not None:
        assert (deep_l == deep_r) == strict_equal(left, right)
    if _has_nan(left):
        assert top_l is None and deep_l is None


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3),
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3),
)
def test_args_key_equality_is_args_equal(left: dict[str, Any], right: dict[str, Any]) -> None:
    pattern = compile_args(left)
    key_l, key_r = args_key(pattern), args_key(right)
    if key_l is not None and key_r is not None:
        assert (key_l == key_r) == args_equal(pattern, right)


_matchers = st.sampled_from(
    [{"$any": True}, {"$absent": True}, {"$optional": 1}, {"$type": "integer"}]
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _values | _matchers, max_size=3),
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3),
)
def test_args_equal_is_args_match_without_extra_keys(
    raw: dict[str, Any], actual: dict[str, Any]
) -> None:
    pattern = compile_args(raw)
    reference = args_match(pattern, actual) and all(key in pattern for key in actual)
    assert args_equal(pattern, actual) == reference


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, Decimal):
        return value.is_nan()
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False
