"""eval-traces over several processes gives what one process gives (harness/parallel/traces.py).

The file is cut into many small slices on purpose, with traces whose spans sit on several lines
(so cuts fall inside traces), an unreadable line, a trace whose root never comes and a span that
arrives after its trace was complete.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import itertools
import json
import multiprocessing
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import harness.parallel.traces
from harness.cli import main
from harness.cli.common import collector_for_a_command
from harness.parallel import LocalPool, plan_slices
from harness.parallel.shards import iter_slices, shrinking_sizes
from harness.parallel.traces import ScoreSlice, evaluate_traces_in_workers, full, lean
from harness.report.base import ReportFeed
from harness.report.console import ConsoleReporter
from harness.report.html import HtmlReporter
from harness.report.json_report import JsonReporter
from harness.report.junit import JunitReporter
from harness.report.view import ScenarioView, SuiteView
from harness.run.results import RunResult, ScenarioResult, SuiteResult
from harness.scenarios import iter_scenarios, load_paths
from harness.traces.evaluate import evaluate_traces
from tests.harness.traces.test_golden_reports import _normalised as _golden_normalised
from tests.support.eval_golden import GOLDEN
from tests.support.eval_golden import SUITE as GOLDEN_SUITE
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_eval_traces as bench  # the benchmark's own trace generator


def _request(spans: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": "test"}, "spans": spans}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}) + "\n"


@pytest.fixture(params=["split", "split-no-lead-in", "whole"])
def files(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """Traces split over two lines, or whole on one line. ``split-no-lead-in``: the slices have
    no lead-in (so the traces cut in two are found short and their slices scored again)."""
    if request.param == "split-no-lead-in":
        monkeypatch.setattr("harness.parallel.shards.LEAD_IN_BYTES", 0)
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "bench.yaml"
    suite.write_text(bench.SUITE.format(agent=agent), encoding="utf-8")
    traces = tmp_path / "traces.json"
    lines: list[str] = []
    for first in range(0, 300, 3):
        group = [bench._trace(i) for i in range(first, first + 3)]
        if request.param != "whole":
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
    rows.append((result.counts, result.warnings, result.interrupted))
    return rows


def test_many_slices_give_the_one_process_results(files: tuple[Path, Path]) -> None:
    traces, suite = files
    scenarios = list(iter_scenarios(load_paths([suite])))
    assert len(plan_slices([traces], 2_000)) > 20
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    pooled: list[ScenarioResult] = []
    many = evaluate_traces_in_workers(
        [traces, traces],
        scenarios,
        executor=LocalPool(2),
        progress=pooled.append,
        slice_bytes=2_000,
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


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of at most 12,000 bytes and at least 1,500: the test files shrink them early."""
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 12_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 1_500)


