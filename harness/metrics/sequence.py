"""Seed 003's order-aware accuracy (Ragas's ToolCallAccuracy), with a Ragas 0.4.3 compat mode.

Score = alignment gate × mean argument accuracy × coverage (DESIGN §5.6). Our default pairs
flexibly by a maximum-weight assignment; ``compat="ragas"`` reproduces Ragas's sort-and-zip
pairing, string comparison and length-mismatch zero, bugs included, so migrations keep numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

from rapidfuzz.distance import Levenshtein

from harness.errors import MetricConfigError
from harness.expectation import Expectation
from harness.matching import best_assignment, max_matching
from harness.metrics._common import (
    arg_pointer,
    capped,
    check_choice,
    diff_clause,
    empty_sides_score,
    fmt,
    match_count,
    missing_issues,
    same_name,
    unexpected_issues,
)
from harness.metrics._ragas import literal_args, ragas_sort_key
from harness.metrics.base import (
    Details,
    Issue,
    Pair,
    ReasonCode,
    Score,
    check_threshold,
    lazy_score,
    make_score,
)
from harness.sample import Sample
from harness.values import ABSENT, ArgDiff, args_match, match_value
from tracing.records import ToolCall

Comparator = Callable[[Any, Any], float]
"""``comparator(expected_value, actual_value) -> float in [0, 1]``."""

ORDERS = ("strict", "flexible")
COMPARATORS = ("exact", "string", "similarity")
COMPATS = (None, "ragas")

_name = attrgetter("name")


def _string_equal(expected: Any, actual: Any) -> float:
    return 1.0 if str(expected) == str(actual) else 0.0


def _similarity(expected: Any, actual: Any) -> float:
    # Ragas's NonLLMStringSimilarity computes 1 - normalized_distance; kept literally so compat
    # numbers agree to the last bit.
    return 1.0 - Levenshtein.normalized_distance(str(expected), str(actual))


_NAMED: dict[str, Comparator] = {"string": _string_equal, "similarity": _similarity}


def _checked(metric: str, comparator: Comparator) -> Comparator:
    """Wrap a user callable so a value outside [0, 1] is reported, not silently summed."""
    label = getattr(comparator, "__name__", repr(comparator))

    def call(expected: Any, actual: Any) -> float:
        result = comparator(expected, actual)
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            raise MetricConfigError(
                f"{metric}: comparator {label} must return a number in [0, 1], "
                f"got {result!r} for expected {expected!r} vs actual {actual!r}"
            )
        value = float(result)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise MetricConfigError(
                f"{metric}: comparator {label} returned {value!r} for expected {expected!r} vs "
                f"actual {actual!r}; it must return a number in [0, 1]"
            )
        return value

    return call


def _exact_score(exp: Expectation, call: ToolCall) -> float:
    """Mean over the reference args of §3 equivalence (matchers allowed); extras ignored."""
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


class ToolCallSequenceAccuracy:
    """Alignment gate × mean argument accuracy × coverage, strict or flexible order."""

    __slots__ = ("_compare", "comparator", "compat", "order", "threshold")
    name = "tool_call_sequence_accuracy"

    def __init__(
        self,
        *,
        threshold: float = 0.8,
        order: str = "strict",
        comparator: str | Comparator = "exact",
        compat: str | None = None,
    ) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.order = check_choice(self.name, "order", order, ORDERS)
        self.compat = check_choice(self.name, "compat", compat, COMPATS)
        if callable(comparator):
            self._compare: Comparator | None = _checked(self.name, comparator)
        else:
            if comparator not in COMPARATORS:
                raise MetricConfigError(
                    f"{self.name}: comparator must be one of 'exact', 'string', 'similarity' "
                    f"or a callable (expected, actual) -> float in [0, 1]; got {comparator!r}"
                )
            if comparator == "exact":
                # Ragas's default ExactMatch compares str() of both values.
                self._compare = _string_equal if compat == "ragas" else None
            else:
                self._compare = _NAMED[comparator]
        self.comparator = comparator

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        if self.compat == "ragas":
            return self._ragas(expected, actual)
        if not expected or not actual:
            return empty_sides_score(self.name, self.threshold, expected, actual)
        if self.order == "strict":
            return self._strict(expected, actual)
        return self._flexible(expected, actual)

    # -- our semantics -------------------------------------------------------------------------

    def _strict(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        k = min(len(expected), len(actual))
        for i in range(k):
            if expected[i].name != actual[i].name:
                return self._gate_closed_strict(expected, actual, i, k)
        scorer = _PairScorer(self._compare)
        scores = [scorer.score(expected[i], actual[i]) for i in range(k)]
        pairs = [(i, i) for i in range(k)]
        return self._gate_open(expected, actual, pairs, scores, scorer)

    def _flexible(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        k = min(len(expected), len(actual))
        if not _names_can_pair(expected, actual, k):
            return self._gate_closed_flexible(expected, actual, k)
        scorer = _PairScorer(self._compare)
        if self._compare is None and match_count(expected, actual, _perfect_args) == k:
            # Every pair worth 1.0 is the best any pairing can do, and a maximum matching finds
            # one without computing the full weight grid an assignment needs. Counting it is
            # enough for the value; the pairs are found when the details are read.
            scores = [1.0] * k
            value = math.fsum(scores) / len(expected)
            explain = partial(self._explain_perfect, tuple(expected), tuple(actual), scorer, value)
            return lazy_score(self.name, value, self.threshold, explain)
        pair_score = scorer.score

        def weight(exp: Expectation, call: ToolCall) -> float | None:
            return pair_score(exp, call) if exp.name == call.name else None

        matching = best_assignment(expected, actual, weight, key=_name)
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
            self._explain_open, tuple(expected), tuple(actual), tuple(pairs), scores, scorer, value
        )
        return lazy_score(self.name, value, self.threshold, explain)

    def _explain_perfect(
        self,
        expected: Sequence[Expectation],
        actual: Sequence[ToolCall],
        scorer: _PairScorer,
        value: float,
    ) -> tuple[str, Details]:
        perfect = max_matching(expected, actual, _perfect_pair, key=_name)
        scores = [1.0] * perfect.size
        return self._explain_open(expected, actual, perfect.pairs, scores, scorer, value)

    def _explain_open(
        self,
        expected: Sequence[Expectation],
        actual: Sequence[ToolCall],
        pairs: Sequence[tuple[int, int]],
        scores: list[float],
        scorer: _PairScorer,
        value: float,
    ) -> tuple[str, Details]:
        used_expected = {i for i, _ in pairs}
        used_actual = {j for _, j in pairs}
        unmatched_expected = tuple(i for i in range(len(expected)) if i not in used_expected)
        unmatched_actual = tuple(j for j in range(len(actual)) if j not in used_actual)
        detail_pairs: list[Pair] = []
        issues: list[Issue] = []
        clauses: list[str] = []
        for (i, j), score in zip(pairs, scores, strict=True):
            diffs: tuple[ArgDiff, ...] = ()
            if score < 1.0:
                diffs = scorer.diffs(expected[i], actual[j])
                for diff in diffs:
                    clause = diff_clause(expected[i].name, diff)
                    clauses.append(clause)
                    issues.append(Issue(diff.code, clause, i, j))
            detail_pairs.append(Pair(i, j, diffs, score))
        issues += missing_issues(expected, unmatched_expected)
        mean = math.fsum(scores) / len(scores)
        coverage = len(pairs) / len(expected)
        details = Details(
            tuple(detail_pairs),
            unmatched_expected,
            unmatched_actual,
            tuple(issues),
            {"gate": 1.0, "mean_argument_score": mean, "coverage": coverage},
        )
        reason = (
            f"score {fmt(value)}: tool names aligned ({self.order}); argument accuracy "
            f"{fmt(mean)} over {len(pairs)} pair(s); coverage {len(pairs)}/{len(expected)}"
        )
        if clauses:
            reason += " — " + capped(clauses, sep=" ")
        return reason, details

    def _gate_closed_strict(
        self, expected: list[Expectation], actual: list[ToolCall], at: int, k: int
    ) -> Score:
        explain = partial(_explain_closed_strict, tuple(expected), tuple(actual), at, k)
        return lazy_score(self.name, 0.0, self.threshold, explain)

    def _gate_closed_flexible(
        self, expected: list[Expectation], actual: list[ToolCall], k: int
    ) -> Score:
        explain = partial(_explain_closed_flexible, tuple(expected), tuple(actual), k)
        return lazy_score(self.name, 0.0, self.threshold, explain)

    # -- Ragas 0.4.3, bug for bug (reference doc rule numbers in brackets) ----------------------

    def _ragas(self, expected: list[Expectation], actual: list[ToolCall]) -> Score:
        compare = self._compare or _string_equal
        ref = [(exp.name, literal_args(self.name, exp, i)) for i, exp in enumerate(expected)]
        pred = [(call.name, call.args) for call in actual]
        ref_order = list(range(len(ref)))
        pred_order = list(range(len(pred)))
        # [5] early returns, in this order.
        if not ref and not pred:
            return make_score(self.name, 1.0, self.threshold, "ragas: both lists empty")
        if not pred:
            return make_score(self.name, 0.0, self.threshold, "ragas: no tool calls found")
        if not ref:
            reason = "ragas: reference tool calls are empty but predictions exist"
            return make_score(self.name, 0.0, self.threshold, reason)
        if self.order == "flexible":
            # [7] stable sort by (name, argname, str(value), ...) before anything else.
            ref_order.sort(key=lambda i: ragas_sort_key(*ref[i]))
            pred_order.sort(key=lambda j: ragas_sort_key(*pred[j]))
        ref_names = [ref[i][0] for i in ref_order]
        pred_names = [pred[j][0] for j in pred_order]
        # [9] the gate compares whole name lists, so [10] any length mismatch gates to 0.
        if self.order == "flexible":
            aligned = sorted(pred_names) == sorted(ref_names)
        else:
            aligned = pred_names == ref_names
        total = 0.0
        pairs: list[Pair] = []
        # [11] zip pairing; a pair adds its argument score only when the names agree.
        for i, j in zip(ref_order, pred_order, strict=False):
            if ref[i][0] != pred[j][0]:
                continue
            score = _ragas_arg_score(pred[j][1], ref[i][1], compare)
            total += score
            pairs.append(Pair(i, j, (), score))
        compared = min(len(ref), len(pred))
        # [12] sum / len(reference), the (dead) coverage factor, then the gate.
        value = total / len(ref)
        if compared < len(ref):
            value *= compared / len(ref)
        value *= 1.0 if aligned else 0.0
        paired_expected = {pair.expected_index for pair in pairs}
        paired_actual = {pair.actual_index for pair in pairs}
        details = Details(
            tuple(pairs),
            tuple(i for i in range(len(ref)) if i not in paired_expected),
            tuple(j for j in range(len(pred)) if j not in paired_actual),
            (),
            {"compat": "ragas", "gate": 1.0 if aligned else 0.0},
        )
        if aligned:
            reason = f"ragas: sequence aligned; score {fmt(value)}"
        elif len(ref) != len(pred):
            reason = f"ragas: length mismatch ({len(pred)} predicted vs {len(ref)} reference)"
        else:
            reason = "ragas: tool name sequence not aligned"
        return make_score(self.name, value, self.threshold, reason, details)


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


def _perfect_pair(exp: Expectation, call: ToolCall) -> bool:
    """Would this pair score 1.0 under the exact comparator?"""
    return exp.name == call.name and _perfect_args(exp.args, call.args)


def _perfect_args(pattern: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """Would these arguments score 1.0 under the exact comparator (names aside)?"""
    if not pattern:
        return not args
    return args_match(pattern, args)


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
    matching = max_matching(expected, actual, same_name, key=_name)
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
    return reason, details


def _ragas_arg_score(
    pred_args: Mapping[str, Any], ref_args: Mapping[str, Any], compare: Comparator
) -> float:
    """[14] both empty 1; reference empty 0; else mean over reference keys, missing key 0."""
    if not ref_args and not pred_args:
        return 1.0
    if not ref_args:
        return 0.0
    score = 0.0
    for key in ref_args:
        if key in pred_args:
            # [15]/[16] Ragas hands the comparator str() of both values.
            score += compare(str(ref_args[key]), str(pred_args[key]))
    return score / len(ref_args)
