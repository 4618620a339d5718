"""The metrics benchmark runs end to end on a few samples (its figures come from `make bench`)."""

from __future__ import annotations

import marshal

import pytest

import harness.matching as common
from benchmarks.bench_metrics import PROOFS_GIVEN, main


def test_bench_metrics_quick_run_completes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--no-ragas", "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert "ToolCallAccuracy" in out
    assert "samples/s" in out


def test_the_proofs_given_counterfactual_scores_alike_and_puts_marshal_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--quick", "--no-ragas", "--samples", "200"]) == 0
    out = capsys.readouterr().out
    assert f"({PROOFS_GIVEN}: the same values as ToolCallAccuracy)" in out
    assert common._dumps is marshal.dumps  # the real metric is left as it was
