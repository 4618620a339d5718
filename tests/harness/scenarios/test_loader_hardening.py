"""Hostile or mangled YAML ends as one located issue (``file:line: message``), exit 2.

Each case here raised something other than ConfigError before (ReaderError, RecursionError,
KeyError, ValueError) or ran for minutes (an alias bomb); see docs/architecture.md, "Scenario
files".
"""

from __future__ import annotations

import re
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios import ConfigError, ConfigIssue, load_paths, looks_like_suite
from harness.scenarios.yaml_lines import MAX_DEPTH, MAX_VALUES
from tests.support.paths import FIXTURES

pytest_plugins = ["pytester"]

AGENT = f"{FIXTURES / 'fixture_agent.py'}:build"
HEAD = f"agent: {AGENT}\nmodel: {{provider: scripted}}\n"
ONE_SCENARIO = "scenarios:\n  - name: a\n    input: hi\n    script: [{content: ok}]\n"


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


def the_issue(path: Path) -> ConfigIssue:
    with pytest.raises(ConfigError) as caught:
        load_paths([path])
    (issue,) = caught.value.issues
    assert re.match(r"[^:]+\.yaml:\d+: ", str(issue)), str(issue)
    return issue


# --- characters YAML refuses --------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x00", "U+0000 (NUL)"),
        ("\x07", "U+0007 (BEL)"),
        ("\x1b", "U+001B (ESC)"),
        ("\x7f", "U+007F (DEL)"),
        ("\uffff", "U+FFFF"),
    ],
)
def test_a_control_character_is_located(tmp_path: Path, char: str, shown: str) -> None:
    path = write(tmp_path, HEAD + f"suite: ab{char}cd\n" + ONE_SCENARIO)
    issue = the_issue(path)
    assert issue.line == 3
    assert f"{shown} at column 10" in issue.message
    assert main(["validate", str(path)]) == 2


def test_control_character_line_counts_crlf_as_one_break(tmp_path: Path) -> None:
    path = write(tmp_path, (HEAD + ONE_SCENARIO).replace("\n", "\r\n") + "  \x07\r\n")
    assert the_issue(path).line == 7


# --- structure that would exhaust the stack -------------------------------------------------


def test_flow_nesting_past_the_limit_is_located(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    path = write(tmp_path, HEAD + ONE_SCENARIO + f"description: {deep}\n")
    issue = the_issue(path)
    assert issue.line == 7 and f"nested deeper than {MAX_DEPTH} levels" in issue.message


def test_block_nesting_past_the_limit_is_located(tmp_path: Path) -> None:
    lines = [f"{' ' * i}k{i}:" for i in range(MAX_DEPTH + 5)]
    path = write(tmp_path, HEAD + ONE_SCENARIO + "defaults:\n" + "\n".join(" " + x for x in lines))
    issue = the_issue(path)
    assert issue.line is not None and "nested deeper than" in issue.message


def test_nesting_within_the_limit_still_loads(tmp_path: Path) -> None:
    nested = "{a: " * 40 + "1" + "}" * 40
    text = HEAD + ONE_SCENARIO.replace("input: hi", f"input: {nested}")
    (suite,) = load_paths([write(tmp_path, text)])
    assert suite.scenarios[0].input is not None


def test_a_recursive_alias_is_located(tmp_path: Path) -> None:
    text = HEAD + textwrap.dedent(
        """\
        scenarios:
          - name: a
            input: hi
            script: [{content: ok}]
            expect:
              tool_calls:
                - name: add
                  args: &a {x: *a}
        """
    )
    issue = the_issue(write(tmp_path, text))
    assert issue.line == 10 and "recursive alias '*a'" in issue.message


# --- tags and scalars a constructor refuses --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("!!bool maybe", "cannot read 'maybe' as !!bool"),
        ('!!int "x"', "cannot read 'x' as !!int"),
        ("!!float twelve", "cannot read 'twelve' as !!float"),
        ("9" * 5000, "as !!int (Exceeds the limit (4300 digits)"),
        ("2024-13-45", "cannot read '2024-13-45' as !!timestamp (month must be in 1..12); quote"),
        ("0x_", "cannot read '0x_' as !!int"),
    ],
    ids=["bool", "int", "float", "5000-digits", "timestamp", "empty-hex"],
)
def test_a_scalar_its_tag_cannot_read_is_located(tmp_path: Path, value: str, expected: str) -> None:
    path = write(tmp_path, HEAD + ONE_SCENARIO + f"description: {value}\n")
    issue = the_issue(path)
    assert issue.line == 7 and expected in issue.message
    assert main(["run", str(path)]) == 2


# --- aliases ---------------------------------------------------------------------------------


def laughs(levels: int, indent: str = "") -> str:
    """Anchors l0..l{levels-1}: l0 is ten strings, each next one ten aliases of the one before."""
    lines = [f"{indent}l0: &l0 [{', '.join('x' * 10)}]"]
    for level in range(1, levels):
        aliases = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"{indent}l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


LAUGHS = laughs(9)


