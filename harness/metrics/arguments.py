"""Seed 002's ToolArgumentCorrectness: were the arguments right, argument by argument."""

from __future__ import annotations

from collections.abc import Sequence

from harness.expectation import Expectation
from harness.matching import best_assignment
from harness.metrics._common import (
    arg_pointer,
    by_name,
    capped,
    check_flag,
    describe_call,
    describe_calls,
    diff_clause,
    empty_sides_score,
    missing_issues,
    with_invalid_causes,
)
from harness.metrics.base import Details, Issue, Pair, Score, check_threshold, make_score
from harness.sample import Sample
from harness.values import ABSENT, ArgCheck, ArgDiff
from tracing.records import ToolCall


class ToolArgumentCorrectness:
    """Correct arguments / expected arguments, micro-averaged over all expected calls."""

    __slots__ = ("strict", "threshold")
    name = "tool_argument_correctness"

    def __init__(self, threshold: float = 0.8, *, strict: bool = False) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.strict = check_flag(self.name, "strict", strict)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample; in strict mode any extra argument also fails it."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if not expected or not actual:
            return empty_sides_score(self.name, self.threshold, expected, actual, _list_calls)
        return _score_pairs(self, expected, actual)


def _score_pairs(
    metric: ToolArgumentCorrectness, expected: list[Expectation], actual: list[ToolCall]
) -> Score:
    """Pair for the most correct arguments; the value and its explanation come from one pass.

    Every pair's check is needed for the value anyway, so the details are built eagerly.
    """
    checks: dict[tuple[int, int], ArgCheck] = {}
    # Weight = correct * base + (base - 1 - extras), base > every possible extras total:
    # the maximum-weight pairing then has the most correct arguments, and among those the
    # fewest extra ones (docs/metrics.md, tool_argument_correctness), every weight >= 0.
    base = sum(len(call.args) for call in actual) + 1

    def weight(exp: Expectation, call: ToolCall) -> float | None:
        if not exp.pairs_with(call):
            return None
        check = exp.check(call)
        checks[id(exp), id(call)] = check
        return float(check.correct * base + (base - 1 - len(check.extra_keys)))

    matching = best_assignment(expected, actual, weight, key=by_name)
    correct = total = 0
    any_extra = False
    pairs: list[Pair] = []
    issues: list[Issue] = []
    clauses: list[tuple[int, str]] = []
    for i, j in matching.pairs:
        exp, call = expected[i], actual[j]
        check = checks.get((id(exp), id(call))) or exp.check(call)
        pair_correct, pair_total = check.correct, check.total
        diffs = check.diffs
        if metric.strict and check.extra_keys:
            any_extra = True
            diffs = diffs + _extra_diffs(call, check.extra_keys)
            pair_total += len(check.extra_keys)
        correct += pair_correct
        total += pair_total
        pairs.append(Pair(i, j, diffs, pair_correct / pair_total if pair_total else 1.0))
        for diff in diffs:
            clause = diff_clause(exp.name, diff)
            clauses.append((i, clause))
            issues.append(Issue(diff.code, clause, i, j))
    for i in matching.unmatched_expected:
        # An expectation with no same-name partner gets all of its arguments counted wrong.
        total += len(expected[i].args)
        clause = f"expected {describe_call(expected[i])} but no such call was made."
        clauses.append((i, clause))
    issues += missing_issues(expected, matching.unmatched_expected)
    details = Details(
        tuple(pairs),
        matching.unmatched_expected,
        matching.unmatched_actual,
        tuple(issues),
        {"correct_args": correct, "total_args": total},
    )
    if total == 0:
        return make_score(metric.name, 1.0, metric.threshold, "no arguments to compare", details)
    value = correct / total
    reason = _explain_arguments(clauses, total)
    if value < metric.threshold or any_extra:  # failing: say if an invalid call is behind it
        reason, details = with_invalid_causes(expected, actual, reason, details)
    return make_score(metric.name, value, metric.threshold, reason, details, force_fail=any_extra)


def _explain_arguments(clauses: list[tuple[int, str]], total: int) -> str:
    """The reason: each wrong argument's clause in expectation order, capped."""
    if not clauses:
        return f"all {total} arguments correct"
    clauses.sort(key=lambda item: item[0])
    return capped([clause for _, clause in clauses], sep=" ")


def _extra_diffs(call: ToolCall, keys: tuple[str, ...]) -> tuple[ArgDiff, ...]:
    """Strict mode's diffs: one ``extra_arg`` per argument the expectation does not name."""
    return tuple(
        ArgDiff(
            arg_pointer(key), ABSENT, call.args[key], "extra_arg", f"unexpected argument {key!r}"
        )
        for key in keys
    )


def _list_calls(actual: Sequence[ToolCall]) -> str:
    """Every call, described and capped, for the "none expected" reason."""
    return describe_calls(actual, range(len(actual)))
