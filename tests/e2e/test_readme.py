"""The README's examples run as written and print what the README says they print.

Twice: in this process against the source tree (fast), and, marked ``e2e``, as a new user meets
them: the README's quick start runs as written in a fresh virtualenv, from the wheel built from
the files the sdist ships (:mod:`tests.e2e.installed`), and every example runs there from an
empty folder outside the repository.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.metrics import metric_names, metric_options
from harness.metrics.registry import get_metric
from tests.e2e.installed import QuickStart, bin_dir, checked, run, shell_block
from tests.support.paths import ROOT, documentation

README = ROOT / "README.md"

# A tested example is a ```python block right after `<!-- readme-test: NAME -->`; when the text
# after it says "prints" and shows a plain ``` block, that block is the exact expected output.
_EXAMPLE = re.compile(
    r"<!-- readme-test: (?P<name>[\w-]+) -->\s*```python\n(?P<code>.*?)```"
    r"(?:\s*prints\s*```\n(?P<out>.*?)```)?",
    re.S,
)
# The YAML suite example, saved as FILE, and the next plain ``` block: what `harness run` shows.
_SUITE = re.compile(
    r"<!-- readme-test: suite (?P<file>\S+) -->\s*```yaml\n(?P<code>.*?)```.*?```\n(?P<out>.*?)```",
    re.S,
)
_TIMING = re.compile(r"\d+\.\d+s\b")  # durations differ run to run


def _readme() -> str:
    """README.md and the docs/ pages: the examples moved to the site are run from there."""
    return documentation()


def _examples() -> list[tuple[str, str, str | None]]:
    return [(m["name"], m["code"], m["out"]) for m in _EXAMPLE.finditer(_readme())]


def _suite_example() -> tuple[str, str, list[str]]:
    """File name, YAML, and the lines of the shown output that do not depend on timing."""
    match = _SUITE.search(_readme())
    assert match is not None, "README.md has no <!-- readme-test: suite FILE --> yaml block"
    stable = [line for line in match["out"].splitlines() if line and not _TIMING.search(line)]
    return match["file"], match["code"], stable


def test_readme_has_tested_examples() -> None:
    assert {name for name, _, _ in _examples()} >= {"sample", "capture", "otel", "pytest"}
    commands = [line.split("#")[0].strip() for line in shell_block().splitlines()]
    assert commands[0] == 'pip install "toolcall-harness[langchain,pytest]"'
    assert {"harness init demo", "harness run demo", "cd demo && pytest"} <= set(commands)
    assert len(_suite_example()[2]) >= 5


@pytest.mark.parametrize(("name", "code", "expected"), _examples(), ids=lambda v: str(v)[:20])
def test_readme_example_runs_as_written(
    name: str, code: str, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, f"README.md:{name}", "exec"), {"__name__": f"readme_{name}"})
    if expected is not None:
        assert buffer.getvalue() == expected


def test_readme_suite_fails_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    file, code, shown = _suite_example()
    (tmp_path / file).write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")  # the README's width
    assert main(["run", file]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert [line for line in shown if line not in printed] == []


# --- the metric table -------------------------------------------------------------------------


def _readme_metric_table() -> dict[str, str]:
    """README "### Metrics" table: metric name -> default threshold column."""
    section = _readme().split("### Metrics", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        table[cells[0].strip("`")] = cells[-1]
    return table


def _metrics_section() -> str:
    return _readme().split("### Metrics", 1)[1].split("\n### ", 1)[0]


def _printed_thresholds(out: str) -> dict[str, str]:
    """``harness metrics``' table (printed wide enough for one line a row): name -> threshold."""
    printed = {}
    for line in out.splitlines():
        row = re.match(r"[│|] (\w+) +[│|] (.*?) +[│|]", line)
        if row and row[1] != "metric":
            threshold = re.search(r"\bthreshold=([^,]+)", row[2])
            assert threshold is not None, line
            printed[row[1]] = threshold[1]
    return printed


