"""``harness eval-traces``: recorded OTLP JSON traces scored like live runs, streaming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.evaluate_traces import iter_recorded_traces
from tests.test_run_export import write_secret_suite

SUITE = """
suite: shop
scenarios:
  - name: refund
    input: refund order 7
    expect:
      tool_calls: [{name: get_order, args: {order_id: 7}}, {name: refund, args: {order_id: 7}}]
      order: strict
  - name: lookup
    input: where is order 9
    expect:
      tool_calls: [{name: get_order, args: {order_id: 9}}]
      forbid: [refund]
"""
"""Scenarios for hand-written traces (their agent is never built by eval-traces)."""


def _suite(tmp_path: Path) -> Path:
    # the loader wants an agent and model; eval-traces never builds them
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    path = tmp_path / "shop.yaml"
    path.write_text(
        SUITE.replace(
            "suite: shop\n", f"suite: shop\nagent: {agent}:build\nmodel: {{provider: demo}}\n"
        ),
        encoding="utf-8",
    )
    return path


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace: int, span: int, parent: int | None, name: str, **attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_000 * span),
        "endTimeUnixNano": str(1_000 * span + 500),
        "attributes": [_attr(k.replace("__", "."), v) for k, v in attrs.items()],
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def _tool(trace: int, span: int, parent: int, name: str, **args: Any) -> dict[str, Any]:
    attrs = {
        "gen_ai__operation__name": "execute_tool",
        "gen_ai__tool__name": name,
        "gen_ai__tool__call__id": f"call_{trace}_{span}",
        "gen_ai__tool__call__arguments": json.dumps(args),
    }
    return _span(trace, span, parent, f"execute_tool {name}", **attrs)


def _root(trace: int, scenario: str | None, suite: str | None = "shop") -> dict[str, Any]:
    attrs = {}
    if scenario is not None:
        attrs["harness__scenario"] = scenario
    if suite is not None:
        attrs["harness__suite"] = suite
    return _span(trace, 1, None, f"scenario {scenario}", **attrs)


def _line(*spans: dict[str, Any]) -> str:
    request = {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]
    }
    return json.dumps(request)


def _collector_file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "collector.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_collector_format_written_by_hand_is_scored(tmp_path: Path) -> None:
    traces = _collector_file(
        tmp_path,
        # trace 1: refund done right, its spans split over two lines (root on the second)
        _line(_tool(1, 2, 1, "get_order", order_id=7)),
        _line(_tool(1, 3, 1, "refund", order_id=7), _root(1, "refund")),
        # trace 2: lookup, but a refund sneaked in (forbidden)
        _line(_tool(2, 2, 1, "get_order", order_id=9), _tool(2, 3, 1, "refund", order_id=9)),
        _line(_root(2, "lookup")),
        # trace 3: refund in the wrong order
        _line(
            _tool(3, 2, 1, "refund", order_id=7),
            _tool(3, 3, 1, "get_order", order_id=7),
            _root(3, "refund"),
        ),
    )
    report = tmp_path / "r.json"
    junit = tmp_path / "r.xml"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path))]
    code = main([*argv, "--json", str(report), "--junit-xml", str(junit)])
    assert code == 1
    data = _report(report)
    got = [(s["name"], s["status"], s["trace_id"][-1], s["source"]) for s in data["scenarios"]]
    assert got == [
        ("refund", "passed", "1", f"{traces}:2"),
        ("lookup", "failed", "2", f"{traces}:4"),
        ("refund", "failed", "3", f"{traces}:5"),
    ]
    lookup = data["scenarios"][1]
    assert any(reason.startswith("forbidden tool called") for reason in lookup["reasons"])
    assert "refund[" in junit.read_text()


def test_broken_line_is_reported_with_its_number_and_the_rest_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=9), _root(1, "lookup")),
        '{"resourceSpans": [ this is not json',
        _line(_tool(2, 2, 1, "get_order", order_id=9), _root(2, "lookup")),
    )
    report = tmp_path / "r.json"
    code = main(
        ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path)), "--json", str(report)]
    )
    assert code == 1  # every trace passed, but a line could not be read
    data = _report(report)
    assert [s["status"] for s in data["scenarios"]] == ["passed", "passed"]
    (warning,) = data["warnings"]
    assert warning.startswith(f"{traces}:2: ")
    assert f"{traces}:2: " in capsys.readouterr().out


def test_unmatched_traces_are_reported_not_dropped(tmp_path: Path) -> None:
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=9), _root(1, "lokup")),
        _line(_tool(2, 2, 1, "get_order", order_id=9), _root(2, None, suite=None)),
    )
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path))]
    assert main([*argv, "--json", str(report)]) == 1
    first, second = _report(report)["scenarios"]
    assert first["status"] == "error" and "did you mean 'lookup'" in first["reasons"][0]
    assert second["status"] == "error" and "--scenario NAME" in second["reasons"][0]
    assert first["runs"][0]["tool_calls"][0]["name"] == "get_order"


def test_explicit_scenario_scores_every_trace(tmp_path: Path) -> None:
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=9), _root(1, None, suite=None)),
        _line(_tool(2, 2, 1, "get_order", order_id=8), _root(2, "refund")),
    )
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path))]
    assert main([*argv, "--scenario", "shop::lookup", "--json", str(report)]) == 1
    statuses = [(s["name"], s["status"]) for s in _report(report)["scenarios"]]
    assert statuses == [("lookup", "passed"), ("lookup", "failed")]


def test_unknown_scenario_name_exits_2_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = _collector_file(tmp_path, _line(_root(1, "lookup")))
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path))]
    assert main([*argv, "--scenario", "refnud"]) == 2
    err = capsys.readouterr().err
    assert "'refnud' names no scenario" in err and "did you mean 'refund'" in err


def test_keyword_skips_other_scenarios_traces(tmp_path: Path) -> None:
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=9), _root(1, "lookup")),
        _line(_tool(2, 2, 1, "get_order", order_id=7), _root(2, "refund")),
    )
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path))]
    assert main([*argv, "-k", "look", "--json", str(report)]) == 0
    data = _report(report)
    assert [s["name"] for s in data["scenarios"]] == ["lookup"]
    assert data["warnings"] == ["1 trace(s) of scenarios not selected by -k were skipped"]


def test_round_trip_run_then_eval_gives_the_same_verdicts(tmp_path: Path) -> None:
    suite = write_secret_suite(tmp_path)
    trace_file, live, offline = tmp_path / "t.json", tmp_path / "live.json", tmp_path / "off.json"
    run_argv = ["run", str(suite), "--capture-content", "--repeat", "2"]
    assert main([*run_argv, "--trace-file", str(trace_file), "--json", str(live)]) == 1
    eval_argv = ["eval-traces", str(trace_file), "--scenarios", str(suite)]
    assert main([*eval_argv, "--json", str(offline)]) == 1
    live_verdicts = {
        run["trace_id"]: (scenario["name"], run["passed"], [s["value"] for s in run["scores"]])
        for scenario in _report(live)["scenarios"]
        for run in scenario["runs"]
    }
    offline_verdicts = {
        s["trace_id"]: (
            s["name"],
            s["status"] == "passed",
            [x["value"] for x in s["runs"][0]["scores"]],
        )
        for s in _report(offline)["scenarios"]
    }
    assert len(live_verdicts) == 6
    assert offline_verdicts == live_verdicts


def test_reader_holds_only_open_traces(tmp_path: Path) -> None:
    """Traces come out as their root arrives, before the rest of the file is read."""
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=9), _root(1, "lookup")),
        _line(_tool(2, 2, 1, "get_order", order_id=9)),
    )
    stream = iter_recorded_traces(traces)
    first = next(stream)
    assert first.trace_id.endswith("1") and first.scenario == "lookup" and first.line == 1
    with traces.open("a", encoding="utf-8") as fp:  # written after the first trace came out
        fp.write(_line(_root(2, "lookup")) + "\n")
    (second,) = list(stream)
    assert second.trace_id.endswith("2") and second.line == 3
    assert [c.name for c in second.calls] == ["get_order"]
