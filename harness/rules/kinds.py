"""The rule kinds: one small frozen dataclass each, ``evaluate(trajectory) -> RuleOutcome``
(``budget`` in :mod:`harness.rules.budget`).

Each kind is a pure function of the trajectory (docs/metrics.md, "Rules", defines them). A
verdict rests on evidence only: a violation among the calls whose content was captured fails
the rule; when no such violation exists but one could hide in what was not captured (a call's
arguments, an earlier result, the user's input, token usage), the outcome is an ``unevaluable``
error with the reason — never a pass or a fail that the missing content could overturn.
A passing outcome carries a constant reason; reasons are only formatted for failures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from harness.rules.budget import Budget
from harness.rules.grounding import index_of, leaves
from harness.rules.outcome import (
    RuleOutcome,
    failed,
    gaps,
    positive_int,
    show,
    uncaptured,
    unevaluable,
)
from harness.rules.patterns import ArgPath, CallPattern, parse_path, resolve
from harness.rules.trajectory import Trajectory
from harness.values import ABSENT, args_equal, args_key
from tracing.records import ToolCall

__all__ = [
    "Allow",
    "Before",
    "Budget",
    "Forbid",
    "Grounded",
    "MaxCalls",
    "MaxRepeats",
    "RuleKind",
    "RuleOutcome",
    "passes_by_names",
]


@dataclass(frozen=True, slots=True)
class Forbid:
    """``forbid: pattern``: no call matches the pattern (any status)."""

    pattern: CallPattern
    kind: ClassVar[str] = "forbid"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "no forbidden call")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """No tool called matches the pattern's name (see :func:`passes_by_names`)."""
        return not any(map(self.pattern.matches_name, counts))

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail on every call matching the pattern."""
        found: list[int] = []
        unknown: list[int] = []
        for position in range(len(trajectory.calls)):
            verdict = self.pattern.test(trajectory, position)
            if verdict:
                found.append(position)
            elif verdict is None:
                unknown.append(position)
        if found:
            why = f"forbidden by {self.pattern.describe()}"
            return failed("forbidden_call", trajectory, found, why)
        if unknown:
            return uncaptured(trajectory, unknown)
        return self.PASSED


@dataclass(frozen=True, slots=True)
class Allow:
    """``allow: [pattern, ...]``: every call (any status) matches one of the patterns."""

    patterns: tuple[CallPattern, ...]
    kind: ClassVar[str] = "allow"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "every call allowed")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """Every tool called is allowed by a pattern that reads no arguments."""
        names = [p for p in self.patterns if not p.needs_args]
        return all(any(p.matches_name(name) for p in names) for name in counts)

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail on every call that no pattern matches."""
        found: list[int] = []
        unknown: list[int] = []
        for position in range(len(trajectory.calls)):
            verdicts = [pattern.test(trajectory, position) for pattern in self.patterns]
            if True in verdicts:
                continue
            (unknown if None in verdicts else found).append(position)
        if found:
            allowed = ", ".join(pattern.describe() for pattern in self.patterns)
            return failed("not_allowed", trajectory, found, f"not in allow [{allowed}]")
        if unknown:
            return uncaptured(trajectory, unknown)
        return self.PASSED


