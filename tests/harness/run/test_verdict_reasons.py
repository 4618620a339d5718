"""A scenario's reasons over several runs: each distinct reason once, tagged with its runs."""

from __future__ import annotations

from pathlib import Path

from harness.run.results import CheckResult, RunResult
from harness.scenarios import Scenario, iter_scenarios, load_paths
from harness.scoring import verdict
from tests.support.suites import fixture_suite


def _scenario(tmp_path: Path) -> Scenario:
    suite = fixture_suite(
        tmp_path, "- {name: twice, input: x, repeat: 3, pass_rate: 1.0, script: [{content: hi}]}\n"
    )
    return next(iter(iter_scenarios(load_paths([suite]))))


def _failed(index: int, *reasons: str) -> RunResult:
    checks = tuple(CheckResult("output", False, reason) for reason in reasons)
    return RunResult(index, False, None, checks=checks)


def test_a_reason_a_run_gives_twice_names_that_run_once(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    runs = (_failed(0, "same", "same"), _failed(1, "same", "other"), _failed(2, "other"))
    result = verdict(scenario, runs, 3, 0.0)
    assert result.reasons[:2] == ("[runs 1, 2] same", "[runs 2, 3] other")
    assert result.reasons[2].startswith("passed 0 of 3 runs")
