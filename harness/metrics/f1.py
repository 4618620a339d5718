"""ToolCallF1: precision and recall of whole calls (name and all arguments), as one F1."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from operator import attrgetter
from typing import Any

from harness.expectation import Expectation
from harness.matching import Matching, max_matching
from harness.metrics._common import (
    BOTH_EMPTY_REASON,
    check_choice,
    closest_mismatch_issues,
    describe_calls,
    fmt,
    match_count,
    missing_issues,
    unexpected_issues,
)
from harness.metrics._ragas import literal_args, make_hashable
from harness.metrics.base import (
    Details,
    Issue,
    Pair,
    Score,
    check_threshold,
    lazy_score,
    make_score,
)
from harness.sample import Sample
from harness.values import args_equal
from tracing.records import ToolCall

COMPATS = (None, "ragas")

_name = attrgetter("name")


# Equivalent both ways: the pattern accepts the call and the call has no other keys.
_full_match = Expectation.accepts_exactly


class ToolCallF1:
    """F1 of a maximum matching of whole calls; duplicates count (DESIGN §5.7)."""

    __slots__ = ("compat", "threshold")
    name = "tool_call_f1"

    def __init__(self, *, threshold: float = 0.8, compat: str | None = None) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.compat = check_choice(self.name, "compat", compat, COMPATS)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if self.compat == "ragas":
            return self._ragas(expected, actual)
        if not expected and not actual:
            # The §5.4 rule, with F1's precision / recall / F1 figures in the details.
            details = Details(extra=_prf(1, 1, 1))
            return make_score(self.name, 1.0, self.threshold, BOTH_EMPTY_REASON, details)
        # The value needs only the size of a maximum matching; the pairing itself is built if
        # someone reads the details, by the same engine call as always, so they do not change.
        tp = match_count(expected, actual, args_equal, keyed=True)
        # 2PR / (P + R) simplifies to one exact division; zero when either side is empty.
        value = 2 * tp / (len(expected) + len(actual))
        explain = partial(_explain_f1_lazily, tuple(expected), tuple(actual), value)
        return lazy_score(self.name, value, self.threshold, explain)

    def _ragas(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        """Rules 19-21: two Python sets of (name, make_hashable(args)); F1 rounded to 4."""
        ref_items = [
            (exp.name, make_hashable(dict(literal_args(self.name, exp, i))))
            for i, exp in enumerate(expected)
        ]
        pred_items = [(call.name, make_hashable(dict(call.args))) for call in actual]
        ref_set, pred_set = set(ref_items), set(pred_items)
        tp = len(pred_set & ref_set)
        fp = len(pred_set - ref_set)
        fn = len(ref_set - pred_set)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        value = round(f1, 4)
        details = Details(
            _first_pairs(ref_items, pred_items),
            tuple(i for i, item in enumerate(ref_items) if item not in pred_set),
            tuple(j for j, item in enumerate(pred_items) if item not in ref_set),
            (),
            {"compat": "ragas", **_prf(precision, recall, f1), "tp": tp, "fp": fp, "fn": fn},
        )
        reason = (
            f"ragas F1 {fmt(value)} over call sets (precision {fmt(precision)}, "
            f"recall {fmt(recall)})"
        )
        return make_score(self.name, value, self.threshold, reason, details)


def _explain_f1_lazily(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], value: float
) -> tuple[str, Details]:
    """Details for a counted score: the same pairing the matching engine would have returned."""
    matching = max_matching(expected, actual, _full_match, key=_name)
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
        _prf(precision, recall, value),
    )
    reason = f"F1 {fmt(value)} (precision {fmt(precision)}, recall {fmt(recall)})"
    if matching.unmatched_expected:
        reason += f"; missing: {describe_calls(expected, matching.unmatched_expected)}"
    if matching.unmatched_actual:
        reason += f"; unexpected: {describe_calls(actual, matching.unmatched_actual)}"
    return reason, details


def _prf(precision: float, recall: float, f1: float) -> dict[str, Any]:
    return {"precision": precision, "recall": recall, "f1": f1}


def _first_pairs(ref_items: list[Any], pred_items: list[Any]) -> tuple[Pair, ...]:
    """For reports: pair each reference item with the first equal prediction."""
    first: dict[Any, int] = {}
    for j, item in enumerate(pred_items):
        first.setdefault(item, j)
    return tuple(Pair(i, first[item], (), 1.0) for i, item in enumerate(ref_items) if item in first)
