"""The rule kinds: one small frozen dataclass each, ``evaluate(trajectory) -> RuleOutcome``.

Each kind is a pure function of the trajectory (docs/metrics.md, "Rules", defines them). A
verdict rests on evidence only: a violation among the calls whose content was captured fails
the rule; when no such violation exists but one could hide in what was not captured (a call's
arguments, an earlier result, the user's input, token usage), :class:`RuleUnevaluable` is
raised with the reason — never a pass or a fail that the missing content could overturn.
A passing outcome carries a constant reason; reasons are only formatted for failures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from math import inf
from typing import ClassVar

from harness.rules.grounding import index_of, leaves
from harness.rules.patterns import ArgPath, CallPattern, parse_path, resolve
from harness.rules.trajectory import Trajectory
from harness.text import plural, shorten
from harness.values import ABSENT, args_equal, args_key
from tracing.records import ModelCall, ToolCall

CALL_WIDTH = 120
"""A call is shown in a reason cut to this many characters."""


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """What one kind found: passed, the reason code and reason, the offending calls (0-based)."""

    passed: bool
    code: str | None
    reason: str
    calls: tuple[int, ...] = ()


class RuleUnevaluable(Exception):
    """The rule cannot be decided on this run (content not captured, no usage reported)."""

    def __init__(self, reason: str, calls: tuple[int, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        """One line: what is missing and why it matters."""
        self.calls = calls
        """0-based indices of the calls whose missing content decides it."""


def _positive_int(kind: str, key: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{kind} {key} must be a positive integer, got {value!r}")


def show(trajectory: Trajectory, position: int) -> str:
    """``#3 cancel_order(order_id='ORD-1050')``: the call's 1-based number and the call."""
    return f"#{position + 1} {shorten(trajectory.calls[position].describe(), CALL_WIDTH)}"


def _more(count: int) -> str:
    return f" (and {plural(count, 'more call')})" if count else ""


def _failed(code: str, trajectory: Trajectory, found: list[int], why: str) -> RuleOutcome:
    """A failure naming the first offending call: ``#N call: why (and K more calls)``."""
    reason = f"{show(trajectory, found[0])}: {why}{_more(len(found) - 1)}"
    return RuleOutcome(False, code, reason, tuple(found))


def uncaptured(trajectory: Trajectory, calls: list[int]) -> RuleUnevaluable:
    """The error for a rule that the content of ``calls`` (not captured) would decide."""
    call = trajectory.calls[calls[0]]
    return RuleUnevaluable(
        f"cannot be decided: #{calls[0] + 1} {call.name} was recorded without its arguments "
        f"and result (content not captured){_more(len(calls) - 1)}",
        tuple(calls),
    )


@dataclass(frozen=True, slots=True)
class Forbid:
    """``forbid: pattern``: no call matches the pattern (any status)."""

    pattern: CallPattern
    kind: ClassVar[str] = "forbid"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "no forbidden call")

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
            return _failed("forbidden_call", trajectory, found, why)
        if unknown:
            raise uncaptured(trajectory, unknown)
        return self.PASSED


@dataclass(frozen=True, slots=True)
class Allow:
    """``allow: [pattern, ...]``: every call (any status) matches one of the patterns."""

    patterns: tuple[CallPattern, ...]
    kind: ClassVar[str] = "allow"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "every call allowed")

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
            return _failed("not_allowed", trajectory, found, f"not in allow [{allowed}]")
        if unknown:
            raise uncaptured(trajectory, unknown)
        return self.PASSED


@dataclass(frozen=True, slots=True)
class Before:
    """``before: {first, then}``: every call matching ``then`` has an earlier call matching
    ``first`` (``$same`` resolved against that ``then`` call). ``invalid`` calls take no part."""

    first: CallPattern
    then: CallPattern
    kind: ClassVar[str] = "before"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "every call had its earlier call")

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
            return _failed("missing_before", trajectory, found, why)
        if unknown:
            raise uncaptured(trajectory, _gaps(trajectory, unknown[-1]))
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


