"""Selecting scenarios as pytest does: -k / -m expressions, node ids, --lf, --rerun-failed, -x."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError, SelectionError
from harness.run.filtering import (
    EXIT_NO_SCENARIOS,
    LAST_FAILED_FILE,
    Selection,
    parse_expression,
    read_last_failed,
    split_node_ids,
    write_last_failed,
)
from harness.scenarios import load_file
from tests.support.paths import FIXTURES
from tests.support.suites import fixture_suite

AGENT_FILE = FIXTURES / "fixture_agent.py"


def _run_of(name: str, ok: bool, tags: str = "") -> str:
    b = 2 if ok else 9
    return (
        f"- {{name: {name}, input: x, {tags}script: [{{tool_calls: [{{name: add, args: "
        f"{{a: 1, b: {b}}}}}]}}, {{content: done}}], expect: {{tool_calls: [{{name: add, "
        "args: {a: 1, b: 2}}]}}\n"
    )


def write_suite(folder: Path, body: str, name: str = "travel", top: str = "") -> Path:
    return fixture_suite(folder, body, file=f"{name}.yaml", suite=name, header=top)


SUITE = (
    _run_of("berlin weather", True, "tags: [smoke], ")
    + _run_of("berlin hotel", True, "tags: [slow], ")
    + _run_of("paris weather", False, "tags: [smoke, slow], ")
)


def ran(out: str) -> list[str]:
    """Scenario ids of the plain progress lines (``[1/3] PASSED   suite::name (0.01s)``)."""
    ids = []
    for line in out.splitlines():
        if line.startswith("[") and "] " in line and line.rstrip().endswith("s)"):
            ids.append(line.split(None, 2)[2].rsplit(" (", 1)[0])
    return sorted(ids)


# --- the expression language ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "words", "expected"),
    [
        ("berlin", {"berlin"}, True),
        ("berlin and not hotel", {"berlin", "weather"}, True),
        ("berlin and not hotel", {"berlin", "hotel"}, False),
        ("travel or orders", {"orders"}, True),
        ("not travel or orders", {"travel"}, False),  # not binds tighter than or
        ("a or b and c", {"a"}, True),  # and binds tighter than or
        ("(a or b) and c", {"a"}, False),
        ("not not a", {"a"}, True),
        ("", set(), True),  # pytest: an empty expression selects everything
        ("suite::name-with.dots[1]", {"suite::name-with.dots[1]"}, True),
    ],
)
def test_expressions_follow_pytest_precedence(
    expression: str, words: set[str], expected: bool
) -> None:
    assert parse_expression(expression).holds(words.__contains__) is expected


@pytest.mark.parametrize(
    ("expression", "column", "fragment"),
    [
        ("a and", 6, "expected 'not', '(' or a word; got end of input"),
        ("(a or b", 8, "expected ')'; got end of input"),
        ("a b", 3, "got 'b' (join the words of a name with 'and')"),
        ("a & b", 3, "unexpected character '&'"),
        (")", 1, "got ')'"),
    ],
)
def test_a_bad_expression_names_the_column(expression: str, column: int, fragment: str) -> None:
    with pytest.raises(SelectionError) as info:
        parse_expression(expression, "-k")
    assert info.value.column == column and info.value.option == "-k"
    assert fragment in str(info.value) and f"at column {column}" in str(info.value)
    assert isinstance(info.value, HarnessError) and isinstance(info.value, ValueError)


def test_keyword_words_match_name_suite_file_and_tags_in_any_case(tmp_path: Path) -> None:
    scenarios = load_file(write_suite(tmp_path, SUITE)).scenarios

    def names(*keywords: str, marks: tuple[str, ...] = ()) -> list[str]:
        selection = Selection.build(keywords=keywords, marks=marks)
        return [s.name for s in selection.apply(scenarios)]

    assert names("BERLIN and not hotel") == ["berlin weather"]
    assert names("travel") == ["berlin weather", "berlin hotel", "paris weather"]  # the suite
    assert names("travel.yaml and paris") == ["paris weather"]  # the file name
    assert names("smoke") == ["berlin weather", "paris weather"]  # a tag, as pytest's markers
    # repeated -k: every one must hold (pytest would keep only the last)
    assert names("berlin", "weather") == ["berlin weather"]
    # -m: a word is a tag exactly, not a substring
    assert names(marks=("smoke and not slow",)) == ["berlin weather"]
    assert names(marks=("smok",)) == []
    assert names("paris", marks=("slow",)) == ["paris weather"]


def test_suite_tags_apply_to_every_scenario(tmp_path: Path) -> None:
    suite = load_file(write_suite(tmp_path, SUITE, top="tags: [nightly]\n"))
    assert [s.tags for s in suite.scenarios] == [
        ("nightly", "smoke"),
        ("nightly", "slow"),
        ("nightly", "smoke", "slow"),
    ]


def test_a_tag_with_a_space_is_a_configuration_error(tmp_path: Path) -> None:
    path = write_suite(tmp_path, _run_of("x", True, "tags: ['not ok'], "))
    with pytest.raises(HarnessError) as info:
        load_file(path)
    assert "travel.yaml:" in str(info.value) and "tags" in str(info.value)


# --- through the CLI --------------------------------------------------------------------------


def test_k_expression_and_m_in_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, SUITE)
    assert main(["run", str(suite), "-k", "berlin and not hotel"]) == 0
    assert ran(capsys.readouterr().out) == ["travel::berlin weather"]
    assert main(["run", str(suite), "-m", "slow", "-k", "paris"]) == 1
    assert ran(capsys.readouterr().out) == ["travel::paris weather"]


def test_nothing_selected_exits_5_as_pytest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, SUITE)
    assert main(["run", str(suite), "-m", "nightly"]) == EXIT_NO_SCENARIOS == 5
    assert "no scenarios matching -m 'nightly'" in capsys.readouterr().err


def test_a_bad_expression_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, SUITE)
    assert main(["run", str(suite), "-k", "berlin and"]) == 2
    assert "-k 'berlin and': at column 11" in capsys.readouterr().err


def test_node_ids_select_one_scenario_of_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path, SUITE)
    write_suite(tmp_path, _run_of("berlin weather", True), name="other")
    assert main(["run", "travel.yaml::berlin hotel", "other.yaml::berlin weather"]) == 0
    assert ran(capsys.readouterr().out) == ["other::berlin weather", "travel::berlin hotel"]
    assert main(["run", "travel.yaml::berlin hotle"]) == 2
    err = capsys.readouterr().err
    assert "no scenario named 'berlin hotle' in travel.yaml" in err
    assert "did you mean 'berlin hotel'?" in err


def test_split_node_ids_keeps_an_existing_path_with_colons(tmp_path: Path) -> None:
    odd = tmp_path / "a::b.yaml"
    odd.write_text("x", encoding="utf-8")
    assert split_node_ids([str(odd), "s.yaml::n", "s.yaml::m"]) == (
        [str(odd), "s.yaml"],
        [
            *split_node_ids(["s.yaml::n"])[1],
            *split_node_ids(["s.yaml::m"])[1],
        ],
    )


def test_last_failed_reruns_only_what_failed_then_forgets_what_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path, SUITE)
    assert main(["run", "--lf", "travel.yaml"]) == 1  # nothing recorded yet: everything runs
    captured = capsys.readouterr()
    assert "--lf: no failures recorded" in captured.err
    assert len(ran(captured.out)) == 3
    assert read_last_failed(tmp_path / LAST_FAILED_FILE) == {"travel.yaml::paris weather"}
    assert main(["run", "--last-failed", "travel.yaml"]) == 1
    assert ran(capsys.readouterr().out) == ["travel::paris weather"]
    # the failure gets fixed: the next run passes and the state file forgets it
    write_suite(tmp_path, SUITE.replace("b: 9", "b: 2"))
    assert main(["run", "--lf", "travel.yaml"]) == 0
    assert read_last_failed(tmp_path / LAST_FAILED_FILE) == set()
    assert (tmp_path / ".harness_cache" / ".gitignore").read_text() == "*\n"


def test_write_last_failed_keeps_what_did_not_run(tmp_path: Path) -> None:
    state = tmp_path / "lf.json"
    write_last_failed([("a::1", True), ("a::2", True)], state)
    write_last_failed([("a::1", False)], state)  # only a::1 ran, and passed
    assert json.loads(state.read_text()) == {"a::2": True}


def test_rerun_failed_takes_the_failures_of_a_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, SUITE)
    report = tmp_path / "results.json"
    assert main(["run", str(suite), "--json", str(report)]) == 1
    capsys.readouterr()
    assert main(["run", str(suite), "--rerun-failed", str(report)]) == 1
    assert ran(capsys.readouterr().out) == ["travel::paris weather"]
    (tmp_path / "junk.json").write_text("[1, 2]", encoding="utf-8")
    assert main(["run", str(suite), "--rerun-failed", str(tmp_path / "junk.json")]) == 2
    assert "not a harness JSON report" in capsys.readouterr().err


def test_x_is_fail_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = _run_of("first", False) + "".join(_run_of(f"later {i}", True) for i in range(6))
    suite = write_suite(tmp_path, body)
    assert main(["run", str(suite), "-x", "--concurrency", "1"]) == 1
    out = capsys.readouterr().out
    assert ran(out) == ["travel::first"] and "6 not run" in out
