"""``harness run`` and ``eval-traces`` with ``--baseline``: real runs of the demo travel suite
(one changed scenario file) and of a real agent over a flaky service, compared as they end —
the console block, the JSON ``comparison`` section, the Markdown and GitHub summaries, the exit
code by ``--fail-on``, bad baselines (exit 2 before anything runs), and ``--k``'s pass@k and
pass^k in the reports and on the spans."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.compare import compare_reports, load_report
from tests.harness.compare.conftest import FLAKY_AGENT, FLAKY_SUITE, TravelPair
from tests.support.flaky_service import FlakyService
from tests.support.paths import SCENARIOS

REGRESSED = {"weather in Berlin tomorrow", "book the best rated hotel in Lisbon"}


@pytest.fixture(autouse=True)
def _not_in_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub output only where a test asks for it (CI may run inside GitHub Actions)."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _run(*args: object) -> int:
    return main(["run", *(str(arg) for arg in args)])


def test_the_changed_suite_against_main(
    tmp_path: Path,
    travel_pair: TravelPair,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report, markdown, page = tmp_path / "head.json", tmp_path / "head.md", tmp_path / "head.html"
    code = _run(
        travel_pair.head_suite,
        "--baseline",
        travel_pair.base,
        "--json",
        report,
        "--markdown",
        markdown,
        "--html",
        page,
        "--github",
    )
    out = capsys.readouterr().out
    assert code == 1  # the run's own failures; the regressions would make it 1 as well
    # the run's report, then the comparison
    assert out.index("10 passed, 4 failed, 2 xfailed") < out.index("Compared with baseline")
    assert "REGRESSED" in out and "/city: 'Berlin' → 'Paris'" in out
    assert "2 regressions, 1 fix, 2 still failing" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    section = data["comparison"]
    assert section["base"] == str(travel_pair.base) and section["head"] == "this run"
    assert section["counts"]["regressed"] == 2 and section["counts"]["added"] == 1
    changes = {item["name"]: item["change"] for item in section["scenarios"]}
    assert {name for name, kind in changes.items() if kind == "regressed"} == REGRESSED
    assert changes["currency named in words"] == "fixed"
    # the run's own report, read back, compares to the same classes as during the run
    offline = compare_reports(load_report(travel_pair.base), load_report(report))
    assert offline.counts == section["counts"]
    # the HTML cards carry the class as a badge (the browser test clicks their filter)
    html = page.read_text(encoding="utf-8")
    assert html.count('<details class="scenario st-failed" id="scenario-') == 4
    assert html.count('data-change="regressed"') == 2 + 1  # two cards and the filter chip
    assert html.count('data-change="fixed"') == 1 + 1
    assert html.count('data-change="added"') == 1 + 1
    assert "2 regressions, 1 fix" in html
    # Markdown and the GitHub job summary lead with the headline; one annotation per regression
    for text in (markdown.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")):
        assert text.splitlines()[0].startswith("## ❌ toolcall-harness: 2 regressions, 1 fix,")
    regressions = [
        line for line in out.splitlines() if line.startswith("::error") and "REGRESSED" in line
    ]
    assert len(regressions) == 2
    assert any(f"file={travel_pair.head_suite},line=22," in line for line in regressions)


def test_fail_on_decides_for_a_run_that_passes(
    travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped suite (its three failures marked xfail) against main: the run passes and
    nothing regressed, but three verdicts changed (failed → xfailed)."""
    suite = SCENARIOS / "travel.yaml"
    base = travel_pair.base
    assert _run(suite, "-q", "--baseline", base) == 0
    assert _run(suite, "-q", "--baseline", base, "--fail-on", "regressions") == 0
    assert _run(suite, "-q", "--baseline", base, "--fail-on", "any") == 1
    assert _run(suite, "-q", "--baseline", base, "--fail-on", "none") == 0
    out = capsys.readouterr().out
    assert "0 regressions, 0 fixes, 3 changed" in out  # -q: the headline alone
    assert "Compared with baseline" not in out


