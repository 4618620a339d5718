"""Seed 003's order-aware accuracy (Ragas's ToolCallAccuracy, with our pairing).

Score = alignment gate × mean argument accuracy × coverage (docs/metrics.md,
"tool_call_sequence_accuracy"). Pairs are found flexibly by a maximum-weight assignment;
``compat="ragas"`` builds :class:`~harness.metrics.ragas.RagasToolCallAccuracy` instead, which
reproduces Ragas's sort-and-zip pairing, string comparison and length-mismatch zero.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from harness.expectation import Expectation
from harness.matching import best_assignment, max_matching
from harness.metrics._common import (
    COMPATS,
    ORDERS,
    Comparator,
    arg_pointer,
    by_name,
    capped,
    check_choice,
    diff_clause,
    empty_sides_score,
    fmt,
    match_count,
    missing_issues,
    resolve_comparator,
    same_name,
    unexpected_issues,
    with_invalid_causes,
)
from harness.metrics.base import (
    Details,
    Issue,
    Pair,
    ReasonCode,
    Score,
    check_threshold,
    lazy_score,
)
from harness.metrics.ragas import RagasToolCallAccuracy
from harness.sample import Sample
from harness.values import ABSENT, ArgDiff, args_match, match_value
from tracing.records import ToolCall


class ToolCallSequenceAccuracy:
    """Alignment gate × mean argument accuracy × coverage, strict or flexible order.

    ``compat="ragas"`` returns a :class:`~harness.metrics.ragas.RagasToolCallAccuracy` (same
    score name and options), so Python and YAML spell the Ragas mode the same way.
    """

    __slots__ = ("_compare", "comparator", "order", "threshold")
    name = "tool_call_sequence_accuracy"
    compat: ClassVar[None] = None

    def __new__(
        cls,
        threshold: float = 0.8,
        *,
        order: str = "strict",
        comparator: str | Comparator = "exact",
        compat: str | None = None,
    ) -> Any:
        if compat == "ragas":
            return RagasToolCallAccuracy(threshold, order=order, comparator=comparator)
        return super().__new__(cls)

    def __init__(
        self,
        threshold: float = 0.8,
        *,
        order: str = "strict",
        comparator: str | Comparator = "exact",
        compat: str | None = None,
    ) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.order = check_choice(self.name, "order", order, ORDERS)
        # Only None reaches here ("ragas" was built by __new__); anything else is an error.
        check_choice(self.name, "compat", compat, COMPATS)
        self._compare = resolve_comparator(self.name, comparator, None)
        self.comparator = comparator

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if not expected or not actual:
            return empty_sides_score(self.name, self.threshold, expected, actual)
        if self.order == "strict":
            return self._strict(expected, actual)
        return self._flexible(expected, actual)

    def _strict(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        k = min(len(expected), len(actual))
        for i in range(k):
            if expected[i].name != actual[i].name:
                explain = partial(_explain_closed_strict, tuple(expected), tuple(actual), i, k)
                return lazy_score(self.name, 0.0, self.threshold, explain)
        compare = self._compare
        if compare is None:
            scorer = _EXACT
            scores = [_exact_score(expected[i], actual[i]) for i in range(k)]
        else:
            scorer = _PairScorer(compare)
            scores = [scorer.score(expected[i], actual[i]) for i in range(k)]
        return self._gate_open(expected, actual, [(i, i) for i in range(k)], scores, scorer)

    def _flexible(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        k = min(len(expected), len(actual))
        if not _names_can_pair(expected, actual, k):
            explain = partial(_explain_closed_flexible, tuple(expected), tuple(actual), k)
            return lazy_score(self.name, 0.0, self.threshold, explain)
        scorer = _EXACT if self._compare is None else _PairScorer(self._compare)
        if self._compare is None and match_count(expected, actual, _perfect_args) == k:
            # Every pair worth 1.0 is the best any pairing can do, and a maximum matching finds
            # one without computing the full weight grid an assignment needs. Counting it is
            # enough for the value; the pairs are found when the details are read.
            value = math.fsum([1.0] * k) / len(expected)
            explain = partial(
                _explain_perfect, self.order, tuple(expected), tuple(actual), scorer, value
            )
            # k pairs, all worth 1.0 (the matching found above has that size): no clause.
            reason = _open_reason(self.order, value, 1.0, k, len(expected))
            return lazy_score(self.name, value, self.threshold, explain, reason=reason)
        pair_score = scorer.score

        def weight(exp: Expectation, call: ToolCall) -> float | None:
            return pair_score(exp, call) if exp.pairs_with(call) else None

        matching = best_assignment(expected, actual, weight, key=by_name)
        pairs = matching.pairs
        scores = [pair_score(expected[i], actual[j]) for i, j in pairs]
        return self._gate_open(expected, actual, pairs, scores, scorer)

    def _gate_open(
        self,
        expected: list[Expectation],
        actual: list[ToolCall],
        pairs: Sequence[tuple[int, int]],
        scores: list[float],
        scorer: _PairScorer,
    ) -> Score:
        # fsum is exact, so the value does not depend on the order the pairs were found in.
        value = math.fsum(scores) / len(expected)
        explain = partial(
            _explain_open,
            self.order,
            tuple(expected),
            tuple(actual),
            tuple(pairs),
            scores,
            scorer,
            value,
        )
        reason = None
        if (
            scores
            and scores.count(1.0) == len(scores)
            and (len(pairs) == len(expected) or not _any_invalid(actual))
        ):
            # Pairs, none below 1.0, so no diff clause, and no invalid call to name as the
            # cause of an unpaired expectation: the reason needs no details.
            reason = _open_reason(self.order, value, 1.0, len(pairs), len(expected))
        return lazy_score(self.name, value, self.threshold, explain, reason=reason)


def _explain_perfect(
    order: str,
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    scorer: _PairScorer,
    value: float,
) -> tuple[str, Details]:
    perfect = max_matching(expected, actual, _perfect_pair, key=by_name)
    scores = [1.0] * perfect.size
    return _explain_open(order, expected, actual, perfect.pairs, scores, scorer, value)


def _explain_open(
    order: str,
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    pairs: Sequence[tuple[int, int]],
    scores: list[float],
    scorer: _PairScorer,
    value: float,
) -> tuple[str, Details]:
    # A pairing never repeats an index, so as many pairs as calls leaves none unpaired.
    paired = len(pairs)
    unmatched_expected = () if paired == len(expected) else _unpaired(expected, pairs, 0)
    unmatched_actual = () if paired == len(actual) else _unpaired(actual, pairs, 1)
    detail_pairs: list[Pair] = []
    issues: list[Issue] = []
    clauses: list[str] = []
    for (i, j), score in zip(pairs, scores, strict=True):
        diffs: tuple[ArgDiff, ...] = ()
        if score < 1.0 and actual[j].status != "invalid":  # no arguments to diff: named below
            exp = expected[i]
            diffs = scorer.diffs(exp, actual[j])
            for diff in diffs:
                clause = diff_clause(exp.name, diff)
                clauses.append(clause)
                issues.append(Issue(diff.code, clause, i, j))
        detail_pairs.append(Pair(i, j, diffs, score))
    if unmatched_expected:
        issues += missing_issues(expected, unmatched_expected)
    # no pair at all when the names align but scope or an invalid call keeps every one apart
    mean = math.fsum(scores) / len(scores) if scores else 0.0
    coverage = paired / len(expected)
    details = Details(
        tuple(detail_pairs),
        unmatched_expected,
        unmatched_actual,
        tuple(issues),
        {"gate": 1.0, "mean_argument_score": mean, "coverage": coverage},
    )
    reason = _open_reason(order, value, mean, paired, len(expected))
    if clauses:
        reason += " — " + capped(clauses, sep=" ")
    return with_invalid_causes(expected, actual, reason, details)


def _unpaired(calls: Sequence[Any], pairs: Sequence[tuple[int, int]], side: int) -> tuple[int, ...]:
    """The indices of ``calls`` no pair uses on its ``side`` (0: expected, 1: actual)."""
    taken = {pair[side] for pair in pairs}
    return tuple([i for i in range(len(calls)) if i not in taken])


def _open_reason(order: str, value: float, mean: float, paired: int, expected: int) -> str:
    """The reason of an open gate, before any diff clause."""
    return (
        f"score {fmt(value)}: tool names aligned ({order}); argument accuracy "
        f"{fmt(mean)} over {paired} pair(s); coverage {paired}/{expected}"
    )


def _explain_closed_strict(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], at: int, k: int
) -> tuple[str, Details]:
    same_names = Counter(exp.name for exp in expected[:k]) == Counter(c.name for c in actual[:k])
    code: ReasonCode = "wrong_order" if same_names else "wrong_tool"
    message = f"position {at}: expected {expected[at].name}, got {actual[at].name}"
    details = Details(
        (),
        tuple(range(len(expected))),
        tuple(range(len(actual))),
        (Issue(code, message, at, at),),
        {"gate": 0.0},
    )
    return f"score 0.00: tool sequence differs at {message}", details


def _explain_closed_flexible(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], k: int
) -> tuple[str, Details]:
    matching = max_matching(expected, actual, same_name, key=by_name)
    issues = missing_issues(expected, matching.unmatched_expected)
    issues += unexpected_issues(actual, matching.unmatched_actual)
    details = Details(
        tuple(Pair(i, j) for i, j in matching.pairs),
        matching.unmatched_expected,
        matching.unmatched_actual,
        tuple(issues),
        {"gate": 0.0},
    )
    missing = capped([expected[i].name for i in matching.unmatched_expected])
    extra = capped([actual[j].name for j in matching.unmatched_actual])
    reason = (
        f"score 0.00: only {matching.size} of {k} calls can be paired by tool name "
        f"(unpaired expected: {missing or '-'}; unpaired actual: {extra or '-'})"
    )
    # tool names alone closed the gate (an invalid call has its name): no invalid cause to name
    return reason, details


def _names_can_pair(expected: list[Expectation], actual: list[ToolCall], k: int) -> bool:
    """Does a name-preserving pairing of size k exist? Per name, min of the two counts."""
    counts = Counter(exp.name for exp in expected)
    available = 0
    for call in actual:
        left = counts.get(call.name, 0)
        if left:
            counts[call.name] = left - 1
            available += 1
    return available >= k


def _any_invalid(actual: Sequence[ToolCall]) -> bool:
    """Is one of the calls ``invalid`` (its arguments were not JSON)?"""
    return any(call.status == "invalid" for call in actual)


def _perfect_pair(exp: Expectation, call: ToolCall) -> bool:
    """Would this pair score 1.0 under the exact comparator?"""
    return exp.pairs_with(call) and _perfect_args(exp.args, call.args)


def _perfect_args(pattern: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """Would these arguments score 1.0 under the exact comparator (names aside)?"""
    if not pattern:
        return not args
    return args_match(pattern, args)


def _exact_score(exp: Expectation, call: ToolCall) -> float:
    """Mean over the reference args of value equivalence (matchers allowed); extras ignored.

    Equivalence is docs/metrics.md's "Values"; this inlines its commonest case, a string.
    """
    pattern = exp.args
    args = call.args
    if not pattern:
        return 0.0 if args else 1.0
    get = args.get
    hits = 0
    for key, expected in pattern.items():
        value = get(key, ABSENT)
        if expected.__class__ is str:  # the common case, kept free of function calls
            if value == expected and isinstance(value, str):
                hits += 1
        elif match_value(expected, value):
            hits += 1
    return hits / len(pattern)


class _PairScorer:
    """Argument scores for one evaluation, with each comparator result remembered.

    A user comparator may be slow, so it runs once per (pair, key) even when the pair's diffs
    are rendered after its score.
    """

    __slots__ = ("_compare", "_memo")

    def __init__(self, compare: Comparator | None) -> None:
        self._compare = compare
        self._memo: dict[tuple[int, int], tuple[float | None, ...]] = {}

    def _per_key(self, exp: Expectation, call: ToolCall) -> tuple[float | None, ...]:
        """Comparator result per reference key, None where the key is missing."""
        slot = (id(exp), id(call))
        found = self._memo.get(slot)
        if found is None:
            compare = self._compare
            assert compare is not None
            args = call.args
            found = tuple(
                compare(pattern, args[key]) if key in args else None
                for key, pattern in exp.args.items()
            )
            self._memo[slot] = found
        return found

    def score(self, exp: Expectation, call: ToolCall) -> float:
        """Mean over the reference args (missing key 0, extras ignored); empty-args rules."""
        if self._compare is None:
            return _exact_score(exp, call)
        if not exp.args:
            return 0.0 if call.args else 1.0
        total = 0.0
        for value in self._per_key(exp, call):
            if value is not None:
                total += value
        return total / len(exp.args)

    def diffs(self, exp: Expectation, call: ToolCall) -> tuple[ArgDiff, ...]:
        """Why a pair scored below 1, argument by argument."""
        if self._compare is None:
            return exp.check(call).diffs
        if not exp.args:
            return tuple(
                ArgDiff(arg_pointer(key), ABSENT, value, "extra_arg", "reference call has no args")
                for key, value in call.args.items()
            )
        diffs: list[ArgDiff] = []
        per_key = self._per_key(exp, call)
        for (key, pattern), value in zip(exp.args.items(), per_key, strict=True):
            if value is None:
                diffs.append(ArgDiff(arg_pointer(key), pattern, ABSENT, "missing_arg", "missing"))
            elif value < 1.0:
                message = f"comparator score {fmt(value)}"
                diffs.append(
                    ArgDiff(arg_pointer(key), pattern, call.args[key], "wrong_args", message)
                )
        return tuple(diffs)


_EXACT = _PairScorer(None)
"""The exact comparator's scorer: it remembers nothing (only a comparator's results are kept),
so every evaluation shares it."""
