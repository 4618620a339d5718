"""The README's examples run as written and print what the README says they print.

Twice: in this process against the source tree (fast), and, marked ``e2e``, as a new user meets
them: the wheel is built from the files the sdist ships, installed into a fresh virtualenv, and
every example runs from an empty folder outside the repository.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.metrics import metric_names, metric_options
from harness.metrics.registry import get_metric
from tests.support.paths import ROOT, documentation

README = ROOT / "README.md"

# A tested example is a ```python block right after `<!-- readme-test: NAME -->`; when the text
# after it says "prints" and shows a plain ``` block, that block is the exact expected output.
_EXAMPLE = re.compile(
    r"<!-- readme-test: (?P<name>[\w-]+) -->\s*```python\n(?P<code>.*?)```"
    r"(?:\s*prints\s*```\n(?P<out>.*?)```)?",
    re.S,
)
# The install-and-start commands: a console block, run line by line (but the `pip install`).
_SHELL = re.compile(r"<!-- readme-test: shell -->\s*```console\n(?P<code>.*?)```", re.S)
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


def _shell_commands() -> list[str]:
    match = _SHELL.search(_readme())
    assert match is not None, "README.md has no <!-- readme-test: shell --> console block"
    lines = [line.strip() for line in match["code"].splitlines()]
    return [line for line in lines if line and not line.startswith("pip install")]


def _suite_example() -> tuple[str, str, list[str]]:
    """File name, YAML, and the lines of the shown output that do not depend on timing."""
    match = _SUITE.search(_readme())
    assert match is not None, "README.md has no <!-- readme-test: suite FILE --> yaml block"
    stable = [line for line in match["out"].splitlines() if line and not _TIMING.search(line)]
    return match["file"], match["code"], stable


def test_readme_has_tested_examples() -> None:
    assert {name for name, _, _ in _examples()} >= {"sample", "capture", "otel", "pytest"}
    assert any(line.startswith("harness init demo") for line in _shell_commands())
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


# --- end to end: from the built wheel, in a fresh virtualenv, outside the repository ----------

# What the sdist ships (MANIFEST.in): the wheel is built from exactly these.
_SDIST_FILES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")
_SDIST_PACKAGES = ("harness", "tracing")


def _bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def _clean_env(venv: Path | None = None) -> dict[str, str]:
    """This process's environment without what would point a child at the repository."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST_")
        and key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "COLUMNS")
    }
    env["PYTHONIOENCODING"] = "utf-8"
    env["COLUMNS"] = "100"  # the README's width
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{_bin(venv)}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(
    args: list[str], cwd: Path, venv: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=_clean_env(venv),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def _checked(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"{result.args}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the built wheel (and pytest, for the pytest example)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy, so building never writes into the working tree
    for package in _SDIST_PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in _SDIST_FILES:
        shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _checked(_run([*pip, "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)], work))
    (wheel,) = dist.glob("*.whl")
    venv = work / "venv"
    _checked(_run([sys.executable, "-m", "venv", str(venv)], work))
    python = str(_bin(venv) / "python")
    install = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _checked(_run([*install, f"{wheel}[langchain]", "pytest"], work, venv))
    where = _checked(_run([python, "-c", "import harness; print(harness.__file__)"], work, venv))
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    return venv


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "code", "expected"), _examples(), ids=lambda v: str(v)[:20])
def test_readme_example_runs_from_the_installed_wheel(
    name: str, code: str, expected: str | None, wheel_venv: Path, tmp_path: Path
) -> None:
    script = tmp_path / f"readme_{name.replace('-', '_')}.py"
    script.write_text(code, encoding="utf-8")
    python = str(_bin(wheel_venv) / "python")
    if re.search(r"^def test_", code, re.M):  # a pytest example: it must pass under pytest
        result = _run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", script.name],
            tmp_path,
            wheel_venv,
        )
        _checked(result)
        assert re.search(r"\b1 passed\b", result.stdout), result.stdout
    else:
        result = _checked(_run([python, script.name], tmp_path, wheel_venv))
        if expected is not None:
            assert result.stdout == expected


@pytest.mark.e2e
def test_readme_install_commands_run_from_the_installed_wheel(
    wheel_venv: Path, tmp_path: Path
) -> None:
    script = "set -e\n" + "\n".join(_shell_commands()) + "\n"
    result = _checked(_run(["bash", "-c", script], tmp_path, wheel_venv))
    version = importlib.metadata.version("toolcall-harness")
    assert re.search(rf"^harness {re.escape(version)}$", result.stdout, re.M), result.stdout
    assert re.search(r"\b2 passed\b", result.stdout), result.stdout  # harness run demo
    assert re.search(r"\b1 passed\b", result.stdout), result.stdout  # pytest in demo/


@pytest.mark.e2e
def test_readme_suite_fails_as_shown_from_the_installed_wheel(
    wheel_venv: Path, tmp_path: Path
) -> None:
    file, code, shown = _suite_example()
    (tmp_path / file).write_text(code, encoding="utf-8")
    result = _run(["harness", "run", file], tmp_path, wheel_venv)
    assert result.returncode == 1, result.stdout + result.stderr
    printed = result.stdout.splitlines()
    assert [line for line in shown if line not in printed] == []


@pytest.mark.e2e
def test_the_installed_wheel_is_lean_and_complete(wheel_venv: Path, tmp_path: Path) -> None:
    code = """
import importlib.metadata as md, importlib.resources as r, json
folders = ["demo/data", "report/assets", "scaffold/files"]
print(json.dumps({
    "installed": sorted(d.metadata["Name"].lower() for d in md.distributions()),
    "requires": md.requires("toolcall-harness"),
    "empty": [f for f in folders if not any((r.files("harness") / f).iterdir())],
}))
"""
    python = str(_bin(wheel_venv) / "python")
    facts = json.loads(_checked(_run([python, "-c", code], tmp_path, wheel_venv)).stdout)
    assert not {"scipy", "numpy"} & set(facts["installed"])
    advertised = " ".join(facts["requires"])
    for tool in ("ragas", "playwright", "mypy", "ruff", "hypothesis", "scipy"):
        assert tool not in advertised
    assert facts["empty"] == []
