"""Score, its details, the Metric protocol and the shared threshold check."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from harness.errors import MetricConfigError
from harness.sample import Sample
from harness.values import ArgDiff

ReasonCode = Literal[
    "missing_call",
    "unexpected_call",
    "wrong_args",
    "missing_arg",
    "extra_arg",
    "wrong_order",
    "wrong_tool",
    "tool_error",
    "invalid_args",
    "wrong_result",
    "unresolved_ref",
]
"""Stable machine-readable codes for what went wrong; reports and tools may key on them."""


@dataclass(frozen=True, slots=True)
class Issue:
    """One thing a metric found wrong, with a stable code and the indices it concerns."""

    code: ReasonCode
    message: str
    expected_index: int | None = None
    actual_index: int | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """An expected call paired with an actual call, with that pair's argument diffs and score."""

    expected_index: int
    actual_index: int
    diffs: tuple[ArgDiff, ...] = ()
    score: float | None = None


@dataclass(frozen=True, slots=True)
class Details:
    """How a score came about: the pairing, what stayed unpaired, and every issue found."""

    pairs: tuple[Pair, ...] = ()
    unmatched_expected: tuple[int, ...] = ()
    unmatched_actual: tuple[int, ...] = ()
    issues: tuple[Issue, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (indices refer to the sample's expected and recorded call lists)."""
        return {
            "pairs": [
                {
                    "expected": pair.expected_index,
                    "actual": pair.actual_index,
                    "score": pair.score,
                    "diffs": [_diff_dict(diff) for diff in pair.diffs],
                }
                for pair in self.pairs
            ],
            "unmatched_expected": list(self.unmatched_expected),
            "unmatched_actual": list(self.unmatched_actual),
            "issues": [
                {
                    "code": issue.code,
                    "message": issue.message,
                    "expected": issue.expected_index,
                    "actual": issue.actual_index,
                }
                for issue in self.issues
            ],
            **self.extra,
        }


def _diff_dict(diff: ArgDiff) -> dict[str, Any]:
    return {
        "path": diff.path,
        "code": diff.code,
        "expected": diff.expected,
        "actual": diff.actual,
        "message": diff.message,
    }


Explain = Callable[[], tuple[str, Details]]
"""Builds a score's reason and details on demand."""


class Score:
    """A metric's verdict on one sample: value in [0, 1], threshold, pass/fail and why.

    Immutable. ``reason`` and ``details`` may be built on first access from an ``explain``
    callable: a benchmark or a large suite scores thousands of samples, and only the ones someone
    reads should pay for rendering diffs. Pickling and equality resolve them first.
    """

    __slots__ = ("_details", "_explain", "_reason", "name", "passed", "threshold", "value")

    name: str
    value: float
    threshold: float
    passed: bool
    _reason: str | None  # None until known: given up front, or built by ``_explain``
    _details: Details | None
    _explain: Explain | None

    def __init__(
        self,
        name: str,
        value: float,
        threshold: float,
        passed: bool,
        reason: str = "",
        details: Details | None = None,
        *,
        explain: Explain | None = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "name", name)
        setter(self, "value", value)
        setter(self, "threshold", threshold)
        setter(self, "passed", passed)
        # A reason given next to ``explain`` is the reason; ``explain`` builds the details.
        setter(self, "_reason", reason if explain is None or reason else None)
        setter(self, "_details", details)
        setter(self, "_explain", explain)

    def _resolve(self) -> None:
        explain = self._explain
        if explain is not None:
            # Two threads may both get here; both compute the same thing, so no lock is needed.
            reason, details = explain()
            if self._reason is None:  # else known up front (lazy_score's ``reason``): kept
                object.__setattr__(self, "_reason", reason)
            object.__setattr__(self, "_details", details)
            object.__setattr__(self, "_explain", None)

    @property
    def reason(self) -> str:
        """Why the score is what it is, in one line (numbers with 2 decimals)."""
        reason = self._reason
        if reason is None:
            # Unknown until explained; a metric that knows it cheaply (a passing score, usually)
            # sets it up front, so reading it does not build the details (docs/architecture.md,
            # "Metric").
            self._resolve()
            reason = self._reason
            assert reason is not None
        return reason

    @property
    def details(self) -> Details:
        """The pairing, what stayed unpaired, per-argument diffs and issues."""
        self._resolve()
        details = self._details
        if details is None:
            details = Details()
            object.__setattr__(self, "_details", details)
        return details

    @property
    def codes(self) -> tuple[ReasonCode, ...]:
        """The distinct reason codes of the issues, in first-seen order."""
        return tuple(dict.fromkeys(issue.code for issue in self.details.issues))

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.value, self.threshold, self.passed, self.reason, self.details)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Score is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Score is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Score):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # details hold a dict, so no hashing

    def __repr__(self) -> str:
        return (
            f"Score(name={self.name!r}, value={self.value!r}, threshold={self.threshold!r}, "
            f"passed={self.passed!r}, reason={self.reason!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Resolve before pickling: the explain closure cannot travel (pytest-xdist, processes).
        return (Score, self._fields())


@runtime_checkable
class Metric(Protocol):
    """Anything with a name and a threshold that scores a Sample."""

    name: str
    threshold: float

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample."""
        ...


def check_threshold(metric: str, threshold: Any) -> float:
    """Validate a threshold: a real number within [0, 1]; the error names the metric."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise MetricConfigError(
            f"{metric}: threshold must be a number in [0, 1], got {threshold!r}",
            metric=metric,
            option="threshold",
            value=threshold,
        )
    value = float(threshold)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise MetricConfigError(
            f"{metric}: threshold must be within [0, 1], got {threshold!r}",
            metric=metric,
            option="threshold",
            value=threshold,
        )
    return value


def make_score(
    name: str,
    value: float,
    threshold: float,
    reason: str,
    details: Details | None = None,
    *,
    force_fail: bool = False,
) -> Score:
    """Build a Score with ``passed = value >= threshold`` (inclusive) unless forced to fail."""
    passed = value >= threshold and not force_fail
    return Score(name, value, threshold, passed, reason, details)


def lazy_score(
    name: str,
    value: float,
    threshold: float,
    explain: Explain,
    *,
    force_fail: bool = False,
    reason: str | None = None,
) -> Score:
    """Like :func:`make_score`, with reason and details built by ``explain`` on first access.

    ``reason``: the reason when the metric knows it without the details (it must be the text
    ``explain`` would give); reading it then builds nothing.
    """
    passed = value >= threshold and not force_fail
    return Score(name, value, threshold, passed, reason or "", explain=explain)
