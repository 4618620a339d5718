"""Policies on traces other producers wrote: the OpenAI Agents SDK under OpenInference and
Pydantic AI's own instrumentation, run for real against the local OpenAI stand-in
(tests/support/producer_run.py, one process per producer: instrumentors patch globally).

The tools count their own executions (tests/support/producer_cases.py): the counts of the
policy report are checked against that ledger, not against what the reader read.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.paths import ROOT
from tests.support.producer_cases import CASES

pytestmark = pytest.mark.slow

PRODUCERS = {
    "pydantic-ai": "pydantic_ai",
    "agents-openinference": "openinference.instrumentation.openai_agents",
}
_RUN = """
import json, sys
from pathlib import Path
from tests.support.producer_run import run_all
document = run_all(sys.argv[1], Path(sys.argv[2]))
print(json.dumps([[r["case"], r["traces"], [e[0] for e in r["ledger"]]] for r in document["runs"]]))
"""

POLICY = """
policies:
  - name: calc agent
    select: {agent: calc}
    rules:
      - {name: never explode, forbid: explode}
      - {name: lookup before order, before: {first: lookup, then: get_order}}
      - {name: order ids grounded, grounded: {tool: get_order, args: order_id}}
  - name: pydantic
    select: {service: producers-pydantic-ai, uses_tool: "[al]*"}
    rules:
      - {name: one add, max_calls: {tool: add, max: 1}}
"""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Any]]]:
    """producer -> (its spans file, [[case, traces, executed tool names]])."""
    out: dict[str, tuple[Path, list[Any]]] = {}
    for producer, module in PRODUCERS.items():
        if not _installed(module):
            continue
        folder = tmp_path_factory.mktemp(producer)
        proc = subprocess.run(
            [sys.executable, "-c", _RUN, producer, str(folder)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[producer] = (folder / "spans.jsonl", json.loads(proc.stdout.strip().splitlines()[-1]))
    if not out:
        pytest.skip("neither producer is installed")
    return out


def test_policies_score_other_producers_traces_as_their_tools_ran(
    produced: dict[str, tuple[Path, list[Any]]], tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(textwrap.dedent(POLICY), encoding="utf-8")
    report = tmp_path / "r.json"
    files = [str(path) for path, _ in produced.values()]
    argv = ["eval-traces", *files, "--rules", str(policy), "--json", str(report), "-q"]
    assert main([*argv, "--examples", "5"]) == 1  # explode ran: an error rule violated
    data = json.loads(report.read_text(encoding="utf-8"))
    traces = {p: sum(case[1] for case in cases) for p, (_, cases) in produced.items()}
    exploded = sum(
        case[1] for _, cases in produced.values() for case in cases if "explode" in case[2]
    )
    assert data["traces"] == sum(traces.values())
    calc, pydantic = data["policies"]
    assert calc["selected"] == sum(traces.values()) and data["unselected"] == 0
    rules = {rule["rule"]: rule for rule in calc["rules"]}
    assert exploded == len(produced)  # one raising case per producer
    assert rules["never explode"]["violations"] == exploded
    assert {e["call"]["name"] for e in rules["never explode"]["examples"]} == {"explode"}
    # the chain's order id came from lookup's result: both producers carry results, in order
    for name in ("lookup before order", "order ids grounded"):
        assert rules[name]["violations"] == 0 and rules[name]["unevaluable"] == 0, rules[name]
        assert rules[name]["evaluated"] == sum(traces.values())
    # Pydantic AI's traces whose model called add or lookup, run or not (single, parallel,
    # chain, and malformed: its add never ran, the model still called it)
    expected = 0
    if "pydantic-ai" in produced:
        expected = sum(
            case[1]
            for case in produced["pydantic-ai"][1]
            if {"add", "lookup"} & {c.name for c in CASES[case[0]].scripted_calls()}
        )
        assert expected == 4
    assert pydantic["selected"] == expected
    assert pydantic["rules"][0]["violations"] == 0
