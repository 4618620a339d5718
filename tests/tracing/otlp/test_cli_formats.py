"""``harness eval-traces`` scores the demo suites' traces identically in every format it reads.

The baseline is the OTLP JSON lines file ``harness run --trace-file`` wrote; every other input
holds the same spans as the real OTLP exporter sent them (conftest.py), converted by each
format's documented mapping. The reports must be equal result by result (the order follows the
input, so results are compared by trace id), and the run clean (exit 0, no warning).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.paths import SCENARIOS
from tests.tracing.otlp.conftest import DemoExport

FORMATS = [
    "otlp lines",
    "otlp lines.gz",
    "otlp document",
    "bare spans",
    "proto",
    "proto.gz",
    "tempo v1",
    "tempo v2",
    "jaeger",
]


def _results(report: Path) -> dict[str, Any]:
    """The report's results by trace id, without what depends on the input's name or time."""
    data = json.loads(report.read_text(encoding="utf-8"))
    assert not data["warnings"], data["warnings"]
    out = {}
    for scenario in data["scenarios"]:
        scenario.pop("source")
        scenario.pop("duration")
        for run in scenario["runs"]:
            run.pop("duration")
        out[scenario["trace_id"]] = scenario
    return out


def _eval(tmp_path: Path, name: str, inputs: list[str]) -> dict[str, Any]:
    report = tmp_path / f"{name.replace(' ', '-')}.json"
    argv = ["eval-traces", *inputs, "--scenarios", str(SCENARIOS), "--json", str(report)]
    assert main(argv) == 0
    return _results(report)


@pytest.fixture(scope="module")
def baseline(demo_export: DemoExport, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The results of the trace file ``harness run`` wrote."""
    results = _eval(tmp_path_factory.mktemp("baseline"), "base", [str(demo_export.trace_file)])
    assert len(results) > 40  # every demo scenario's run, and the conversations' runs
    assert {r["status"] for r in results.values()} == {"passed", "xfailed"}
    return results


def _to_microseconds(results: dict[str, Any]) -> dict[str, Any]:
    """Jaeger keeps times in microseconds (the OpenTelemetry to Jaeger mapping): the calls'
    durations compared at that precision."""
    results = json.loads(json.dumps(results))
    for scenario in results.values():
        for run in scenario["runs"]:
            for call in run.get("tool_calls") or ():
                call["duration_ns"] //= 1000
    return results


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_scores_as_the_trace_file(
    name: str, demo_export: DemoExport, baseline: dict[str, Any], tmp_path: Path
) -> None:
    results = _eval(tmp_path, name, demo_export.formats[name])
    if name == "jaeger":
        assert results != baseline  # nanoseconds lost: the comparison below is not vacuous
        results, baseline = _to_microseconds(results), _to_microseconds(baseline)
    assert results == baseline


def test_standard_input_scores_as_the_trace_file(
    demo_export: DemoExport, baseline: dict[str, Any], tmp_path: Path
) -> None:
    """``-`` reads standard input (here the gzipped protobuf, found by content)."""
    report = tmp_path / "stdin.json"
    harness = Path(sys.executable).parent / "harness"
    command = [str(harness), "eval-traces", "-", "--scenarios", str(SCENARIOS)]
    with open(demo_export.formats["proto.gz"][0], "rb") as stdin:
        done = subprocess.run(
            [*command, "--json", str(report)], stdin=stdin, capture_output=True, timeout=300
        )
    assert done.returncode == 0, done.stderr.decode()
    assert _results(report) == baseline