@dataclass(frozen=True, slots=True)
class Before:
    """``before: {first, then}``: every call matching ``then`` has an earlier call matching
    ``first`` (``$same`` resolved against that ``then`` call). ``invalid`` calls take no part."""

    first: CallPattern
    then: CallPattern
    kind: ClassVar[str] = "before"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "every call had its earlier call")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """No tool called matches ``then`` (an absent ``first`` decides nothing: a ``then``
        call without it fails)."""
        return not any(map(self.then.matches_name, counts))

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail on every ``then`` call with no possible earlier ``first`` call."""
        calls = trajectory.calls
        found: list[int] = []
        unknown: list[int] = []
        # earlier ``first`` candidates seen so far: the first certain one, and the uncertain ones
        certain = -1
        maybe: list[int] = []
        for position, call in enumerate(calls):
            if call.status == "invalid":
                continue
            verdict = self.then.test(trajectory, position)
            if verdict is not False:
                outcome = self._earlier(trajectory, position, certain, maybe)
                if outcome is False and verdict:
                    found.append(position)
                elif outcome is not True:
                    unknown.append(position)
            if not self.first.same:
                first = self.first.test(trajectory, position)
                if first and certain < 0:
                    certain = position
                elif first is None:
                    maybe.append(position)
        if found:
            position = found[0]
            why = f"no earlier {self.first.describe(calls[position])}"
            return failed("missing_before", trajectory, found, why)
        if unknown:
            return uncaptured(trajectory, gaps(trajectory, unknown[-1]))
        return self.PASSED

    def _earlier(
        self, trajectory: Trajectory, then: int, certain: int, maybe: list[int]
    ) -> bool | None:
        """Is there a ``first`` call before ``then``? None: only among uncaptured ones."""
        if not self.first.same:
            if certain >= 0:
                return True
            return None if maybe else False
        call = trajectory.calls[then]
        then_known = trajectory.known(then)
        possible = False
        for position in range(then):
            if trajectory.calls[position].status == "invalid":
                continue
            verdict = self.first.test_before(trajectory, position, call, then_known)
            if verdict:
                return True
            possible = possible or verdict is None
        return None if possible else False


@dataclass(frozen=True, slots=True)
class Grounded:
    """``grounded: {tool, args}``: each listed argument value of each matching call was seen
    in the user's input or an earlier ``ok`` call's result (``grounding.GroundingIndex``)."""

    tool: CallPattern
    args: tuple[str, ...]
    """The arguments to check: names or dot paths (``items.0.sku``)."""
    paths: tuple[ArgPath, ...] = field(init=False, repr=False, compare=False)
    kind: ClassVar[str] = "grounded"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "every checked argument grounded")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """No tool called matches ``tool``: no argument to check."""
        return not any(map(self.tool.matches_name, counts))

    def __post_init__(self) -> None:
        if isinstance(self.args, str) or not self.args:
            raise ValueError(
                f"grounded needs a non-empty tuple of argument paths, got {self.args!r}"
            )
        object.__setattr__(self, "paths", tuple(parse_path(text) for text in self.args))

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail on every matching call with an argument value seen nowhere before it."""
        found: list[int] = []
        unknown: list[int] = []
        first_unseen: tuple[str, object] | None = None
        for position, call in enumerate(trajectory.calls):
            if call.status == "invalid" or not self.tool.matches_name(call.name):
                continue
            if not trajectory.known(position):
                unknown.append(position)
                continue
            if self.tool.args is not None and not self.tool.test(trajectory, position):
                continue
            unseen = self._unseen(trajectory, position, call)
            if unseen is None:
                continue
            if index_of(trajectory).complete_before(position):
                found.append(position)
                first_unseen = first_unseen or unseen
            else:
                unknown.append(position)
        if found and first_unseen is not None:
            where, value = first_unseen
            why = f"{where} {value!r} not seen in the user's input or any earlier tool result"
            return failed("ungrounded_arg", trajectory, found, why)
        if unknown:
            missing = gaps(trajectory, unknown[-1])
            if missing:
                return uncaptured(trajectory, missing)
            return unevaluable(
                f"the user's input was not captured, and "
                f"{show(trajectory, unknown[0])} has a value seen in no earlier tool result",
                tuple(unknown),
            )
        return self.PASSED

    def _unseen(
        self, trajectory: Trajectory, position: int, call: ToolCall
    ) -> tuple[str, object] | None:
        """The first checked value of ``call`` seen in no earlier source, with its path."""
        index = None
        for written, path in zip(self.args, self.paths, strict=True):
            value = resolve(call.args, path)
            if value is ABSENT:
                continue
            for where, leaf in leaves(value, written):
                index = index or index_of(trajectory)
                if not index.seen(leaf, position):
                    return where, leaf
        return None


