"""``harness eval-traces`` on one bad line: the line is reported as ``file:line: what`` and every
other trace is scored (it used to lose everything to a RecursionError or an OverflowError)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.scenarios import load_file
from harness.traces.evaluate import evaluate_traces
from tests.harness.traces.test_evaluate import _collector_file, _line, _root, _suite, _tool

DEEP = 100_000


def _good(trace: int) -> str:
    """A trace that passes ``shop::lookup``."""
    return _line(_tool(trace, 2, 1, "get_order", order_id=9), _root(trace, "lookup"))


def _with(span: dict[str, Any], **raw: str) -> str:
    """A line holding ``span`` and its root, with fields replaced by raw JSON text."""
    for key in raw:
        span[key] = f"@{key}@"
    text = _line(span, _root(int(span["traceId"], 16), "lookup"))
    for key, value in raw.items():
        text = text.replace(f'"@{key}@"', value)
    return text


def _bad_lines() -> dict[str, str]:
    deep_arguments = _tool(20, 2, 1, "get_order", order_id=9)
    deep_arguments["attributes"][-1]["value"]["stringValue"] = '{"a": ' * DEEP + "1" + "}" * DEEP
    big_int = _tool(21, 2, 1, "get_order", order_id=9)
    big_int["attributes"].append({"key": "n", "value": "@n@"})
    return {
        "deep json": "[" * DEEP + "]" * DEEP,
        "deep arguments": _line(deep_arguments, _root(20, "lookup")),
        "1e999 intValue": _line(big_int, _root(21, "lookup")).replace(
            '"@n@"', '{"intValue": 1e999}'
        ),
        "1e999 time": _with(_tool(22, 2, 1, "get_order", order_id=9), startTimeUnixNano="1e999"),
        "1e999 status": _with(_tool(23, 2, 1, "get_order", order_id=9), status='{"code": 1e999}'),
    }


@pytest.fixture
def traces(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """Good traces 1..6 around one bad line of each kind; the bad lines' numbers."""
    lines = [_good(1)]
    where: dict[str, int] = {}
    for number, (name, line) in enumerate(_bad_lines().items(), start=2):
        lines += [line, _good(number)]
        where[name] = len(lines) - 1
    return _collector_file(tmp_path, *lines), where


def test_each_bad_line_is_located_and_the_rest_is_scored(
    tmp_path: Path, traces: tuple[Path, dict[str, int]]
) -> None:
    path, where = traces
    scenarios = list(load_file(_suite(tmp_path)).scenarios)
    result = evaluate_traces([path], scenarios)
    passed = sorted(int(s.trace_id or "0", 16) for s in result.scenarios if s.status == "passed")
    assert passed == list(range(1, len(where) + 2))  # every good trace, none lost
    warnings = "\n".join(result.warnings)
    expected = {
        "deep json": "not an OTLP JSON request: nested too deeply to read",
        "deep arguments": "skipped: nested too deeply to read",
        "1e999 intValue": "span 0 skipped: a number out of range",
        "1e999 time": "span 0 skipped: a number out of range",
        "1e999 status": "span 0 skipped: a number out of range",
    }
    for name, line in where.items():
        assert f"{path}:{line}: " in warnings, (name, warnings)
        located = [w for w in result.warnings if w.startswith(f"{path}:{line}: ")]
        assert any(expected[name] in w for w in located), (name, located)


def test_the_cli_reports_the_lines_and_exits_1(
    tmp_path: Path, traces: tuple[Path, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, where = traces
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(path), "--scenarios", str(_suite(tmp_path)), "--json", str(report)]
    assert main(argv) == 1  # every readable trace passed, but lines could not be read
    out = capsys.readouterr().out
    for line in where.values():
        assert f"{path}:{line}: " in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["counts"]["passed"] == len(where) + 1
    assert len(data["warnings"]) >= len(where)