def test_an_alias_bomb_stops_at_the_value_cap_fast_and_small(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + LAUGHS + ONE_SCENARIO.replace("input: hi", "input: *l8"))
    tracemalloc.start()
    start = time.monotonic()
    try:
        issue = the_issue(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 5
    assert peak < 50_000_000, f"peak {peak / 1e6:.0f} MB"
    # l5 (line 8) stands for ~10**6 values: the alias in it that passes the cap is named
    assert issue.line == 8, issue
    assert f"past {MAX_VALUES:,}" in issue.message and "'*l" in issue.message


def test_aliases_within_the_cap_load_and_are_indexed_once(tmp_path: Path) -> None:
    # 10**4 values through aliases: fine; the line index must not walk each expansion
    text = HEAD + ONE_SCENARIO.replace("input: hi", "input:\n" + laughs(4, " " * 6))
    (suite,) = load_paths([write(tmp_path, text)])
    assert suite.scenarios[0].input["l3"] == [[[["x"] * 10] * 10] * 10] * 10


def test_an_error_inside_a_merged_alias_points_at_a_line(tmp_path: Path) -> None:
    text = HEAD + textwrap.dedent(
        """\
        base: &base
          input: hi
          script: [{content: ok}]
          repeat: zero
        scenarios:
          - <<: *base
            name: a
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_paths([write(tmp_path, text)])
    issues = [str(issue) for issue in caught.value.issues]
    assert any(
        re.match(r".*suite\.yaml:\d+: scenarios\[0\]\.repeat: expected an integer", i)
        for i in issues
    ), issues


# --- which YAML files under a folder are suites -----------------------------------------------

WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
COMPOSE = "services:\n  web:\n    image: nginx\n"
ARTILLERY = "config:\n  target: http://x\nscenarios:\n  - flow:\n      - get: {url: /}\n"
PROMPTFOO = "prompts: [p.txt]\nproviders: [openai:gpt-4o]\nscenarios:\n  - config: []\n"


def project(tmp_path: Path) -> Path:
    write(tmp_path, WORKFLOW, ".github/workflows/ci.yml")
    write(tmp_path, COMPOSE, "docker-compose.yml")
    write(tmp_path, ARTILLERY, "load/artillery.yml")
    write(tmp_path, PROMPTFOO, "promptfooconfig.yaml")
    write(tmp_path, "suite: mine\n" + HEAD + ONE_SCENARIO, "evals/mine.yaml")
    return tmp_path


def test_a_folder_loads_only_its_suites(tmp_path: Path) -> None:
    suites = load_paths([project(tmp_path)])
    assert [s.name for s in suites] == ["mine"]


def test_skipped_files_are_listed_under_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    skipped: list[Path] = []
    load_paths([root], on_skip=skipped.append)
    assert sorted(p.relative_to(root).as_posix() for p in skipped) == [
        ".github/workflows/ci.yml",
        "docker-compose.yml",
        "load/artillery.yml",
        "promptfooconfig.yaml",
    ]
    assert main(["run", "-v", str(root), "--json", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert "docker-compose.yml: not a scenario suite" in err
    assert "ci.yml: not a scenario suite" in err


def test_a_non_suite_named_explicitly_is_still_an_error(tmp_path: Path) -> None:
    compose = write(tmp_path, COMPOSE, "docker-compose.yml")
    with pytest.raises(ConfigError) as caught:
        load_paths([compose])
    assert "unknown key 'services'" in str(caught.value)
    assert main(["run", str(compose)]) == 2


def test_a_folder_without_suites_says_what_it_passed_over(tmp_path: Path) -> None:
    write(tmp_path, COMPOSE, "docker-compose.yml")
    with pytest.raises(ConfigError) as caught:
        load_paths([tmp_path])
    assert "no scenario suites here (1 YAML file without a top-level 'scenarios:' key" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("text", "suite"),
    [
        (HEAD + ONE_SCENARIO, True),
        (ONE_SCENARIO, True),  # no agent yet, only our keys: ours, and its error is shown
        (HEAD + ONE_SCENARIO.replace("scenarios:", "scenarioz:"), True),  # typo: shown
        (ONE_SCENARIO + "timeout: 3\n" + f"agent: {AGENT}\n", True),  # stray key, an agent
        ('"scenarios":\n  - {name: a, agent: x:y}\n', True),
        (ARTILLERY, False),
        (PROMPTFOO, False),
        (WORKFLOW, False),
        (COMPOSE, False),
        ("  scenarios:\n    - {name: a}\n", False),  # not top-level
        ("", False),
    ],
)
def test_looks_like_suite(tmp_path: Path, text: str, suite: bool) -> None:
    assert looks_like_suite(write(tmp_path, text)) is suite


def test_pytest_collection_uses_the_same_test(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makefile(".yml", artillery=ARTILLERY)
    pytester.makefile(".yaml", promptfooconfig=PROMPTFOO)
    result = pytester.runpytest("--harness-scenarios", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "error" not in result.stdout.str().lower()
