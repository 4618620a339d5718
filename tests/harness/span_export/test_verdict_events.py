"""Verdicts backends understand: GenAI evaluation events, ERROR status, ``--otlp-header``."""

from __future__ import annotations

import textwrap
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ExportConfigError
from harness.span_export import merged_headers, parse_header
from tests.support.paths import FIXTURES
from tracing.otlp.file_format import iter_spans

AGENT_FILE = FIXTURES / "fixture_agent.py"


def _suite(folder: Path) -> Path:
    body = """
    - name: good
      input: x
      script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}, {content: "3"}]
      expect: {tool_calls: [{name: add, args: {a: 1, b: 2}}], output: {$contains: "3"}}
    - name: bad
      input: x
      script: [{tool_calls: [{name: add, args: {a: 1, b: 9}}]}, {content: "10"}]
      expect: {tool_calls: [{name: add, args: {a: 1, b: 2}}]}
      metrics: {tool_argument_correctness: {threshold: 1.0}}
    """
    path = folder / "v.yaml"
    path.write_text(
        f"suite: v\nagent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\nscenarios:\n"
        + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "  "),
        encoding="utf-8",
    )
    return path


def test_each_metric_result_is_a_gen_ai_evaluation_event_and_a_failure_is_error(
    tmp_path: Path,
) -> None:
    spans_file = tmp_path / "spans.jsonl"
    assert main(["run", str(_suite(tmp_path)), "--trace-file", str(spans_file)]) == 1
    roots = {s.name: s for s in iter_spans(spans_file) if s.name.startswith("scenario ")}
    good, bad = roots["scenario good"], roots["scenario bad"]

    def evaluations(span: object) -> dict[str, dict[str, object]]:
        found = span.events  # type: ignore[attr-defined]
        events = [e for e in found if e.name == "gen_ai.evaluation.result"]
        return {str(e.attributes["gen_ai.evaluation.name"]): dict(e.attributes) for e in events}

    accuracy = evaluations(good)["tool_call_accuracy"]
    assert accuracy["gen_ai.evaluation.score.value"] == 1.0
    assert accuracy["gen_ai.evaluation.score.label"] == "pass"
    assert accuracy["gen_ai.evaluation.explanation"] == "1/1 expected calls matched"
    assert evaluations(good)["output"]["gen_ai.evaluation.score.label"] == "pass"
    assert good.status != "ERROR"
    argument = evaluations(bad)["tool_argument_correctness"]
    assert argument["gen_ai.evaluation.score.label"] == "fail"
    assert argument["gen_ai.evaluation.score.value"] == 0.5
    assert "expected 2" in str(argument["gen_ai.evaluation.explanation"])
    assert bad.status == "ERROR"
    assert bad.status_message == "tool_argument_correctness 0.50 < 1.00: " + str(
        argument["gen_ai.evaluation.explanation"]
    )
    # the harness.* attributes are still there beside the events
    assert bad.attributes["harness.status"] == "failed"


def test_otlp_headers_reach_the_backend(
    tmp_path: Path, receiver: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=1,x-api-key=env")
    url = f"http://127.0.0.1:{receiver.server_address[1]}"
    code = main(
        [
            "run",
            str(_suite(tmp_path)),
            "--otlp-endpoint",
            url,
            "--otlp-header",
            "x-api-key=ls-secret",
            "--otlp-header",
            "Langsmith-Project=demo",
        ]
    )
    assert code == 1
    seen = receiver.seen  # type: ignore[attr-defined]
    assert seen, "nothing was exported"
    headers = {key.lower(): value for key, value in seen[0].items()}
    assert headers["x-api-key"] == "ls-secret"  # the flag wins over the variable
    assert headers["langsmith-project"] == "demo"
    assert headers["x-from-env"] == "1"


def test_header_flags_are_checked() -> None:
    assert parse_header(" k = v=w ") == ("k", "v=w")
    with pytest.raises(ExportConfigError, match="expected KEY=VALUE"):
        parse_header("novalue")
    assert merged_headers(None, {"OTEL_EXPORTER_OTLP_HEADERS": "a=b"}) is None
    assert merged_headers({"a": "c"}, {"OTEL_EXPORTER_OTLP_HEADERS": "a=b,d=e"}) == {
        "a": "c",
        "d": "e",
    }
