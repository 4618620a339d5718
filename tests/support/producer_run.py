"""Run every case under one producer and print what the tools ran and what the reader read.

Usage: ``python -m tests.support.producer_run PRODUCER`` (a name of
``tests.support.producer_frameworks.PRODUCERS``). Instrumentors patch their framework for the
whole process, so tests/tracing/otel/test_producers.py runs this once per producer, each in its own
process. Spans go through a real SDK pipeline to both the in-process
:class:`~tracing.otel.tool_call_exporter.ToolCallSpanExporter` and an OTLP JSON file, read back at
the end as ``harness eval-traces`` reads it (:class:`~tracing.otlp.file_format.OtlpJsonReader`, then
:func:`~tracing.otel.trace_run.trace_run`).

Output, one JSON document: ``{"producer", "runs": [{"case", "ledger": [[name, args, result,
error]], "traces", "reader": [row], "exporter": [row], "run": {...}, "exporter_run": {...},
"requests", "usage", "answer", "raised"}]}``, a row being ``[name, args, status, result, error,
source]``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetched from the network

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.openai_server import StandIn
from tests.support.producer_cases import CASES, LEDGER, Case, reset
from tests.support.producer_frameworks import PRODUCERS
from tests.support.scripted_replies import Reply, call, reply
from tracing.otel.tool_call_exporter import ToolCallSpanExporter
from tracing.otel.trace_run import TraceRun, trace_run
from tracing.otlp.file_format import OtlpJsonFileExporter, OtlpJsonReader
from tracing.records import ToolCall


def _row(call: ToolCall) -> list[Any]:
    return [call.name, dict(call.args), call.status, call.result, call.error, call.source]


def _summary(run: TraceRun) -> dict[str, Any]:
    return {
        "user_inputs": list(run.user_inputs) if run.user_inputs is not None else None,
        "model_calls": [
            [m.input_tokens, m.output_tokens, m.total_tokens] for m in run.model_calls or ()
        ],
        "output": run.output,
        "duration": run.duration,
        "service": run.service,
        "agent": run.agent,
        "root_name": run.root_name,
        "not_captured": sorted(run.not_captured),
        "unread": dict(run.unread),
    }


def _replies(producer: str, case: Case) -> list[Reply]:
    """The case's replies; smolagents ends a run only through its ``final_answer`` tool."""
    replies = list(case.replies)
    if producer == "smolagents":
        replies[-1] = reply(calls=[call("final_answer", answer=case.answer)])
    return replies


def run_all(producer: str, folder: Path) -> dict[str, Any]:
    """Run each case; return what ran and what was read (the module docstring's document).

    The spans stay in ``folder / "spans.jsonl"`` (one span a line, as ``SimpleSpanProcessor``
    exports them).
    """
    resource = Resource.create({"service.name": f"producers-{producer}"})
    provider = TracerProvider(resource=resource)
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    path = folder / "spans.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    standin = StandIn().start()
    runs: list[dict[str, Any]] = []
    try:
        agent_turn = PRODUCERS[producer](provider, standin.url)
        for case in CASES.values():
            model = f"{producer}-{case.name}"
            standin.script(model, _replies(producer, case))
            before = set(exporter.trace_ids())
            reset()
            answer = raised = None
            try:
                with contextlib.redirect_stdout(sys.stderr):  # smolagents prints its steps
                    answer = agent_turn(case.prompt, model)
            except Exception as exc:  # a failing case fails the run on purpose
                raised = f"{type(exc).__name__}: {exc}"
            provider.force_flush()
            traces = [t for t in exporter.trace_ids() if t not in before]
            runs.append(
                {
                    "case": case.name,
                    "ledger": [list(entry) for entry in LEDGER],
                    "trace_ids": traces,
                    "traces": len(traces),
                    "exporter": [_row(c) for t in traces for c in exporter.calls(t)],
                    "exporter_run": _summary(exporter.run(traces[0])) if traces else None,
                    "requests": sum(
                        1 for r in standin.requests if (r["body"] or {}).get("model") == model
                    ),
                    "usage": [usage for name, usage in standin.usage if name == model],
                    "answer": answer if answer is None else str(answer),
                    "raised": raised,
                }
            )
    finally:
        standin.stop()
        provider.shutdown()
    read = {trace.trace_id: trace for trace in OtlpJsonReader(path).iter_traces()}
    for entry in runs:
        traces = [read[t] for t in entry.pop("trace_ids") if t in read]
        entry["reader"] = [_row(c) for t in traces for c in t.calls()]
        entry["run"] = _summary(trace_run(traces[0])) if traces else None
    return {"producer": producer, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    """Run the producer named on the command line; print the JSON document."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in PRODUCERS:
        print(f"usage: producer_run {{{','.join(PRODUCERS)}}}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        document = run_all(args[0], Path(folder))
    sys.stdout.write(json.dumps(document, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
