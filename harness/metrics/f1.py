"""ToolCallF1: precision and recall of whole calls (name and all arguments), as one F1."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, ClassVar

from harness.expectation import Expectation
from harness.matching import Matching, max_matching
from harness.metrics._common import (
    BOTH_EMPTY_REASON,
    COMPATS,
    by_name,
    check_choice,
    closest_mismatch_issues,
    describe_calls,
    fmt,
    match_count,
    missing_issues,
    prf,
    unexpected_issues,
    with_invalid_causes,
)
from harness.metrics.base import (
    Details,
    Issue,
    Pair,
    Score,
    check_threshold,
    lazy_score,
    make_score,
)
from harness.metrics.ragas import RagasToolCallF1
from harness.sample import Sample
from harness.values import args_equal
from tracing.records import ToolCall


class ToolCallF1:
    """F1 of a maximum matching of whole calls; duplicates count (docs/metrics.md).

    ``compat="ragas"`` returns a :class:`~harness.metrics.ragas.RagasToolCallF1` (same score
    name), so Python and YAML spell the Ragas mode the same way.
    """

    __slots__ = ("threshold",)
    name = "tool_call_f1"
    compat: ClassVar[None] = None

    def __new__(cls, threshold: float = 0.8, *, compat: str | None = None) -> Any:
        if compat == "ragas":
            return RagasToolCallF1(threshold)
        return super().__new__(cls)

    def __init__(self, threshold: float = 0.8, *, compat: str | None = None) -> None:
        self.threshold = check_threshold(self.name, threshold)
        # Only None reaches here ("ragas" was built by __new__); anything else is an error.
        check_choice(self.name, "compat", compat, COMPATS)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if not expected and not actual:
            # The empty-list rule, with F1's precision / recall / F1 figures in the details.
            details = Details(extra=prf(1, 1, 1))
            return make_score(self.name, 1.0, self.threshold, BOTH_EMPTY_REASON, details)
        # The value needs only the size of a maximum matching; the pairing itself is built if
        # someone reads the details, by the same engine call as always, so they do not change.
        tp = match_count(expected, actual, args_equal, keyed=True)
        # 2PR / (P + R) simplifies to one exact division; zero when either side is empty.
        value = 2 * tp / (len(expected) + len(actual))
        explain = partial(_explain_f1_lazily, tuple(expected), tuple(actual), value)
        # Every call on both sides paired: precision and recall are 1, nothing is listed.
        full = tp == len(expected) == len(actual)
        reason = "F1 1.00 (precision 1.00, recall 1.00)" if full else None
        return lazy_score(self.name, value, self.threshold, explain, reason=reason)


def _explain_f1_lazily(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], value: float
) -> tuple[str, Details]:
    """Details for a counted score: the same pairing the matching engine would have returned."""
    matching = max_matching(expected, actual, _full_match, key=by_name)
    return _explain_f1(expected, actual, matching, value)


def _explain_f1(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], matching: Matching, value: float
) -> tuple[str, Details]:
    tp = len(matching.pairs)
    precision = tp / len(actual) if actual else 0.0
    recall = tp / len(expected) if expected else 0.0
    issues: list[Issue] = []
    if matching.unmatched_expected or matching.unmatched_actual:
        issues += missing_issues(expected, matching.unmatched_expected)
        issues += unexpected_issues(actual, matching.unmatched_actual)
        issues += closest_mismatch_issues(
            expected, actual, matching.unmatched_expected, matching.unmatched_actual
        )
    details = Details(
        tuple(Pair(i, j, (), 1.0) for i, j in matching.pairs),
        matching.unmatched_expected,
        matching.unmatched_actual,
        tuple(issues),
        prf(precision, recall, value),
    )
    reason = f"F1 {fmt(value)} (precision {fmt(precision)}, recall {fmt(recall)})"
    if matching.unmatched_expected:
        reason += f"; missing: {describe_calls(expected, matching.unmatched_expected)}"
    if matching.unmatched_actual:
        reason += f"; unexpected: {describe_calls(actual, matching.unmatched_actual)}"
    return with_invalid_causes(expected, actual, reason, details)


# Equivalent both ways: the pattern accepts the call and the call has no other keys.
_full_match = Expectation.accepts_exactly
