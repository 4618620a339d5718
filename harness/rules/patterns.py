"""Call patterns: which calls a rule speaks of — a tool name or glob, optionally with arguments.

Arguments are matched like an expected call's (``harness.values.args_match``: the listed keys
must match, the others are free). Everything is compiled once, when the pattern is built; a
test against a call compiles nothing (docs/metrics.md, Rules).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import MatcherError
from harness.values import (
    ABSENT,
    args_match,
    compile_args,
    describe_pattern,
    equivalent,
    refs_in,
)
from harness.values.pattern import pointer_token

if TYPE_CHECKING:
    from harness.rules.trajectory import Trajectory
    from tracing.records import ToolCall

SAME_KEY = "$same"
"""``{$same: <path>}``: in ``before.first.args``, equal to the ``then`` call's argument."""

_GLOB_CHARS = frozenset("*?[")

ArgPath = tuple[str, ...]
"""A dot path into a call's arguments, split: ``items.0.sku`` -> ``("items", "0", "sku")``."""


def parse_path(text: str) -> ArgPath:
    """Split a dot path (``order_id``, ``items.0.sku``); ValueError for an empty part."""
    parts = tuple(text.split("."))
    if not all(parts):
        raise ValueError(
            f"argument path {text!r} has an empty part: write names joined by single dots, "
            "as in items.0.sku"
        )
    return parts


def resolve(value: Any, path: ArgPath) -> Any:
    """The value at ``path`` (mapping keys; digits index lists), or ABSENT."""
    for part in path:
        if value.__class__ is dict or isinstance(value, Mapping):  # a plain dict: no ABC check
            value = value.get(part, ABSENT)
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return ABSENT
        if value is ABSENT:
            return ABSENT
    return value


