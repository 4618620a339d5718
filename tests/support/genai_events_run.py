"""Run agents under the official GenAI LangChain instrumentation with content as *log events*.

Usage: ``python -m tests.support.genai_events_run FOLDER [CASE...]``. With
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY`` (opentelemetry-util-genai) the
chat spans carry no messages; each model call writes a ``gen_ai.client.inference.operation.details``
event through the OTel Logs SDK instead. The spans go to ``FOLDER/spans.jsonl`` (the harness's
OTLP JSON lines), the log records through the real OTLP/HTTP log exporter to a local receiver
and from there to ``FOLDER/logs.jsonl`` as OTLP JSON lines of ``resourceLogs`` and to
``FOLDER/logs.pb`` length-prefixed (what the Collector's file exporter writes, in its ``json``
and ``proto`` formats). Instrumentors patch LangChain for the whole process, hence a
process of its own.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.agents import CASES, run_case
from tests.support.otlp_receiver import otlp_receiver
from tests.support.trace_formats import framed, otlp_json_logs
from tracing.otlp.file_format import OtlpJsonFileExporter


def main(argv: list[str]) -> int:
    """Run the cases (default: single and parallel calls) and write the two files."""
    folder = Path(argv[0])
    cases = argv[1:] or ["single_call", "parallel_calls"]
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    tracer_provider = TracerProvider()
    spans = OtlpJsonFileExporter(folder / "spans.jsonl")
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    with otlp_receiver() as server:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/logs"
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, timeout=10))
        )
        LangChainInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider, skip_dep_check=True
        )
        for name in cases:
            run_case(CASES[name](), "invoke")
        tracer_provider.shutdown()
        logger_provider.shutdown()
        bodies = list(server.bodies)
    with (folder / "logs.jsonl").open("w", encoding="utf-8") as out:
        for body in bodies:
            out.write(json.dumps(otlp_json_logs(body)) + "\n")
    (folder / "logs.pb").write_bytes(framed(bodies))  # the file exporter's format: proto
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
