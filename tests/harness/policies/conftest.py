"""Real traces for the policy tests: ``harness run --trace-file`` on the shipped demo suites.

The orders agent (a real LangGraph agent over SQLite, the demo model) runs under
``OTEL_SERVICE_NAME=shop``, the calculator (scripted model) under ``calc``; each run's live JSON
report says which tools each trace really called, the reference the policy counts are checked
against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.paths import ROOT


@dataclass(frozen=True)
class Recorded:
    """A trace file of one suite's run, and what its live report says each trace called."""

    path: Path
    tools: dict[str, list[str]]
    """trace id -> the names of the tools its run called, in order."""
    scenarios: dict[str, str]
    """trace id -> the scenario name."""


def record(folder: Path, suite: str, service: str, mp: pytest.MonkeyPatch) -> Recorded:
    """Run ``scenarios/<suite>.yaml`` with its spans written to a file; the file and the calls."""
    trace, live = folder / f"{suite}.jsonl", folder / f"{suite}.json"
    mp.setenv("OTEL_SERVICE_NAME", service)
    argv = ["run", str(ROOT / "scenarios" / f"{suite}.yaml"), "-q", "--workers", "1"]
    code = main([*argv, "--trace-file", str(trace), "--json", str(live)])
    assert code == 0, f"harness run {suite} exited {code}"
    report: dict[str, Any] = json.loads(live.read_text(encoding="utf-8"))
    tools: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for scenario in report["scenarios"]:
        for run in scenario["runs"]:
            tools[run["trace_id"]] = [call["name"] for call in run["tool_calls"]]
            names[run["trace_id"]] = scenario["name"]
    return Recorded(trace, tools, names)


@pytest.fixture(scope="session")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The orders suite's traces (service ``shop``, agent ``orders``)."""
    with pytest.MonkeyPatch.context() as mp:
        return record(tmp_path_factory.mktemp("shop"), "orders", "shop", mp)


@pytest.fixture(scope="session")
def calc(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The calculator suite's traces (service ``calc``, agent ``calculator``)."""
    with pytest.MonkeyPatch.context() as mp:
        return record(tmp_path_factory.mktemp("calc"), "calculator", "calc", mp)
