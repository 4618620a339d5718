"""Value equivalence: the one comparison of an expected literal with an actual value.

Two rules, applied by position (docs/metrics.md, Values):

* the **top level** of an argument (and every option, item or value handed to a matcher) compares
  numbers by value (``3 == 3.0 == Decimal("3.00")``, never bool, NaN matches nothing):
  :func:`equivalent`;
* **inside** a plain dict or list, values compare strictly: types must agree (nested ``3 != 3.0``,
  ``True != 1``), dict key order is irrelevant, list order matters: :func:`strict_equal`.

Also home of :data:`ABSENT`, the marker for a key missing from the actual arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any


class _Absent:
    """Marks a key that is not present in the actual arguments."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"

    def __reduce__(self) -> str:
        # Keeps the sentinel a singleton across pickling (pytest-xdist ships results around).
        return "ABSENT"


ABSENT: Any = _Absent()


_NUMBER_TYPES = (int, float, Decimal, Fraction)
_SEQUENCE_TYPES = (list, tuple)


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, bool)


def _is_nan(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


def _numbers_equal(expected: Any, actual: Any) -> bool:
    """Numeric value equality of two numbers (bool excluded by the caller); NaN never equal."""
    if _is_nan(expected) or _is_nan(actual):
        return False
    return bool(expected == actual)


_NONE_TYPE = type(None)
# Exact JSON scalar types: for these, "same type and ==" is the whole nested rule.
_EXACT_SCALARS = frozenset((str, int, float, bool, _NONE_TYPE))


def equivalent(expected: Any, actual: Any) -> bool:
    """Top-level equivalence: numbers by value (never bool), deep type-strict equality below."""
    # Fast paths on exact types (what parsed JSON holds), most frequent first; anything else,
    # subclasses included, takes the general route below.
    cls = expected.__class__
    if cls is str:
        return expected == actual and isinstance(actual, str)
    other = actual.__class__
    if cls is int or cls is float:
        if other is int or other is float:
            return bool(expected == actual)  # NaN compares unequal to everything
    elif cls is bool:
        return expected is actual
    elif cls is _NONE_TYPE:
        return actual is None
    elif cls is dict or cls is list:
        return strict_equal(expected, actual)
    return _equivalent_general(expected, actual)


def _equivalent_general(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and expected == actual
    if isinstance(expected, bool):
        return isinstance(actual, bool) and expected is actual
    if isinstance(expected, _NUMBER_TYPES):
        return (
            isinstance(actual, _NUMBER_TYPES)
            and not isinstance(actual, bool)
            and _numbers_equal(expected, actual)
        )
    return strict_equal(expected, actual)


def strict_equal(expected: Any, actual: Any) -> bool:
    """Nested equality: types must agree (3 != 3.0, True != 1), dict order ignored, NaN unequal."""
    cls = expected.__class__
    other = actual.__class__
    if cls is dict and other is dict:
        if len(expected) != len(actual):
            return False
        get = actual.get
        for key, value in expected.items():
            found = get(key, ABSENT)
            inner = value.__class__
            # Same exact scalar type on both sides: the recursive call would just compare them.
            if inner is found.__class__ and inner in _EXACT_SCALARS:
                if value != found:
                    return False
            elif found is ABSENT or not strict_equal(value, found):
                return False
        return True
    if cls is list and other is list:
        if len(expected) != len(actual):
            return False
        # A plain loop: all() over a generator costs more than the comparisons on short lists.
        for a, b in zip(expected, actual, strict=True):
            inner = a.__class__
            if inner is b.__class__ and inner in _EXACT_SCALARS:
                if a != b:
                    return False
            elif not strict_equal(a, b):
                return False
        return True
    if cls in _EXACT_SCALARS and other in _EXACT_SCALARS:
        return cls is other and bool(expected == actual)
    return _strict_equal_general(expected, actual)


def _strict_equal_general(expected: Any, actual: Any) -> bool:
    if expected is None:
        return actual is None
    if isinstance(expected, str):
        return isinstance(actual, str) and expected == actual
    if isinstance(expected, bool):
        return isinstance(actual, bool) and expected is actual
    if isinstance(expected, int):
        return isinstance(actual, int) and not isinstance(actual, bool) and expected == actual
    if isinstance(expected, float):
        return isinstance(actual, float) and expected == actual
    if isinstance(expected, Decimal):
        return isinstance(actual, Decimal) and _numbers_equal(expected, actual)
    if isinstance(expected, Fraction):
        return isinstance(actual, Fraction) and expected == actual
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or len(expected) != len(actual):
            return False
        for key, value in expected.items():
            found = actual.get(key, ABSENT)
            if found is ABSENT or not strict_equal(value, found):
                return False
        return True
    if isinstance(expected, _SEQUENCE_TYPES):
        if not isinstance(actual, _SEQUENCE_TYPES) or len(expected) != len(actual):
            return False
        return all(strict_equal(a, b) for a, b in zip(expected, actual, strict=True))
    if actual is ABSENT:
        return False
    try:
        return type(expected) is type(actual) and bool(expected == actual)
    except Exception:  # an exotic __eq__ must not crash a scoring run
        return False
