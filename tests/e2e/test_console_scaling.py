"""The console at scale, in a real pseudo-terminal: live failures, the bar, -q, 80 columns."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from harness.cli import main
from harness.report.console import narrow_items
from tests.support.paths import FIXTURES

AGENT_FILE = FIXTURES / "fixture_agent.py"
HARNESS = Path(sys.executable).parent / "harness"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def write_many(folder: Path, passing: int, failing: int, *, repeat: int = 1) -> Path:
    """One suite of quick scripted scenarios, the failing ones spread through it."""
    lines = []
    total = passing + failing
    every = total // failing if failing else total + 1
    for index in range(total):
        bad = failing and index % every == every - 1 and index // every < failing
        b = 9 if bad else 2
        lines.append(
            f"- {{name: 'case {index:03d}', input: x, repeat: {repeat}, "
            f"script: [{{tool_calls: [{{name: add, args: {{a: 1, b: {b}}}}}]}}, "
            "{content: done}], expect: {tool_calls: [{name: add, args: {a: 1, b: 2}}]}, "
            "metrics: {tool_call_accuracy: 1.0, tool_call_sequence_accuracy: 1.0}}"
        )
    path = folder / "many.yaml"
    path.write_text(
        f"suite: many\nagent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\n"
        "scenarios:\n" + textwrap.indent("\n".join(lines) + "\n", "  "),
        encoding="utf-8",
    )
    return path


def run_in_pty(args: list[str], columns: int = 80, timeout: float = 120) -> str:
    """``harness ARGS`` on a pseudo-terminal of ``columns``; everything it wrote, raw."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("GITHUB_ACTIONS", None)
    process = subprocess.Popen(
        [str(HARNESS), *args], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
    finally:
        process.wait(timeout=30)
        os.close(master)
    return b"".join(chunks).decode("utf-8", errors="replace")


def plain(raw: str) -> str:
    return ANSI.sub("", raw).replace("\r\n", "\n")


def test_on_a_terminal_failures_show_as_they_happen_above_a_bar_with_counts(
    tmp_path: Path,
) -> None:
    suite = write_many(tmp_path, passing=55, failing=5)
    raw = run_in_pty(["run", str(suite), "--concurrency", "2"])
    text = plain(raw)
    # the live bar: counts of each kind and an ETA, redrawn in place
    assert re.search(r"scenarios .*\d+/60 .*\d+ passed \d+ failed 0 errors .*eta", text), text
    # a failure line came out while the bar was still running (before the bar reached 60/60)
    first_failure = text.index("FAILED many::case 011 - ")
    assert "60/60" not in text[:first_failure] and "/60" in text[first_failure:]
    assert "- tool_call_accuracy 0.00 < 1.00" in text[first_failure:].splitlines()[0]
    # past 50 scenarios the table lists only those that did not pass
    table = text.split("┏", 1)[1].split("FAILURES", 1)[0]
    assert "case 011" in table and "case 000" not in table
    assert "55 more not shown" in table
    assert "55 passed, 5 failed in" in text.splitlines()[-1] or "55 passed, 5 failed" in text


def test_verbose_lists_every_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_many(tmp_path, passing=55, failing=1)
    assert main(["run", str(suite), "-v"]) == 1
    table = capsys.readouterr().out.split("┏", 1)[1].split("FAILURES", 1)[0]
    assert "case 000" in table and "more not shown" not in table


def test_quiet_prints_only_the_summary_line(tmp_path: Path) -> None:
    suite = write_many(tmp_path, passing=3, failing=1)
    lines = [line for line in plain(run_in_pty(["run", str(suite), "-q"])).split("\n") if line]
    assert len(lines) == 1, lines
    assert re.fullmatch(r"=+ 3 passed, 1 failed in \d+\.\d+s =+", lines[0].strip())


def test_no_metric_name_is_cut_at_80_columns(tmp_path: Path) -> None:
    suite = write_many(tmp_path, passing=2, failing=2)
    text = plain(run_in_pty(["run", str(suite), "-v"], columns=80))
    table = text.split("┏", 1)[1].split("FAILURES", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    assert all(cell_len(line) <= 80 for line in table.splitlines()), table
    scores = " ".join(line.split("│")[4].strip() for line in rows)
    names = re.findall(r"[a-z_]{6,}", scores)
    assert set(names) == {"tool_call_accuracy", "tool_call_sequence_accuracy"}, scores
    assert rows[0].rstrip().endswith("s │")  # the time column is whole


def test_narrow_items_break_long_names_only_at_word_joints() -> None:
    assert narrow_items("tool_call_sequence_accuracy 1.00 ✓", 16) == (
        "tool_call_\nsequence_\naccuracy 1.00 ✓"
    )
    assert narrow_items("short 1.00 ✓", 16) == "short 1.00 ✓"


def test_repeat_shows_the_aggregate_not_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    suite = write_many(tmp_path, passing=1, failing=0, repeat=4)
    assert main(["run", str(suite)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    scores = " ".join(line.split("│")[5].strip() for line in rows)
    assert (
        scores == "4/4 passed, tool_call_accuracy mean 1.00, tool_call_sequence_accuracy mean 1.00"
    )


def test_wide_characters_stay_aligned_in_the_match_table(tmp_path: Path) -> None:
    path = tmp_path / "cjk.yaml"
    path.write_text(
        f"suite: cjk\nagent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\nscenarios:\n"
        "  - name: 東京の天気 🌧\n    input: x\n"
        "    script: [{tool_calls: [{name: lookup, args: {key: 東京}}]}, {content: done}]\n"
        "    expect: {tool_calls: [{name: lookup, args: {key: 大阪}}]}\n",
        encoding="utf-8",
    )
    from harness.report.console import render_console
    from harness.run.runner import run_scenarios
    from harness.scenarios import load_file

    result = run_scenarios(list(load_file(path).scenarios))
    console = Console(width=100, record=True, force_terminal=False, color_system=None)
    render_console(result, console)
    text = console.export_text()
    table = [line for line in text.splitlines() if line.startswith(("┃", "│", "┏", "└"))]
    assert len({cell_len(line) for line in table}) == 1, table  # every table line equally wide
    header = next(line for line in text.splitlines() if line.strip().startswith("#  expected"))
    row = next(line for line in text.splitlines() if line.strip().startswith("1  lookup("))
    # the 'actual' column starts at the same terminal cell in the header and the row
    assert cell_len(header[: header.index("actual")]) == cell_len(
        row[: row.index("lookup(key='東京')")]
    )
