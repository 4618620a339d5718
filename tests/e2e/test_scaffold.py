"""``harness init``: the starter project it writes runs as it is, suite and pytest test alike."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.scaffold import STARTER_FILES, ScaffoldError, scaffold

BIN = Path(sys.executable).parent  # this virtualenv's scripts: harness, pytest


def _env() -> dict[str, str]:
    """This environment with the venv's scripts first and nothing pointing at the repository."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST_") and key != "PYTHONPATH"
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_init_then_run_passes(tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", "-c", "harness init tmp && harness run tmp"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b2 passed\b", result.stdout), result.stdout
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == sorted(STARTER_FILES)


def test_generated_pytest_test_passes(tmp_path: Path) -> None:
    scaffold(tmp_path / "proj")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path / "proj",
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b1 passed\b", result.stdout), result.stdout


def test_generated_test_fails_with_the_match_table_when_the_expectation_is_wrong(
    tmp_path: Path,
) -> None:
    # The starter test really checks something: expect another city and it fails, saying why.
    scaffold(tmp_path)
    test = tmp_path / "test_agent.py"
    text = test.read_text(encoding="utf-8")
    assert '.called("get_weather", city="Oslo")' in text
    test.write_text(text.replace('city="Oslo"', 'city="Paris"'), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "get_weather(city='Paris')" in result.stdout
    assert "wrong args" in result.stdout


def test_generated_suite_validates_against_the_agent_tools(tmp_path: Path) -> None:
    scaffold(tmp_path)
    assert main(["validate", str(tmp_path)]) == 0


def test_generated_suite_names_its_schema_on_the_first_line(tmp_path: Path) -> None:
    scaffold(tmp_path)
    first = (tmp_path / "starter.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=harness-schema.json"


def test_init_defaults_to_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert all((tmp_path / name).is_file() for name in STARTER_FILES)
    out = capsys.readouterr().out
    assert "wrote agent.py" in out
    assert "harness run ." in out


def test_init_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "agent.py").write_text("# mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == "# mine\n"
    assert not (tmp_path / "starter.yaml").exists()  # nothing written at all
    assert "agent.py" in capsys.readouterr().err
    with pytest.raises(ScaffoldError, match="not overwriting"):
        scaffold(tmp_path)


def test_init_into_a_file_is_an_error(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(ScaffoldError, match="not a folder"):
        scaffold(target)
    assert main(["init", str(target)]) == 2
