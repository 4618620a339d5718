"""A conversation's later request, scored alone, is grounded by what its history carried.

Real LangGraph ReAct agents with a checkpointer (one conversation, two requests, each its own
trace), traced by the harness's SpanEmitter with content into an OTLP file, scored by
``harness eval-traces --rules``: the second request's call uses a value only the first
request's tool returned; the model received it back in the history, so it is grounded. The
same call with no such history is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from harness.cli import main
from harness.models.scripted import ScriptedChatModel
from tests.support.agents import _calls, build_react_graph, echo, lookup, user_input
from tracing.otel.emitter import SpanEmitter
from tracing.otlp.file_format import OtlpJsonFileExporter

POLICY = (
    "policies: chat\nrules:\n  - {name: grounded echo, grounded: {tool: echo, args: [token]}}\n"
)


def _ask(graph: Any, emitter: SpanEmitter, thread: str, text: str) -> None:
    config = {**emitter.config, "configurable": {"thread_id": thread}}
    graph.invoke(user_input(text), config)


def test_a_value_an_earlier_request_returned_is_grounded(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    emitter = SpanEmitter(provider, capture_content=True)
    echo_first = _calls(("echo", {"token": "first"}))  # alpha's entry in the lookup table
    conversation = build_react_graph(
        ScriptedChatModel(
            [
                _calls(("lookup", {"key": "alpha"})),
                {"content": "Found."},
                echo_first,
                {"content": "Done."},
            ]
        ),
        [lookup, echo],
        checkpointer=InMemorySaver(),
    )
    _ask(conversation, emitter, "t1", "Look alpha up.")
    _ask(conversation, emitter, "t1", "Now echo what you found.")
    alone = build_react_graph(ScriptedChatModel([echo_first, {"content": "Done."}]), [lookup, echo])
    _ask(alone, emitter, "t2", "Now echo what you found.")
    provider.shutdown()

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    report = tmp_path / "report.json"
    main(["eval-traces", str(path), "--rules", str(policy), "--json", str(report), "-q"])
    capsys.readouterr()
    (rule,) = json.loads(report.read_text())["policies"][0]["rules"]
    assert (rule["evaluated"], rule["violations"], rule["unevaluable"]) == (3, 1, 0)
    (example,) = rule["examples"]
    assert example["reason"].startswith("#1 echo(") and "not seen" in example["reason"]
    traces = [json.loads(line) for line in path.read_text().splitlines()]
    last_trace = traces[-1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    assert example["trace_id"] == last_trace  # the request without the history
