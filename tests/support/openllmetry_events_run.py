"""Run the raw OpenAI client tool loop under OpenLLMetry with content as per-message *events*.

Usage: ``python -m tests.support.openllmetry_events_run FOLDER``. OpenLLMetry's OpenAI
instrumentation with ``use_attributes=False`` writes no prompt or completion attributes on its
chat spans; each model call writes ``gen_ai.system.message`` / ``gen_ai.user.message`` /
``gen_ai.assistant.message`` / ``gen_ai.tool.message`` and ``gen_ai.choice`` events through the
OTel Logs SDK instead, in the chat span's context. The loop, the cases and the model stand-in
are the producer tests' (tests/support/producer_frameworks.py, producer_cases.py,
openai_server.py); the spans go to ``FOLDER/spans.jsonl``, the log records through the real
OTLP/HTTP log exporter to a local receiver and on to ``FOLDER/logs.jsonl``; what the tools ran
to ``FOLDER/ledger.json`` (per case). A process of its own: the instrumentor patches the OpenAI
client for the whole process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.openai_server import StandIn
from tests.support.otlp_receiver import otlp_receiver
from tests.support.producer_cases import CASES, LEDGER, reset
from tests.support.producer_frameworks import openai_loop
from tests.support.trace_formats import otlp_json_logs
from tracing.otlp.file_format import OtlpJsonFileExporter

CASE_NAMES = ("single", "parallel", "chain", "raising")


def main(argv: list[str]) -> int:
    """Run the cases and write spans.jsonl, logs.jsonl and ledger.json into the folder."""
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    folder = Path(argv[0])
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OtlpJsonFileExporter(folder / "spans.jsonl"))
    )
    ledger: dict[str, list[list[object]]] = {}
    standin = StandIn().start()
    try:
        with otlp_receiver() as server:
            endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/logs"
            logger_provider = LoggerProvider()
            logger_provider.add_log_record_processor(
                SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, timeout=10))
            )
            OpenAIInstrumentor(use_attributes=False).instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
            turn = openai_loop(tracer_provider, standin.url)
            for name in CASE_NAMES:
                case = CASES[name]
                standin.script(f"events-{name}", list(case.replies))
                reset()
                turn(case.prompt, f"events-{name}")
                ledger[name] = [list(entry) for entry in LEDGER]
            tracer_provider.shutdown()
            logger_provider.shutdown()
            bodies = list(server.bodies)
    finally:
        standin.stop()
    with (folder / "logs.jsonl").open("w", encoding="utf-8") as out:
        for body in bodies:
            out.write(json.dumps(otlp_json_logs(body)) + "\n")
    (folder / "ledger.json").write_text(json.dumps(ledger, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
