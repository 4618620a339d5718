"""Run every case agent under one capture and print what it recorded, as JSON.

Usage: ``python -m tests.support.parity_run CAPTURE [--cases a,b] [--modes invoke,stream]``
with CAPTURE one of ``spanemitter``, ``openinference``, ``traceloop``, ``genai``.

Instrumentors patch LangChain for the whole process, so the parity test runs this script once per
capture, each in its own process. Every run also has a ``ToolCallRecorder`` attached through the
run config, and a second one through ``capture_tool_calls()``, so each result carries both
recorders' calls and the exporter's calls of the very same run: the call ids (fresh per run)
can be compared within a run. The spans also go to an OTLP JSON file, read back trace by trace
with ``iter_trace_calls`` at the end.

The cases are the standard agents of ``tests/support/agents.py`` and the agent shapes of
``tests/support/parity_agents.py`` (pauses and resumes on one thread, id-less tool nodes,
malformed calls, Command errors, retries, sub-agents).

Output: ``{"capture": ..., "runs": [{"case", "mode", "recorder": [...], "captured": [...],
"exporter": [...], "reader": [...], "traces": n, "raised": str|null}]}`` where each call is
``[name, args, status, id, agent, attempts]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.agents import CASES, MODES, run_case
from tests.support.parity_agents import SHAPES, run_shape, thread_config
from tracing.langchain.capture import capture_tool_calls
from tracing.langchain.recorder import ToolCallRecorder
from tracing.otel.tool_call_exporter import ToolCallSpanExporter
from tracing.otlp.file_format import OtlpJsonFileExporter, iter_trace_calls
from tracing.records import ToolCall

CAPTURES = ("spanemitter", "openinference", "traceloop", "genai")


def _instrument(capture: str, provider: TracerProvider) -> list[Any]:
    """Install the capture; return extra callbacks to pass per run (the SpanEmitter only)."""
    if capture == "spanemitter":
        from tracing.otel.emitter import SpanEmitter

        return [SpanEmitter(provider, capture_content=True)]
    if capture == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
        return []
    if capture == "traceloop":
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=provider)
        return []
    if capture == "genai":
        # Content capture on (span attributes), per opentelemetry-util-genai's settings.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        from opentelemetry.instrumentation.genai.langchain import (
            LangChainInstrumentor as GenAILangChainInstrumentor,
        )

        # It declares "langchain" as its instrumented package, but patches langchain_core only;
        # the harness depends on langchain-core and langgraph, not on the langchain package.
        GenAILangChainInstrumentor().instrument(tracer_provider=provider, skip_dep_check=True)
        return []
    raise SystemExit(f"unknown capture {capture!r}; use one of {', '.join(CAPTURES)}")


def _row(call: ToolCall) -> list[Any]:
    return [call.name, dict(call.args), call.status, call.id, call.agent, len(call.attempts)]


ALL_CASES = [*CASES, *SHAPES]
"""Every case a parity run can run: the standard agents, then the agent shapes."""


def _run_one(name: str, mode: str, callbacks: list[Any]) -> None:
    """Run one standard case or agent shape in ``mode`` with these callbacks."""
    if name in SHAPES:
        shape = SHAPES[name]()
        run_shape(shape, mode, thread_config(shape, callbacks))
        return
    run_case(CASES[name](), mode, {"callbacks": callbacks})


def run_all(capture: str, cases: list[str], modes: list[str], folder: Path) -> dict[str, Any]:
    """Run each case in each mode under ``capture``; collect recorder and exporter calls, and
    the calls read back from the OTLP JSON file (``folder/spans.jsonl``) of the spans."""
    provider = TracerProvider()
    exporter = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    path = folder / "spans.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    extra = _instrument(capture, provider)
    runs = []
    for case_name in cases:
        for mode in modes:
            recorder = ToolCallRecorder()
            exporter.clear()
            raised = None
            with capture_tool_calls() as captured:
                try:
                    _run_one(case_name, mode, [recorder, *extra])
                except Exception as exc:  # the raising case fails the run on purpose
                    raised = type(exc).__name__
            provider.force_flush()
            traces = exporter.trace_ids()
            runs.append(
                {
                    "case": case_name,
                    "mode": mode,
                    "recorder": [_row(c) for c in recorder.calls()],
                    "captured": [_row(c) for c in captured.calls()],
                    "exporter": [_row(c) for t in traces for c in exporter.calls(t)],
                    "trace_ids": traces,
                    "traces": len(traces),
                    "raised": raised,
                }
            )
    provider.shutdown()
    from_file = dict(iter_trace_calls(path, errors=[]))
    for run in runs:
        run["reader"] = [_row(c) for t in run.pop("trace_ids") for c in from_file.get(t, [])]
    return {"capture": capture, "runs": runs}


def main(argv: list[str] | None = None, out: Callable[[str], Any] = sys.stdout.write) -> int:
    """Parse arguments, run, print the JSON document."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", choices=CAPTURES)
    parser.add_argument("--cases", default=",".join(ALL_CASES))
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        result = run_all(args.capture, args.cases.split(","), args.modes.split(","), Path(folder))
    out(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