@pytest.mark.usefixtures("small_slices")
def test_slices_shrink_towards_the_end_and_cover_every_line_once(
    files: tuple[Path, Path],
) -> None:
    traces, _ = files
    data = traces.read_bytes()
    parts = list(iter_slices([traces], shrinking_sizes(2)))
    ends = [after.start for after in parts[1:]] + [len(data)]
    sizes = [end - part.start for part, end in zip(parts, ends, strict=True)]
    longest = max(len(line) for line in data.splitlines(keepends=True))
    # each slice a quarter of what is left (two workers), cut at the next newline no trace
    # straddles (one more line, its traces' roots, when the traces are split)
    for part, size in zip(parts[:-1], sizes[:-1], strict=True):
        target = min(12_000, max(1_500, (len(data) - part.start) // 4))
        assert target <= size <= target + 2 * longest
    assert sizes[0] >= 12_000 > sizes[-2]
    assert parts[0].start == 0 and parts[-1].line_count is None
    lines = 1
    for part in parts:
        assert part.first_line == lines  # every line once, numbered as one reader numbers it
        assert data[part.start - 1 : part.start] in (b"", b"\n")
        lines += part.line_count or 0


@pytest.mark.usefixtures("small_slices")
def test_shrinking_slices_give_the_one_process_results(files: tuple[Path, Path]) -> None:
    traces, suite = files
    scenarios = list(iter_scenarios(load_paths([suite])))
    pooled: list[ScenarioResult] = []
    many = evaluate_traces_in_workers(
        [traces], scenarios, executor=LocalPool(2), progress=pooled.append
    )
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    assert _rows(many, pooled) == _rows(one, alone)


def test_the_command_scores_with_its_loaded_objects_frozen_and_then_thaws_them(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces, suite = files
    scoring = harness.parallel.traces.evaluate_traces_in_workers
    frozen: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> SuiteResult:
        frozen.append(gc.get_freeze_count())
        return scoring(*args, **kwargs)

    monkeypatch.setattr("harness.parallel.traces.evaluate_traces_in_workers", spy)
    before = gc.get_freeze_count()
    out = tmp_path / "report.json"
    command = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(out)]
    assert main([*command, "--workers", "2"]) == 1  # failing traces and an unreadable line
    assert frozen and frozen[0] > before  # the scenarios and libraries, at least
    assert gc.get_freeze_count() == before
    with pytest.raises(KeyboardInterrupt), collector_for_a_command():
        raise KeyboardInterrupt
    assert gc.get_freeze_count() == before


def test_cli_workers_write_the_same_report(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces, suite = files
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 2_000)
    reports = []
    for workers in ("1", "2"):
        out = tmp_path / f"report{workers}.json"
        command = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(out)]
        code = main([*command, "--workers", workers])
        assert code == 1  # failing traces and an unreadable line
        data = json.loads(out.read_text(encoding="utf-8"))
        for key in ("started_at", "duration", "summary"):
            data.pop(key)
        for scenario in data["scenarios"]:
            scenario.pop("duration", None)
            for run in scenario.get("runs", []):
                run.pop("duration", None)
        reports.append(data)
    assert reports[0] == reports[1]


# --- reports across worker counts (the workers build the views) -------------------------------

SECRET = "correct-horse-battery-staple"  # no token pattern: masked only as a known secret

_CLOCKS = [
    (rb'"(started_at|duration)": [0-9.e+-]+', rb'"\1": 0'),
    (rb"in [0-9.]+s\b", rb"in 0s"),
    (rb"took [0-9.]+s", rb"took 0s"),
    (rb"started [0-9-]+ [0-9:]+ UTC", rb"started 0 UTC"),
    (rb'(time|timestamp)="[^"]*"', rb'\1="0"'),
]


def _unclocked(data: bytes) -> bytes:
    """A report without its clock fields (when it started, how long it took)."""
    for pattern, replacement in _CLOCKS:
        data = re.sub(pattern, replacement, data)
    return data


def _set(span: dict[str, Any], key: str, value: Any) -> None:
    for attribute in span["attributes"]:
        if attribute["key"] == key:
            attribute["value"] = {"stringValue": json.dumps(value)}


def _lines(split: bool, secret_at: int | None = None) -> list[str]:
    """240 traces; with ``split``, each trace's spans on two lines (cuts fall inside traces).

    ``secret_at``: trace 9 (failing, so its calls are kept) sends ``api_key`` = SECRET; trace
    ``secret_at`` (failing too) echoes it in a tool result, where only a scrubber that remembers
    it masks it.
    """
    lines: list[str] = []
    for first in range(0, 240, 3):
        group = [bench._trace(i) for i in range(first, first + 3)]
        if secret_at is not None and first == 9:
            _set(group[0][0], "gen_ai.tool.call.arguments", {"city": "Berlin", "api_key": SECRET})
        if secret_at is not None and first <= secret_at < first + 3:
            _set(group[secret_at - first][1], "gen_ai.tool.call.result", {"echo": SECRET})
        if split:
            lines.append(_request([s for spans in group for s in spans[:-1]]))
            lines.append(_request([spans[-1] for spans in group]))
        else:
            lines.extend(_request(spans) for spans in group)
        if first == 120:
            lines.append("{not json\n")  # well inside the second half
    return lines


def _reports(
    traces: Path, suite: Path, tmp_path: Path, workers: str, *extra: str
) -> tuple[int, dict[str, bytes]]:
    out = tmp_path / f"w{workers}"
    out.mkdir()
    paths = {"json": out / "r.json", "junit-xml": out / "r.xml", "html": out / "r.html"}
    flags = [arg for name, path in paths.items() for arg in (f"--{name}", str(path))]
    command = ["eval-traces", str(traces), "--scenarios", str(suite), *flags, *extra]
    code = main([*command, "--workers", workers])
    return code, {name: _unclocked(path.read_bytes()) for name, path in paths.items()}


@pytest.mark.parametrize("split", [True, False], ids=["split", "whole"])
def test_every_report_is_the_same_for_any_number_of_workers(
    split: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(split)), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 3_000)
    assert len(plan_slices([traces], 3_000)) > 10
    link = ["--trace-url", "https://traces.example/{trace_id}"]
    one = _reports(traces, suite, tmp_path, "1", *link)
    assert one[0] == 1  # failing traces and an unreadable line
    assert b"not json" in one[1]["json"] or b"line" in one[1]["json"]
    assert b"https://traces.example/" in one[1]["html"]
    for workers in ("2", "3"):
        assert _reports(traces, suite, tmp_path, workers, *link) == one


