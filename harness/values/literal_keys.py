"""Literal keys: equivalence as hashing, so literal-only patterns can be looked up, not scanned.

Two literals get equal keys exactly when :func:`~harness.values.equivalence.equivalent` calls them
equal (docs/metrics.md, Values); the metrics use this to pair calls through a dict.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any


class _KeyTag:
    """A marker inside literal keys: compared by identity, it equals no value and no other tag."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"<{self.label}>"


# bool and None get tags: True == 1 and hash(True) == hash(1), so raw bools would meet numbers.
_KEY_TRUE = _KeyTag("true")
_KEY_FALSE = _KeyTag("false")
_KEY_NULL = _KeyTag("null")
_KEY_LIST = _KeyTag("list")
_KEY_DICT = _KeyTag("dict")


def literal_key(value: Any, top: bool = True) -> Hashable | None:
    """A hashable key, equal for two literals exactly when they are equivalent; else None.

    Equivalence is the one of docs/metrics.md, Values (:func:`~harness.values.equivalent`).

    ``top=True`` keys a top-level argument value (numbers by value: a number is its own key, and
    Python hashes equal int / float / Decimal / Fraction values alike); ``top=False`` keys a value
    nested in a dict or list (numbers tagged with their type, so nested ``3`` and ``3.0`` differ).
    None means "no exact key": NaN anywhere (containers compare items by identity first, so a
    shared NaN object would make two keys equal where equivalence says unequal), a matcher, a
    subclass or any type outside str, int, float, bool, None, Decimal, Fraction, dict, list and
    tuple.
    """
    cls = value.__class__
    if cls is str:
        return str(value)  # a no-op for an exact str; keeps the return type honest
    if cls is int:
        return value if top else (int, value)
    if cls is float:
        if value != value:
            return None
        return value if top else (float, value)
    if cls is bool:
        return _KEY_TRUE if value else _KEY_FALSE
    if value is None:
        return _KEY_NULL
    if cls is dict:
        entries = []
        for key, item in value.items():
            # Raw dict keys: a frozenset looks them up with the same hash-then-== rule that
            # strict_equal's ``actual.get(key)`` uses, so the two agree on which keys match.
            item_key = literal_key(item, False)
            if item_key is None:
                return None
            entries.append((key, item_key))
        return (_KEY_DICT, frozenset(entries))
    if cls is list or cls is tuple:  # strict_equal treats list and tuple alike
        items = []
        for item in value:
            item_key = literal_key(item, False)
            if item_key is None:
                return None
            items.append(item_key)
        return (_KEY_LIST, tuple(items))
    if cls is Decimal:
        if value.is_nan():
            return None
        return value if top else (Decimal, value)
    if cls is Fraction:
        return value if top else (Fraction, value)
    return None


def args_key(args: Mapping[str, Any]) -> frozenset[tuple[str, Hashable]] | None:
    """A key equal for two literal argument mappings exactly when ``args_equal`` holds; else None.

    ``args_equal(p, a)`` asks for the same keys and equivalent values, which is what equality of
    these frozensets of (key, literal_key(value)) pairs says. None when ``args`` is not a plain
    dict or some value has no :func:`literal_key` (a matcher, NaN, an unknown type).
    """
    if args.__class__ is not dict:
        return None
    entries: list[tuple[str, Hashable]] = []
    for key, value in args.items():
        if value.__class__ is str:  # the common case, kept free of a function call
            entries.append((key, value))
            continue
        value_key = literal_key(value)
        if value_key is None:
            return None
        entries.append((key, value_key))
    return frozenset(entries)
