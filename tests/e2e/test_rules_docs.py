"""docs/rules.md and the README's "Rules" section say what ``harness run`` really prints.

Every ``<!-- rules-output -->`` block of the documentation is output of the demo suites
(scenarios/orders.yaml, scenarios/bookings.yaml) run without their ``xfail:`` marks; every
``<!-- rules-bad: FILE -->`` example is a file whose load error is the next text block. The
README's runnable rules example (``<!-- readme-yaml: rules.yaml -->``) is run with the other
readme-yaml blocks (tests/harness/run/test_conversations.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.rules import KINDS
from tests.support.paths import ROOT, SCENARIOS, documentation

_OUTPUT = re.compile(r"<!-- rules-output -->\s*```text\n(?P<out>.*?)```", re.S)
_BAD = re.compile(
    r"<!-- rules-bad: (?P<file>\S+) -->\s*```yaml\n(?P<code>.*?)```.*?```text\n(?P<out>.*?)```",
    re.S,
)
_XFAIL = re.compile(r"^    xfail: .*\n", re.M)
DEMO_SUITES = ("orders.yaml", "bookings.yaml")


def _shown_lines() -> list[str]:
    return [
        line
        for block in _OUTPUT.finditer(documentation())
        for line in block["out"].splitlines()
        if line.strip()
    ]


def test_the_rules_page_shows_a_failure_of_every_rule_kind() -> None:
    shown = "\n".join(_shown_lines())
    codes = {
        "forbid": "forbidden by",
        "allow": "not in allow",
        "before": "no earlier",
        "grounded": "not seen in the user's input",
        "max_calls": "calls of search_orders (max",
        "max_repeats": "identical calls (max",
        "budget": "over budget:",
    }
    assert set(codes) == set(KINDS)  # a new kind needs its example here and in docs/rules.md
    assert [kind for kind, text in codes.items() if text not in shown] == []
    assert "tool_call_partial_order 0.00 < 1.00" in shown


def test_every_failure_shown_is_what_the_demo_suites_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in DEMO_SUITES:
        text = (SCENARIOS / name).read_text(encoding="utf-8")
        unmarked = _XFAIL.sub("", text)
        assert unmarked != text  # the demo suite still shows its failures as xfail
        (tmp_path / name).write_text(unmarked, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")  # the width the page was captured at
    assert main(["run", *DEMO_SUITES]) == 1
    # a reason line is indented under its scenario in FAILURES; the page shows it alone
    printed = {line.strip() for line in capsys.readouterr().out.splitlines()}
    shown = _shown_lines()
    assert len(shown) >= 10
    assert [line for line in shown if line.strip() not in printed] == []


def test_the_bad_rule_example_is_the_load_error_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = list(_BAD.finditer(documentation()))
    assert examples
    monkeypatch.chdir(tmp_path)
    for example in examples:
        (tmp_path / example["file"]).write_text(example["code"], encoding="utf-8")
        assert main(["run", example["file"]]) == 2
        captured = capsys.readouterr()
        printed = (captured.out + captured.err).splitlines()
        shown = [line for line in example["out"].splitlines() if line.strip()]
        assert [line for line in shown if line not in printed] == []


def test_the_readme_rules_table_names_every_kind() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+):", section, re.M)
    assert listed == list(KINDS)
    assert "<!-- readme-yaml: rules.yaml -->" in section
    assert "https://github.com/toolcall-harness/toolcall-harness/blob/main/docs/rules.md" in readme
