"""What a rule kind returns: its outcome, the "cannot be decided" error, and the reason parts.

Reasons are formatted only for failures; a passing kind returns a constant outcome
(docs/metrics.md, "Rules", "Results and reasons").
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.rules.trajectory import Trajectory
from harness.text import plural, shorten

CALL_WIDTH = 120
"""A call is shown in a reason cut to this many characters."""


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """What one kind found: passed, the reason code and reason, the offending calls (0-based).

    ``error``: the rule cannot be decided on this run (code ``unevaluable``; ``calls`` are
    those whose missing content would decide it) — not a verdict.
    """

    passed: bool
    code: str | None
    reason: str
    calls: tuple[int, ...] = ()
    error: bool = False


def unevaluable(reason: str, calls: tuple[int, ...] = ()) -> RuleOutcome:
    """The outcome of a rule that what was not captured would decide."""
    return RuleOutcome(False, "unevaluable", "cannot be decided: " + reason, calls, error=True)


def positive_int(kind: str, key: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{kind} {key} must be a positive integer, got {value!r}")


def show(trajectory: Trajectory, position: int) -> str:
    """``#3 cancel_order(order_id='ORD-1050')``: the call's 1-based number and the call."""
    return f"#{position + 1} {shorten(trajectory.calls[position].describe(), CALL_WIDTH)}"


def more(count: int) -> str:
    return f" (and {plural(count, 'more call')})" if count else ""


def failed(code: str, trajectory: Trajectory, found: list[int], why: str) -> RuleOutcome:
    """A failure naming the first offending call: ``#N call: why (and K more calls)``."""
    reason = f"{show(trajectory, found[0])}: {why}{more(len(found) - 1)}"
    return RuleOutcome(False, code, reason, tuple(found))


def uncaptured(trajectory: Trajectory, calls: list[int]) -> RuleOutcome:
    """The outcome of a rule that the content of ``calls`` (not captured) would decide."""
    call = trajectory.calls[calls[0]]
    return unevaluable(
        f"#{calls[0] + 1} {call.name} was recorded without its arguments and result (content "
        f"not captured){more(len(calls) - 1)}",
        tuple(calls),
    )


def gaps(trajectory: Trajectory, last: int) -> list[int]:
    """The calls up to ``last`` recorded without content (what leaves a verdict open)."""
    return sorted(p for p in trajectory.not_captured if p <= last)