def _builtin_metrics() -> list[str]:
    """Registered metrics defined by the harness itself (not plugins or test doubles)."""
    names = []
    for name in metric_names():
        with contextlib.suppress(HarnessError):  # a broken plugin is not the README's business
            if type(get_metric(name)).__module__.startswith("harness."):
                names.append(name)
    return names


def test_readme_metric_table_is_what_harness_metrics_prints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["metrics"]) == 0
    printed = _printed_thresholds(capsys.readouterr().out)
    generated = {name: printed[name] for name in _builtin_metrics()}
    # ...and the printed value is the registry's default, shown as `harness metrics` shows it.
    assert generated == {name: repr(metric_options(name)["threshold"]) for name in generated}
    assert _readme_metric_table() == generated


def test_readme_metrics_section_names_every_option() -> None:
    section = _metrics_section()
    missing = [
        f"{name}({option})"
        for name in _builtin_metrics()
        for option in metric_options(name)
        if option != "threshold" and option not in section
    ]
    assert missing == []


# --- end to end: the quick start, from the built wheel, in a fresh virtualenv -----------------


@pytest.mark.e2e
def test_the_quick_start_runs_as_written(quick_start: QuickStart) -> None:
    """The README's console block, run line by line by bash in a fresh virtualenv."""
    version = importlib.metadata.version("toolcall-harness")
    assert re.search(rf"^harness {re.escape(version)}$", quick_start.stdout, re.M)
    assert re.search(r"\b2 passed\b", quick_start.stdout), quick_start.stdout  # harness run demo
    assert re.search(r"\b1 passed\b", quick_start.stdout), quick_start.stdout  # pytest in demo/
    pytest_script = bin_dir(quick_start.venv) / "pytest"
    assert pytest_script.exists()  # the pytest that ran is the virtualenv's own


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "code", "expected"), _examples(), ids=lambda v: str(v)[:20])
def test_readme_example_runs_from_the_installed_wheel(
    name: str, code: str, expected: str | None, quick_start: QuickStart, tmp_path: Path
) -> None:
    script = tmp_path / f"readme_{name.replace('-', '_')}.py"
    script.write_text(code, encoding="utf-8")
    env = quick_start.env()
    if re.search(r"^def test_", code, re.M):  # a pytest example: it must pass under pytest
        result = checked(
            run(["pytest", "-q", "-p", "no:cacheprovider", script.name], tmp_path, env)
        )
        assert re.search(r"\b1 passed\b", result.stdout), result.stdout
    else:
        result = checked(run(["python", script.name], tmp_path, env))
        if expected is not None:
            assert result.stdout == expected


@pytest.mark.e2e
def test_readme_suite_fails_as_shown_from_the_installed_wheel(
    quick_start: QuickStart, tmp_path: Path
) -> None:
    file, code, shown = _suite_example()
    (tmp_path / file).write_text(code, encoding="utf-8")
    result = run(["harness", "run", file], tmp_path, quick_start.env())
    assert result.returncode == 1, result.stdout + result.stderr
    printed = result.stdout.splitlines()
    assert [line for line in shown if line not in printed] == []


@pytest.mark.e2e
def test_the_installed_wheel_is_lean_and_complete(quick_start: QuickStart, tmp_path: Path) -> None:
    code = """
import importlib.metadata as md, importlib.resources as r, json
folders = ["demo/data", "report/assets", "scaffold/files"]
print(json.dumps({
    "installed": sorted(d.metadata["Name"].lower() for d in md.distributions()),
    "requires": md.requires("toolcall-harness"),
    "empty": [f for f in folders if not any((r.files("harness") / f).iterdir())],
}))
"""
    facts = json.loads(checked(run(["python", "-c", code], tmp_path, quick_start.env())).stdout)
    assert not {"scipy", "numpy"} & set(facts["installed"])
    advertised = " ".join(facts["requires"])
    for tool in ("ragas", "playwright", "mypy", "ruff", "hypothesis", "scipy"):
        assert tool not in advertised
    assert facts["empty"] == []