def _gaps(trajectory: Trajectory, last: int) -> list[int]:
    """The calls up to ``last`` recorded without content (what leaves a verdict open)."""
    return sorted(p for p in trajectory.not_captured if p <= last)


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
            return _failed("ungrounded_arg", trajectory, found, why)
        if unknown:
            gaps = _gaps(trajectory, unknown[-1])
            if gaps:
                raise uncaptured(trajectory, gaps)
            raise RuleUnevaluable(
                f"cannot be decided: the user's input was not captured, and "
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

    def __post_init__(self) -> None:
        _positive_int("max_calls", "max", self.max)

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
            return _failed("too_many_calls", trajectory, over, why)
        if len(found) + len(unknown) > self.max:
            raise uncaptured(trajectory, unknown)
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

    def __post_init__(self) -> None:
        _positive_int("max_repeats", "max", self.max)

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
            return _failed("repeated_call", trajectory, over, why)
        # an uncaptured call may repeat any group whose arguments equal themselves (not NaN)
        largest: dict[str, int] = defaultdict(int)
        for group in [*groups.values(), *(g for g in loose if _self_equal(calls[g[0]]))]:
            name = calls[group[0]].name
            largest[name] = max(largest[name], len(group))
        for name, positions in unknown.items():
            if largest[name] + len(positions) > self.max:
                raise uncaptured(trajectory, positions)
        return self.PASSED


def _self_equal(call: ToolCall) -> bool:
    return args_equal(call.args, call.args)


BUDGET_KEYS = (
    "tool_calls",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "seconds",
)
"""The figures a budget may cap, in the order reasons list them."""

TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")


@dataclass(frozen=True, slots=True)
class Budget:
    """``budget: {...}``: each given figure of the run is at most its cap."""

    tool_calls: int | None = None
    model_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    seconds: float | None = None
    kind: ClassVar[str] = "budget"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "within budget")

    def __post_init__(self) -> None:
        caps = {key: getattr(self, key) for key in BUDGET_KEYS}
        if all(cap is None for cap in caps.values()):
            raise ValueError(f"a budget needs at least one of {', '.join(BUDGET_KEYS)}")
        for key, cap in caps.items():
            if key == "seconds" and cap is not None:
                if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 < cap < inf:
                    raise ValueError(f"budget seconds must be a finite number > 0, got {cap!r}")
            elif cap is not None:
                _positive_int("budget", key, cap)

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail listing every figure over its cap; unknown figures are an error only when no
        figure is over."""
        over: list[str] = []
        missing: list[str] = []
        for key in BUDGET_KEYS:
            cap = getattr(self, key)
            if cap is None:
                continue
            value, why = _figure(trajectory, key)
            if value is not None and value > cap:
                over.append(f"{key} {_number(value)} > {_number(cap)}")
            elif why is not None:
                missing.append(f"{key}: {why}")
        if over:
            return RuleOutcome(False, "over_budget", "over budget: " + "; ".join(over))
        if missing:
            raise RuleUnevaluable("cannot be decided: " + "; ".join(missing))
        return self.PASSED


def _figure(trajectory: Trajectory, key: str) -> tuple[float | int | None, str | None]:
    """The run's figure for a budget key (a lower bound when part is unknown), and why it is
    not fully known (None when it is)."""
    if key == "tool_calls":
        return len(trajectory.calls), None
    if key == "seconds":
        known = trajectory.duration
        return known, None if known is not None else "the run's duration is not known"
    model_calls = trajectory.model_calls
    if model_calls is None:
        return None, "the model turns were not recorded"
    if key == "model_calls":
        return len(model_calls), None
    figures = [_tokens(call, key) for call in model_calls]
    reported = [figure for figure in figures if figure is not None]
    if not reported:
        return None, "no model turn reported token usage"
    total = sum(reported)
    if len(reported) < len(figures):
        return total, f"{len(figures) - len(reported)} of {len(figures)} model turns reported none"
    return total, None


def _tokens(call: ModelCall, key: str) -> int | None:
    if key == "input_tokens":
        return call.input_tokens
    if key == "output_tokens":
        return call.output_tokens
    if call.total_tokens is not None:
        return call.total_tokens
    if call.input_tokens is not None and call.output_tokens is not None:
        return call.input_tokens + call.output_tokens
    return None


def _number(value: float) -> str:
    """``6,420``; ``12.35``; ``10`` — thousands separated, at most two decimals."""
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


RuleKind = Forbid | Allow | Before | Grounded | MaxCalls | MaxRepeats | Budget
"""Any rule kind."""
