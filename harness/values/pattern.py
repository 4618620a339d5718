"""Patterns: the :class:`Matcher` interface, literal dicts/lists holding matchers, and matching.

A *pattern* is what an expectation holds for one argument: a plain literal (compared with
:func:`~harness.values.equivalence.equivalent`, no allocation), or a :class:`Matcher`. Plain
dicts/lists that contain a matcher at any depth compile to :class:`DictPattern` /
:class:`ListPattern`. Matchers behave the same at every depth; every matcher is a frozen, hashable
dataclass (docs/metrics.md, Matchers). :func:`args_match` and :func:`args_equal` are on the metrics'
hot path: keep them free of extra calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.values.equivalence import _SEQUENCE_TYPES, ABSENT, equivalent, strict_equal


class Matcher:
    """Base of every argument matcher: ``matches(actual)`` (actual may be ABSENT), ``describe``."""

    __slots__ = ()
    #: The ``$`` key that spells this matcher in YAML / JSON.
    key: ClassVar[str] = ""

    def matches(self, actual: Any) -> bool:
        """Does ``actual`` (a value, or ABSENT when the key is missing) satisfy this matcher?"""
        raise NotImplementedError

    def describe(self) -> str:
        """The matcher in its ``$`` form, for messages: ``$regex '^Ber'``."""
        raise NotImplementedError

    def to_json(self) -> Any:
        """The ``$`` mapping that compiles back to this matcher (for drafts and JSON reports)."""
        raise NotImplementedError


def _freeze(pattern: Any) -> Any:
    """Make a compiled pattern hashable: plain dicts/lists become Dict/ListPattern (same sense)."""
    if isinstance(pattern, Matcher):
        return pattern
    if isinstance(pattern, Mapping):
        return DictPattern(pattern)
    if isinstance(pattern, _SEQUENCE_TYPES):
        return ListPattern(pattern)
    return pattern


def _pattern_json(pattern: Any) -> Any:
    if isinstance(pattern, Matcher):
        return pattern.to_json()
    return pattern


def _nested_match(pattern: Any, actual: Any) -> bool:
    """Match a value sitting inside a plain dict/list pattern: matchers, else strict equality."""
    if isinstance(pattern, Matcher):
        return pattern.matches(actual)
    return strict_equal(pattern, actual)


@dataclass(frozen=True, slots=True)
class DictPattern(Matcher):
    """A literal dict holding matchers: the same key set, each value by its pattern.

    Plain values inside compare strictly (nested rules); an ``$absent`` / ``$optional`` value
    lets its key be missing.
    """

    items: tuple[tuple[Any, Any], ...]
    key: ClassVar[str] = ""

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
        """Build from a mapping (or pairs) of key -> pattern; values are frozen, not compiled."""
        pairs = items.items() if isinstance(items, Mapping) else items
        frozen = [(k, _freeze(v)) for k, v in pairs]
        frozen.sort(key=lambda kv: repr(kv[0]))
        object.__setattr__(self, "items", tuple(frozen))

    def matches(self, actual: Any) -> bool:
        """A mapping with no keys beyond the pattern's, each value matching (strictly)."""
        if not isinstance(actual, Mapping):
            return False
        seen = 0
        for key, pattern in self.items:
            value = actual.get(key, ABSENT)
            if value is not ABSENT:
                seen += 1
            if not _nested_match(pattern, value):
                return False
        return seen == len(actual)

    def describe(self) -> str:
        """``{'city': $regex '^B', 'n': 3}``."""
        return _describe_items(self.items)

    def to_json(self) -> Any:
        """A plain dict whose values are in ``$`` form."""
        return {k: _pattern_json(v) for k, v in self.items}


@dataclass(frozen=True, slots=True)
class ListPattern(Matcher):
    """A literal list holding matchers: same length, item by item in order (strict for plain)."""

    items: tuple[Any, ...]
    key: ClassVar[str] = ""

    def __init__(self, items: Iterable[Any]) -> None:
        """Build from a sequence of patterns (frozen, not compiled)."""
        object.__setattr__(self, "items", tuple(_freeze(i) for i in items))

    def matches(self, actual: Any) -> bool:
        """A list of the same length whose items match in order."""
        if not isinstance(actual, _SEQUENCE_TYPES) or len(actual) != len(self.items):
            return False
        return all(_nested_match(p, a) for p, a in zip(self.items, actual, strict=True))

    def describe(self) -> str:
        """``[$any, 2]``."""
        return "[" + ", ".join(describe_pattern(i) for i in self.items) + "]"

    def to_json(self) -> Any:
        """A plain list whose items are in ``$`` form."""
        return [_pattern_json(i) for i in self.items]


def _describe_items(items: Iterable[tuple[Any, Any]]) -> str:
    return "{" + ", ".join(f"{k!r}: {describe_pattern(v)}" for k, v in items) + "}"


def pointer_token(key: Any) -> str:
    """Escape one JSON-pointer reference token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def _dollar_keys(mapping: Mapping[Any, Any]) -> list[str]:
    return [k for k in mapping if isinstance(k, str) and k.startswith("$")]


def match_value(pattern: Any, actual: Any) -> bool:
    """Does a top-level actual value (or ABSENT) satisfy a compiled pattern?"""
    if isinstance(pattern, Matcher):
        return pattern.matches(actual)
    if actual is ABSENT:
        return False
    return equivalent(pattern, actual)


def args_match(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Fast yes/no: every expected key satisfied (extra actual keys ignored)."""
    get = actual.get
    for key, expected in pattern.items():
        value = get(key, ABSENT)
        if expected.__class__ is str:  # the common case, kept free of any function call
            if expected != value or not isinstance(value, str):
                return False
            continue
        if isinstance(expected, Matcher):
            if not expected.matches(value):
                return False
        elif value is ABSENT or not equivalent(expected, value):
            return False
    return True


def args_equal(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Both ways: ``args_match`` and no actual key the pattern does not mention."""
    if pattern.__class__ is not dict or actual.__class__ is not dict:
        return args_match(pattern, actual) and all(key in pattern for key in actual)
    # Plain dicts (the hot path): one pass. An actual key outside the pattern exists exactly when
    # fewer pattern keys were found in ``actual`` than it holds, so no second scan is needed.
    if len(actual) > len(pattern):
        return False
    get = actual.get
    found = 0
    for key, expected in pattern.items():
        value = get(key, ABSENT)
        cls = expected.__class__
        if cls is str:
            if expected != value or not isinstance(value, str):
                return False
        elif cls is bool:
            if value is not expected:  # equivalent(): a bool matches only the same bool
                return False
        elif (cls is int or cls is float) and (value.__class__ is int or value.__class__ is float):
            if expected != value:  # by value; NaN is unequal to everything
                return False
        elif cls is dict or cls is list:
            if not strict_equal(expected, value):  # what equivalent() does; ABSENT fails it
                return False
        elif isinstance(expected, Matcher):
            if not expected.matches(value):
                return False
            if value is ABSENT:
                continue
        elif value is ABSENT or not equivalent(expected, value):
            return False
        found += 1
    return found == len(actual)


def describe_pattern(pattern: Any) -> str:
    """Render a pattern for reasons and tables: literals as repr, matchers as their ``$`` form."""
    if isinstance(pattern, Matcher):
        return pattern.describe()
    return repr(pattern)


def pattern_to_json(pattern: Any) -> Any:
    """The JSON/YAML form of a compiled pattern (matchers back as ``$`` mappings)."""
    return _pattern_json(pattern)
