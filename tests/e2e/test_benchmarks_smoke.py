"""The metrics benchmark runs end to end on a few samples (its figures come from `make bench`)."""

from __future__ import annotations

import pytest

from benchmarks.bench_metrics import main


def test_bench_metrics_quick_run_completes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--no-ragas", "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert "ToolCallAccuracy" in out
    assert "samples/s" in out
