"""``harness run`` exporting over OTLP: one trace per run, verdicts on the root, secrets masked.

A real OTLP/HTTP receiver (``http.server`` on 127.0.0.1, bodies decoded with the OTLP protobuf
classes) stands in for a backend; the Phoenix end-to-end test is in tests/integration.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from harness.cli import main
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import load_file
from harness.span_export import configure_export
from tracing.otlp.file_format import iter_spans

HARNESS = Path(sys.executable).parent / "harness"
SECRET = "sk-live-123"

SECRET_AGENT = '''
"""A LangGraph ReAct agent whose tool takes an API key (redaction tests)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def call_api(endpoint: str, api_key: str) -> dict[str, Any]:
    """Call an API with a key."""
    return {"endpoint": endpoint, "status": 200, "token": "tok-" + api_key}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def build(model: BaseChatModel) -> Any:
    tools = [call_api, add]
    bound = model.bind_tools(tools)

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"], config)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()
'''

SCENARIOS = f"""
- name: adds
  input: "2 + 3?"
  script: [{{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}, {{content: "It is 5"}}]
  expect: {{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}], output: {{$contains: "5"}}}}
- name: leaks
  input: "call the api"
  script:
    - tool_calls: [{{name: call_api, args: {{endpoint: /v1, api_key: {SECRET}}}}}]
    - content: done
  expect:
    tool_calls: [{{name: call_api, args: {{endpoint: /v2, api_key: {{$type: string}}}}}}]
    forbid: [call_api]
- name: keyed
  input: "call the api"
  script:
    - tool_calls: [{{name: call_api, args: {{endpoint: /v1, api_key: {SECRET}}}}}]
    - content: done
  expect:
    tool_calls: [{{name: call_api, args: {{endpoint: /v1, api_key: {{$type: string}}}}}}]
"""


def write_secret_suite(folder: Path, suite: str = "sec", body: str = SCENARIOS) -> Path:
    """The secret agent module and a suite driving it; returns the suite file."""
    agent = folder / "secret_agent.py"
    agent.write_text(SECRET_AGENT, encoding="utf-8")
    path = folder / f"{suite}.yaml"
    path.write_text(
        f"suite: {suite}\nagent: {agent}:build\nmodel: {{provider: scripted}}\n"
        "defaults: {timeout: 20}\nscenarios:\n" + textwrap.indent(body.lstrip("\n"), "  "),
        encoding="utf-8",
    )
    return path


def _url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def _wire_spans(server: ThreadingHTTPServer) -> list[dict[str, Any]]:
    """Every span received, as {name, trace_id, parent, attributes, events}."""
    out = []
    for body in server.bodies:  # type: ignore[attr-defined]
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    out.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "parent": span.parent_span_id.hex() or None,
                            "attributes": {a.key: _pb_value(a.value) for a in span.attributes},
                            "events": [
                                (e.name, {a.key: _pb_value(a.value) for a in e.attributes})
                                for e in span.events
                            ],
                        }
                    )
    return out


def _pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_run_is_one_trace_with_the_verdict_on_its_root(tmp_path: Path) -> None:
    suite = write_secret_suite(tmp_path)
    trace_file = tmp_path / "t.json"
    pipeline = configure_export(trace_file=trace_file, capture_content=True)
    try:
        options = RunOptions(
            tracer_provider=pipeline.tracer_provider, capture_content=True, repeat=2
        )
        result = run_scenarios(list(load_file(suite).scenarios), options)
    finally:
        pipeline.shutdown()
    spans = list(iter_spans(trace_file))
    roots = {s.trace_id: s for s in spans if s.parent_id is None}
    runs = {run.trace_id: (scenario, run) for scenario in result.scenarios for run in scenario.runs}
    assert set(roots) == set(runs) and len(roots) == 6  # 3 scenarios x 2 runs
    for trace_id, root in roots.items():
        scenario, run = runs[trace_id]
        assert root.name == f"scenario {scenario.name}"
        attributes = root.attributes
        assert attributes["harness.suite"] == "sec"
        assert attributes["harness.scenario"] == scenario.name
        assert attributes["harness.run"] == run.index
        assert attributes["harness.passed"] is run.passed
        assert attributes["harness.score.tool_call_accuracy"] == pytest.approx(run.scores[0].value)
        failures = [
            e.attributes["harness.reason"] for e in root.events if e.name == "harness.failure"
        ]
        assert len(failures) == len(run.reasons())
    leaks = next(s for s in result.scenarios if s.name == "leaks").runs[0]
    root = roots[str(leaks.trace_id)]
    assert root.attributes["harness.passed"] is False
    assert root.attributes["harness.check.forbid"] is False
    # (the root also carries gen_ai.evaluation.result events since issue 15: only failures here)
    reasons = [e.attributes["harness.reason"] for e in root.events if e.name == "harness.failure"]
    assert any(reason.startswith("forbidden tool called") for reason in reasons)
    # the tool spans of a run hang under its root, in the same trace
    tools = [s for s in spans if s.name == "execute_tool call_api" and s.trace_id == leaks.trace_id]
    assert len(tools) == 1 and tools[0].parent_id is not None
    assert json.loads(str(tools[0].attributes["gen_ai.tool.call.arguments"])) == {
        "endpoint": "/v1",
        "api_key": "***",
    }
    assert SECRET not in trace_file.read_text()
    # scoring saw the real value: the tool really received it
    assert leaks.calls[0].args["api_key"] == SECRET


def test_without_an_exporter_no_spans_are_made(tmp_path: Path) -> None:
    suite = write_secret_suite(tmp_path)
    result = run_scenarios(list(load_file(suite).scenarios)[:1], RunOptions())
    (run,) = result.scenarios[0].runs
    assert run.trace_id is None and run.passed


def test_cli_secret_never_reaches_reports_trace_file_or_wire(
    tmp_path: Path, receiver: ThreadingHTTPServer
) -> None:
    suite = write_secret_suite(tmp_path)
    report, junit, trace_file = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "t.json"
    proc = subprocess.run(
        [
            str(HARNESS),
            "run",
            str(suite),
            "--otlp-endpoint",
            _url(receiver),
            "--capture-content",
            "--trace-file",
            str(trace_file),
            "--json",
            str(report),
            "--junit-xml",
            str(junit),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr  # `leaks` fails
    assert "warning" not in proc.stderr
    for text in (report.read_text(), junit.read_text(), trace_file.read_text(), proc.stdout):
        assert SECRET not in text
    wire = _wire_spans(receiver)
    assert wire and SECRET.encode() not in b"".join(receiver.bodies)  # type: ignore[attr-defined]
    data = json.loads(report.read_text())
    trace_ids = {s["name"]: s["trace_ids"] for s in data["scenarios"]}
    roots = {s["trace_id"]: s for s in wire if s["parent"] is None}
    for name, (trace_id,) in trace_ids.items():
        assert roots[trace_id]["attributes"]["harness.scenario"] == name
    keyed = [s for s in wire if s["trace_id"] == trace_ids["keyed"][0]]
    (tool,) = [s for s in keyed if s["name"] == "execute_tool call_api"]
    assert json.loads(tool["attributes"]["gen_ai.tool.call.arguments"])["api_key"] == "***"
    assert "***" in tool["attributes"]["gen_ai.tool.call.result"]
    assert data["scenarios"][2]["status"] == "passed"  # scored with the real value


def test_capture_off_exports_no_arguments(tmp_path: Path, receiver: ThreadingHTTPServer) -> None:
    suite = write_secret_suite(tmp_path)
    code = main(["run", str(suite), "-k", "keyed", "--otlp-endpoint", _url(receiver)])
    assert code == 0
    wire = _wire_spans(receiver)
    (tool,) = [s for s in wire if s["name"] == "execute_tool call_api"]
    assert tool["attributes"]["gen_ai.tool.call.id"]
    assert not any(
        key in span["attributes"]
        for span in wire
        for key in (
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.input.messages",
        )
    )


def test_unreachable_endpoint_warns_once_and_reports_are_complete(tmp_path: Path) -> None:
    suite = write_secret_suite(tmp_path)
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            str(HARNESS),
            "run",
            str(suite),
            "--otlp-endpoint",
            f"http://127.0.0.1:{_free_port()}",
            "--repeat",
            "3",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "failed: connection refused" in warnings[0], proc.stderr
    data = json.loads(report.read_text())
    assert data["counts"]["passed"] == 2 and data["counts"]["failed"] == 1
    assert all(len(s["trace_ids"]) == 3 for s in data["scenarios"])


def test_redact_flag_adds_keys_everywhere(tmp_path: Path) -> None:
    body = (
        "- {name: adds, input: x, script: [{tool_calls: [{name: add, args: {a: 2, b: 3}}]}], "
        "expect: {tool_calls: [{name: add, args: {a: 2, b: 4}}]}}\n"
    )
    suite = write_secret_suite(tmp_path, body=body)
    report, trace_file = tmp_path / "r.json", tmp_path / "t.json"
    argv = ["run", str(suite), "--json", str(report), "--trace-file", str(trace_file)]
    code = main([*argv, "--capture-content", "--redact", "b"])
    assert code == 1
    run = json.loads(report.read_text())["scenarios"][0]["runs"][0]
    assert run["tool_calls"][0]["args"] == {"a": 2, "b": "***"}
    assert run["expected_tool_calls"][0]["args"] == {"a": 2, "b": "***"}
    tool = next(s for s in iter_spans(trace_file) if s.name == "execute_tool add")
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"a": 2, "b": "***"}


def test_bad_redact_key_and_bad_endpoint_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_secret_suite(tmp_path)
    assert main(["run", str(suite), "--redact=.."]) == 2
    assert "has no letters or digits" in capsys.readouterr().err
    assert main(["run", str(suite), "--otlp-endpoint", "localhost:4318"]) == 2
    assert "is not an OTLP endpoint URL" in capsys.readouterr().err
