"""Traces recorded without content: eval-traces says which arguments are missing, and errors.

The real pipeline: ``harness run --trace-file`` on real LangGraph agents (the demo calculator
and the secret agent of tests/harness/span_export/test_run_export.py, driven by the scripted
model), then ``harness eval-traces`` on the file. ``--trace-file`` keeps content by default
(secrets masked); the backend export keeps its opt-in rule.
"""

from __future__ import annotations

import json
import textwrap
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.run.output_attribute import OUTPUT_ATTRIBUTE
from harness.span_export import CONTENT_ATTRIBUTES
from tests.harness.span_export.test_run_export import (
    SECRET,
    _url,
    _wire_spans,
    write_secret_suite,
)
from tracing.otlp.file_format import iter_spans

SUITE = """
suite: calc
agent: harness.demo.calculator:build
model: {provider: scripted}
defaults: {timeout: 20}
scenarios:
  - name: multiplies
    input: "6 * 7?"
    script: [{tool_calls: [{name: multiply, args: {a: 6, b: 7}}]}, {content: "42"}]
    expect:
      tool_calls: [{name: multiply, args: {a: 6, b: 7}}]
      output: "42"
  - name: names only
    input: "2 + 3?"
    script: [{tool_calls: [{name: add, args: {a: 2, b: 3}}]}, {content: "5"}]
    expect:
      tool_calls: [add]
      forbid: [multiply]
      no_errors: true
  - name: known mistake
    input: "6 * 7?"
    xfail: "the script multiplies the wrong numbers"
    script:
      - tool_calls: [{name: multiply, args: {a: 1, b: 7}}, {name: add, args: {a: 1, b: 1}}]
      - content: "7"
    expect:
      tool_calls: [{name: multiply, args: {a: 6, b: 7}}]
"""


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "calc.yaml"
    path.write_text(textwrap.dedent(SUITE), encoding="utf-8")
    return path


def _report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {scenario["name"]: scenario for scenario in report["scenarios"]}


def _has_content(trace_file: Path) -> bool:
    return any(CONTENT_ATTRIBUTES & set(span.attributes) for span in iter_spans(trace_file))


def test_a_trace_without_content_is_an_error_per_call_not_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, trace_file, live = _suite(tmp_path), tmp_path / "t.json", tmp_path / "live.json"
    argv = ["run", str(suite), "--trace-file", str(trace_file), "--no-capture-content"]
    assert main([*argv, "--json", str(live)]) == 0  # live: passed, passed, xfailed
    assert not _has_content(trace_file)
    capsys.readouterr()

    offline, junit = tmp_path / "off.json", tmp_path / "off.xml"
    eval_argv = ["eval-traces", str(trace_file), "--scenarios", str(suite)]
    assert main([*eval_argv, "--json", str(offline), "--junit-xml", str(junit)]) == 1
    out = capsys.readouterr().out
    results = _by_name(_report(offline))
    assert {name: s["status"] for name, s in results.items()} == {
        "multiplies": "error",
        "names only": "passed",  # names, forbid and no_errors need no content
        "known mistake": "error",  # unknown is not an expected failure
    }
    multiplies = results["multiplies"]
    assert multiplies["reasons"][0].startswith("error (scoring): ContentNotCaptured: ")
    assert "1 call without arguments, no final answer" in multiplies["reasons"][0]
    assert "--no-capture-content" in multiplies["reasons"][0]  # how to record them
    assert multiplies["reasons"][1:] == [
        "call #1 multiply: arguments were not captured",
        "final answer: not captured",
    ]
    assert results["known mistake"]["reasons"][1:] == [
        "call #1 multiply: arguments were not captured",
        "call #2 add: arguments were not captured",
    ]
    (run,) = multiplies["runs"]
    assert run["scores"] == [] and run["checks"] == []
    assert run["error"]["type"] == "ContentNotCaptured"
    assert [(c["name"], c["args"], c.get("args_captured")) for c in run["tool_calls"]] == [
        ("multiply", {}, False)
    ]
    # no verdict blames an argument the trace never had, in any report
    for text in (out, offline.read_text(), junit.read_text()):
        assert "missing argument" not in text and "wrong args" not in text
    assert "call #1 multiply: arguments were not captured" in out
    assert "ERROR calc::multiplies" in out
    assert "call #2 add: arguments were not captured" in junit.read_text()


def test_trace_file_keeps_content_by_default_masked_and_scores_like_the_live_run(
    tmp_path: Path,
) -> None:
    suite, trace_file = _suite(tmp_path), tmp_path / "t.json"
    live, offline = tmp_path / "live.json", tmp_path / "off.json"
    assert main(["run", str(suite), "--trace-file", str(trace_file), "--json", str(live)]) == 0
    assert _has_content(trace_file)
    eval_argv = ["eval-traces", str(trace_file), "--scenarios", str(suite), "--json", str(offline)]
    assert main(eval_argv) == 0
    statuses = {name: s["status"] for name, s in _by_name(_report(offline)).items()}
    assert statuses == {name: s["status"] for name, s in _by_name(_report(live)).items()}
    assert statuses == {"multiplies": "passed", "names only": "passed", "known mistake": "xfailed"}

    secret_suite, secret_file = write_secret_suite(tmp_path), tmp_path / "s.json"
    assert main(["run", str(secret_suite), "-k", "keyed", "--trace-file", str(secret_file)]) == 0
    assert SECRET not in secret_file.read_text(encoding="utf-8")
    (tool,) = [s for s in iter_spans(secret_file) if s.name == "execute_tool call_api"]
    args = json.loads(str(tool.attributes["gen_ai.tool.call.arguments"]))
    assert args == {"endpoint": "/v1", "api_key": "***"}
    eval_secret = ["eval-traces", str(secret_file), "--scenarios", str(secret_suite)]
    assert main(eval_secret) == 0


def test_backend_keeps_the_opt_in_rule_while_the_file_keeps_content(
    tmp_path: Path, receiver: ThreadingHTTPServer
) -> None:
    suite, trace_file = _suite(tmp_path), tmp_path / "t.json"
    argv = ["run", str(suite), "-k", "multiplies", "--otlp-endpoint", _url(receiver)]
    assert main([*argv, "--trace-file", str(trace_file)]) == 0
    wire = _wire_spans(receiver)
    assert any(s["name"] == "execute_tool multiply" for s in wire)
    never = {*CONTENT_ATTRIBUTES, OUTPUT_ATTRIBUTE}
    assert not any(never & set(span["attributes"]) for span in wire)  # the answer included
    spans = list(iter_spans(trace_file))
    (root,) = [s for s in spans if s.parent_id is None]
    assert json.loads(str(root.attributes[OUTPUT_ATTRIBUTE])) == "42"
    (tool,) = [s for s in spans if s.name == "execute_tool multiply"]
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"a": 6, "b": 7}


def test_content_flags_exclude_each_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(_suite(tmp_path)), "--capture-content", "--no-capture-content"]
    assert main(argv) == 2
    assert "not allowed with argument" in capsys.readouterr().err
