"""Commands that build no model import no LangChain: what each command loads, not how fast.

Each command runs in a fresh interpreter, which then lists ``sys.modules``. LangChain and
LangGraph are most of a second of import time (benchmarks/README.md, "Start-up"); a command that
builds no agent and no model has no use for them. The start-up times themselves are measured in
benchmarks/, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.eval_golden import GOLDEN, SUITE
from tests.support.paths import AGENT_FILE

LANGCHAIN = ("langchain", "langchain_core", "langgraph", "langsmith")
DASK = ("dask", "distributed")
"""Only ``--executor dask`` imports them (the ``[dask]`` extra; harness/parallel/dask.py)."""

# Runs one command as the console script does and writes what it imported to argv[1].
_DRIVER = """
import json, sys
from harness.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def _imports(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    """The exit code of ``harness ARGV`` and the top-level packages it imported."""
    report = cwd / "imported.json"
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(report), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert report.exists(), proc.stdout + proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    return data["code"], {name.split(".")[0] for name in data["modules"]}


@pytest.fixture
def traces(tmp_path: Path) -> tuple[Path, Path]:
    """A small trace file and the suite that scores it; the suite's agent imports LangGraph."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(agent=AGENT_FILE), encoding="utf-8")
    return GOLDEN / "recorded.jsonl", suite


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["schema"],
        ["metrics"],
        ["init", "starter"],
        ["eval-traces", "--help"],
        ["run", "--help"],
    ],
    ids=" ".join,
)
def test_a_command_that_builds_no_model_imports_no_langchain(
    argv: list[str], tmp_path: Path
) -> None:
    code, imported = _imports(argv, tmp_path)
    assert code == 0
    assert sorted(imported & set(LANGCHAIN)) == []
    assert sorted(imported & set(DASK)) == []


@pytest.mark.parametrize("workers", ["1", "2"])
def test_eval_traces_scores_a_trace_file_without_langchain(
    workers: str, traces: tuple[Path, Path], tmp_path: Path
) -> None:
    trace_file, suite = traces
    report = tmp_path / "eval.json"
    argv = ["eval-traces", str(trace_file), "--scenarios", str(suite), "--json", str(report)]
    code, imported = _imports([*argv, "--workers", workers], tmp_path)
    golden = json.loads((GOLDEN / "report.json").read_text(encoding="utf-8"))
    scored = json.loads(report.read_text(encoding="utf-8"))
    assert scored["counts"] == golden["counts"]  # every trace was really scored
    assert code == 1  # the golden file holds failures
    assert sorted(imported & set(LANGCHAIN)) == []
    assert sorted(imported & set(DASK)) == []  # the local pool


def test_eval_traces_scores_where_the_agent_is_not_installed(tmp_path: Path) -> None:
    """Traces are scored offline, maybe in a job that lacks the app: its agent is not imported."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(agent="not_installed_app.agents"), encoding="utf-8")
    report = tmp_path / "eval.json"
    trace_file = GOLDEN / "recorded.jsonl"
    argv = ["eval-traces", str(trace_file), "--scenarios", str(suite), "--json", str(report)]
    code, _imported = _imports([*argv, "--workers", "1"], tmp_path)
    assert code == 1
    golden = json.loads((GOLDEN / "report.json").read_text(encoding="utf-8"))
    assert json.loads(report.read_text(encoding="utf-8"))["counts"] == golden["counts"]
    # `harness run` on the same suite still says at load time that the agent cannot be imported
    run_code, _ = _imports(["run", str(suite)], tmp_path)
    assert run_code == 2


def test_the_check_sees_langchain_where_a_command_builds_the_agent(
    traces: tuple[Path, Path], tmp_path: Path
) -> None:
    """``validate`` imports the agent to read its tools: the same check then finds LangGraph."""
    _trace_file, suite = traces
    _code, imported = _imports(["validate", str(suite)], tmp_path)
    assert {"langchain_core", "langgraph"} <= imported