@pytest.mark.parametrize(
    ("secret_at", "slice_bytes", "slices_apart"),
    [(19, 200_000, 0), (19, 8_000, 2), (199, 3_000, 95)],
    ids=["same-slice", "in-flight", "later-slice"],
)
def test_a_secret_seen_in_one_slice_is_scrubbed_in_the_next(
    secret_at: int,
    slice_bytes: int,
    slices_apart: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In flight (scored for views before the secret was seen) or submitted after it."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False, secret_at)), encoding="utf-8")
    parts = plan_slices([traces], slice_bytes)
    assert len(parts) > 1
    (where,) = [p for p in parts if f'\\"api_key\\": \\"{SECRET}'.encode() in _read(p)]
    (echo,) = [p for p in parts if f'\\"echo\\": \\"{SECRET}'.encode() in _read(p)]
    assert parts.index(echo) - parts.index(where) == slices_apart
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", slice_bytes)
    one = _reports(traces, suite, tmp_path, "1")
    assert SECRET.encode() in traces.read_bytes()
    for name, data in one[1].items():
        assert SECRET.encode() not in data, name
    assert _reports(traces, suite, tmp_path, "2") == one


def _read(part: Any) -> bytes:
    """The lines of one slice."""
    with open(part.path, "rb") as fp:
        fp.seek(part.start)
        return (
            fp.read()
            if part.line_count is None
            else b"".join(fp.readline() for _ in range(part.line_count))
        )


def _suite(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "bench.yaml"
    suite.write_text(bench.SUITE.format(agent=agent), encoding="utf-8")
    return agent, suite


class _Views:
    """A reporter that keeps every view it is given, in order."""

    def __init__(self) -> None:
        self.views: list[ScenarioView] = []

    def add(self, result: ScenarioView) -> None:
        self.views.append(result)

    def close(self, summary: SuiteView) -> None:
        return None

    def abort(self) -> None:
        self.views.clear()


@pytest.mark.parametrize("keep", [0, 7, None])
def test_a_feed_gets_the_one_process_views_and_the_same_results_are_kept(
    keep: int | None, tmp_path: Path
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(True)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))
    alone, pooled = _Views(), _Views()
    one = evaluate_traces(
        [traces], scenarios, progress=ReportFeed.for_stream([alone]).add, keep=keep
    )
    many = evaluate_traces_in_workers(
        [traces],
        scenarios,
        executor=LocalPool(2),
        progress=ReportFeed.for_stream([pooled]).add,
        keep=keep,
        slice_bytes=3_000,
    )
    assert pooled.views == alone.views
    assert len(alone.views) == 240
    assert many.scenarios == one.scenarios
    assert (many.counts, many.omitted, many.warnings) == (one.counts, one.omitted, one.warnings)


def test_a_bad_line_in_the_second_slice_keeps_its_line_number(tmp_path: Path) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    lines = _lines(False)
    traces.write_text("".join(lines), encoding="utf-8")
    parts = plan_slices([traces], len("".join(lines)) // 2)
    bad = lines.index("{not json\n") + 1
    assert len(parts) == 2 and parts[1].first_line < bad  # the bad line is in the second slice
    scenarios = list(iter_scenarios(load_paths([suite])))
    errors: list[Any] = []
    many = evaluate_traces_in_workers(
        [traces],
        scenarios,
        executor=LocalPool(2),
        errors=errors,
        slice_bytes=len("".join(lines)) // 2,
    )
    one = evaluate_traces([traces], scenarios)
    assert [error.line for error in errors] == [bad]
    assert many.warnings == one.warnings
    assert many.counts == one.counts


def test_a_trace_straddling_a_cut_is_scored_once_as_a_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no lead-in: the second slice is found short of the children of traces 9-11, and scored
    # again with a lead-in that has them
    monkeypatch.setattr("harness.parallel.shards.LEAD_IN_BYTES", 0)
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    lines = _lines(True)
    traces.write_text("".join(lines), encoding="utf-8")
    cut = sum(len(line) for line in lines[:7])  # after the children of traces 9-11, not roots
    parts = plan_slices([traces], cut - 1)
    assert parts[1].first_line == 8  # the roots of traces 9-11 open the second slice
    scenarios = list(iter_scenarios(load_paths([suite])))
    seen: list[ScenarioResult] = []
    many = evaluate_traces_in_workers(
        [traces], scenarios, executor=LocalPool(2), progress=seen.append, slice_bytes=cut - 1
    )
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    straddling = [r for r in seen if r.trace_id == f"{10:032x}"]
    assert len(straddling) == 1 and straddling[0].source == f"{traces}:8"
    assert _rows(many, seen) == _rows(one, alone)


@pytest.mark.parametrize("keep", [2, 5])
def test_reports_of_small_samples_are_those_of_one_process(keep: int, tmp_path: Path) -> None:
    """Samples that fill with failures early keep, over many slices, what one process keeps."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))

    def run(folder: Path, pooled: bool) -> tuple[Any, dict[str, bytes]]:
        folder.mkdir()
        out = io.StringIO()
        reporters = [
            ConsoleReporter(Console(file=out, width=100, color_system=None), keep=keep),
            JsonReporter(folder / "r.json"),
            JunitReporter(folder / "r.xml"),
            HtmlReporter(folder / "r.html", keep=keep),
        ]
        feed = ReportFeed.for_stream(reporters)
        if pooled:
            result = evaluate_traces_in_workers(
                [traces],
                scenarios,
                executor=LocalPool(2),
                progress=feed.add,
                keep=keep,
                slice_bytes=3_000,
            )
        else:
            result = evaluate_traces([traces], scenarios, progress=feed.add, keep=keep)
        feed.close(result)
        files = {name: (folder / name).read_bytes() for name in ("r.json", "r.xml", "r.html")}
        return result, {**files, "console": out.getvalue().encode()}

    one, alone = run(tmp_path / "one", False)
    many, pooled = run(tmp_path / "many", True)
    assert {name: _unclocked(data) for name, data in pooled.items()} == {
        name: _unclocked(data) for name, data in alone.items()
    }
    assert many.scenarios == one.scenarios
    assert (many.counts, many.omitted) == (one.counts, one.omitted)


@pytest.mark.parametrize("files", ["whole"], indirect=True)  # split: one slice in the end
def test_a_killed_worker_leaves_the_results_of_one_process(
    files: tuple[Path, Path],
) -> None:
    # What the out-of-memory killer does: SIGKILL to a worker while slices are in flight.
    import multiprocessing
    import signal

    traces, suite = files
    scenarios = list(iter_scenarios(load_paths([suite])))
    pooled: list[ScenarioResult] = []

    def kill_a_worker_once(result: ScenarioResult) -> None:
        if not pooled:
            victim = multiprocessing.active_children()[0]
            assert victim.pid is not None
            os.kill(victim.pid, signal.SIGKILL)
            victim.join()
        pooled.append(result)

    many = evaluate_traces_in_workers(
        [traces], scenarios, executor=LocalPool(2), progress=kill_a_worker_once, slice_bytes=2_000
    )
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    rows = [(r.trace_id, r.status, r.name, r.source, r.reasons) for r in pooled]
    assert rows == [(r.trace_id, r.status, r.name, r.source, r.reasons) for r in alone]
    assert many.counts == one.counts
    died = [w for w in many.warnings if "ended abruptly" in w]
    assert len(died) == 1 and "scored in this process" in died[0]
    assert len(many.warnings) == len(one.warnings) + 1


# --- what crosses between the processes -------------------------------------------------------


def test_a_passing_result_crosses_lean_and_comes_back_equal(tmp_path: Path) -> None:
    """Every result of a file, whatever its status, is the same after lean() and full()."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(True, secret_at=19)), encoding="utf-8")
    results: list[ScenarioResult] = []
    evaluate_traces([traces], list(iter_scenarios(load_paths([suite]))), progress=results.append)
    # again with an expected failure: its passing traces are xpassed, its failing ones xfailed
    text = suite.read_text(encoding="utf-8")
    suite.write_text(text.replace("  - name: refund\n", "  - name: refund\n    xfail: bug\n"))
    evaluate_traces([traces], list(iter_scenarios(load_paths([suite]))), progress=results.append)
    assert {r.status for r in results} == {"passed", "failed", "xfailed", "xpassed"}
    heads: dict[Any, Any] = {}
    entries = [lean(result, heads) for result in results]
    assert [full(entry) for entry in pickle.loads(pickle.dumps(entries))] == results
    for entry, result in zip(entries, results, strict=True):
        assert (type(entry) is tuple) == (result.status == "passed"), result
    assert len(heads) == 2  # one tuple for each scenario that passes (weather twice)


def test_the_lean_form_covers_every_field_of_a_result() -> None:
    """A field added to a result must be added to lean()/full() too (or it would be lost)."""
    assert [f.name for f in dataclasses.fields(ScenarioResult)] == [
        "suite",
        "name",
        "file",
        "line",
        "status",
        "runs",
        "repeat",
        "pass_rate",
        "xfail",
        "reasons",
        "duration",
        "trace_id",
        "source",
    ]
    assert [f.name for f in dataclasses.fields(RunResult)] == [
        "index",
        "passed",
        "sample",
        "scores",
        "checks",
        "error",
        "duration",
        "trace_id",
        "paused",
    ]


def test_the_golden_reports_come_out_of_many_slices_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The golden file (secrets in arguments, failures with diffs) scored in slices of a few
    traces each: byte for byte the golden JSON and JUnit reports, secrets masked."""
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 4_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 2_000)
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "scenarios.yaml"
    suite.write_text(GOLDEN_SUITE.format(agent=agent), encoding="utf-8")
    traces = tmp_path / "recorded.jsonl"
    shutil.copyfile(GOLDEN / "recorded.jsonl", traces)
    assert len(list(iter_slices([traces], shrinking_sizes(2)))) > 5
    out, xml = tmp_path / "report.json", tmp_path / "report.xml"
    args = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--junit-xml", str(xml), "--workers", "2"]) == 1
    for report, golden in ((out, "report.json"), (xml, "report.xml")):
        text = _golden_normalised(report.read_text(encoding="utf-8"), suite, traces)
        assert text == (GOLDEN / golden).read_text(encoding="utf-8")


def test_a_stop_signal_ends_the_workers_and_reports_what_was_scored(
    tmp_path: Path, ctrl_c_raises: None
) -> None:
    """Ctrl-C in the parent while slices are in flight: the workers are stopped with it, and
    the results passed on so far are the run's, marked interrupted."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))
    seen: list[ScenarioResult] = []
    workers: list[int] = []

    def stop_once(result: ScenarioResult) -> None:
        seen.append(result)
        if len(seen) == 1:
            workers.extend(child.pid or 0 for child in multiprocessing.active_children())
            os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C reaches the parent

    many = evaluate_traces_in_workers(
        [traces], scenarios, executor=LocalPool(2), progress=stop_once, slice_bytes=3_000
    )
    assert many.interrupted
    assert 1 <= len(seen) < 240 and many.total == len(seen)
    assert len(workers) == 2 and not multiprocessing.active_children()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


_TERMINATED = """
import os, signal, sys
from harness.parallel import LocalPool
from harness.parallel.traces import evaluate_traces_in_workers
from harness.scenarios import iter_scenarios, load_paths

scenarios = list(iter_scenarios(load_paths([sys.argv[2]])))


def terminate_once(result):
    if not getattr(terminate_once, "done", False):
        terminate_once.done = True
        os.kill(os.getpid(), signal.SIGTERM)  # as CI cancels a job


evaluate_traces_in_workers(
    [sys.argv[1]], scenarios, executor=LocalPool(2), progress=terminate_once, slice_bytes=3_000
)
print("not stopped")
"""


def test_sigterm_ends_eval_traces_with_143_and_leaves_no_worker_or_spool(tmp_path: Path) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    spool = tmp_path / "tmp"
    spool.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", _TERMINATED, str(traces), str(suite)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(spool)},
    )
    assert proc.returncode == 143, proc.stderr
    assert "not stopped" not in proc.stdout and "Traceback" not in proc.stderr
    assert not list(spool.iterdir())  # the workers' spool folder was removed on the way out


def test_the_job_and_its_slices_are_plain_data_another_machine_could_run(tmp_path: Path) -> None:
    """What a remote executor would pickle (the job once, each slice) scores as the original."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(True)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))
    job = ScoreSlice(tuple(scenarios), None, (scenarios[1],))  # -k keeps the second scenario
    parts = plan_slices([traces], 3_000)
    assert len(parts) > 3
    copy = pickle.loads(pickle.dumps(job))
    for part in parts:
        here, there = job(part), copy(pickle.loads(pickle.dumps(part)))
        assert [full(entry) for entry in there.entries] == [full(entry) for entry in here.entries]
        assert (there.deselected, there.unreadable, there.errors) == (
            here.deselected,
            here.unreadable,
            here.errors,
        )
    assert sum(job(part).deselected for part in parts) == 120  # the other scenario's traces
