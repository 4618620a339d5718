"""Edge-case truth table: every metric on the awkward inputs, one row per (case, metric)."""

from __future__ import annotations

from typing import Any

import pytest

from harness import Sample, SampleError, ToolCall
from harness.metrics import (
    Metric,
    NoUnexpectedToolCalls,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
    ToolCallSequenceAccuracy,
    ToolSelectionAccuracy,
)

C = ToolCall.of

METRICS: dict[str, Metric] = {
    "accuracy": ToolCallAccuracy(),
    "no_unexpected": NoUnexpectedToolCalls(),
    "order": ToolCallOrder(),
    "arguments": ToolArgumentCorrectness(),
    "arguments_strict": ToolArgumentCorrectness(strict=True),
    "selection": ToolSelectionAccuracy(),
    "selection_ordered": ToolSelectionAccuracy(ordered=True),
    "sequence": ToolCallSequenceAccuracy(),
    "sequence_flexible": ToolCallSequenceAccuracy(order="flexible"),
    "f1": ToolCallF1(),
    "ragas_sequence": ToolCallSequenceAccuracy(compat="ragas"),
    "ragas_f1": ToolCallF1(compat="ragas"),
}

NAN = float("nan")

# case -> (actual, expected)
CASES: dict[str, tuple[list[ToolCall] | None, list[ToolCall]]] = {
    "both_empty": ([], []),
    "expected_empty": ([C("f", x=1)], []),
    "actual_empty": ([], [C("f", x=1)]),
    "not_recorded": (None, [C("f", x=1)]),
    "duplicates": ([C("f", x=1), C("f", x=1)], [C("f", x=1)]),
    "nan": ([C("f", x=NAN)], [C("f", x=NAN)]),
    "true_vs_1": ([C("f", x=1)], [C("f", x=True)]),
    "top_3_vs_3.0": ([C("f", x=3.0)], [C("f", x=3)]),
    "nested_3_vs_3.0": ([C("f", x={"n": 3.0})], [C("f", x={"n": 3})]),
    "key_case": ([C("f", City="Berlin")], [C("f", city="Berlin")]),
    "missing_vs_none": ([C("f")], [C("f", x=None)]),
    "none_vs_none": ([C("f", x=None)], [C("f", x=None)]),
    "strict_extras": ([C("f", x=1, debug=True)], [C("f", x=1)]),
}

RAISES = SampleError

# Expected value per (case, metric); RAISES marks a SampleError.
TABLE: dict[str, dict[str, Any]] = {
    "both_empty": {
        "accuracy": RAISES, "no_unexpected": 1.0, "order": 1.0, "arguments": 1.0,
        "arguments_strict": 1.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 1.0,
        "sequence_flexible": 1.0, "f1": 1.0, "ragas_sequence": 1.0, "ragas_f1": 0.0,
    },
    "expected_empty": {
        "accuracy": RAISES, "no_unexpected": 0.0, "order": 1.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 0.0, "selection_ordered": 0.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 0.0,
    },
    "actual_empty": {
        "accuracy": 0.0, "no_unexpected": 1.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 0.0, "selection_ordered": 0.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 0.0,
    },
    "not_recorded": {name: RAISES for name in METRICS},
    "duplicates": {
        "accuracy": 1.0, "no_unexpected": 0.0, "order": 1.0, "arguments": 1.0,
        "arguments_strict": 1.0, "selection": 2 / 3, "selection_ordered": 0.5, "sequence": 1.0,
        "sequence_flexible": 1.0, "f1": 2 / 3, "ragas_sequence": 0.0, "ragas_f1": 1.0,
    },
    # NaN matches nothing in our equivalence; Ragas compares str(nan) == "nan" (a match) and
    # puts the very same float object in both sets, where identity makes it equal.
    "nan": {
        "accuracy": 0.0, "no_unexpected": 0.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 1.0, "ragas_f1": 1.0,
    },
    "true_vs_1": {
        "accuracy": 0.0, "no_unexpected": 0.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 1.0,
    },
    "top_3_vs_3.0": {
        "accuracy": 1.0, "no_unexpected": 1.0, "order": 1.0, "arguments": 1.0,
        "arguments_strict": 1.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 1.0,
        "sequence_flexible": 1.0, "f1": 1.0, "ragas_sequence": 0.0, "ragas_f1": 1.0,
    },
    "nested_3_vs_3.0": {
        "accuracy": 0.0, "no_unexpected": 0.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 1.0,
    },
    "key_case": {
        "accuracy": 0.0, "no_unexpected": 0.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 0.0,
    },
    "missing_vs_none": {
        "accuracy": 0.0, "no_unexpected": 0.0, "order": 0.0, "arguments": 0.0,
        "arguments_strict": 0.0, "selection": 1.0, "selection_ordered": 1.0, "sequence": 0.0,
        "sequence_flexible": 0.0, "f1": 0.0, "ragas_sequence": 0.0, "ragas_f1": 0.0,
    },
    "none_vs_none": {name: 1.0 for name in METRICS},
    "strict_extras": {
        "accuracy": 1.0, "no_unexpected": 1.0, "order": 1.0, "arguments": 1.0,
        "arguments_strict": 0.5, "selection": 1.0, "selection_ordered": 1.0, "sequence": 1.0,
        "sequence_flexible": 1.0, "f1": 0.0, "ragas_sequence": 1.0, "ragas_f1": 0.0,
    },
}  # fmt: skip

ROWS = [(case, metric) for case in CASES for metric in METRICS]


def test_table_is_complete() -> None:
    assert set(TABLE) == set(CASES)
    for case, row in TABLE.items():
        assert set(row) == set(METRICS), case


@pytest.mark.parametrize(("case", "metric"), ROWS, ids=[f"{c}-{m}" for c, m in ROWS])
def test_truth_table(case: str, metric: str) -> None:
    actual, expected = CASES[case]
    sample = Sample(tool_calls=actual, expected_tool_calls=expected)
    want = TABLE[case][metric]
    if want is RAISES:
        with pytest.raises(SampleError):
            METRICS[metric].evaluate(sample)
        return
    score = METRICS[metric].evaluate(sample)
    assert score.value == want
    assert 0.0 <= score.value <= 1.0


def test_strict_extras_fail_argument_correctness_even_at_threshold_zero() -> None:
    actual, expected = CASES["strict_extras"]
    score = ToolArgumentCorrectness(strict=True, threshold=0.0).evaluate(
        Sample(tool_calls=actual, expected_tool_calls=expected)
    )
    assert not score.passed
    assert score.codes == ("extra_arg",)
