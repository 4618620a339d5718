"""``--logs``: GenAI events written as OTLP logs join their spans, so the readers see them.

The producer is real: LangGraph agents under the official GenAI LangChain instrumentation with
content captured as events only (tests/support/genai_events_run.py, a process of its own), the
spans through the harness's OTLP JSON writer, the log records through the OTel Logs SDK and the
real OTLP/HTTP log exporter. The check is independent of the join: the tool calls a model asked
for (in its event's output messages) are the calls the tool spans of the same trace executed.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.genai_events import produce
from tests.support.otlp_receiver import otlp_receiver
from tests.support.paths import SCENARIOS
from tracing.otel.span_view import SpanView
from tracing.otlp.file_format import OtlpJsonReader
from tracing.otlp.logs import JoinedSource, LogEvents
from tracing.otlp.sources import FileSource

EVENT = "gen_ai.client.inference.operation.details"


def sdk_log_bodies() -> list[bytes]:
    """``ExportLogsServiceRequest`` bodies the OTel Logs SDK's OTLP/HTTP exporter sent: three
    events inside a span, and one plain log line."""
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider

    with otlp_receiver() as server:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/logs"
        logs = LoggerProvider()
        logs.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint)))
        logger = logs.get_logger("test")
        with TracerProvider().get_tracer("test").start_as_current_span("chat"):
            for index in range(3):
                logger.emit(LogRecord(event_name="gen_ai.choice", body={"index": index}))
        logger.emit(LogRecord(body="a plain log line"))
        logs.shutdown()
        return list(server.bodies)


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """spans.jsonl, logs.jsonl and logs.pb of two agent runs (single call, parallel calls)."""
    return produce(tmp_path_factory.mktemp("genai-events"))


def _spans(source: Any) -> tuple[list[SpanView], list[str]]:
    reader = OtlpJsonReader(source)
    return list(reader.iter_spans()), [str(error) for error in reader.errors]


def _requested_ids(event_attributes: Mapping[str, Any]) -> list[str]:
    """The tool-call ids in a model call's output messages."""
    return [
        part["id"]
        for message in event_attributes["gen_ai.output.messages"]
        for part in message["parts"]
        if part.get("type") == "tool_call"
    ]


def test_without_logs_the_chat_spans_have_no_content(produced: Path) -> None:
    spans, errors = _spans(produced / "spans.jsonl")
    chats = [span for span in spans if span.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 5 and not errors
    for span in chats:
        assert "gen_ai.output.messages" not in span.attributes
        assert not any(event.name == EVENT for event in span.events)


@pytest.mark.parametrize("logs", ["logs.jsonl", "logs.jsonl.gz", "logs.pb"])
def test_log_events_join_their_chat_spans(produced: Path, logs: str) -> None:
    if logs.endswith(".gz"):
        (produced / logs).write_bytes(gzip.compress((produced / "logs.jsonl").read_bytes()))
    events = LogEvents([str(produced / logs)])
    spans, errors = _spans(JoinedSource(FileSource(produced / "spans.jsonl"), events))
    assert not errors
    assert events.count == events.joined == 5
    requested: dict[str, list[str]] = {}
    executed: dict[str, list[str]] = {}
    for span in spans:
        if span.attributes.get("gen_ai.operation.name") == "chat":
            (event,) = [e for e in span.events if e.name == EVENT]
            assert event.time_ns and span.start_ns <= event.time_ns
            requested.setdefault(span.trace_id, []).extend(_requested_ids(event.attributes))
        elif span.attributes.get("gen_ai.operation.name") == "execute_tool":
            executed.setdefault(span.trace_id, []).append(span.attributes["gen_ai.tool.call.id"])
            assert not span.events
    assert len(requested) == 2
    assert {t: sorted(ids) for t, ids in requested.items()} == {
        t: sorted(ids) for t, ids in executed.items()
    }
    assert sorted(len(ids) for ids in executed.values()) == [1, 3]  # single, parallel calls


def test_a_bad_log_line_is_named_and_the_rest_joins(produced: Path, tmp_path: Path) -> None:
    lines = (produced / "logs.jsonl").read_text().splitlines()
    logs = tmp_path / "logs.jsonl"
    logs.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    events = LogEvents([str(logs)])
    spans, errors = _spans(JoinedSource(FileSource(produced / "spans.jsonl"), events))
    assert len(errors) == 1 and errors[0].startswith(f"{logs}:2: not an OTLP logs request"), errors
    assert events.joined == 5
    assert sum(1 for s in spans for e in s.events if e.name == EVENT) == 5


def test_sdk_events_carry_their_body_and_plain_logs_are_left_out(tmp_path: Path) -> None:
    from tests.support.trace_formats import framed

    path = tmp_path / "logs.pb"
    path.write_bytes(framed(sdk_log_bodies()))
    events = LogEvents([str(path)])
    events.build(lambda *args, **kwargs: pytest.fail(f"{args} {kwargs}"))
    assert events.count == 3  # the three events; the plain line has no event name


def test_the_cli_takes_logs_and_names_a_missing_one(
    produced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["eval-traces", str(produced / "spans.jsonl"), "--scenarios", str(SCENARIOS)]
    assert main([*base, "--logs", str(produced / "nope.jsonl")]) == 2
    assert "no such log file" in capsys.readouterr().err
    # the traces name no scenario: scored as errors, but read with their logs, nothing unread
    assert main([*base, "--logs", str(produced / "logs.jsonl"), "--json", "/dev/null"]) == 1
    assert "cannot read" not in capsys.readouterr().out
