"""``harness run -n N`` (harness/parallel/runs.py) and ``agent_reuse: true`` (the runner)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.parallel.runs import run_scenarios_in_workers
from harness.parallel.shards import plan_shards, shard_concurrency
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import iter_scenarios, load_paths
from tests.support.paths import AGENT_FILE, FIXTURES, ROOT, SCENARIOS
from tests.support.suites import fixture_suite

HARNESS = Path(sys.executable).parent / "harness"
BASIC = FIXTURES / "suites" / "basic.yaml"

COUNTED_AGENT = f"""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("_counted_fixture_agent", {str(AGENT_FILE)!r})
_fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixture)

build_count = 0


def build(model):
    global build_count
    build_count += 1
    log = os.environ.get("BUILD_LOG")
    if log:
        with open(log, "a") as fp:
            fp.write(f"{{os.getpid()}}\\n")
    return _fixture.build(model)
"""

SAME_SCRIPT = "script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}, {content: '3'}]"


def reuse_suite(folder: Path, reuse: bool, count: int = 4) -> Path:
    """``count`` scenarios over one factory and one model config; every third one fails."""
    (folder / "counted.py").write_text(COUNTED_AGENT, encoding="utf-8")
    lines = [
        f"agent_reuse: {'true' if reuse else 'false'}",
        "agent: counted.py:build",
        "model: {provider: scripted}",
        "scenarios:",
    ]
    for index in range(count):
        expected = "{name: add, args: {a: 1, b: 2}}" if index % 3 else "{name: add, args: {a: 9}}"
        lines.append(
            f"  - {{name: s{index}, input: 'add {index}', {SAME_SCRIPT}, "
            f"expect: {{tool_calls: [{expected}], output: {{$contains: '3'}}}}}}"
        )
    path = folder / "reuse.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HARNESS), "run", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def verdicts(report: Path) -> list[tuple[Any, ...]]:
    """Per scenario, in report order: identity, status, reasons and every run's scores."""
    data = json.loads(report.read_text(encoding="utf-8"))
    return [
        (
            s["file"],
            s["suite"],
            s["name"],
            s["status"],
            s["reasons"],
            [[(x["name"], x["value"]) for x in run["scores"]] for run in s["runs"]],
        )
        for s in data["scenarios"]
    ]


def test_shards_are_contiguous_balanced_and_cover_everything() -> None:
    shards = plan_shards(7, 3)
    assert [list(s) for s in shards] == [[0, 1], [2, 3], [4, 5, 6]]
    assert plan_shards(2, 8) == [range(0, 1), range(1, 2)]  # never an empty shard
    assert shard_concurrency(50, 2) == [25, 25] and shard_concurrency(5, 2) == [3, 2]


def test_two_workers_give_the_reports_and_exit_code_of_one(tmp_path: Path) -> None:
    one = run_cli(str(SCENARIOS), "-n", "1", "--json", str(tmp_path / "one.json"))
    two = run_cli(
        str(SCENARIOS),
        "-n",
        "2",
        "--json",
        str(tmp_path / "two.json"),
        "--junit-xml",
        str(tmp_path / "two.xml"),
    )
    assert one.returncode == two.returncode == 0, two.stderr
    expected = verdicts(tmp_path / "one.json")
    assert len(expected) > 10 and len({row[0] for row in expected}) > 1  # several suite files
    assert verdicts(tmp_path / "two.json") == expected
    assert (tmp_path / "two.xml").read_text(encoding="utf-8").startswith("<?xml")
    summary = [line for line in one.stdout.splitlines() if " passed" in line and " in " in line]
    assert summary and summary[-1].split(" in ")[0] in two.stdout  # same counts line


def test_a_failing_suite_exits_1_with_and_without_workers(tmp_path: Path) -> None:
    reuse_suite(tmp_path, reuse=False, count=6)
    paths = (str(BASIC), str(tmp_path / "reuse.yaml"))
    one = run_cli(*paths, "-n", "1", "--json", str(tmp_path / "one.json"))
    two = run_cli(*paths, "-n", "2", "--json", str(tmp_path / "two.json"))
    assert one.returncode == two.returncode == 1, two.stderr
    expected = verdicts(tmp_path / "one.json")
    assert {row[3] for row in expected} >= {"passed", "failed"}
    assert verdicts(tmp_path / "two.json") == expected
    assert "FAILED basic::wrong args" in two.stdout