@dataclass(frozen=True, slots=True)
class MaxCalls:
    """``max_calls: {tool, max}``: at most ``max`` calls (any status) match ``tool``."""

    tool: CallPattern
    max: int
    kind: ClassVar[str] = "max_calls"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "within the call limit")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """The calls whose name matches ``tool`` are at most ``max``, whatever their
        arguments."""
        matches = self.tool.matches_name
        return sum(count for name, count in counts.items() if matches(name)) <= self.max

    def __post_init__(self) -> None:
        positive_int("max_calls", "max", self.max)

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail naming the first call over the limit; the offending calls are all those over."""
        found: list[int] = []
        unknown: list[int] = []
        for position in range(len(trajectory.calls)):
            verdict = self.tool.test(trajectory, position)
            if verdict:
                found.append(position)
            elif verdict is None:
                unknown.append(position)
        if len(found) > self.max:
            over = found[self.max :]
            why = f"{len(found)} calls of {self.tool.describe()} (max {self.max})"
            return failed("too_many_calls", trajectory, over, why)
        if len(found) + len(unknown) > self.max:
            return uncaptured(trajectory, unknown)
        return self.PASSED


@dataclass(frozen=True, slots=True)
class MaxRepeats:
    """``max_repeats: N``: no call (name and equal arguments) is made more than N times.

    Arguments are equal as ``harness.values.args_equal`` says (numbers by value at the top);
    ``invalid`` calls take no part.
    """

    max: int
    kind: ClassVar[str] = "max_repeats"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "no call repeated over the limit")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """No tool is called more than ``max`` times, so no call can repeat more often."""
        return all(count <= self.max for count in counts.values())

    def __post_init__(self) -> None:
        positive_int("max_repeats", "max", self.max)

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail naming the first call over the limit; the offending calls are all those over."""
        groups: dict[tuple[str, Hashable], list[int]] = defaultdict(list)
        loose: list[list[int]] = []  # calls whose arguments have no hashable key (NaN, ...)
        unknown: dict[str, list[int]] = defaultdict(list)
        calls = trajectory.calls
        for position, call in enumerate(calls):
            if call.status == "invalid":
                continue
            if not trajectory.known(position):
                unknown[call.name].append(position)
                continue
            key = args_key(call.args)
            if key is not None:
                groups[(call.name, key)].append(position)
                continue
            for group in loose:
                first = calls[group[0]]
                if first.name == call.name and args_equal(first.args, call.args):
                    group.append(position)
                    break
            else:
                loose.append([position])
        every = [*groups.values(), *loose]
        over = sorted(p for group in every for p in group[self.max :])
        if over:
            group = next(g for g in every if over[0] in g)
            why = f"{len(group)} identical calls (max {self.max})"
            return failed("repeated_call", trajectory, over, why)
        # an uncaptured call may repeat any group whose arguments equal themselves (not NaN)
        largest: dict[str, int] = defaultdict(int)
        for group in [*groups.values(), *(g for g in loose if _self_equal(calls[g[0]]))]:
            name = calls[group[0]].name
            largest[name] = max(largest[name], len(group))
        for name, positions in unknown.items():
            if largest[name] + len(positions) > self.max:
                return uncaptured(trajectory, positions)
        return self.PASSED


def _self_equal(call: ToolCall) -> bool:
    return args_equal(call.args, call.args)


RuleKind = Forbid | Allow | Before | Grounded | MaxCalls | MaxRepeats | Budget
"""Any rule kind."""


def passes_by_names(kind: RuleKind, trajectory: Trajectory) -> bool:
    """Do the names of the tools the run called, with their counts, already make ``kind``
    pass? Only True where ``kind.evaluate(trajectory)`` is its ``PASSED`` outcome for every
    run with those names and counts (a property test holds each kind to that), so the rule
    engine need not read the calls' arguments, results or the user's input."""
    return kind.passes_by_names(trajectory.tool_counts)
