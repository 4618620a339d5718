"""End to end: ``harness run --otlp-endpoint`` into a real Phoenix, read back over its REST API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness.span_export.test_run_export import SECRET, write_secret_suite
from tests.integration.phoenix import PhoenixServer, Span

HARNESS = Path(sys.executable).parent / "harness"


def _run(tmp_path: Path, env: dict[str, str], endpoint: str, *flags: str) -> dict[str, Any]:
    """``harness run`` as a subprocess; returns the JSON report."""
    suite = write_secret_suite(tmp_path)
    report = tmp_path / "out.json"
    command = [str(HARNESS), "run", str(suite), "--otlp-endpoint", endpoint]
    proc = subprocess.run(
        [*command, *flags, "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # `leaks` fails by design
    assert "warning" not in proc.stderr, proc.stderr
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def _complete(spans: list[Span]) -> bool:
    """The root span and every tool span of a run have arrived."""
    names = [span["name"] for span in spans]
    return any(n.startswith("scenario ") for n in names) and any(
        n.startswith("execute_tool ") for n in names
    )


def _read(phoenix: PhoenixServer, project: str, data: dict[str, Any]) -> dict[str, list[Span]]:
    """scenario name -> the spans of its (one) run, polled out of Phoenix."""
    out = {}
    for scenario in data["scenarios"]:
        (trace_id,) = scenario["trace_ids"]
        out[scenario["name"]] = phoenix.wait_for_spans(project, trace_id, until=_complete)
    return out


def _one(spans: list[Span], prefix: str) -> Span:
    (span,) = [s for s in spans if s["name"].startswith(prefix)]
    return span


def test_run_exports_tool_spans_and_verdicts(
    phoenix: PhoenixServer, phoenix_project: str, phoenix_env: dict[str, str], tmp_path: Path
) -> None:
    data = _run(tmp_path, phoenix_env, phoenix.otlp_http_endpoint, "--capture-content")
    traces = _read(phoenix, phoenix_project, data)
    assert set(traces) == {"adds", "leaks", "keyed"}
    scenarios = {s["name"]: s for s in data["scenarios"]}
    for name, spans in traces.items():
        root = _one(spans, "scenario ")
        assert root["parent_id"] is None
        attributes = root["attributes"]
        assert attributes["harness.suite"] == "sec"
        assert attributes["harness.scenario"] == name
        run = scenarios[name]["runs"][0]
        assert attributes["harness.passed"] is run["passed"]
        for score in run["scores"]:
            assert attributes[f"harness.score.{score['name']}"] == pytest.approx(score["value"])
        failures = [e for e in root["events"] if e["name"] == "harness.failure"]
        assert len(failures) == len(scenarios[name]["reasons"])
        tool = _one(spans, "execute_tool ")
        call = run["tool_calls"][0]
        assert tool["name"] == f"execute_tool {call['name']}"
        assert tool["attributes"]["gen_ai.tool.call.id"] == call["id"]
        assert json.loads(tool["attributes"]["gen_ai.tool.call.arguments"]) == call["args"]
        assert SECRET not in json.dumps(spans)
    leaks = traces["leaks"]
    assert _one(leaks, "scenario ")["attributes"]["harness.passed"] is False
    events = _one(leaks, "scenario ")["events"]
    reasons = [e["attributes"]["harness.reason"] for e in events if e["name"] == "harness.failure"]
    verdicts = {
        e["attributes"]["gen_ai.evaluation.name"]: e["attributes"]
        for e in events
        if e["name"] == "gen_ai.evaluation.result"
    }
    for score in scenarios["leaks"]["runs"][0]["scores"]:  # each metric reaches Phoenix as an event
        assert verdicts[score["name"]]["gen_ai.evaluation.score.value"] == pytest.approx(
            score["value"]
        )
    assert any(r.startswith("forbidden tool called") for r in reasons)
    arguments = json.loads(_one(leaks, "execute_tool ")["attributes"]["gen_ai.tool.call.arguments"])
    assert arguments == {"endpoint": "/v1", "api_key": "***"}
    assert _one(traces["keyed"], "scenario ")["attributes"]["harness.passed"] is True


def test_capture_off_exports_no_arguments(
    phoenix: PhoenixServer, phoenix_project: str, phoenix_env: dict[str, str], tmp_path: Path
) -> None:
    data = _run(tmp_path, phoenix_env, phoenix.otlp_http_endpoint)
    traces = _read(phoenix, phoenix_project, data)
    for spans in traces.values():
        tool = _one(spans, "execute_tool ")
        assert tool["attributes"]["gen_ai.tool.call.id"]
        for span in spans:
            assert "gen_ai.tool.call.arguments" not in span["attributes"]
            assert "gen_ai.tool.call.result" not in span["attributes"]
        assert "harness.score.tool_call_accuracy" in _one(spans, "scenario ")["attributes"]
