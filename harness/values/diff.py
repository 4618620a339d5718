"""Argument diffs: which argument differs, where (JSON pointer), and why, in one sentence.

``check_args`` reports one :class:`ArgDiff` per wrong argument, pointing at the deepest mismatch
(docs/metrics.md, Argument diffs); metrics and reporters render these, none recomputes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness.values.compile import OptionalArg, Subset
from harness.values.equivalence import _SEQUENCE_TYPES, ABSENT
from harness.values.matchers import Absent
from harness.values.pattern import (
    DictPattern,
    ListPattern,
    Matcher,
    _nested_match,
    describe_pattern,
    match_value,
    pointer_token,
)
from harness.values.refs import Resolved, Unresolved
from harness.values.results import result_forms

ArgCode = Literal["wrong_args", "missing_arg", "extra_arg", "wrong_result", "unresolved_ref"]
"""``wrong_result``: the call's result does not match the expectation's ``result:`` (path
``result``); ``unresolved_ref``: a ``$ref`` with no value on this run (docs/metrics.md)."""


@dataclass(frozen=True, slots=True)
class ArgDiff:
    """One argument that differs: where (JSON pointer), what was expected, what was found, why."""

    path: str
    expected: Any
    actual: Any
    code: ArgCode
    message: str


@dataclass(frozen=True, slots=True)
class ArgCheck:
    """The outcome of checking actual arguments against a pattern, argument by argument.

    ``total`` counts the expected (top-level) arguments, ``correct`` those that matched; there is
    exactly one diff per wrong argument, pointing at the deepest mismatch found, then a
    ``wrong_result`` diff when the expectation's ``result:`` does not match (not counted in
    ``correct`` / ``total``, which count arguments). ``extra_keys`` are actual keys the pattern
    does not mention.
    """

    correct: int
    total: int
    diffs: tuple[ArgDiff, ...]
    extra_keys: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when every expected argument matched (extra actual keys do not count)."""
        return not self.diffs


def check_args(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> ArgCheck:
    """Argument-by-argument comparison with JSON-pointer diffs and the extra actual keys."""
    diffs: list[ArgDiff] = []
    for key, expected in pattern.items():
        value = actual.get(key, ABSENT)
        if match_value(expected, value):
            continue
        path = f"/{pointer_token(key)}"
        if value is ABSENT:
            diffs.append(
                ArgDiff(path, expected, ABSENT, "missing_arg", f"missing argument {key!r}")
            )
            continue
        diffs.append(_explain(expected, value, path, str(key), top=True))
    extra = tuple(str(key) for key in actual if key not in pattern)
    total = len(pattern)
    return ArgCheck(total - len(diffs), total, tuple(diffs), extra)


def _type_note(expected: Any, actual: Any) -> str:
    """Say why two values that look alike differ: their types (nested 3 vs 3.0, True vs 1)."""
    try:
        alike = bool(expected == actual)
    except Exception:
        alike = False
    if alike and type(expected) is not type(actual):
        return f" ({type(actual).__name__}, expected {type(expected).__name__})"
    return ""


def _explain(pattern: Any, actual: Any, path: str, label: str, *, top: bool) -> ArgDiff:
    """The deepest useful mismatch between a pattern and a value known not to match it."""
    if isinstance(pattern, Subset) and isinstance(actual, Mapping):
        for key, sub in pattern.items:
            value = actual.get(key, ABSENT)
            if not match_value(sub, value):
                return _explain(
                    sub, value, f"{path}/{pointer_token(key)}", f"{label}.{key}", top=True
                )
    if isinstance(pattern, OptionalArg) and actual is not ABSENT:
        return _explain(pattern.inner, actual, path, label, top=True)
    items = _dict_items(pattern)
    if items is not None and isinstance(actual, Mapping):
        for key, sub in items:
            value = actual.get(key, ABSENT)
            if not _nested_match(sub, value):
                sub_path = f"{path}/{pointer_token(key)}"
                return _explain(sub, value, sub_path, f"{label}.{key}", top=False)
        known = {key for key, _ in items}
        for key, value in actual.items():
            if key not in known:
                return ArgDiff(
                    f"{path}/{pointer_token(key)}",
                    ABSENT,
                    value,
                    "wrong_args",
                    f"{label}.{key}={value!r} is not expected",
                )
    seq = _list_items(pattern)
    if seq is not None and isinstance(actual, _SEQUENCE_TYPES):
        for index, (sub, value) in enumerate(zip(seq, actual, strict=False)):
            if not _nested_match(sub, value):
                return _explain(sub, value, f"{path}/{index}", f"{label}[{index}]", top=False)
        if len(seq) != len(actual):
            return ArgDiff(
                path,
                pattern,
                actual,
                "wrong_args",
                f"{label} has {len(actual)} item(s), expected {len(seq)}",
            )
    if isinstance(pattern, Resolved) and actual is not ABSENT:
        shown = f"{label}={actual!r}, expected {pattern.value!r} ({pattern.ref.describe()})"
        return ArgDiff(
            path, pattern.value, actual, "wrong_args", shown + _type_note(pattern.value, actual)
        )
    if isinstance(pattern, Unresolved):
        message = f"{label}: {pattern.ref.describe()} is unresolved: {pattern.why}"
        return ArgDiff(path, pattern, actual, "unresolved_ref", message)
    return ArgDiff(path, pattern, actual, "wrong_args", _leaf_message(pattern, actual, label))


RESULT_PATH = "result"
"""The path of a ``wrong_result`` diff, and the start of a deeper one (``result/status``): not
a JSON pointer, so it names no argument."""


def check_result(pattern: Any, result: Any) -> ArgDiff | None:
    """The ``wrong_result`` diff of a call's result against a ``result:`` pattern, or None.

    The result is read first (:func:`~harness.values.results.result_forms`: a JSON object or
    array text is its structure; a text spelling a number is that text and that number), and
    matches when one of its forms does; the diff points at the deepest mismatch inside the
    last form.
    """
    forms = result_forms(result)
    if any(match_value(pattern, form) for form in forms):
        return None
    found = _explain(pattern, forms[-1], RESULT_PATH, RESULT_PATH, top=True)
    if found.code == "unresolved_ref":
        return found
    return ArgDiff(found.path, found.expected, found.actual, "wrong_result", found.message)


def _dict_items(pattern: Any) -> Iterable[tuple[Any, Any]] | None:
    if isinstance(pattern, DictPattern):
        return pattern.items
    if isinstance(pattern, Mapping):
        return list(pattern.items())
    return None


def _list_items(pattern: Any) -> tuple[Any, ...] | list[Any] | None:
    if isinstance(pattern, ListPattern):
        return pattern.items
    if isinstance(pattern, _SEQUENCE_TYPES):
        return pattern
    return None


def _leaf_message(pattern: Any, actual: Any, label: str) -> str:
    if actual is ABSENT:
        return f"{label} is missing, expected {describe_pattern(pattern)}"
    if isinstance(pattern, Absent):
        return f"{label}={actual!r} is present, expected absent"
    if isinstance(pattern, (DictPattern, ListPattern)) or not isinstance(pattern, Matcher):
        return f"{label}={actual!r}, expected {describe_pattern(pattern)}" + _type_note(
            pattern, actual
        )
    return f"{label}={actual!r} does not match {pattern.describe()}"
