"""Token budgets on a real provider client: recorded through ``langchain-openai`` against the
local stand-in (``tests/support/openai_server.py``), then replayed offline from the cassettes,
the recorder's usage gives the same figures both times."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.openai_server import API_KEY, StandIn, record, serving, write_project

pytest.importorskip("langchain_openai")

RULES = """defaults:
  rules:
    - name: token budget
      budget: {total_tokens: 1, model_calls: 1}
      severity: warn
    - name: generous
      budget: {total_tokens: 100000, input_tokens: 100000, output_tokens: 100000}
scenarios:"""


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    yield from serving()


def warnings_of(report: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Per scenario, the (check, reason) of every failed warn check of its runs."""
    return {
        scenario["name"]: [
            (check["name"], check["reason"])
            for run in scenario["runs"]
            for check in run["checks"]
            if check["severity"] == "warn" and not check["passed"]
        ]
        for scenario in report["scenarios"]
    }


def test_recorded_and_replayed_runs_report_the_same_token_totals(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_project(tmp_path, standin.url, more=f", api_key: {API_KEY}")
    suite.write_text(suite.read_text().replace("scenarios:", RULES, 1), encoding="utf-8")
    done = record(tmp_path, str(suite), "--record", "--json", "record.json")
    assert done.returncode == 0, done.stdout + done.stderr  # a warn rule never fails the run
    recorded = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    seen = standin.count()

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):  # offline: no key, no client package
        monkeypatch.delenv(name, raising=False)
    for module in [m for m in sys.modules if m.split(".")[0] in ("langchain_openai", "openai")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(suite), "--replay", "--json", "replay.json"]) == 0
    replayed = json.loads((tmp_path / "replay.json").read_text(encoding="utf-8"))
    assert standin.count() == seen  # the replay never reached the server

    assert warnings_of(replayed) == warnings_of(recorded)
    for name, found in warnings_of(recorded).items():
        [(check, reason)] = found
        assert check == "rule:token budget", name
        # the stand-in reports usage on both model calls (a tool call, then the answer)
        match = re.fullmatch(r"over budget: model_calls 2 > 1; total_tokens ([\d,]+) > 1", reason)
        assert match is not None, reason
        assert int(match.group(1).replace(",", "")) > 20
    assert recorded["rule_warnings"] == replayed["rule_warnings"] == 2
    assert recorded["summary"].startswith("2 passed, 2 warnings")