def test_a_significant_drop_fails_a_run_that_meets_its_pass_rate(
    tmp_path: Path,
    flaky_reports: dict[str, Path],
    weather_service: FlakyService,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """8/10 on main, 3/10 now: the scenario's own ``pass_rate: 0.3`` is met (the run passes),
    the drop is significant (one-sided Fisher p = 0.035), so the run exits 1 — unless
    ``--fail-on none``, or ``--alpha`` below the p-value."""
    suite = tmp_path / "flaky.yaml"
    text = FLAKY_SUITE.format(agent=FLAKY_AGENT, repeat=10).replace(
        "pass_rate: 0.8", "pass_rate: 0.3"
    )
    suite.write_text(text, encoding="utf-8")
    base = flaky_reports["8/10"]
    codes = {}
    for fail_on, alpha in (("regressions", "0.05"), ("none", "0.05"), ("regressions", "0.01")):
        weather_service.set_failures(7, 10)
        codes[fail_on, alpha] = _run(
            suite, "--baseline", base, "--fail-on", fail_on, "--alpha", alpha
        )
    assert codes == {("regressions", "0.05"): 1, ("none", "0.05"): 0, ("regressions", "0.01"): 0}
    out = " ".join(capsys.readouterr().out.split())  # as the terminal wrapped it, unwrapped
    assert "1 passed in" in out
    assert "drop p = 0.035 ≤ α 0.05, significant" in out
    assert "drop p = 0.035 > α 0.01, not significant" in out


def test_k_puts_pass_at_k_in_the_reports_and_on_the_last_runs_span(
    tmp_path: Path,
    flaky_reports: dict[str, Path],
    weather_service: FlakyService,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """3 passes of 10 at K = 5: pass@5 = 1 − C(7,5)/C(10,5) = 1 − 21/252, pass^5 = C(3,5)/C(10,5)
    = 0; the Wilson 95 % interval of 3/10 is 10.8 %–60.3 %."""
    suite = tmp_path / "flaky.yaml"
    suite.write_text(FLAKY_SUITE.format(agent=FLAKY_AGENT, repeat=10), encoding="utf-8")
    report, html, markdown = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "r.md"
    junit = tmp_path / "r.xml"
    traces = tmp_path / "spans.jsonl"
    weather_service.set_failures(7, 10)
    code = _run(
        suite,
        "--k",
        "5",
        "--json",
        report,
        "--html",
        html,
        "--markdown",
        markdown,
        "--junit-xml",
        junit,
        "--trace-file",
        traces,
    )
    assert code == 1  # 3/10 misses pass_rate 0.8
    (scenario,) = json.loads(report.read_text(encoding="utf-8"))["scenarios"]
    rate = scenario["rate"]
    assert (rate["passes"], rate["runs"], rate["k"]) == (3, 10, 5)
    assert rate["pass_at_1"] == pytest.approx(0.3)
    assert rate["pass_at_k"] == pytest.approx(1 - 21 / 252)
    assert rate["pass_hat_k"] == 0.0
    assert rate["interval"] == pytest.approx([0.1078, 0.6032], abs=1e-4)
    line = "3/10 (30%, 95% CI 11%–60%), pass@1 0.30, pass@5 0.92, pass^5 0.00"
    assert f"RATE flaky::weather through a flaky service - {line}" in capsys.readouterr().out
    assert line in markdown.read_text(encoding="utf-8")
    assert line in html.read_text(encoding="utf-8")
    assert f"rate: {line}" in junit.read_text(encoding="utf-8")
    spans = _root_spans(traces)
    assert sorted(spans) == list(range(10))
    assert not any(key.startswith("harness.rate.") for run in range(9) for key in spans[run])
    last = spans[9]
    assert (last["harness.rate.passes"], last["harness.rate.runs"]) == (3, 10)
    assert last["harness.rate.k"] == 5
    assert last["harness.rate.pass_at_k"] == pytest.approx(1 - 21 / 252)
    assert last["harness.rate.pass_hat_k"] == 0.0


def _root_spans(path: Path) -> dict[int, dict[str, Any]]:
    """Each run's root span's attributes, by ``harness.run``, from an OTLP JSON trace file."""
    roots: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attributes = {a["key"]: _value(a["value"]) for a in span["attributes"]}
                    if "harness.run" in attributes:
                        roots[int(attributes["harness.run"])] = attributes
    return roots


def _value(value: dict[str, Any]) -> Any:
    ((kind, content),) = value.items()
    return int(content) if kind == "intValue" else content


def test_eval_traces_compares_each_trace_with_the_baseline(
    tmp_path: Path, travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    """main's traces scored by main's suite, then by the changed one, with the first report
    as the baseline: a trace whose scenario gained a metric still fails for a new reason."""
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    common = ["eval-traces", str(travel_pair.traces), "--scenarios"]
    assert main([*common, str(travel_pair.base_suite), "--json", str(base)]) == 1
    code = main(
        [*common, str(travel_pair.head_suite), "--json", str(head), "--baseline", str(base)]
    )
    assert code == 1
    section = json.loads(head.read_text(encoding="utf-8"))["comparison"]
    changes = {item["name"]: item for item in section["scenarios"]}
    moved = changes["weather at the destination, not the origin"]
    assert moved["change"] == "still_failing" and moved["trace_id"]
    assert "Compared with baseline" in capsys.readouterr().out
    assert (
        main(
            [
                *common,
                str(travel_pair.base_suite),
                "--baseline",
                str(base),
                "--fail-on",
                "any",
                "-q",
            ]
        )
        == 1
    )
    # the run fails on its own three failures; compared with itself nothing changed
    assert "no change: 20 scenarios, 3 still failing" in capsys.readouterr().out  # a trace each


@pytest.mark.parametrize("command", ["run", "eval-traces"])
def test_a_bad_baseline_is_exit_2_before_anything_runs(
    tmp_path: Path, travel_pair: TravelPair, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    newer = tmp_path / "newer.json"
    newer.write_text('{"schema_version": 99, "scenarios": []}', encoding="utf-8")
    report = tmp_path / "never.json"
    target = (
        [str(travel_pair.head_suite)]
        if command == "run"
        else [str(travel_pair.traces), "--scenarios", str(travel_pair.head_suite)]
    )
    for baseline, message in (
        (tmp_path / "missing.json", "missing.json: no such file"),
        (travel_pair.head_suite, "not JSON"),
        (newer, "report format version 99 is newer than this toolcall-harness reads"),
    ):
        code = main([command, *target, "--json", str(report), "--baseline", str(baseline)])
        captured = capsys.readouterr()
        assert code == 2
        assert f"--baseline: {baseline}" in captured.err and message in captured.err
        assert "PASSED" not in captured.out and "Traceback" not in captured.err
        assert not report.exists()  # nothing ran, nothing was written


def test_a_run_that_names_a_scenario_twice_cannot_be_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two copies of one suite pass, but their scenarios cannot be matched: exit 2, why on
    stderr; the reports are still written, without a comparison."""
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    for copy in (one, two):
        shutil.copy(SCENARIOS / "calculator.yaml", copy)
    base, report = tmp_path / "base.json", tmp_path / "head.json"
    assert _run(one, "-q", "--json", base) == 0
    assert _run(one, two, "-q", "--json", report, "--baseline", base) == 2
    err = capsys.readouterr().err
    assert "this run: 10 scenarios listed more than once" in err
    assert "calculator::parallel add and multiply at scenarios[0], scenarios[10]" in err
    assert "comparison" not in json.loads(report.read_text(encoding="utf-8"))
