"""libyaml's parser under the guards: the same data, lines and messages as the pure loader."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness.scenarios import issues, yaml_lines
from harness.scenarios.yaml_lines import read_yaml
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(
    yaml_lines.FastGuardedLoader is None, reason="PyYAML was built without libyaml"
)

FILES = [
    *sorted((ROOT / "scenarios").glob("*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "bad").glob("*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "suites").glob("*.yaml")),
]

HOSTILE = {
    "control.yaml": "suite: x\nscenarios:\n  - name: a\x07b\n",
    "tabs.yaml": "suite: x\nscenarios:\n\t- name: a\n",
    "deep.yaml": "a: " + "[" * 150 + "]" * 150 + "\n",
    "bomb.yaml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, n in zip("abcde", "bcdef", strict=True)
    ),
    "bad_bool.yaml": "a: !!bool maybe\n",
    "bad_date.yaml": "a: 2024-13-45\n",
    "unclosed.yaml": 'a: "open\nb: 1\n',
    "duplicate.yaml": "a: 1\nb: 2\na: 3\n",
    "empty.yaml": "",
    "nel.yaml": "a: 1\x85b: 2\n",
}


def read(
    path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, dict[Any, int], list[str]]:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(yaml_lines, "FastGuardedLoader", None)
        out = issues.Collector(path.name)
        data = read_yaml(path, out)
    return data, dict(out.lines), [str(issue) for issue in out.issues]


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_data_lines_and_issues_as_the_pure_loader(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert read(path, True, monkeypatch) == read(path, False, monkeypatch)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_get_the_pure_loaders_exact_message(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name], encoding="utf-8")
    fast, pure = read(path, True, monkeypatch), read(path, False, monkeypatch)
    assert fast == pure
    if name not in ("nel.yaml",):
        assert pure[2], "a hostile file must give an issue"


def test_the_fast_path_is_really_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []
    real = yaml_lines.FastGuardedLoader

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, stream: str) -> None:
            used.append("fast")
            super().__init__(stream)

    monkeypatch.setattr(yaml_lines, "FastGuardedLoader", Spy)
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\nscenarios: [{name: a}]\n", encoding="utf-8")
    assert read_yaml(path, issues.Collector("s.yaml")) == {
        "suite": "s",
        "scenarios": [{"name": "a"}],
    }
    assert used == ["fast"]


def test_a_large_suite_reads_faster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # reported, not asserted on: timings on a shared CI machine are not a verdict
    body = "".join(
        f"  - name: case {i}\n    input: 'what is {i} + 1?'\n    expect:\n      tool_calls:\n"
        f"        - {{name: add, args: {{a: {i}, b: 1}}}}\n"
        for i in range(2000)
    )
    path = tmp_path / "big.yaml"
    path.write_text("suite: big\nagent: m:f\nscenarios:\n" + body, encoding="utf-8")
    timings = {}
    for fast in (True, False):
        start = time.perf_counter()
        result = read(path, fast, monkeypatch)
        timings[fast] = time.perf_counter() - start
        assert len(result[0]["scenarios"]) == 2000
    print(f"libyaml {timings[True]:.3f}s, pure {timings[False]:.3f}s")
