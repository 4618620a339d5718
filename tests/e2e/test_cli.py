"""The ``harness`` CLI: in-process through ``main(argv)``, and as real subprocesses."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.common import YOUNG_THRESHOLD, collector_for_a_command
from tests.support.paths import FIXTURES
from tests.support.suites import fixture_suite

BASIC = FIXTURES / "suites" / "basic.yaml"
BAD = FIXTURES / "bad"
AGENT_FILE = FIXTURES / "fixture_agent.py"
HARNESS = Path(sys.executable).parent / "harness"


def write_suite(tmp_path: Path, body: str, name: str = "suite.yaml") -> Path:
    return fixture_suite(tmp_path, body, file=name)


PASSING = (
    "- {name: ok, input: x, script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}], "
    "expect: {tool_calls: [add]}}\n"
)


def test_run_all_passed_exits_0_and_writes_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, PASSING)
    code = main(
        [
            "run",
            str(suite),
            "--json",
            str(tmp_path / "r.json"),
            "--junit-xml",
            str(tmp_path / "r.xml"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "[1/1] PASSED   suite::ok" in out  # plain progress lines when not on a terminal
    assert "1 passed in " in out
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["passed"] == 1
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")


def test_run_with_a_failure_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(BASIC)]) == 1
    out = capsys.readouterr().out
    assert "FAILED basic::wrong args" in out and "1 passed, 1 failed" in out


def test_run_sets_the_collector_for_the_command_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import harness.run.runner

    running = harness.run.runner.run_scenarios
    seen: list[tuple[int, tuple[int, int, int]]] = []

    def spy(*args: object, **kwargs: object) -> object:
        seen.append((gc.get_freeze_count(), gc.get_threshold()))
        return running(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(harness.run.runner, "run_scenarios", spy)
    before, thresholds = gc.get_freeze_count(), gc.get_threshold()
    assert main(["run", str(BASIC)]) == 1
    ((frozen, during),) = seen
    assert frozen > before  # the libraries and the scenarios, at least
    assert during[0] == max(thresholds[0], YOUNG_THRESHOLD) and during[1:] == thresholds[1:]
    assert (gc.get_freeze_count(), gc.get_threshold()) == (before, thresholds)


def test_a_freeze_or_thresholds_the_process_set_itself_are_kept() -> None:
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 30)
    try:
        mine = gc.get_freeze_count()
        with collector_for_a_command():
            assert gc.get_freeze_count() == mine
            assert gc.get_threshold() == (50_000, 20, 30)  # already rarer than ours
        assert gc.get_freeze_count() == mine  # not thawed: it was not ours
        assert gc.get_threshold() == (50_000, 20, 30)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    gc.set_threshold(0)  # collection off: left off
    try:
        with collector_for_a_command():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*thresholds)
    with pytest.raises(SystemExit), collector_for_a_command():
        assert gc.get_freeze_count() > 0
        raise SystemExit(3)
    assert (gc.get_freeze_count(), gc.get_threshold()) == (0, thresholds)


def test_keyword_selects_and_no_match_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", str(BASIC), "-k", "ADDS"]) == 0
    assert "1 passed" in capsys.readouterr().out
    # nothing selected exits 5, as in pytest (it was 2, a usage error, before issue 15)
    assert main(["run", str(BASIC), "-k", "nothing-like-this"]) == 5
    assert "no scenarios matching -k 'nothing-like-this'" in capsys.readouterr().err


def test_configuration_errors_exit_2_and_list_every_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_suite(tmp_path, PASSING)
    bad_files = sorted(BAD.glob("*.yaml"))
    # named one by one: under a folder, the files that are not suites at all are passed over
    assert main(["run", str(good), *map(str, bad_files)]) == 2
    captured = capsys.readouterr()
    for file in bad_files:
        assert file.name in captured.err
    assert "unknown metric 'tool_call_acuracy' — did you mean 'tool_call_accuracy'?" in captured.err
    assert "configuration errors" in captured.err
    assert "PASSED" not in captured.out  # nothing ran


def test_errors_and_timeouts_do_not_stop_other_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path,
        PASSING
        + "- {name: hang, input: x, timeout: 0.2, script: [{tool_calls: [{name: wait_forever, "
        "args: {seconds: 30}}]}]}\n"
        "- {name: crash, input: x, agent: " + f"'{AGENT_FILE}:build_raises', script: []}}\n",
    )
    assert main(["run", str(suite), "--json", str(tmp_path / "r.json")]) == 1
    data = json.loads((tmp_path / "r.json").read_text())
    assert [s["status"] for s in data["scenarios"]] == ["passed", "error", "error"]
    assert "1 passed, 2 error" in capsys.readouterr().out


def test_cli_timeout_and_repeat_overrides(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, PASSING)
    assert main(["run", str(suite), "--repeat", "3", "--json", str(tmp_path / "r.json")]) == 0
    (scenario,) = json.loads((tmp_path / "r.json").read_text())["scenarios"]
    assert (scenario["repeat"], scenario["passes"]) == (3, 3)


def test_bad_cli_values_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(BASIC), "--concurrency", "0"]) == 2
    assert "expected a number >= 1, got 0" in capsys.readouterr().err


def test_validate_checks_expectations_against_real_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(BASIC)]) == 0
    assert "1 file(s), 2 scenario(s): OK" in capsys.readouterr().out
    suite = write_suite(
        tmp_path,
        "- {name: v, input: x, script: [], expect: {tool_calls: [{name: add, args: {a: 'one', "
        "z: 1}}, lookp]}}\n",
    )
    assert main(["validate", str(suite)]) == 2
    err = capsys.readouterr().err
    assert (
        "scenarios[0].expect.tool_calls[0].args.a: wrong type for argument 'a' of tool "
        "'add': expected integer, found the string 'one'" in err
    )
    assert "unknown argument 'z' for tool 'add'" in err
    assert "unknown tool 'lookp' — did you mean 'lookup'?" in err
    assert "3 configuration errors" in err


def test_metrics_lists_every_metric_with_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in ("tool_call_accuracy", "tool_call_sequence_accuracy", "tool_call_f1"):
        assert name in out
    assert "threshold=" in out


def test_real_subprocess_run(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(HARNESS), "run", str(BASIC), "--junit-xml", str(tmp_path / "j.xml")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert "1 passed, 1 failed" in proc.stdout
    assert (tmp_path / "j.xml").exists()


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_writes_the_partial_report_and_exits_130(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path,
        PASSING + "- {name: slow, input: x, script: [{tool_calls: [{name: wait_forever, args: "
        "{seconds: 60}}]}]}\n",
    )
    report = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [str(HARNESS), "run", str(suite), "--json", str(report), "--concurrency", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the passing scenario's progress line: the run is under way
    assert "PASSED" in line
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["not_run"] == 1
    assert [s["name"] for s in data["scenarios"]] == ["ok"]
    assert "(interrupted)" in out


def test_html_report_flag_writes_the_file(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, PASSING)
    page = tmp_path / "out" / "r.html"
    assert main(["run", str(suite), "--html", str(page)]) == 0
    assert "<html" in page.read_text("utf-8").lower()


def test_one_list_of_reporters_and_a_broken_one_does_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    from harness.cli import ReportOptions, build_reporters
    from harness.report.console import ConsoleReporter
    from harness.report.json_report import JsonReporter
    from harness.report.junit import JunitReporter

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    failed: list[str] = []
    options = ReportOptions(
        Console(),
        json_path=str(blocker / "r.json"),  # its folder is a file: cannot be created
        junit_xml=str(tmp_path / "r.xml"),
    )
    reporters = build_reporters(options, lambda path, exc: failed.append(str(path)))
    assert [type(r) for r in reporters] == [ConsoleReporter, JunitReporter]
    assert failed == [str(blocker / "r.json")]
    assert JsonReporter not in {type(r) for r in reporters}
    suite = write_suite(tmp_path, PASSING)
    argv = ["run", str(suite), "--json", str(blocker / "r.json"), "--junit-xml"]
    assert main([*argv, str(tmp_path / "r.xml")]) == 0
    captured = capsys.readouterr()
    assert f"cannot write report {blocker / 'r.json'}" in captured.err
    assert f"report written: {tmp_path / 'r.xml'}" in captured.out


# --- the flags every reporting command shares --------------------------------------------------

REPORTING = ("run", "eval-traces")
"""The commands that report: their output and report flags mean the same on each."""

SHARED_FLAGS = (
    "-v",
    "-q",
    "--junit-xml",
    "--json",
    "--html",
    "--markdown",
    "--github",
    "--trace-url",
    "--redact",
    "--no-default-redact",
    "--redact-pattern",
)


def _help_entries(command: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """``harness COMMAND --help``: each option's first flag -> its whole entry (help text)."""
    assert main([command, "--help"]) == 0
    entries: dict[str, str] = {}
    flag = None
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("  -"):
            flag = line.split()[0].rstrip(",")
            entries[flag] = line
        elif flag is not None and line.startswith("    "):
            entries[flag] += " " + line.strip()
        else:
            flag = None
    return entries


