"""Reports fed through prepare()/add_prepared() (eval-traces' workers) equal reports fed view by
view (harness/report/base.py): any cut of the stream, any sample size, a lagging saturation hint.
"""

from __future__ import annotations

import io
import itertools
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from harness.evaluate_traces import evaluate_traces
from harness.redaction import StreamScrubber
from harness.report.base import (
    Counted,
    Renders,
    Reporter,
    ReportFeed,
    Samples,
    prepare,
)
from harness.report.console import ConsoleReporter
from harness.report.html import HtmlReporter
from harness.report.json_report import JsonReporter
from harness.report.junit import JunitReporter
from harness.report.markdown import MarkdownReporter
from harness.report.view import ScenarioView, scenario_view
from harness.result import ScenarioResult, SuiteResult
from harness.scenarios import iter_scenarios, load_paths
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_eval_traces as bench  # the benchmark's own trace generator

_TRACES = 60


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[ScenarioView], SuiteResult]:
    """The views of 60 scored traces (one in ten fails), and the stream's summary."""
    folder = tmp_path_factory.mktemp("prepared")
    agent = folder / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = folder / "bench.yaml"
    suite.write_text(bench.SUITE.format(agent=agent), encoding="utf-8")
    traces = folder / "traces.json"
    bench.write_file(traces, _TRACES, 5)
    results: list[ScenarioResult] = []
    scenarios = list(iter_scenarios(load_paths([suite])))
    summary = evaluate_traces([traces], scenarios, progress=results.append, keep=None)
    assert {r.status for r in results} == {"passed", "failed"}
    scrub = StreamScrubber(None)
    return [scenario_view(result, scrub.for_result(result)) for result in results], summary


def _reporters(folder: Path, keep: int | None, out: io.StringIO) -> list[Reporter]:
    console = Console(file=out, width=100, color_system=None)
    return [
        ConsoleReporter(console, keep=keep, max_rows=5),
        JsonReporter(folder / "r.json"),
        JunitReporter(folder / "r.xml"),
        HtmlReporter(folder / "r.html", keep=keep),
    ]


def _outputs(folder: Path, out: io.StringIO) -> tuple[str, ...]:
    files = [(folder / name).read_text(encoding="utf-8") for name in ("r.json", "r.xml")]
    html = (folder / "r.html").read_text(encoding="utf-8")
    return (*files, html, out.getvalue())


def _saturated(reporters: list[Reporter]) -> bool:
    return all(
        r.saturated for r in reporters if isinstance(r, Samples) and not isinstance(r, Renders)
    )


@settings(max_examples=25, deadline=None)
@given(
    cuts=st.lists(st.integers(min_value=1, max_value=_TRACES - 1), max_size=8),
    keep=st.one_of(st.none(), st.integers(min_value=0, max_value=12)),
    lag=st.integers(min_value=0, max_value=3),
)
def test_prepared_runs_write_what_one_view_at_a_time_writes(
    stream: tuple[list[ScenarioView], SuiteResult], cuts: list[int], keep: int | None, lag: int
) -> None:
    views, summary = stream
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as runs:
        out_one, out_runs = io.StringIO(), io.StringIO()
        alone = ReportFeed(_reporters(Path(one), keep, out_one), StreamScrubber(None))
        for view in views:
            alone.add_view(view)
        alone.close(summary)

        reporters = _reporters(Path(runs), keep, out_runs)
        feed = ReportFeed(reporters, StreamScrubber(None))
        bounds = [0, *sorted(set(cuts)), len(views)]
        hints: list[bool] = []  # what the state said when each run was "submitted"
        for number, (start, stop) in enumerate(itertools.pairwise(bounds)):
            hints.append(_saturated(reporters))
            hint = hints[max(0, number - lag)]  # an older, more conservative state
            prepared = prepare(reporters, views[start:stop], saturated=hint)
            feed.add_prepared(prepared, reporters)
        feed.close(summary)
        assert _outputs(Path(runs), out_runs) == _outputs(Path(one), out_one)


def test_views_travel_only_where_a_reporter_needs_them(
    stream: tuple[list[ScenarioView], SuiteResult], tmp_path: Path
) -> None:
    views, _ = stream
    reporters = _reporters(tmp_path, 3, io.StringIO())
    prepared = prepare(reporters, views)
    kept = [entry for entry in prepared.entries if type(entry) is not Counted]
    # a sample of 3 over these views: the first three, then failures displacing passes
    assert 3 <= len(kept) < len(views)
    assert [type(chunk) is not type(None) for chunk in prepared.chunks] == [
        False,
        True,
        True,
        False,
    ]
    assert all(type(e) is Counted for e in prepare(reporters, views, saturated=True).entries)
    # a reporter that neither renders nor samples gets every view
    everything = prepare([*reporters, MarkdownReporter(tmp_path / "r.md")], views)
    assert everything.entries == views
    for reporter in reporters:
        reporter.abort()
