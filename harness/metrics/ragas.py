"""Ragas 0.4.3's ToolCallAccuracy and ToolCallF1, bug for bug, so migrations keep their numbers.

``ToolCallSequenceAccuracy(compat="ragas")`` and ``ToolCallF1(compat="ragas")`` (and the same
option in YAML) build these classes; their scores keep the native metrics' names. The rules,
and the numbers in brackets in the comments, are docs/metrics.md's "Ragas compatibility".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from harness.errors import SampleError
from harness.expectation import Expectation
from harness.metrics._common import (
    ORDERS,
    Comparator,
    check_choice,
    fmt,
    prf,
    resolve_comparator,
    string_equal,
    with_invalid_causes,
)
from harness.metrics.base import Details, Pair, Score, check_threshold, lazy_score, make_score
from harness.sample import Sample
from harness.values import Matcher, describe_pattern
from tracing.records import ToolCall


class RagasToolCallAccuracy:
    """Ragas's ToolCallAccuracy: sort-and-zip pairing, ``str()`` comparison, length gate."""

    __slots__ = ("_compare", "comparator", "order", "threshold")
    name = "tool_call_sequence_accuracy"
    compat: ClassVar[str] = "ragas"

    def __init__(
        self,
        threshold: float = 0.8,
        *,
        order: str = "strict",
        comparator: str | Comparator = "exact",
    ) -> None:
        self.threshold = check_threshold(self.name, threshold)
        self.order = check_choice(self.name, "order", order, ORDERS)
        # [15] Ragas's default ExactMatch compares str() of both values.
        self._compare = resolve_comparator(self.name, comparator, string_equal) or string_equal
        self.comparator = comparator

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample as Ragas 0.4.3 would."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        ref = [(exp.name, literal_args(self.name, exp, i)) for i, exp in enumerate(expected)]
        pred = [(call.name, call.args) for call in actual]
        # [5] early returns, in this order.
        if not ref and not pred:
            return make_score(self.name, 1.0, self.threshold, "ragas: both lists empty")
        if not pred:
            return make_score(self.name, 0.0, self.threshold, "ragas: no tool calls found")
        if not ref:
            reason = "ragas: reference tool calls are empty but predictions exist"
            return make_score(self.name, 0.0, self.threshold, reason)
        ref_order = list(range(len(ref)))
        pred_order = list(range(len(pred)))
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
            score = _arg_score(pred[j][1], ref[i][1], self._compare)
            total += score
            pairs.append(Pair(i, j, (), score))
        compared = min(len(ref), len(pred))
        # [12] sum / len(reference), the (dead) coverage factor, then the gate.
        value = total / len(ref)
        if compared < len(ref):
            value *= compared / len(ref)
        value *= 1.0 if aligned else 0.0
        explain = partial(
            _explain_accuracy, tuple(expected), tuple(actual), tuple(pairs), aligned, value
        )
        return lazy_score(self.name, value, self.threshold, explain)


def _explain_accuracy(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    pairs: tuple[Pair, ...],
    aligned: bool,
    value: float,
) -> tuple[str, Details]:
    n_ref, n_pred = len(expected), len(actual)
    paired_expected = {pair.expected_index for pair in pairs}
    paired_actual = {pair.actual_index for pair in pairs}
    details = Details(
        pairs,
        tuple(i for i in range(n_ref) if i not in paired_expected),
        tuple(j for j in range(n_pred) if j not in paired_actual),
        (),
        {"compat": "ragas", "gate": 1.0 if aligned else 0.0},
    )
    if aligned:
        reason = f"ragas: sequence aligned; score {fmt(value)}"
    elif n_ref != n_pred:
        reason = f"ragas: length mismatch ({n_pred} predicted vs {n_ref} reference)"
    else:
        reason = "ragas: tool name sequence not aligned"
    return with_invalid_causes(expected, actual, reason, details)


class RagasToolCallF1:
    """Ragas's ToolCallF1: precision and recall over two Python sets of calls, rounded to 4."""

    __slots__ = ("threshold",)
    name = "tool_call_f1"
    compat: ClassVar[str] = "ragas"

    def __init__(self, threshold: float = 0.8) -> None:
        self.threshold = check_threshold(self.name, threshold)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample as Ragas 0.4.3 would (rules 19-21)."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
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
        counts = (tp, fp, fn)
        explain = partial(
            _explain_f1,
            tuple(expected),
            tuple(actual),
            ref_items,
            pred_items,
            ref_set,
            pred_set,
            precision,
            recall,
            f1,
            counts,
        )
        return lazy_score(self.name, value, self.threshold, explain)


def _explain_f1(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    ref_items: list[Any],
    pred_items: list[Any],
    ref_set: set[Any],
    pred_set: set[Any],
    precision: float,
    recall: float,
    f1: float,
    counts: tuple[int, int, int],
) -> tuple[str, Details]:
    tp, fp, fn = counts
    details = Details(
        _first_pairs(ref_items, pred_items),
        tuple(i for i, item in enumerate(ref_items) if item not in pred_set),
        tuple(j for j, item in enumerate(pred_items) if item not in ref_set),
        (),
        {"compat": "ragas", **prf(precision, recall, f1), "tp": tp, "fp": fp, "fn": fn},
    )
    reason = (
        f"ragas F1 {fmt(round(f1, 4))} over call sets (precision {fmt(precision)}, "
        f"recall {fmt(recall)})"
    )
    return with_invalid_causes(expected, actual, reason, details)


def literal_args(metric: str, expectation: Expectation, index: int) -> Mapping[str, Any]:
    """The expectation's arguments as plain values; Ragas has no matchers, so none may appear."""
    args = expectation.args
    for key, pattern in args.items():
        if isinstance(pattern, Matcher):
            raise SampleError(
                f"{metric}: compat='ragas' compares literal values only, but "
                f"expected_tool_calls[{index}] ({expectation.name}) argument {key!r} is the "
                f"matcher {describe_pattern(pattern)}; drop compat='ragas' to use matchers",
                metric=metric,
            )
    return args


def ragas_sort_key(name: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """Rule 7: ``(name, argname_1, str(value_1), ...)`` with argument names sorted."""
    key = [name]
    for arg in sorted(args):
        key.append(arg)
        key.append(str(args[arg]))
    return tuple(key)


def make_hashable(value: Any) -> Any:
    """Rule 19: dict -> frozenset of items, list/tuple -> tuple, set -> frozenset, else as is."""
    if isinstance(value, dict):
        return frozenset((key, make_hashable(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(make_hashable(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(make_hashable(item) for item in value)
    return value


def _arg_score(
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


def _first_pairs(ref_items: Sequence[Any], pred_items: Sequence[Any]) -> tuple[Pair, ...]:
    """For reports: pair each reference item with the first equal prediction."""
    first: dict[Any, int] = {}
    for j, item in enumerate(pred_items):
        first.setdefault(item, j)
    return tuple(Pair(i, first[item], (), 1.0) for i, item in enumerate(ref_items) if item in first)
