"""Seed 000's family: did the expected calls happen, was nothing else called, in which order."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from harness.errors import SampleError
from harness.expectation import Expectation
from harness.matching import Matching, max_matching, ordered_alignment
from harness.metrics._common import (
    by_name,
    closest_mismatch_issues,
    describe_call,
    describe_calls,
    match_count,
    missing_issues,
    tool_error_issues,
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
from harness.sample import Sample
from harness.text import plural
from harness.values import args_match
from tracing.records import ToolCall

_accepts = Expectation.accepts


class ToolCallAccuracy:
    """Matched expectations / expected calls, over a maximum matching (docs/metrics.md)."""

    __slots__ = ("threshold",)
    name = "tool_call_accuracy"

    def __init__(self, threshold: float = 1.0) -> None:
        self.threshold = check_threshold(self.name, threshold)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample; extra actual calls do not lower the score."""
        expected = sample.expected_tool_calls
        if not expected:
            _require_expected(self.name, sample)
        actual = sample.tool_calls
        if actual is None:
            actual = sample.require_recorded()
        # Only the matching's size is needed now; the pairing is built when details are read.
        n = len(expected)
        matched = match_count(expected, actual, args_match)
        explain = partial(_explain_accuracy, tuple(expected), tuple(actual))
        # Everything matched: the reason needs no pairing (_accuracy_reason with none missing).
        reason = f"{n}/{n} expected calls matched" if matched == n else None
        return lazy_score(self.name, matched / n, self.threshold, explain, reason=reason)


def _explain_accuracy(
    expected: Sequence[Expectation], actual: Sequence[ToolCall]
) -> tuple[str, Details]:
    matching = max_matching(expected, actual, _accepts, key=by_name)
    pairs = tuple(Pair(i, j, (), 1.0) for i, j in matching.pairs)
    issues: list[Issue] = []
    if matching.unmatched_expected:
        issues += missing_issues(expected, matching.unmatched_expected)
        issues += closest_mismatch_issues(
            expected, actual, matching.unmatched_expected, matching.unmatched_actual
        )
    issues += tool_error_issues(actual, (j for _, j in matching.pairs))
    details = Details(pairs, matching.unmatched_expected, matching.unmatched_actual, tuple(issues))
    reason = _accuracy_reason(expected, actual, matching.unmatched_expected)
    return with_invalid_causes(expected, actual, reason, details)


def _accuracy_reason(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], unmatched: tuple[int, ...]
) -> str:
    head = f"{len(expected) - len(unmatched)}/{len(expected)} expected calls matched"
    if not unmatched:
        return head
    if not actual:
        head += " (no tool calls were made)"
    return f"{head}; missing: {describe_calls(expected, unmatched)}"


class NoUnexpectedToolCalls:
    """1.0 when a maximum matching covers every actual call with some expectation, else 0.0."""

    __slots__ = ("threshold",)
    name = "no_unexpected_tool_calls"

    def __init__(self, threshold: float = 1.0) -> None:
        self.threshold = check_threshold(self.name, threshold)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample; no expectations means every call is unexpected."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        matching = max_matching(expected, actual, _accepts, key=by_name)
        value = 0.0 if matching.unmatched_actual else 1.0
        explain = partial(_explain_no_unexpected, tuple(expected), tuple(actual), matching)
        return lazy_score(self.name, value, self.threshold, explain)


def _explain_no_unexpected(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], matching: Matching
) -> tuple[str, Details]:
    extras = matching.unmatched_actual
    pairs = tuple(Pair(i, j, (), 1.0) for i, j in matching.pairs)
    issues = unexpected_issues(actual, extras)
    details = Details(pairs, matching.unmatched_expected, extras, tuple(issues))
    if extras:
        reason = f"{plural(len(extras), 'unexpected call')}: {describe_calls(actual, extras)}"
        return with_invalid_causes(expected, actual, reason, details)
    return f"no unexpected tool calls ({len(actual)} made, all expected)", details


class ToolCallOrder:
    """Fraction of expectations paired in order by an optimal (LCS) alignment (docs/metrics.md)."""

    __slots__ = ("threshold",)
    name = "tool_call_order"

    def __init__(self, threshold: float = 1.0) -> None:
        self.threshold = check_threshold(self.name, threshold)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample; other calls may sit between the expected ones."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if not expected:
            reason = "no expected calls, so nothing can be out of order"
            return make_score(self.name, 1.0, self.threshold, reason, Details())
        alignment = ordered_alignment(expected, actual, _accepts)
        value = len(alignment.pairs) / len(expected)
        explain = partial(_explain_order, tuple(expected), tuple(actual), alignment)
        return lazy_score(self.name, value, self.threshold, explain)


def _explain_order(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], alignment: Matching
) -> tuple[str, Details]:
    out_of_order: list[int] = []
    missing: list[int] = []
    for i in alignment.unmatched_expected:
        # An expectation some call satisfies is there but misplaced; otherwise it is absent.
        if any(_accepts(expected[i], call) for call in actual):
            out_of_order.append(i)
        else:
            missing.append(i)
    issues = [
        Issue(
            "wrong_order",
            f"{describe_call(expected[i])} was called, but not in the expected order",
            i,
            None,
        )
        for i in out_of_order
    ]
    issues += missing_issues(expected, missing)
    pairs = tuple(Pair(i, j, (), 1.0) for i, j in alignment.pairs)
    details = Details(
        pairs, alignment.unmatched_expected, alignment.unmatched_actual, tuple(issues)
    )
    reason = f"{len(alignment.pairs)}/{len(expected)} expected calls in order"
    if out_of_order:
        reason += f"; out of order: {describe_calls(expected, out_of_order)}"
    if missing:
        reason += f"; missing: {describe_calls(expected, missing)}"
    return with_invalid_causes(expected, actual, reason, details)


def _require_expected(metric: str, sample: Sample) -> list[Expectation]:
    """The sample's expectations; an error when there are none (nothing to measure)."""
    expected = sample.expected_tool_calls
    if not expected:
        raise SampleError(
            f"{metric}: the sample has no expected tool calls, so there is nothing to measure; "
            "declare at least one expected call (use no_unexpected_tool_calls to assert that "
            "no tool is called)",
            metric=metric,
        )
    return expected
