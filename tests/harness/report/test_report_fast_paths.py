"""The per-result shortcuts of the reports give what the long way gives, and mask as much.

A large ``eval-traces`` stream is mostly lean passing results: their views share one score
view per scrubber, short strings are scrubbed once per scrubber, the JUnit testcases are
written without ElementTree, and the console details only the first results that did not
pass (docs/architecture.md, "Reporter").
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from harness.metrics.base import Score
from harness.redaction import Redactor, Scrubber, StreamScrubber
from harness.report.console import DETAILED, render_console
from harness.report.junit import _case_text, _testcase
from harness.report.view import scenario_view
from harness.run.results import (
    CheckResult,
    ErrorInfo,
    RunResult,
    ScenarioResult,
    Status,
    SuiteResult,
)
from harness.sample import Sample
from harness.scenarios import iter_scenarios, load_paths
from harness.traces.evaluate import evaluate_traces
from tests.support.eval_golden import GOLDEN, SUITE
from tracing.records import ToolCall


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[ScenarioResult]:
    """Every result of the golden recorded file (passes, diffs, a forbidden call, secrets)."""
    folder = tmp_path_factory.mktemp("fast")
    agent = folder / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = folder / "scenarios.yaml"
    suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([str(suite)])))
    results: list[ScenarioResult] = []
    evaluate_traces([GOLDEN / "recorded.jsonl"], scenarios, progress=results.append)
    return results


def _tree_text(view: object) -> str:
    case = _testcase(view)  # type: ignore[arg-type]
    ET.indent(case, space="  ", level=2)
    return "    " + ET.tostring(case, encoding="unicode") + "\n"


HOSTILE = "a & b <c> \"q\" 's' \r\n\t end \x01 ü ‮ ]]> &amp;"


def test_a_testcase_with_content_is_written_as_elementtree_writes_it(
    recorded: list[ScenarioResult],
) -> None:
    scrubber = Scrubber.for_runs(None, (run for r in recorded for run in r.runs))
    statuses = set()
    for result in recorded:
        view = scenario_view(result, scrubber)
        statuses.add(view.status)
        assert _case_text(view) == _tree_text(view)
    assert {"passed", "failed"} <= statuses
    error = ErrorInfo("Boom" + HOSTILE, HOSTILE, "Traceback:\n  " + HOSTILE, "run")
    runs = (RunResult(0, False, error=error),)
    cases: list[tuple[Status, str | None]] = [
        ("failed", None),
        ("error", None),
        ("xfailed", HOSTILE),
        ("xfailed", ""),
    ]
    for status, xfail in cases:
        odd = ScenarioResult(
            "s" + HOSTILE, "n" + HOSTILE, 'f&<">.yaml', 3, status, runs, xfail=xfail
        )
        odd = replace(odd, reasons=(HOSTILE, "second"))
        view = scenario_view(odd, Scrubber())
        assert _case_text(view) == _tree_text(view)


def _passing(name: str, reason: str, trace: str) -> ScenarioResult:
    score = Score("tool_call_accuracy", 1.0, 1.0, True, reason)
    check = CheckResult("forbid", True, f"no call of delete ({reason})")
    run = RunResult(0, True, None, (score,), (check,), trace_id=trace)
    return ScenarioResult("s", name, "f.yaml", 1, "passed", (run,), trace_id=trace)


def test_shared_passing_views_are_masked_by_the_scrubber_that_knows_the_secret() -> None:
    """A passing score's view is remembered per scrubber: a secret learnt later in the stream
    is masked in the results after it, as it was before views were shared."""
    secret = "tok-very-secret-9"
    stream = StreamScrubber(Redactor())
    first = _passing("a", f"saw {secret}", "1" * 32)
    before = scenario_view(first, stream.for_result(first))
    call = ToolCall("login", {"user": "bob", "token": secret})
    run = RunResult(0, False, Sample(tool_calls=[call]), error=ErrorInfo("E", "m", "", "run"))
    stream.for_result(ScenarioResult("s", "x", "f.yaml", 1, "error", (run,)))  # learns it
    later = _passing("b", f"saw {secret}", "2" * 32)
    view = scenario_view(later, stream.for_result(later))
    assert secret in before.runs[0].scores[0].reason  # not yet known: as before
    assert secret not in view.runs[0].scores[0].reason
    assert secret not in view.runs[0].checks[0].reason
    again = scenario_view(later, stream.for_result(later))
    assert again.runs[0].scores[0] is view.runs[0].scores[0]  # one view per scrubber
    assert again.runs[0].scores[0].details == {
        "pairs": [],
        "unmatched_expected": [],
        "unmatched_actual": [],
        "issues": [],
    }


def test_a_scrubbers_text_cache_masks_every_time_and_keeps_unchanged_strings() -> None:
    scrubber = Scrubber(Redactor(), ["sk-cached-secret"])
    text = "key sk-cached-secret here"
    for _ in range(3):
        assert scrubber.text("".join(list(text))) == "key *** here"
        assert scrubber.redacted_text("".join(list(text))) == "key *** here"
    plain = "".join(list("nothing to hide"))
    assert scrubber.text(plain) is plain and scrubber.redacted_text(plain) is plain
    assert scrubber.value('{"token": "abc123"}') == '{"token": "***"}'
    assert scrubber.value("x" * 200_000).endswith("… <100,000 more characters>")


def test_scores_equal_as_numbers_keep_their_own_json() -> None:
    """1 and 1.0 are one dictionary key: the shared views tell them apart."""
    scrubber = Scrubber()
    views = []
    for value in (1, 1.0):
        run = RunResult(0, True, None, (Score("m", value, 1.0, True, "ok"),))
        views.append(scenario_view(ScenarioResult("s", "n", "f", 1, "passed", (run,)), scrubber))
    assert [type(v.runs[0].scores[0].value) for v in views] == [int, float]


def _many(passing: int, failing: int) -> SuiteResult:
    scenarios = []
    for index in range(passing + failing):
        failed = index >= passing
        score = Score("tool_call_accuracy", 0.0 if failed else 1.0, 1.0, not failed, "r")
        run = RunResult(0, not failed, None, (score,))
        reasons = (f"tool_call_accuracy 0.00 < 1.00: case {index}",) if failed else ()
        status: Status = "failed" if failed else "passed"
        scenarios.append(
            ScenarioResult(
                "many", f"case {index:03d}", "m.yaml", 1, status, (run,), reasons=reasons
            )
        )
    return SuiteResult(scenarios=tuple(scenarios), duration=1.0)


def _console(result: SuiteResult, max_rows: int | None) -> str:
    console = Console(record=True, width=160, color_system=None)
    render_console(result, console, max_rows=max_rows)
    return console.export_text()


def test_a_large_run_details_only_the_first_failures() -> None:
    text = _console(_many(40, 30), max_rows=50)
    sections = [line for line in text.splitlines() if line.startswith("_") and "many::" in line]
    assert len(sections) == DETAILED
    assert "case 059" in text and "case 060" not in text  # the first DETAILED, in order
    assert f"{30 - DETAILED} more failed or errored not shown here" in text
    assert sum(line.startswith("FAILED many::") for line in text.splitlines()) == DETAILED
    assert f"{70 - DETAILED} more not shown" in text  # the table caption
    assert text.rstrip().splitlines()[-1].strip("= ").startswith("40 passed, 30 failed")


def test_a_run_within_the_limit_prints_every_failure() -> None:
    text = _console(_many(20, 25), max_rows=50)
    assert sum(line.startswith("FAILED many::") for line in text.splitlines()) == 25
    assert "not shown here" not in text and "case 000" in text  # every row, passes too
    unlimited = _console(_many(40, 30), max_rows=None)  # harness run -v
    assert sum(line.startswith("FAILED many::") for line in unlimited.splitlines()) == 30


def test_the_console_of_a_large_stream_stays_short(tmp_path: Path) -> None:
    """``eval-traces`` keeps 500 results for the console: it renders DETAILED of them."""
    result = _many(300, 500)
    sampled = SuiteResult(scenarios=result.scenarios[300:], omitted={"passed": 300}, duration=1.0)
    text = _console(sampled, max_rows=200)
    assert f"{500 - DETAILED} more failed or errored not shown here" in text
    assert len(text.splitlines()) < 40 * DETAILED
    assert textwrap.dedent(text).count("FAILED many::") == DETAILED