@dataclass(frozen=True, slots=True)
class Same:
    """``{$same: path}``: equal (``harness.values.equivalent``) to the ``then`` call's value at
    ``path``; a ``then`` call without that value matches no ``first`` call."""

    path: str
    parts: ArgPath = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path:
            raise MatcherError(f"$same takes an argument name or dot path, got {self.path!r}")
        try:
            object.__setattr__(self, "parts", parse_path(self.path))
        except ValueError as exc:
            raise MatcherError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class CallPattern:
    """A tool name or glob (``fnmatchcase``), compiled argument patterns, ``$same`` references.

    Build it with :meth:`build`, which compiles the arguments.
    """

    name: str
    args: Mapping[str, Any] | None = None
    """Compiled argument patterns; None: any arguments."""
    same: tuple[tuple[str, Same], ...] = ()
    """(argument key, reference) pairs resolved against the ``then`` call (``before`` only)."""
    glob: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise MatcherError(f"a call pattern needs a tool name or glob, got {self.name!r}")
        if _GLOB_CHARS.intersection(self.name):
            object.__setattr__(self, "glob", re.compile(fnmatch.translate(self.name)))

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any] | None = None, *, same_allowed: bool = False
    ) -> CallPattern:
        """Compile ``args`` (``$`` matchers; ``{$same: path}`` or :class:`Same` as an argument's
        whole value where ``same_allowed``); MatcherError names the JSON pointer of a bad one."""
        if args is None:
            return cls(name)
        if not isinstance(args, Mapping):
            raise MatcherError(
                f"args must be a mapping of argument name -> pattern, got {args!r}", ""
            )
        plain: dict[str, Any] = {}
        same: list[tuple[str, Same]] = []
        for key, value in args.items():
            where = f"/{pointer_token(key)}"
            reference = _same_of(value, where)
            if reference is None:
                _refuse_nested_same(value, where)
                plain[key] = value
            elif not same_allowed:
                raise MatcherError(
                    "$same only goes in before.first.args (it names an argument of the 'then' "
                    "call)",
                    where,
                )
            else:
                same.append((key, reference))
        compiled = compile_args(plain)
        for key, value in compiled.items():
            for where, _ref in refs_in(value, f"/{pointer_token(key)}"):
                raise MatcherError(
                    "$ref only goes in an expected call's args or result; a rule compares "
                    "arguments with $same",
                    where,
                )
        return cls(name, compiled or None, tuple(same))

    @property
    def needs_args(self) -> bool:
        """Does testing a call against this pattern read its arguments?"""
        return self.args is not None or bool(self.same)

    def matches_name(self, name: str) -> bool:
        """Is ``name`` this pattern's tool (equal, or matched by the glob)?"""
        if self.glob is None:
            return name == self.name
        return self.glob.match(name) is not None

    def test(self, trajectory: Trajectory, position: int) -> bool | None:
        """Does the call at ``position`` match? None: it depends on arguments not captured.

        An ``invalid`` call (arguments not JSON) matches a name-only pattern and no other.
        """
        call = trajectory.calls[position]
        if not self.matches_name(call.name):
            return False
        if self.args is None:
            return True
        if call.status == "invalid":
            return False
        if not trajectory.known(position):
            return None
        return args_match(self.args, call.args)

    def test_before(
        self, trajectory: Trajectory, position: int, then: ToolCall, then_known: bool
    ) -> bool | None:
        """As :meth:`test`, with ``$same`` resolved against the ``then`` call."""
        if not self.same:
            return self.test(trajectory, position)
        expected: list[Any] = []
        if then_known:
            expected = [resolve(then.args, reference.parts) for _, reference in self.same]
            if ABSENT in expected:
                return False  # the 'then' call has no value for an earlier call to equal
        found = self.test(trajectory, position)
        call = trajectory.calls[position]
        if not found or call.status == "invalid":
            return False if call.status == "invalid" else found
        known = trajectory.known(position)
        if known and any(key not in call.args for key, _ in self.same):
            return False  # whatever the 'then' call holds, this one lacks the argument
        if not then_known or not known:
            return None
        for (key, _), value in zip(self.same, expected, strict=True):
            if not equivalent(value, call.args[key]):
                return False
        return True

    def describe(self, then: ToolCall | None = None) -> str:
        """``name`` or ``name(key=pattern, ...)``; ``$same`` as ``then``'s value when given."""
        parts = [f"{key}={describe_pattern(value)}" for key, value in (self.args or {}).items()]
        for key, reference in self.same:
            value = resolve(then.args, reference.parts) if then is not None else ABSENT
            shown = repr(value) if value is not ABSENT else f"$same {reference.path}"
            parts.append(f"{key}={shown}")
        return f"{self.name}({', '.join(parts)})" if parts else self.name


def _same_of(value: Any, where: str) -> Same | None:
    if isinstance(value, Same):
        return value
    if isinstance(value, Mapping) and SAME_KEY in value:
        if len(value) != 1:
            others = [key for key in value if key != SAME_KEY]
            raise MatcherError(
                f"$same stands alone; found {', '.join(map(repr, others))} beside it", where
            )
        try:
            return Same(value[SAME_KEY])
        except MatcherError as exc:
            raise MatcherError(str(exc), f"{where}/{pointer_token(SAME_KEY)}") from None
    return None


def _refuse_nested_same(value: Any, where: str) -> None:
    """A ``$same`` below an argument's top is an error that says where ``$same`` goes."""
    stack = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, Mapping):
            if "$literal" in item:
                continue  # taken literally, ``$same`` key included
            if SAME_KEY in item or any(isinstance(v, Same) for v in item.values()):
                raise MatcherError(
                    "$same only goes as the whole value of one of first's arguments, "
                    "as in {order_id: {$same: order_id}}",
                    path,
                )
            stack.extend((v, f"{path}/{pointer_token(k)}") for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            for index, v in enumerate(item):
                if isinstance(v, Same):
                    raise MatcherError("$same cannot go inside a list", f"{path}/{index}")
                stack.append((v, f"{path}/{index}"))
