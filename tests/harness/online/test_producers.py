"""The processor beside another framework's instrumentation: a real OpenAI Agents SDK agent under
OpenInference, against the OpenAI stand-in on 127.0.0.1, in a process of its own
(tests/support/online_producer.py; instrumentors patch globally). The verdicts are checked
against the same rules evaluated on what the tools really executed (the tools' own ledger)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import pytest

from harness.rules import Trajectory, evaluate_rules
from tests.support.online_producer import RULES
from tests.support.paths import ROOT
from tests.support.producer_cases import CASES
from tracing.records import ToolCall

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agents") is None
    or importlib.util.find_spec("openinference.instrumentation.openai_agents") is None,
    reason="the OpenAI Agents SDK and its OpenInference instrumentor (the dev group)",
)


def _ledger_verdicts(case: str, ledger: list[list[Any]]) -> list[tuple[str, bool]]:
    """What the rules say on the calls the tools really ran (and the user's prompt)."""
    calls = tuple(
        ToolCall(name, args, status="error" if error else "ok", result=result, error=error)
        for name, args, result, error in ledger
    )
    trajectory = Trajectory(calls=calls, user_inputs=(CASES[case].prompt,))
    return [(r.rule, r.passed) for r in evaluate_rules(RULES, trajectory)]


def test_agents_sdk_traces_get_the_verdicts_of_what_the_tools_ran() -> None:
    cases = ["chain", "raising", "single"]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.online_producer", "agents-openinference", *cases],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    document = json.loads(proc.stdout.strip().splitlines()[-1])
    runs = {run["case"]: run for run in document["runs"]}
    assert set(runs) == set(cases)
    for case, run in runs.items():
        assert run["ledger"], f"{case}: no tool ran"
        found = [(rule, passed) for _, rule, passed, *_ in run["results"]]
        assert found == _ledger_verdicts(case, run["ledger"]), case
        assert {complete for *_, complete in run["results"]} == {True}
        assert len({row[5] for row in run["results"]}) == 1  # one trace per agent run
    assert [row[2] for row in runs["raising"]["results"]] == [True, True, False, True]
    assert document["violations"] == {"no explosions": 1}
    assert document["errors"] == 0
    labels = sorted((trace, name, label) for trace, name, label in document["events"])
    expected = sorted(
        (row[5], f"rule:{row[1]}", "pass" if row[2] else "fail")
        for run in runs.values()
        for row in run["results"]
    )
    assert labels == expected