def test_workers_refuse_span_export_with_exit_2(tmp_path: Path) -> None:
    proc = run_cli(str(BASIC), "-n", "2", "--trace-file", str(tmp_path / "spans.jsonl"))
    assert proc.returncode == 2
    assert "-n/--workers cannot be combined with span export" in proc.stderr
    assert not (tmp_path / "spans.jsonl").exists() or not (tmp_path / "spans.jsonl").read_text()


def _load(path: Path) -> list[Any]:
    return list(iter_scenarios(load_paths([path])))


@pytest.mark.parametrize("reuse", [False, True])
def test_agent_reuse_builds_the_factory_once_with_the_same_results(
    tmp_path: Path, reuse: bool
) -> None:
    scenarios = _load(reuse_suite(tmp_path, reuse=reuse, count=5))
    module = sys.modules[scenarios[0].agent.factory.__module__]
    module.build_count = 0
    result = run_scenarios(scenarios, RunOptions(concurrency=3))
    builds = 1 if reuse else 5
    assert module.build_count == builds
    assert [(s.name, s.status) for s in result.scenarios] == [
        ("s0", "failed"),
        ("s1", "passed"),
        ("s2", "passed"),
        ("s3", "failed"),
        ("s4", "passed"),
    ]
    assert not result.warnings


def test_agent_reuse_keeps_one_agent_per_model_config(tmp_path: Path) -> None:
    path = reuse_suite(tmp_path, reuse=True, count=3)
    text = path.read_text(encoding="utf-8")
    # a different script is another model config: that scenario gets its own agent
    text += "  - {name: other, input: x, script: [{content: '3'}], expect: {output: '3'}}\n"
    path.write_text(text, encoding="utf-8")
    scenarios = _load(path)
    module = sys.modules[scenarios[0].agent.factory.__module__]
    module.build_count = 0
    result = run_scenarios(scenarios, RunOptions(concurrency=4))
    assert module.build_count == 2
    assert result.counts["passed"] == 3 and result.counts["failed"] == 1


def test_agent_reuse_is_per_worker_process(tmp_path: Path) -> None:
    reuse_suite(tmp_path, reuse=True, count=6)
    log, log_one = tmp_path / "builds.log", tmp_path / "builds-one.log"
    one = run_cli(
        str(tmp_path / "reuse.yaml"),
        "--json",
        str(tmp_path / "one.json"),
        env={"BUILD_LOG": str(log_one)},
    )
    two = run_cli(
        str(tmp_path / "reuse.yaml"),
        "-n",
        "2",
        "--json",
        str(tmp_path / "two.json"),
        env={"BUILD_LOG": str(log)},
    )
    assert len(log_one.read_text(encoding="utf-8").split()) == 1
    assert one.returncode == two.returncode == 1
    assert verdicts(tmp_path / "two.json") == verdicts(tmp_path / "one.json")
    pids = log.read_text(encoding="utf-8").split()
    assert len(pids) == len(set(pids)) == 2  # one build in each worker


def test_in_process_api_keeps_selection_order_and_progress(tmp_path: Path) -> None:
    scenarios = _load(reuse_suite(tmp_path, reuse=False, count=6)) + _load(BASIC)
    seen: list[str] = []
    options = RunOptions(concurrency=4, progress=lambda r: seen.append(r.name))
    result = run_scenarios_in_workers(scenarios, options, workers=2)
    assert [s.name for s in result.scenarios] == [s.name for s in scenarios]
    assert sorted(seen) == sorted(s.name for s in scenarios)
    assert result.counts == run_scenarios(scenarios, RunOptions(concurrency=4)).counts


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_run_with_workers_reports_what_finished(
    tmp_path: Path, signum: int, code: int
) -> None:
    suite = fixture_suite(
        tmp_path,
        "- {name: ok, input: x, script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}], "
        "expect: {tool_calls: [add]}}\n"
        "- {name: slow, input: x, script: [{tool_calls: [{name: wait_forever, args: "
        "{seconds: 60}}]}]}\n",
    )
    report = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [str(HARNESS), "run", str(suite), "-n", "2", "--json", str(report)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert "PASSED" in proc.stdout.readline()  # the run is under way in the workers
    time.sleep(0.3)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["interrupted"] is True and data["not_run"] == 1
    assert [s["name"] for s in data["scenarios"]] == ["ok"]
    assert "(interrupted)" in out
