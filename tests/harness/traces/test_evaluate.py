"""``harness eval-traces``: recorded OTLP JSON traces scored like live runs, streaming."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, JUnitXml

from harness.cli import main
from harness.report.json_report import JsonReportWriter, render_json
from harness.report.junit import JunitReportWriter
from harness.run.results import ScenarioResult
from harness.traces.evaluate import evaluate_traces, iter_recorded_traces
from tests.harness.span_export.test_run_export import write_secret_suite

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


def _many_traces(tmp_path: Path, count: int, failing_every: int) -> Path:
    """``count`` lookup traces, ten per line; every ``failing_every``-th asks for order 8."""
    traces = [
        (
            _tool(i, 2, 1, "get_order", order_id=8 if i % failing_every == 0 else 9),
            _root(i, "lookup"),
        )
        for i in range(1, count + 1)
    ]
    lines = [
        _line(*[span for trace in traces[first : first + 10] for span in trace])
        for first in range(0, count, 10)
    ]
    return _collector_file(tmp_path, *lines)


def _scenarios(tmp_path: Path) -> list[Any]:
    from harness.scenarios import iter_scenarios, load_paths

    return list(iter_scenarios(load_paths([str(_suite(tmp_path))])))


def test_streamed_reports_equal_the_reports_of_the_whole_result(tmp_path: Path) -> None:
    """Written as the traces are scored, the JSON is render_json's text; JUnit has the totals."""
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=7), _tool(1, 3, 1, "refund", order_id=7)),
        _line(_root(1, "refund")),
        _line(_tool(2, 2, 1, "get_order", order_id=9), _tool(2, 3, 1, "refund", order_id=9)),
        _line(_root(2, "lookup"), _tool(3, 2, 1, "get_order", order_id=9), _root(3, "lookup")),
        _line(_tool(4, 2, 1, "get_order", order_id=9), _root(4, "lokup")),
    )
    json_path, junit_path = tmp_path / "out" / "r.json", tmp_path / "out" / "r.xml"
    json_writer, junit_writer = JsonReportWriter(json_path), JunitReportWriter(junit_path)

    def both(result: ScenarioResult) -> None:
        json_writer.add(result)
        junit_writer.add(result)

    whole = evaluate_traces([traces], _scenarios(tmp_path), progress=both, keep=None)
    json_writer.close(whole)
    junit_writer.close(whole)
    assert [s.status for s in whole.scenarios] == ["passed", "failed", "passed", "error"]
    assert json_path.read_text("utf-8") == render_json(whole) + "\n"
    xml = JUnitXml.fromfile(str(junit_path))
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (4, 1, 1, 0)
    (suite,) = list(xml)
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("shop", 4, 1, 1)
    cases = list(suite)
    assert [case.name.split("[")[0] for case in cases] == ["refund", "lookup", "lookup", "lokup"]
    (error,) = cases[3].result
    assert isinstance(error, Error) and "did you mean" in (error.message or "")
    assert not [p for p in json_path.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_memory_holds_a_bounded_sample_however_many_traces(tmp_path: Path) -> None:
    """Scoring 60 traces with keep=5 never has more than a handful of results alive."""
    traces = _many_traces(tmp_path, 60, failing_every=4)
    seen: list[str] = []
    alive: list[int] = []

    def watch(result: ScenarioResult) -> None:
        seen.append(result.status)
        if len(seen) % 20 == 0:  # count every result object still reachable, not just ours
            gc.collect()
            alive.append(sum(1 for o in gc.get_objects() if type(o) is ScenarioResult))

    result = evaluate_traces([traces], _scenarios(tmp_path), progress=watch, keep=5)
    assert len(seen) == 60 and result.total == 60
    assert result.counts["passed"] == 45 and result.counts["failed"] == 15
    assert len(result.scenarios) == 5
    assert all(s.status == "failed" for s in result.scenarios)  # failures crowd out passes
    assert [s.trace_id[-2:] for s in result.scenarios] == [f"{i:02x}" for i in (4, 8, 12, 16, 20)]
    assert result.omitted == {"passed": 45, "failed": 10}
    assert alive and max(alive) <= 5 + 2  # the sample, the result in hand, one in flight


def test_result_sample_keeps_everything_while_there_is_room(tmp_path: Path) -> None:
    traces = _many_traces(tmp_path, 8, failing_every=3)
    result = evaluate_traces([traces], _scenarios(tmp_path), keep=20)
    assert len(result.scenarios) == 8 and result.omitted == {} and result.omitted_total == 0
    assert [s.status for s in result.scenarios] == [
        "failed" if i % 3 == 0 else "passed" for i in range(1, 9)
    ]


def test_cli_reports_every_trace_while_console_and_html_show_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = _many_traces(tmp_path, 12, failing_every=3)
    monkeypatch.setattr("harness.traces.evaluate.KEPT_RESULTS", 3)
    report, junit, page = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.html"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path)), "--json", str(report)]
    assert main([*argv, "--junit-xml", str(junit), "--html", str(page)]) == 1
    data = _report(report)
    assert len(data["scenarios"]) == 12 and "omitted" not in data
    assert data["counts"]["passed"] == 8 and data["counts"]["failed"] == 4
    assert data["summary"].startswith("8 passed, 4 failed")
    xml = JUnitXml.fromfile(str(junit))
    assert (xml.tests, xml.failures) == (12, 4)
    assert sum(1 for suite in xml for _ in suite) == 12
    html = page.read_text("utf-8")
    assert "Showing 3 of 12 results" in html and "9 more not shown (8 passed, 1 failed)" in html
    assert html.count('<details class="scenario') == 3
    assert 'data-count="total"><span class="n">12<' in html
    out = capsys.readouterr().out
    assert "1 more failed or errored not shown here" in out
    assert "9 more not shown" in out  # the table caption counts what the sample left out
    assert "8 passed, 4 failed" in out


def test_streamed_report_head_is_masked_with_the_runs_redactor(tmp_path: Path) -> None:
    """A ``--redact`` key's value in a warning is masked in the streamed head, as write_json does.

    Regression: the redactor reached the JSON writer's constructor but not its ``close``, so
    the head (warnings, written last) was scrubbed with the default key list only.
    """
    secret = "4111-2222-3333"
    bad_span = {**_tool(2, 2, 1, "get_order", order_id=9), "traceId": secret}
    traces = _collector_file(
        tmp_path,
        _line(_tool(1, 2, 1, "get_order", order_id=8, card=secret), _root(1, "lookup")),
        _line(bad_span),
    )
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    argv = ["eval-traces", str(traces), "--scenarios", str(_suite(tmp_path)), "--redact", "card"]
    assert main([*argv, "--json", str(report), "--junit-xml", str(junit)]) == 1
    data = _report(report)
    (warning,) = data["warnings"]
    assert "traceId" in warning and "***" in warning  # the unreadable span's line, masked
    assert data["scenarios"][0]["runs"][0]["tool_calls"][0]["args"]["card"] == "***"
    assert secret not in report.read_text("utf-8") and secret not in junit.read_text("utf-8")
