"""The README's ``harness compare`` excerpt is real output: each line of it, in order, is a line
of ``harness compare main.json pr.json`` on the demo travel suite before and after one edited
file (``…`` stands for lines left out), at the 100 columns the README shows."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from tests.harness.compare.conftest import TravelPair
from tests.support.paths import ROOT

_BLOCK = re.compile(r"<!-- readme-test: compare-output -->\s*```\n(?P<out>.*?)```", re.S)


def _excerpt() -> tuple[str, list[str]]:
    match = _BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match is not None, "README.md has no <!-- readme-test: compare-output --> block"
    command, *lines = match["out"].splitlines()
    return command.removeprefix("$ "), [line for line in lines if line != "…"]


def test_the_readme_excerpt_is_what_compare_prints(
    tmp_path: Path,
    travel_pair: TravelPair,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command, expected = _excerpt()
    assert command == "harness compare main.json pr.json"
    assert len(expected) >= 10
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    shutil.copy(travel_pair.head_suite, tmp_path / "travel.yaml")
    shutil.copy(travel_pair.base, tmp_path / "main.json")
    assert main(["run", "travel.yaml", "-q", "--json", "pr.json"]) == 1
    capsys.readouterr()
    assert main(command.split()[1:]) == 1
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    position = 0
    for line in expected:
        assert line.rstrip() in printed[position:], f"not printed (in this order): {line!r}"
        position = printed.index(line.rstrip(), position) + 1
