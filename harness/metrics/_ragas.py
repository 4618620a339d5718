"""Pieces of Ragas 0.4.3's behaviour that ``compat="ragas"`` reproduces (see the reference doc)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import SampleError
from harness.expectation import Expectation
from harness.values import Matcher, describe_pattern


def ragas_sort_key(name: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """Rule 7: ``(name, argname_1, str(value_1), ...)`` with argument names sorted."""
    key = [name]
    for arg in sorted(args):
        key.append(arg)
        key.append(str(args[arg]))
    return tuple(key)


def make_hashable(value: Any) -> Any:
    """Rule 19: dict -> frozenset of items, list/tuple -> tuple, set -> frozenset, else as is."""
    if isinstance(value, dict):
        return frozenset((key, make_hashable(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(make_hashable(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(make_hashable(item) for item in value)
    return value


def literal_args(metric: str, expectation: Expectation, index: int) -> Mapping[str, Any]:
    """The expectation's arguments as plain values; Ragas has no matchers, so none may appear."""
    args = expectation.args
    for key, pattern in args.items():
        if isinstance(pattern, Matcher):
            raise SampleError(
                f"{metric}: compat='ragas' compares literal values only, but "
                f"expected_tool_calls[{index}] ({expectation.name}) argument {key!r} is the "
                f"matcher {describe_pattern(pattern)}; drop compat='ragas' to use matchers"
            )
    return args
