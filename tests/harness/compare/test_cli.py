"""``harness compare``: exit codes by ``--fail-on``, the files it writes, bad input (exit 2,
one clear line per problem, never a traceback), and what it imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.harness.compare.conftest import TravelPair


@pytest.fixture(autouse=True)
def _not_in_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub output only where a test asks for it (CI may run inside GitHub Actions)."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _compare(*args: object) -> int:
    return main(["compare", *(str(arg) for arg in args)])


def test_exit_codes_by_fail_on(travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]) -> None:
    base, head = travel_pair.base, travel_pair.head
    assert _compare(base, head) == 1  # regressions, the default
    assert _compare(base, head, "--fail-on", "regressions") == 1
    assert _compare(base, head, "--fail-on", "any") == 1
    assert _compare(base, head, "--fail-on", "none") == 0
    out = capsys.readouterr().out
    assert "2 regressions, 1 fix, 2 still failing" in out


def test_identical_reports_exit_0_even_under_any(
    travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare(travel_pair.base, travel_pair.base, "--fail-on", "any") == 0
    assert "no change: 16 scenarios, 3 still failing" in capsys.readouterr().out


def test_a_fix_alone_fails_only_under_any(flaky_reports: dict[str, Path]) -> None:
    before, after = flaky_reports["3/10"], flaky_reports["8/10"]
    assert _compare(before, after) == 0
    assert _compare(before, after, "--fail-on", "any") == 1
    noise = (flaky_reports["9/10"], flaky_reports["7/10"])
    assert _compare(*noise) == 0  # the status flipped, the drop is not significant
    assert _compare(*noise, "--alpha", "0.3") == 1
    assert _compare(*noise, "--fail-on", "any") == 1


def test_quiet_prints_the_summary_line_only(
    travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    _compare(travel_pair.base, travel_pair.head, "-q")
    (line,) = capsys.readouterr().out.splitlines()
    assert "2 regressions, 1 fix" in line


def test_json_markdown_and_github_outputs(
    tmp_path: Path,
    travel_pair: TravelPair,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out_json, out_md = tmp_path / "out" / "comparison.json", tmp_path / "comparison.md"
    code = _compare(
        travel_pair.base, travel_pair.head, "--json", out_json, "--markdown", out_md, "--github"
    )
    assert code == 1
    section = json.loads(out_json.read_text(encoding="utf-8"))["comparison"]
    assert section["counts"]["regressed"] == 2 and section["base"] == str(travel_pair.base)
    markdown = out_md.read_text(encoding="utf-8")
    assert markdown.startswith("### toolcall-harness compare: 2 regressions, 1 fix")
    assert summary.read_text(encoding="utf-8") == "earlier step\n" + markdown
    annotations = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    assert len(annotations) == 2 and all(a.startswith("::error file=") for a in annotations)


def test_an_unwritable_output_is_exit_2(
    tmp_path: Path, travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _compare(travel_pair.base, travel_pair.head, "--json", blocker / "out.json") == 2
    assert f"{blocker / 'out.json'}: cannot write" in capsys.readouterr().err


def test_bad_input_is_exit_2_with_one_line_per_file(
    tmp_path: Path, travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", encoding="utf-8")
    assert _compare(tmp_path / "missing.json", garbage) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'missing.json'}: no such file" in err
    assert f"{garbage}: not JSON: line 1, column 2" in err
    assert "Traceback" not in err
    assert _compare(travel_pair.traces, travel_pair.head) == 2
    assert "an OTLP trace file, not a JSON report" in capsys.readouterr().err


def test_usage_errors_are_exit_2(
    travel_pair: TravelPair, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare(travel_pair.base, travel_pair.head, "--alpha", "1.5") == 2
    assert "expected a level between 0 and 1" in capsys.readouterr().err
    assert _compare(travel_pair.base, travel_pair.head, "--k", "0") == 2
    assert _compare(travel_pair.base, travel_pair.head, "--fail-on", "some") == 2
    assert _compare(travel_pair.base) == 2


def test_a_newer_report_from_a_real_process_names_its_version(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = json.loads(travel_pair.head.read_text(encoding="utf-8"))
    data["schema_version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compare", str(travel_pair.base), str(newer)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert f"{newer}: report format version 99 is newer than" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


HEAVY = ("langchain", "langchain_core", "langgraph", "langsmith", "opentelemetry")

_IMPORTS = """
import argparse, json, sys
from rich.console import Console
from harness.cli.compare import add_parser, compare_command
heavy = lambda: sorted({n.split(".")[0] for n in sys.modules} & set(json.loads(sys.argv[3])))
parser = argparse.ArgumentParser()
add_parser(parser.add_subparsers(dest="command"))
args = parser.parse_args(["compare", sys.argv[1], sys.argv[2], "-q"])
code = compare_command(args, Console(), Console(stderr=True))
command = heavy()
from harness.cli import main
main(["compare", sys.argv[1], sys.argv[2], "-q"])
print(json.dumps({"code": code, "command": command, "cli": heavy()}))
"""


def test_compare_imports_no_langchain(travel_pair: TravelPair) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _IMPORTS,
            str(travel_pair.base),
            str(travel_pair.head),
            json.dumps(HEAVY),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["code"] == 1
    assert found["command"] == []  # reading, comparing, printing: none of them
    if found["cli"]:
        pytest.xfail(
            f"the whole `harness` parser imports {found['cli']} to build run's flags; the CLI "
            "start-up work makes that lazy"
        )


def test_the_reporters_can_import_the_package() -> None:
    """A run's reporters render its comparison (--baseline) with this package's functions, so
    importing it must not import a reporter: that import would be circular."""
    reporters = ["console", "json_report", "junit", "html", "markdown", "github", "base"]
    code = (
        "import json, sys; import harness.compare; "
        f"print(json.dumps([m for m in {reporters!r} if 'harness.report.' + m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []


def test_the_cli_copies_of_the_comparison_defaults_match_the_package() -> None:
    """``harness.cli.compare`` keeps its own copies (so ``--help`` imports no comparison code):
    they must say what ``harness.compare`` does."""
    from harness import compare
    from harness.cli import compare as cli_compare

    assert cli_compare.FAIL_ON == compare.FAIL_ON
    assert cli_compare.DEFAULT_ALPHA == compare.DEFAULT_ALPHA
