"""Reports from the one result model: match table, console, JSON, JUnit (parsed by junitparser)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from rich.console import Console

from harness.report import match_rows, render_match_table
from harness.report.console import render_console
from harness.report.json_report import SCHEMA_VERSION, render_json, write_json
from harness.report.junit import write_junit
from harness.run.results import SuiteResult
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import load_file
from tests.support.paths import FIXTURES

AGENT_FILE = FIXTURES / "fixture_agent.py"

SUITE = f"""
suite: reports
agent: {AGENT_FILE}:build
model: {{provider: scripted}}
scenarios:
  - name: passes
    input: "2 + 3"
    script: [{{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}, {{content: "5"}}]
    expect: {{tool_calls: [add]}}
  - name: fails
    input: "2 + 3"
    script:
      - tool_calls:
          - {{name: add, args: {{a: 2, b: 4}}}}
          - {{name: lookup, args: {{key: alpha, api_key: sk-123}}}}
      - content: "6 <b>"
    expect:
      tool_calls:
        - {{name: add, args: {{a: 2, b: 3}}}}
        - {{name: delete_account, args: {{account_id: {{$type: integer}}}}}}
  - name: known
    input: x
    xfail: demo is wrong here
    script: []
    expect: {{tool_calls: [add]}}
  - name: crashes
    input: x
    script: [{{content: ok}}]
    timeout: 0.000001
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> SuiteResult:
    path = tmp_path_factory.mktemp("reports") / "reports.yaml"
    path.write_text(textwrap.dedent(SUITE), encoding="utf-8")
    return run_scenarios(list(load_file(path).scenarios), RunOptions())


def test_statuses(result: SuiteResult) -> None:
    assert [s.status for s in result.scenarios] == ["passed", "failed", "xfailed", "error"]
    assert result.summary_line().startswith("1 passed, 1 failed, 1 error, 1 xfailed in ")


def test_match_table_pairs_near_misses_and_lists_unexpected_calls(result: SuiteResult) -> None:
    run = result.scenarios[1].runs[0]
    assert [(r.verdict, r.expected_index, r.actual_index) for r in match_rows(run)] == [
        ("wrong_args", 0, 0),
        ("missing", 1, None),
        ("unexpected", None, 1),
    ]
    table = render_match_table(run)
    assert table.splitlines()[0].split() == ["#", "expected", "actual", "verdict"]
    assert "1  add(a=2, b=3)" in table and "add(a=2, b=4)" in table and "wrong args" in table
    assert "/b: b=4, expected 3" in table
    assert "delete_account(account_id=$type integer)" in table and "MISSING" in table
    assert "lookup(key='alpha', api_key=***)" in table and "sk-123" not in table


def test_console_report(result: SuiteResult) -> None:
    console = Console(record=True, width=160, color_system=None)
    render_console(result, console)
    text = console.export_text()
    assert "FAILURES" in text and "reports::fails" in text
    assert "MISSING" in text and "XFAILED reports::known - demo is wrong here" in text
    assert "TimeoutError" in text
    assert text.rstrip().splitlines()[-1].strip("= ").startswith("1 passed, 1 failed, 1 error")


def test_json_report_is_versioned_and_complete(result: SuiteResult, tmp_path: Path) -> None:
    data = json.loads(write_json(result, tmp_path / "out" / "r.json").read_text("utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["counts"] == {"passed": 1, "failed": 1, "error": 1, "xfailed": 1, "xpassed": 0}
    fails = data["scenarios"][1]
    assert fails["status"] == "failed" and fails["line"] == 10
    run = fails["runs"][0]
    assert run["tool_calls"][1]["args"] == {"key": "alpha", "api_key": "***"}
    assert run["expected_tool_calls"][1]["args"] == {"account_id": {"$type": "integer"}}
    assert run["scores"][0]["name"] == "tool_call_accuracy" and run["scores"][0]["value"] == 0.0
    assert "sk-123" not in render_json(result)
    assert data["scenarios"][3]["runs"][0]["error"]["phase"] == "timeout"


def test_junit_report_parses_with_a_real_consumer(result: SuiteResult, tmp_path: Path) -> None:
    path = write_junit(result, tmp_path / "junit.xml")
    xml = JUnitXml.fromfile(str(path))
    (suite,) = list(xml)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == (
        "reports",
        4,
        1,
        1,
        1,
    )
    cases = {case.name: case for case in suite}
    assert {case.classname for case in suite} == {"reports"}
    assert cases["passes"].is_passed
    (failure,) = cases["fails"].result
    assert isinstance(failure, Failure)
    assert failure.message is not None and failure.message.startswith("tool_call_accuracy 0.00")
    assert "wrong args" in (cases["fails"].system_out or "")
    (skipped,) = cases["known"].result
    assert isinstance(skipped, Skipped) and skipped.message == "xfail: demo is wrong here"
    (error,) = cases["crashes"].result
    assert isinstance(error, Error) and error.type == "TimeoutError"


def test_streamed_json_file_equals_the_rendered_string(result: SuiteResult, tmp_path: Path) -> None:
    path = write_json(result, tmp_path / "r.json")
    assert path.read_text("utf-8") == render_json(result) + "\n"


def test_redactor_is_applied_at_render_time_only(result: SuiteResult) -> None:
    from harness.redaction import Redactor
    from harness.report.junit import render_junit

    fails = result.scenarios[1]
    assert fails.runs[0].calls[1].args["api_key"] == "sk-123"  # scoring kept the real value
    custom = Redactor(["key"])  # masks api_key and key
    for text in (render_json(result, redactor=custom), render_junit(result, redactor=custom)):
        assert "sk-123" not in text and "alpha" not in text
    console = Console(record=True, width=200)
    render_console(result, console, redactor=custom)
    assert "alpha" not in console.export_text()
    # with no keys at all, nothing is masked: the redactor really is the one in charge
    assert "sk-123" in render_json(result, redactor=Redactor([]))


def test_stream_writers_masked_per_result_match_the_whole_suite_render(
    result: SuiteResult, tmp_path: Path
) -> None:
    """Results added one by one (each masked on its own) give render_json's text and JUnit."""
    from harness.report.json_report import JsonReportWriter
    from harness.report.junit import JunitReportWriter, render_junit

    json_writer = JsonReportWriter(tmp_path / "r.json")
    junit_writer = JunitReportWriter(tmp_path / "r.xml")
    for scenario in result.scenarios:
        json_writer.add(scenario)
        junit_writer.add(scenario)
    assert junit_writer.totals == {"tests": 4, "failures": 1, "errors": 1, "skipped": 1}
    text = json_writer.close(result).read_text("utf-8")
    assert text == render_json(result) + "\n" and "sk-123" not in text
    xml_text = junit_writer.close(result).read_text("utf-8")
    assert xml_text == render_junit(result) + "\n" and "sk-123" not in xml_text
    xml = JUnitXml.fromfile(str(tmp_path / "r.xml"))
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (4, 1, 1, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.xml"]


def test_aborted_writers_leave_nothing(result: SuiteResult, tmp_path: Path) -> None:
    from harness.report.json_report import JsonReportWriter
    from harness.report.junit import JunitReportWriter

    for writer in (JsonReportWriter(tmp_path / "r.json"), JunitReportWriter(tmp_path / "r.xml")):
        writer.add(result.scenarios[1])
        writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_stream_scrubber_remembers_secrets_of_earlier_results(result: SuiteResult) -> None:
    """A secret seen under a redacted key in one result is scrubbed from a later one's text."""
    from dataclasses import replace

    from harness.redaction import StreamScrubber
    from harness.report.json_report import scenario_dict

    stream = StreamScrubber()
    stream.for_result(result.scenarios[1])  # its lookup call carries api_key=sk-123
    later = replace(result.scenarios[0], reasons=("the agent echoed sk-123 back",))
    assert scenario_dict(later, stream.for_result(later))["reasons"] == [
        "the agent echoed *** back"
    ]


def test_result_sample_prefers_what_did_not_pass(result: SuiteResult) -> None:
    from harness.report.json_report import suite_dict
    from harness.run.results import ResultSample

    passed, failed, xfailed, error = result.scenarios
    sample = ResultSample(2)
    for item in (passed, passed, failed, passed, error, xfailed):
        sample.add(item)
    assert sample.scenarios == (failed, error)  # both passes made room, in arrival order
    assert sample.omitted == {"passed": 3, "xfailed": 1}
    summary = SuiteResult(scenarios=sample.scenarios, omitted=sample.omitted)
    assert summary.counts == {"passed": 3, "failed": 1, "error": 1, "xfailed": 1, "xpassed": 0}
    assert summary.total == 6 and summary.omitted_total == 4 and not summary.ok
    assert suite_dict(summary)["omitted"] == {
        "passed": 3,
        "failed": 0,
        "error": 0,
        "xfailed": 1,
        "xpassed": 0,
    }
    assert "omitted" not in suite_dict(result)
    assert ResultSample(None).limit is None
    with pytest.raises(ValueError, match="limit=-1"):
        ResultSample(-1)


def test_console_counts_what_a_sample_left_out(result: SuiteResult) -> None:
    sampled = SuiteResult(scenarios=result.scenarios[1:2], omitted={"passed": 5, "error": 2})
    console = Console(record=True, width=160, color_system=None)
    render_console(sampled, console)
    text = console.export_text()
    assert "7 more not shown" in text
    assert "2 more failed or errored not shown here" in text
    assert text.rstrip().splitlines()[-1].strip("= ").startswith("5 passed, 1 failed, 2 error")


def test_stream_scrubber_always_masks_a_results_own_secrets(result: SuiteResult) -> None:
    """However many secrets came before, a result's own are scrubbed from its own text."""
    from dataclasses import replace

    from harness import redaction
    from harness.metrics.base import Score
    from harness.report.json_report import scenario_dict
    from harness.run.results import RunResult
    from harness.sample import Sample
    from tracing.records import ToolCall

    stream = redaction.StreamScrubber()
    for index in range(redaction._REMEMBERED_SECRETS + 10):  # fill the memory with long ones
        call = ToolCall("auth", {"token": f"a-long-remembered-secret-{index:04d}"})
        run = RunResult(0, True, Sample(tool_calls=[call]))
        stream.for_result(replace(result.scenarios[0], runs=(run,)))
    call = ToolCall("auth", {"token": "tok-9"})
    score = Score("tool_call_accuracy", 0.0, 1.0, False, "called auth with tok-9")
    run = RunResult(0, False, Sample(tool_calls=[call]), scores=(score,))
    own = replace(result.scenarios[1], runs=(run,), reasons=("tok-9 leaked",))
    data = scenario_dict(own, stream.for_result(own))
    assert data["reasons"] == ["*** leaked"]
    assert data["runs"][0]["scores"][0]["reason"] == "called auth with ***"


# --- one view model, one redaction rule ---------------------------------------------------


def _secret_result(secret: str) -> SuiteResult:
    """A failed run whose call carries ``secret`` under a secret key, echoed in free text."""
    from harness.metrics.base import Score
    from harness.run.results import ErrorInfo, RunResult, ScenarioResult
    from harness.sample import Sample
    from tracing.records import ToolCall

    call = ToolCall("login", {"user": "ada", "token": secret}, result=f"welcome {secret}")
    sample = Sample(
        tool_calls=[call],
        expected_tool_calls=[{"name": "login", "args": {"user": "bob"}}],
        output=f"I used {secret} to log in",
    )
    score = Score("tool_call_accuracy", 0.0, 1.0, False, f"login sent {secret}")
    error = ErrorInfo("E", f"bad token {secret}", f"Traceback: {secret}")
    run = RunResult(0, False, sample, scores=(score,), error=error)
    scenario = ScenarioResult("s", "n", "f.yaml", 1, "error", (run,), reasons=(f"{secret} leaked",))
    return SuiteResult(scenarios=(scenario,), warnings=(f"saw {secret}",))


def test_a_three_character_secret_is_scrubbed_from_every_report() -> None:
    """One collector, one minimum length: console, JSON, JUnit and HTML mask the same."""
    from harness.redaction import MIN_SECRET_LENGTH
    from harness.report.html import render_html
    from harness.report.junit import render_junit

    secret = "Q7z"
    assert len(secret) == MIN_SECRET_LENGTH
    result = _secret_result(secret)
    console = Console(record=True, width=200, color_system=None)
    render_console(result, console)
    reports = {
        "console": console.export_text(),
        "json": render_json(result),
        "junit": render_junit(result),
        "html": render_html(result),
    }
    for name, text in reports.items():
        assert secret not in text, name
        assert "ada" in text or name == "console", name  # plain values are left alone
    assert "*** leaked" in reports["console"] and "*** leaked" in reports["json"]


def test_match_rows_follow_the_pairing_a_metric_recorded() -> None:
    """The view pairs as the metric did; it computes a matching only when none was recorded."""
    from harness.metrics.base import Details, Pair, Score
    from harness.run.results import RunResult
    from harness.sample import Sample
    from tracing.records import ToolCall

    calls = [ToolCall("add", {"a": 1}), ToolCall("add", {"a": 1})]
    sample = Sample(tool_calls=calls, expected_tool_calls=[{"name": "add", "args": {"a": 1}}])
    recorded = Details((Pair(0, 1),), (), (0,))
    score = Score("custom", 1.0, 1.0, True, "paired the second call", recorded)
    with_score = RunResult(0, True, sample, scores=(score,))
    rows = [(r.verdict, r.expected_index, r.actual_index) for r in match_rows(with_score)]
    assert rows == [("ok", 0, 1), ("unexpected", None, 0)]
    computed = [
        (r.verdict, r.expected_index, r.actual_index)
        for r in match_rows(with_score.__class__(0, True, sample))
    ]
    assert computed == [("ok", 0, 0), ("unexpected", None, 1)]


def test_view_rows_carry_structured_diffs_from_the_check_and_the_metrics(
    result: SuiteResult,
) -> None:
    from harness.metrics.base import Details, Pair, Score
    from harness.redaction import Scrubber
    from harness.report.view import run_view
    from harness.values import ABSENT, ArgDiff

    run = result.scenarios[1].runs[0]
    (wrong, missing, unexpected) = run_view(run, Scrubber()).rows
    (diff,) = wrong.diffs
    assert (diff.path, diff.code, diff.expected, diff.actual, diff.source) == (
        "/b",
        "wrong_args",
        "3",
        "4",
        "",
    )
    assert diff.reason == "b=4, expected 3" and not diff.masked and diff.top == "b"
    assert missing.diffs == () and unexpected.note is None
    # a failing metric's diffs for the pair follow, under its name, one per (path, code)
    same = ArgDiff("/b", 3, 4, "wrong_args", "b is 4")
    extra = ArgDiff("/c", ABSENT, 5, "extra_arg", "c was not expected")
    details = Details((Pair(0, 0, (same, extra)),), (1,), (1,))
    strict = Score("strict_metric", 0.5, 1.0, False, "extra c", details)
    scored = type(run)(0, False, run.sample, scores=(*run.scores, strict))
    (row, *_) = run_view(scored, Scrubber()).rows
    assert [(d.path, d.code, d.source) for d in row.diffs] == [
        ("/b", "wrong_args", ""),
        ("/c", "extra_arg", "strict_metric"),
    ]
    assert row.diffs[1].expected == "<absent>" and row.diffs[1].actual == "5"
    assert "c was not expected" not in render_match_table(scored)  # the table: own diffs only


def test_the_feed_builds_one_view_per_result_and_drops_a_broken_reporter(
    result: SuiteResult,
) -> None:
    from harness.report.base import ReportFeed
    from harness.report.view import ScenarioView, SuiteView

    class Collect:
        def __init__(self) -> None:
            self.seen: list[ScenarioView] = []
            self.summary: SuiteView | None = None

        def add(self, view: ScenarioView) -> None:
            self.seen.append(view)

        def close(self, summary: SuiteView) -> None:
            self.summary = summary

        def abort(self) -> None:
            raise AssertionError("not aborted")

    class Broken(Collect):
        aborted = False

        def add(self, view: ScenarioView) -> None:
            raise OSError(28, "No space left on device")

        def abort(self) -> None:
            self.aborted = True

    first, second, broken = Collect(), Collect(), Broken()
    failures: list[tuple[object, Exception]] = []
    feed = ReportFeed.for_suite(
        [first, broken, second], result, failed=lambda r, e: failures.append((r, e))
    )
    assert feed.run(result) == []
    assert [v.id for v in first.seen] == [s.id for s in result.scenarios]
    assert all(a is b for a, b in zip(first.seen, second.seen, strict=True))  # built once
    assert first.summary is second.summary and first.summary is not None
    assert first.summary.counts == result.counts and "sk-123" not in repr(first.seen)
    assert broken.aborted and [r for r, _ in failures] == [broken]
