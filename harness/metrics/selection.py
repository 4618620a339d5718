"""ToolSelectionAccuracy (named in seed 002): were the right tools chosen, names only."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence

from harness.expectation import Expectation
from harness.matching import Matching, ordered_alignment
from harness.metrics._common import (
    capped,
    check_flag,
    empty_sides_score,
    fmt,
    missing_issues,
    same_name,
    unexpected_issues,
    with_invalid_causes,
)
from harness.metrics.base import Details, Issue, Pair, Score, check_threshold, make_score
from harness.sample import Sample
from tracing.records import ToolCall


class ToolSelectionAccuracy:
    """F1 over tool-name multisets, or with ``ordered=True`` LCS of names / longer length."""

    __slots__ = ("ordered", "threshold")
    name = "tool_selection_accuracy"

    def __init__(self, threshold: float = 0.8, *, ordered: bool = False) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.ordered = check_flag(self.name, "ordered", ordered)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample by tool names only; arguments are another metric's business."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if not expected or not actual:
            return empty_sides_score(self.name, self.threshold, expected, actual, _list_names)
        if self.ordered:
            matching = ordered_alignment(expected, actual, same_name)
            longest = max(len(expected), len(actual))
            value = len(matching.pairs) / longest
            head = f"{len(matching.pairs)} of {longest} tool names in order"
        else:
            matching = _name_multiset_pairing(expected, actual)
            matched = len(matching.pairs)
            # F1 = 2PR / (P + R) = 2·tp / (|expected| + |actual|), one exact division.
            value = 2 * matched / (len(expected) + len(actual))
            precision, recall = matched / len(actual), matched / len(expected)
            head = f"tool-name F1 {fmt(value)} (precision {fmt(precision)}, recall {fmt(recall)})"
        reason, details = _explain_selection(self.ordered, expected, actual, matching, head)
        if value < self.threshold:  # failing: say if an invalid call is behind it
            reason, details = with_invalid_causes(expected, actual, reason, details)
        return make_score(self.name, value, self.threshold, reason, details)


def _explain_selection(
    ordered: bool,
    expected: list[Expectation],
    actual: list[ToolCall],
    matching: Matching,
    head: str,
) -> tuple[str, Details]:
    """Reason and details: what was out of order (ordered mode), missing and unexpected."""
    misplaced: list[int] = []
    missing = list(matching.unmatched_expected)
    unexpected = list(matching.unmatched_actual)
    if ordered:
        # A name that occurs on the other side is there, just out of place (an invalid call's
        # is not: it was never readable, so it pairs nowhere, and its expectation is missing).
        actual_names = {call.name for call in actual if call.status != "invalid"}
        expected_names = {exp.name for exp in expected}
        misplaced = [i for i in missing if expected[i].name in actual_names]
        missing = [i for i in missing if expected[i].name not in actual_names]
        unexpected = [j for j in unexpected if actual[j].name not in expected_names]
    issues = [
        Issue("wrong_order", f"{expected[i].name} called out of the expected order", i)
        for i in misplaced
    ]
    issues += missing_issues(expected, missing)
    issues += unexpected_issues(actual, unexpected)
    pairs = tuple(Pair(i, j, (), 1.0) for i, j in matching.pairs)
    details = Details(pairs, matching.unmatched_expected, matching.unmatched_actual, tuple(issues))
    parts = [head]
    if misplaced:
        parts.append(f"out of order: {capped([expected[i].name for i in misplaced])}")
    if missing:
        parts.append(f"missing: {capped([expected[i].name for i in missing])}")
    if unexpected:
        parts.append(f"unexpected: {capped([actual[j].name for j in unexpected])}")
    return "; ".join(parts), details


def _list_names(actual: Sequence[ToolCall]) -> str:
    """Every call's tool name, capped, for the "none expected" reason."""
    return capped([call.name for call in actual])


def _name_multiset_pairing(expected: list[Expectation], actual: list[ToolCall]) -> Matching:
    """Pair the n-th expected use of a name with its n-th actual use: a maximum name matching."""
    queues: defaultdict[str, deque[int]] = defaultdict(deque)
    for j, call in enumerate(actual):
        queues[call.name].append(j)
    pairs: list[tuple[int, int]] = []
    unmatched_expected: list[int] = []
    for i, exp in enumerate(expected):
        queue = queues.get(exp.name)
        if queue:
            pairs.append((i, queue.popleft()))
        else:
            unmatched_expected.append(i)
    used = {j for _, j in pairs}
    unmatched_actual = tuple(j for j in range(len(actual)) if j not in used)
    return Matching(tuple(pairs), tuple(unmatched_expected), unmatched_actual)
