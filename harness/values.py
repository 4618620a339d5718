"""Value equivalence (DESIGN §3) and argument matchers: the one comparison used everywhere.

INTERFACE STUB — to be implemented. Signatures below are the contract other modules use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ArgCode = Literal["wrong_args", "missing_arg", "extra_arg"]


class _Absent:
    """Marks a key that is not present in the actual arguments."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


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
    """The outcome of checking actual arguments against a pattern, argument by argument."""

    correct: int
    total: int
    diffs: tuple[ArgDiff, ...]
    extra_keys: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when every expected argument matched (extra actual keys do not count)."""
        return not self.diffs


def equivalent(expected: Any, actual: Any) -> bool:
    """Top-level equivalence: numbers by value (never bool), deep type-strict equality below."""
    raise NotImplementedError


def compile_pattern(value: Any, path: str = "") -> Any:
    """Turn ``$``-key mappings into matcher objects; raise MatcherError naming the path."""
    raise NotImplementedError


def compile_args(args: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """Compile every value of an argument mapping into a pattern."""
    raise NotImplementedError


def match_value(pattern: Any, actual: Any) -> bool:
    """Does a top-level actual value (or ABSENT) satisfy a compiled pattern?"""
    raise NotImplementedError


def args_match(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Fast yes/no: every expected key satisfied (extra actual keys ignored)."""
    raise NotImplementedError


def check_args(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> ArgCheck:
    """Argument-by-argument comparison with JSON-pointer diffs and the extra actual keys."""
    raise NotImplementedError


def describe_pattern(pattern: Any) -> str:
    """Render a pattern for reasons and tables: literals as repr, matchers as their ``$`` form."""
    raise NotImplementedError
