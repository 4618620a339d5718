"""``harness run -n N`` when a worker process dies under a scenario, and ``-x`` across workers.

The agents are real ``create_agent`` graphs with real tools; a tool ends its own process the
way a misbehaving one would (``os._exit``, a signal), which no exception handler can contain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.parallel.runs import CRASH_ERROR, run_scenarios_in_workers
from harness.run.results import ScenarioResult
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import iter_scenarios, load_paths
from tests.harness.parallel.test_run_workers import run_cli

AGENT = '''
import os
import signal
import time

from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    if key == "exit":
        os._exit(7)
    if key == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if key.startswith("slow"):
        time.sleep(0.4)
    return f"value of {key}"


def build(model):
    return create_agent(model, [lookup])
'''


def _scenario(name: str, key: str, expected: str | None = None) -> str:
    want = expected or key
    return (
        f"  - {{name: {name}, input: 'look up {key}', "
        f"script: [{{tool_calls: [{{name: lookup, args: {{key: {key}}}}}]}}, {{content: done}}], "
        f"expect: {{tool_calls: [{{name: lookup, args: {{key: {want}}}}}]}}}}"
    )


def write_suite(folder: Path, scenarios: list[str]) -> Path:
    """A suite over the lookup agent above, one scenario per line of ``scenarios``."""
    (folder / "lookup_agent.py").write_text(AGENT, encoding="utf-8")
    head = ["suite: crashes", "agent: lookup_agent.py:build", "model: {provider: scripted}"]
    path = folder / "crashes.yaml"
    path.write_text("\n".join([*head, "scenarios:", *scenarios]) + "\n", encoding="utf-8")
    return path


def _load(path: Path) -> list[Any]:
    return list(iter_scenarios(load_paths([path])))


def _by_name(report: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {s["name"]: s for s in data["scenarios"]}


def test_a_scenario_that_exits_its_worker_is_an_error_and_every_other_one_runs(
    tmp_path: Path,
) -> None:
    lines = [_scenario(f"s{i}", f"k{i}") for i in range(6)]
    lines.insert(2, _scenario("exits", "exit"))
    suite = write_suite(tmp_path, lines)
    report = tmp_path / "report.json"
    proc = run_cli(str(suite), "-n", "2", "--concurrency", "4", "--json", str(report))
    assert proc.returncode == 1, proc.stderr  # a failure, not a crash of the harness
    assert "Traceback" not in proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [s["name"] for s in data["scenarios"]] == ["s0", "s1", "exits", "s2", "s3", "s4", "s5"]
    assert data["not_run"] == 0 and data["counts"]["passed"] == 6
    dead = _by_name(report)["exits"]
    assert dead["status"] == "error"
    error = dead["runs"][0]["error"]
    assert error["type"] == CRASH_ERROR and "exited with code 7" in error["message"]
    assert "WorkerCrashed" in proc.stdout and "exited with code 7" in proc.stdout


def test_a_scenario_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [_scenario("fine", "a"), _scenario("killed", "kill")])
    report = tmp_path / "report.json"
    proc = run_cli(str(suite), "-n", "2", "--json", str(report))
    assert proc.returncode == 1, proc.stderr
    message = _by_name(report)["killed"]["runs"][0]["error"]["message"]
    assert "was killed by SIGKILL" in message and "out-of-memory" in message
    assert _by_name(report)["fine"]["status"] == "passed"


def test_the_scenarios_beside_a_crash_keep_their_own_results(tmp_path: Path) -> None:
    # Four at a time per worker: when "exits" kills its worker, its neighbours are mid-run
    # (each sleeps 0.4 s) in that worker and in the other one, which the executor stops.
    lines = [_scenario(f"slow{i}", f"slow{i}") for i in range(7)]
    lines.insert(1, _scenario("exits", "exit"))
    lines.append(_scenario("wrong", "slow9", expected="other"))
    scenarios = _load(write_suite(tmp_path, lines))
    seen: list[ScenarioResult] = []
    started: list[int] = []
    options = RunOptions(concurrency=8, progress=seen.append, on_start=started.append)
    result = run_scenarios_in_workers(scenarios, options, workers=2)
    names = [s.name for s in scenarios]
    assert [s.name for s in result.scenarios] == names
    assert sorted(r.name for r in seen) == sorted(names)  # each result reported once
    assert set(started) == set(range(len(names)))
    statuses = {s.name: s.status for s in result.scenarios}
    assert statuses.pop("exits") == "error" and statuses.pop("wrong") == "failed"
    assert set(statuses.values()) == {"passed"}
    # the innocent ones score exactly as in one process
    alone = run_scenarios([s for s in scenarios if s.name != "exits"], RunOptions(concurrency=8))
    assert [(s.name, s.status, s.reasons) for s in alone.scenarios] == [
        (s.name, s.status, s.reasons) for s in result.scenarios if s.name != "exits"
    ]


def test_fail_fast_stops_every_worker_after_the_first_failure(tmp_path: Path) -> None:
    # Shard 0 fails at once; shard 1's scenarios take 0.4 s each, one at a time. With -x
    # shared, shard 1 finishes the one it has started and starts no other.
    lines = [_scenario("fails", "a", expected="b"), *(_scenario(f"s{i}", "a") for i in range(3))]
    lines += [_scenario(f"slow{i}", f"slow{i}") for i in range(4)]
    scenarios = _load(write_suite(tmp_path, lines))
    result = run_scenarios_in_workers(
        scenarios, RunOptions(concurrency=2, fail_fast=True), workers=2
    )
    ran = [s.name for s in result.scenarios]
    assert "fails" in ran
    assert len([name for name in ran if name.startswith("slow")]) <= 1, ran
    assert result.not_run == len(scenarios) - len(ran) >= 5
    assert result.counts["failed"] == 1


@pytest.mark.parametrize("workers", [1, 2])
def test_fail_fast_exit_code_and_counts_with_and_without_workers(
    tmp_path: Path, workers: int
) -> None:
    lines = [_scenario("fails", "a", expected="b"), *(_scenario(f"s{i}", "a") for i in range(3))]
    suite = write_suite(tmp_path, lines)
    report = tmp_path / "report.json"
    proc = run_cli(
        str(suite), "-x", "-n", str(workers), "--concurrency", "1", "--json", str(report)
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 1
    assert data["not_run"] == 4 - len(data["scenarios"])
