"""A run left paused on an interrupt, and each turn's end, in every report (view model up).

The real human-in-the-loop demo (harness/demo/approvals.py: ``create_agent`` on a checkpointer,
``send_payment`` calls ``interrupt()``), run by the runner; the console, JSON, JUnit and HTML
reports render the same :class:`~harness.report.view.RunView`.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from harness.redaction import DEFAULT_REDACT_KEYS, Redactor, Scrubber
from harness.report.console import render_console
from harness.report.html import render_html
from harness.report.json_report import render_json
from harness.report.junit import render_junit
from harness.report.view import run_view
from harness.run.results import SuiteResult
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import iter_scenarios, load_file, load_paths
from tests.support.paths import ROOT, documentation

CAROL = {"action": "send_payment", "payee_name": "Carol White", "amount": 40.0}
CAROL_TEXT = "{'action': 'send_payment', 'payee_name': 'Carol White', 'amount': 40.0}"
WAITING = "balance then payment, left waiting for the reviewer"

FAILING = """
suite: held
agent: harness.demo.approvals:build
model: {provider: demo}
defaults: {timeout: 20}
scenarios:
  - name: payment never approved
    turns:
      - input: "Send 70 EUR to customer Dan Moss"
    expect:
      output: {$contains: "sent"}
"""


@pytest.fixture(scope="module")
def approvals() -> SuiteResult:
    suite = load_file(ROOT / "scenarios" / "approvals.yaml")
    return run_scenarios(list(suite.scenarios), RunOptions(concurrency=2))


def _console(result: SuiteResult, redactor: Redactor | None = None) -> str:
    buffer = io.StringIO()
    render_console(result, Console(file=buffer, width=240, color_system=None), redactor=redactor)
    return buffer.getvalue()


def test_the_view_carries_the_pause_and_each_turn(approvals: SuiteResult) -> None:
    by_name = {s.name: s for s in approvals.scenarios}
    scrubber = Scrubber.for_suite(None, approvals)
    waiting = run_view(by_name[WAITING].runs[0], scrubber)
    assert waiting.paused == (CAROL,)
    assert waiting.paused_text == CAROL_TEXT
    assert [(t.index, t.paused) for t in waiting.turns] == [(0, ()), (1, (CAROL,))]
    approved = run_view(by_name["approved payment is sent"].runs[0], scrubber)
    assert approved.paused == () and approved.paused_text is None
    assert [bool(t.paused) for t in approved.turns] == [True, False]


def test_json_has_paused_and_turns_per_run(approvals: SuiteResult) -> None:
    data = json.loads(render_json(approvals))
    runs = {s["name"]: s["runs"][0] for s in data["scenarios"]}
    assert runs[WAITING]["paused"] == [CAROL]
    assert runs[WAITING]["turns"] == [{"turn": 1, "paused": []}, {"turn": 2, "paused": [CAROL]}]
    assert runs["approved payment is sent"]["paused"] == []
    assert runs["approved payment is sent"]["turns"][0]["paused"][0]["payee_name"] == (
        "Alice Martin"
    )


def test_console_junit_and_html_show_a_passing_run_left_paused(approvals: SuiteResult) -> None:
    out = _console(approvals)
    assert f"PAUSED approvals::{WAITING} - paused: {CAROL_TEXT}" in out
    assert out.count("PAUSED ") == 1  # the others finished

    cases = {c.get("name"): c for c in ET.fromstring(render_junit(approvals)).iter("testcase")}
    output = cases[WAITING].findtext("system-out") or ""
    assert output.splitlines()[-1] == f"paused: {CAROL_TEXT}"
    assert "paused:" not in (cases["approved payment is sent"].findtext("system-out") or "")

    html = render_html(approvals)
    carol = re.escape(CAROL_TEXT.replace("'", "&#x27;"))
    assert re.search(rf"<dt>paused</dt><dd>{carol}</dd>", html)
    assert html.count("<dt>paused</dt>") == 1
    assert "<dt>turns</dt><dd>2: 1 finished, 2 paused</dd>" in html
    assert "<dt>turns</dt><dd>2: 1 paused, 2 finished</dd>" in html


def test_a_failing_paused_run_says_on_what_and_payloads_are_masked(tmp_path: Path) -> None:
    path = tmp_path / "held.yaml"
    path.write_text(textwrap.dedent(FAILING), encoding="utf-8")
    result = run_scenarios(list(load_file(path).scenarios), RunOptions())
    (scenario,) = result.scenarios
    assert scenario.status == "failed" and scenario.runs[0].paused

    out = _console(result)
    failure = out.split("FAILURES", 1)[1]
    dan = "{'action': 'send_payment', 'payee_name': 'Dan Moss', 'amount': 70.0}"
    assert f"paused: {dan}" in failure
    junit = ET.fromstring(render_junit(result))
    (case,) = junit.iter("testcase")
    failed = case.find("failure")
    assert failed is not None and f"paused: {dan}" in (failed.text or "")

    hidden = Redactor((*DEFAULT_REDACT_KEYS, "payee_name"))
    for text in (
        _console(result, hidden),
        render_json(result, redactor=hidden),
        render_junit(result, redactor=hidden),
        render_html(result, redactor=hidden),
    ):
        assert "Dan Moss" not in text
    data = json.loads(render_json(result, redactor=hidden))
    assert data["scenarios"][0]["runs"][0]["paused"] == [
        {"action": "send_payment", "payee_name": "***", "amount": 70.0}
    ]


def test_readme_counts_the_shipped_scenarios_and_agents() -> None:
    readme = documentation()
    found = re.search(r"(\d+) scenarios over\s+(\w+) real", readme)
    assert found is not None
    scenarios = list(iter_scenarios(load_paths([ROOT / "scenarios"])))
    agents = {scenario.agent.spec for scenario in scenarios}
    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    assert (int(found[1]), words[found[2]]) == (len(scenarios), len(agents))
