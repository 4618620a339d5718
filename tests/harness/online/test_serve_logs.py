"""``/v1/logs``: content written as OTLP log events by the official GenAI LangChain
instrumentation (tests/support/genai_events_run.py, a process of its own: the spans as OTLP JSON
lines, the log records as the SDK's OTLP/HTTP log exporter sent them) posted to the receiver
next to the spans; each trace is read with its events joined to their spans, as
``eval-traces --logs`` reads the same two files."""

from __future__ import annotations

import gzip
import json
import struct
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness.online.processor import RuleProcessor
from harness.online.receiver import OtlpReceiver
from tests.support.genai_events import produce
from tracing.otel.trace_run import TraceRun, trace_run
from tracing.otlp.logs import JoinedSource, LogEvents
from tracing.otlp.reader import OtlpJsonReader
from tracing.otlp.sources import FileSource

EVENT = "gen_ai.client.inference.operation.details"


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return produce(tmp_path_factory.mktemp("genai-events"))


class _Runs:
    """A policy that keeps every run it is given (what the rules would read)."""

    name = "runs"

    def __init__(self) -> None:
        self.runs: dict[str, TraceRun] = {}
        self.lock = threading.Lock()

    def selects(self, run: TraceRun) -> bool:
        with self.lock:
            self.runs[run.trace_id] = run
        return False

    def evaluate(self, run: TraceRun) -> list[Any]:
        raise AssertionError("never selects a trace")


def _post(url: str, body: bytes, content_type: str, gzipped: bool) -> tuple[int, bytes]:
    headers = {"Content-Type": content_type}
    if gzipped:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def _frames(data: bytes) -> list[bytes]:
    """The bodies of a length-prefixed file (4-byte big-endian sizes)."""
    out, at = [], 0
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        out.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    return out


def _seen(run: TraceRun) -> tuple[Any, ...]:
    return (run.calls, run.model_calls, run.user_inputs, run.output, run.not_captured, run.agent)


@pytest.mark.parametrize("encoding", ["protobuf+gzip", "json"])
def test_log_events_are_joined_before_the_trace_is_read(produced: Path, encoding: str) -> None:
    policy = _Runs()
    processor = RuleProcessor([policy], root_grace=30)
    receiver = OtlpReceiver(processor, port=0)
    receiver.start()
    try:
        if encoding == "json":  # the logs first: events wait for their spans
            for line in (produced / "logs.jsonl").read_text().splitlines():
                status, body = _post(
                    f"{receiver.url}/v1/logs", line.encode(), "application/json", False
                )
                assert (status, body) == (200, b"{}")
        else:
            for frame in _frames((produced / "logs.pb").read_bytes()):
                status, _ = _post(f"{receiver.url}/v1/logs", frame, "application/x-protobuf", True)
                assert status == 200
        for line in (produced / "spans.jsonl").read_text().splitlines():
            status, _ = _post(f"{receiver.url}/v1/traces", line.encode(), "application/json", False)
            assert status == 200
    finally:
        receiver.close()
        processor.shutdown()  # reads the traces waiting out root_grace
    assert receiver.events == 5  # one per model call; plain log lines are left out

    events = LogEvents([str(produced / "logs.jsonl")])
    source = JoinedSource(FileSource(produced / "spans.jsonl"), events)
    expected = {trace.trace_id: trace_run(trace) for trace in OtlpJsonReader(source).iter_traces()}
    assert events.joined == 5
    assert set(policy.runs) == set(expected) and len(expected) == 2
    for trace_id, run in policy.runs.items():
        assert _seen(run) == _seen(expected[trace_id])
        assert run.calls  # the agents called tools
        # the content came only in the events: arguments, results and input read from them
        assert all(call.args and call.result is not None for call in run.calls)
        assert run.user_inputs and not run.not_captured


def test_a_logs_request_that_is_not_one_is_refused(produced: Path) -> None:
    processor = RuleProcessor([_Runs()])
    receiver = OtlpReceiver(processor, port=0)
    receiver.start()
    try:
        request = urllib.request.Request(
            f"{receiver.url}/v1/logs",
            data=json.dumps({"resourceSpans": []}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request, timeout=10)
        assert error.value.code == 400
        assert b"no 'resourceLogs' list" in error.value.read()
    finally:
        receiver.close()
        processor.shutdown()
