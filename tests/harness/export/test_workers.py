"""eval-traces over several processes gives what one process gives (harness/workers.py).

The file is cut into many small slices on purpose, with traces whose spans sit on several lines
(so cuts fall inside traces), an unreadable line, a trace whose root never comes and a span that
arrives after its trace was complete.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.evaluate_traces import evaluate_traces
from harness.result import ScenarioResult, SuiteResult
from harness.scenarios import iter_scenarios, load_paths
from harness.workers import evaluate_traces_in_workers, plan_slices
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_eval_traces as bench  # the benchmark's own trace generator


def _request(spans: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": "test"}, "spans": spans}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}) + "\n"


@pytest.fixture(params=["split", "whole"])
def files(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    """Traces split over two lines (every cut falls inside traces), or whole on one line."""
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "bench.yaml"
    suite.write_text(bench.SUITE.format(agent=agent), encoding="utf-8")
    traces = tmp_path / "traces.json"
    lines: list[str] = []
    for first in range(0, 300, 3):
        group = [bench._trace(i) for i in range(first, first + 3)]
        if request.param == "split":
            # children of three traces on one line, their roots (the last span) on the next
            lines.append(_request([s for spans in group for s in spans[:-1]]))
            lines.append(_request([spans[-1] for spans in group]))
        else:
            lines.extend(_request(spans) for spans in group)
        if first == 150:
            lines.append("{not json\n")
            lines.append(_request(bench._trace(1000)[:-1]))  # a root that never comes
            lines.append(_request(bench._trace(0)[:1]))  # trace 0 is long complete
    traces.write_text("".join(lines), encoding="utf-8")
    return traces, suite


def _rows(result: SuiteResult, seen: list[ScenarioResult]) -> list[tuple[Any, ...]]:
    rows = [(r.trace_id, r.status, r.suite, r.name, r.source, r.reasons) for r in seen]
    # the text of a late span's warning differs (the worker cannot name the span): count them
    rows.append((result.counts, len(result.warnings), result.interrupted))
    return rows


def test_many_slices_give_the_one_process_results(files: tuple[Path, Path]) -> None:
    traces, suite = files
    scenarios = list(iter_scenarios(load_paths([suite])))
    assert len(plan_slices([traces], 2_000)) > 20
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    pooled: list[ScenarioResult] = []
    many = evaluate_traces_in_workers(
        [traces, traces], scenarios, workers=2, progress=pooled.append, slice_bytes=2_000
    )
    twice: list[ScenarioResult] = []
    both = evaluate_traces([traces, traces], scenarios, progress=twice.append)
    assert _rows(many, pooled) == _rows(both, twice)
    assert len(alone) == 301  # every trace, the unfinished one included
    assert one.counts["failed"] == 30
    assert any("not json" in w or "line" in w for w in one.warnings)


def test_slices_cover_every_line_once(files: tuple[Path, Path]) -> None:
    traces, _ = files
    lines = traces.read_bytes().splitlines(keepends=True)
    parts = plan_slices([traces], 2_000)
    assert parts[0].start == 0 and parts[0].first_line == 1
    for before, after in itertools.pairwise(parts):
        assert before.line_count is not None
        assert after.first_line == before.first_line + before.line_count
        assert after.start == sum(len(line) for line in lines[: after.first_line - 1])
    assert parts[-1].line_count is None


def test_cli_workers_write_the_same_report(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces, suite = files
    monkeypatch.setattr("harness.workers.SLICE_BYTES", 2_000)
    reports = []
    for workers in ("1", "2"):
        out = tmp_path / f"report{workers}.json"
        command = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(out)]
        code = main([*command, "--workers", workers])
        assert code == 1  # failing traces and an unreadable line
        data = json.loads(out.read_text(encoding="utf-8"))
        for key in ("started_at", "duration", "summary"):
            data.pop(key)
        data["warnings"] = len(data["warnings"])  # a late span's text differs, see _rows
        for scenario in data["scenarios"]:
            scenario.pop("duration", None)
            for run in scenario.get("runs", []):
                run.pop("duration", None)
        reports.append(data)
    assert reports[0] == reports[1]
