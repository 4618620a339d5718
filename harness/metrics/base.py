"""Score, its details, the Metric protocol and the shared threshold check."""

from __future__ import annotations

import math
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


@dataclass(frozen=True, slots=True)
class Score:
    """A metric's verdict on one sample: value in [0, 1], threshold, pass/fail and why."""

    name: str
    value: float
    threshold: float
    passed: bool
    reason: str
    details: Details = field(default_factory=Details)

    @property
    def codes(self) -> tuple[ReasonCode, ...]:
        """The distinct reason codes of the issues, in first-seen order."""
        return tuple(dict.fromkeys(issue.code for issue in self.details.issues))


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
            f"{metric}: threshold must be a number in [0, 1], got {threshold!r}"
        )
    value = float(threshold)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise MetricConfigError(f"{metric}: threshold must be within [0, 1], got {threshold!r}")
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
    return Score(name, value, threshold, passed, reason, details or Details())
