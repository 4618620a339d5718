"""``--logs``: GenAI events written as OTLP logs join their spans, so the readers see them.

The producer is real: LangGraph agents under the official GenAI LangChain instrumentation with
content captured as events only (tests/support/genai_events_run.py, a process of its own), the
spans through the harness's OTLP JSON writer, the log records through the OTel Logs SDK and the
real OTLP/HTTP log exporter. The check is independent of the join: the tool calls a model asked
for (in its event's output messages) are the calls the tool spans of the same trace executed.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.agents import CASES
from tests.support.genai_events import produce
from tests.support.otlp_receiver import otlp_receiver
from tests.support.paths import SCENARIOS
from tests.support.producer_cases import CASES as PRODUCER_CASES
from tracing.otel.span_view import SpanView
from tracing.otel.trace_run import TraceRun, trace_run
from tracing.otlp.file_format import OtlpJsonReader
from tracing.otlp.logs import JoinedSource, LogEvents
from tracing.otlp.sources import FileSource

EVENT = "gen_ai.client.inference.operation.details"
CASES_BY_PROMPT = {name: case.prompt for name, case in PRODUCER_CASES.items()}


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


def _runs(spans: Path, logs: Path | None) -> list[TraceRun]:
    """Each trace of ``spans`` as the rules see it, with the events of ``logs`` joined."""
    source: Any = FileSource(spans)
    if logs is not None:
        source = JoinedSource(source, LogEvents([str(logs)]))
    reader = OtlpJsonReader(source)
    runs = sorted(map(trace_run, reader.iter_traces()), key=lambda run: run.started_at or 0)
    assert not reader.errors
    return runs


def test_events_give_the_calls_their_arguments_results_input_and_answer(produced: Path) -> None:
    """With content only in the events, the spans alone say nothing of what the model sent;
    joined, each trace reads as the agent really ran: the calls the case expects, each with the
    result its tool returned, the user's prompt and the final answer."""
    cases = [CASES[name]() for name in ("single_call", "parallel_calls")]
    bare = _runs(produced / "spans.jsonl", None)
    assert [[call.args for call in run.calls] for run in bare] == [[{}], [{}, {}, {}]]
    assert all(run.user_inputs is None and run.not_captured for run in bare)

    joined = _runs(produced / "spans.jsonl", produced / "logs.jsonl")
    assert len(joined) == len(cases)
    for case, run in zip(cases, joined, strict=True):
        assert [(c.name, dict(c.args), c.status) for c in run.calls] == case.expected
        assert all(c.result is not None for c in run.calls)
        assert run.user_inputs == (case.input["messages"][0].content,)
        assert run.output == "Done." and not run.not_captured
    assert [c.result for c in joined[0].calls] == ["5"]


@pytest.fixture(scope="module")
def openllmetry_events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """spans.jsonl, logs.jsonl and ledger.json of the raw OpenAI client loop under OpenLLMetry
    with its content as per-message events (tests/support/openllmetry_events_run.py)."""
    folder = tmp_path_factory.mktemp("openllmetry-events")
    return produce(folder, "tests.support.openllmetry_events_run")


def test_per_message_events_give_the_calls_the_tools_ran(openllmetry_events: Path) -> None:
    """OpenLLMetry's ``gen_ai.*.message`` / ``gen_ai.choice`` events (its tool messages carry
    no call id: each answers the earliest call still waiting) read as the tools really ran."""
    ledger = json.loads((openllmetry_events / "ledger.json").read_text())
    assert not any(run.calls for run in _runs(openllmetry_events / "spans.jsonl", None))
    runs = _runs(openllmetry_events / "spans.jsonl", openllmetry_events / "logs.jsonl")
    assert len(runs) == len(ledger)
    for (case, ran), run in zip(ledger.items(), runs, strict=True):
        assert run.user_inputs == (CASES_BY_PROMPT[case],)
        read = [
            (c.name, dict(c.args), json.loads(c.result) if c.status == "ok" else None)
            for c in run.calls
        ]
        assert read == [(name, args, result) for name, args, result, _ in ran], case
        assert [c.status for c in run.calls] == ["error" if e else "ok" for *_, e in ran]
        assert all(c.source == "messages" for c in run.calls)


def test_eval_traces_rules_decide_on_content_from_logs(
    openllmetry_events: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy over content that only the events carry: without --logs ``forbid`` sees no
    call; with them it sees the raising case's, and ``grounded`` finds the chain case's ORD-9
    in the result of the lookup before it (a result only the tool message carries)."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "policies: shop\nrules:\n"
        "  - {name: never explode, forbid: explode}\n"
        "  - {name: grounded orders, grounded: {tool: get_order, args: [order_id]}}\n",
        encoding="utf-8",
    )
    spans = str(openllmetry_events / "spans.jsonl")

    def rules(*extra: str) -> dict[str, Any]:
        report = tmp_path / "report.json"
        main(["eval-traces", spans, "--rules", str(policy), "--json", str(report), *extra])
        capsys.readouterr()
        (found,) = json.loads(report.read_text())["policies"]
        return {rule["rule"]: rule for rule in found["rules"]}

    bare = rules()
    assert bare["never explode"]["violations"] == 0
    joined = rules("--logs", str(openllmetry_events / "logs.jsonl"))
    assert joined["never explode"]["violations"] == 1  # the raising case called it
    assert joined["grounded orders"]["violations"] == 0
    assert joined["grounded orders"]["unevaluable"] == 0
