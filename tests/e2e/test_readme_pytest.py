"""The README's pytest section: its example test runs as written, its switch works as described."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

pytest_plugins = ["pytester"]

README = ROOT / "README.md"

_BLOCK = re.compile(r"<!-- readme-test: pytest -->\s*```python\n(?P<code>.*?)```", re.S)


def pytest_section() -> str:
    """The README's "## pytest" section."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## pytest\s*$(?P<body>.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None, "README.md has no '## pytest' section"
    return match["body"]


def example_code() -> str:
    """The tested python block of the section."""
    match = _BLOCK.search(pytest_section())
    assert match is not None, "the pytest section has no <!-- readme-test: pytest --> block"
    return match["code"]


def test_the_example_test_runs_and_passes_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = example_code()
    assert len(code.strip().splitlines()) <= 16  # "a few lines", as the section says
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_readme_example=code)
    # No PYTHONPATH: the example's agent (harness.demo) comes with the installed package.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=1)


def test_the_example_fails_with_the_match_table_when_the_agent_is_wrong(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = example_code().replace('.called("add", a=2, b=3)', '.called("add", a=2, b=4)')
    assert wrong != example_code()
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_readme_example=wrong)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*expect_tools(...).accuracy_at_least(1.0) failed:",
            "E*tool_call_accuracy 0.00 < 1.00: 0/1 expected calls matched; missing: add(a=2, b=4)",
            "E*1  add(a=2, b=4)*add(a=2.0, b=3.0)*wrong args",
            "*harness: recorded tool calls*",
        ]
    )


@pytest.mark.slow
def test_the_switch_collects_and_runs_the_shipped_scenarios() -> None:
    from harness.scenarios import iter_scenarios, load_paths

    expected = {f"{s.file}::{s.suite}::{s.name}" for s in iter_scenarios(load_paths(["scenarios"]))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--harness-scenarios"]
    collected = subprocess.run(
        [*command, "scenarios/", "--collect-only", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    ids = {line for line in collected.stdout.splitlines() if "::" in line}
    assert ids == {node.replace("\\", "/") for node in expected}
    assert "scenarios/travel.yaml::travel::weather in Berlin tomorrow" in ids
    ran = subprocess.run(
        [*command, "scenarios/", "-k", "berlin and weather", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"\b[1-9]\d* passed\b", ran.stdout), ran.stdout