def test_every_reporting_command_has_the_same_output_and_report_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    helps = {command: _help_entries(command, capsys) for command in REPORTING}
    for flag in SHARED_FLAGS:
        shown = {command: " ".join(helps[command].get(flag, "").split()) for command in REPORTING}
        assert "" not in shown.values(), f"{flag} missing from: {shown}"
        assert len(set(shown.values())) == 1, shown


def test_quiet_and_verbose_mean_the_same_on_run_and_eval_traces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "suites"
    folder.mkdir()
    write_suite(folder, PASSING)
    (folder / "notes.yaml").write_text("a: 1\n", encoding="utf-8")  # not a suite
    trace = tmp_path / "traces.jsonl"
    assert main(["run", str(folder), "-q", "--trace-file", str(trace)]) == 0
    run_quiet = capsys.readouterr()
    assert main(["eval-traces", str(trace), "--scenarios", str(folder), "-q"]) == 0
    eval_quiet = capsys.readouterr()
    for out in (run_quiet.out, eval_quiet.out):
        (line,) = out.splitlines()  # -q: the summary line only
        assert " 1 passed in " in line and line.startswith("=")
    assert main(["run", str(folder), "-v"]) == 0
    run_verbose = capsys.readouterr()
    assert main(["eval-traces", str(trace), "--scenarios", str(folder), "--verbose"]) == 0
    eval_verbose = capsys.readouterr()
    skipped = f"skipped {folder / 'notes.yaml'}: not a scenario suite"
    for captured in (run_verbose, eval_verbose):
        assert skipped in captured.err
        assert "suite" in captured.out and "PASSED" in captured.out  # the table's row
