"""``serve``: real OTLP exports from the SDK's OTLP/HTTP span exporter (protobuf, gzip) and OTLP
JSON from the project's own writer into the receiver; the events and counters read back from a
local OTLP sink on 127.0.0.1 that decodes the protobuf requests the SDK's exporters send."""

from __future__ import annotations

import gzip
import io
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness.online.processor import RuleProcessor
from harness.online.receiver import OtlpReceiver
from harness.online.serve import serve
from tests.harness.online.support import RULES, RulesPolicy, run_orders
from tests.harness.online.test_processor import LOOKUP, REFUND
from tests.support.otlp_receiver import otlp_receiver
from tracing import write_spans

_sink = otlp_receiver  # the events and metrics exporters' destination (tests/support)


@contextmanager
def _serving(sink: ThreadingHTTPServer) -> Iterator[tuple[str, list[int]]]:
    stop = threading.Event()
    urls: list[str] = []
    spans: list[int] = []
    ready = threading.Event()

    def run() -> None:
        spans.append(
            serve(
                [RulesPolicy("support")],
                stop,
                port=0,
                trace_timeout=30,
                otlp_endpoint=f"http://127.0.0.1:{sink.server_address[1]}/",
                metric_interval=3600,
                ready=lambda url: (urls.append(url), ready.set()),
            )
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield urls[0], spans
    finally:
        stop.set()
        thread.join(20)
        assert not thread.is_alive()


def _events(sink: ThreadingHTTPServer) -> list[Any]:
    out = []
    for path, body in sink.posts:  # type: ignore[attr-defined]
        if path == "/v1/logs":
            request = ExportLogsServiceRequest.FromString(body)
            for resource in request.resource_logs:
                for scope in resource.scope_logs:
                    out += list(scope.log_records)
    return out


def _counters(sink: ThreadingHTTPServer, name: str) -> dict[tuple[tuple[str, str], ...], int]:
    out: dict[tuple[tuple[str, str], ...], int] = {}
    for path, body in sink.posts:  # type: ignore[attr-defined]
        if path != "/v1/metrics":
            continue
        for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.sum.data_points:
                            key = tuple(
                                sorted((a.key, a.value.string_value) for a in point.attributes)
                            )
                            out[key] = point.as_int
    return out


def _attributes(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in record.attributes:
        kind = item.value.WhichOneof("value")
        out[item.key] = getattr(item.value, kind)
    return out


def test_sdk_exports_in_evaluation_events_and_counters_out(tmp_path: Any) -> None:
    with _sink() as sink, _serving(sink) as (url, received):
        # an app exporting protobuf with gzip, in batches, as the SDK is usually set up
        app = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", compression=Compression.Gzip)
        app.add_span_processor(BatchSpanProcessor(exporter))
        memory = InMemorySpanExporter()
        app.add_span_processor(SimpleSpanProcessor(memory))
        run_orders(app, "Refund 10 EUR on ORD-1042", REFUND)
        assert app.force_flush(10_000)
        # a second app writing OTLP JSON (the project's writer), posted plain
        other = TracerProvider()
        written = InMemorySpanExporter()
        other.add_span_processor(SimpleSpanProcessor(written))
        run_orders(other, "Look up ORD-1042", LOOKUP)
        lines = io.StringIO()
        write_spans(written.get_finished_spans(), lines)
        for line in lines.getvalue().splitlines():
            answer = _post(f"{url}/v1/traces", line.encode(), "application/json")
            assert answer == (200, b"{}")
        app.shutdown()
        other.shutdown()
    app_spans = memory.get_finished_spans()
    assert received == [len(app_spans) + len(written.get_finished_spans())]

    events = _events(sink)
    roots = {
        span.context.trace_id: span
        for span in (*app_spans, *written.get_finished_spans())
        if span.parent is None
    }
    assert len(events) == 2 * len(RULES)
    for record in events:
        assert record.event_name == "gen_ai.evaluation.result"
        root = roots[int.from_bytes(record.trace_id, "big")]
        assert int.from_bytes(record.span_id, "big") == root.context.span_id
    by_trace: dict[tuple[int, str], str] = {}
    for record in events:
        attributes = _attributes(record)
        key = (int.from_bytes(record.trace_id, "big"), attributes["gen_ai.evaluation.name"])
        by_trace[key] = attributes["gen_ai.evaluation.score.label"]
    refund = next(s.context.trace_id for s in app_spans if s.parent is None)
    assert by_trace[(refund, "rule:lookup before refund")] == "fail"
    assert [label for (trace, _), label in by_trace.items() if trace != refund] == ["pass"] * 3
    assert _counters(sink, "harness.rule.violations") == {
        (("policy", "support"), ("rule", "lookup before refund")): 1
    }
    assert sum(_counters(sink, "harness.rule.evaluations").values()) == 2 * len(RULES)


def _post(url: str, body: bytes, content_type: str, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": content_type, **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    processor = RuleProcessor([RulesPolicy("support")])
    receiver = OtlpReceiver(processor, port=0, max_body=4096)
    receiver.start()
    yield receiver
    receiver.close()
    processor.shutdown()


def test_bad_requests_get_clear_answers_and_the_receiver_keeps_serving(
    receiver: OtlpReceiver,
) -> None:
    url = receiver.url
    with urllib.request.urlopen(f"{url}/healthz", timeout=10) as response:
        assert response.read() == b"ok\n"
    status, body = _post(f"{url}/v1/traces", b"\x0a\xff\xff", "application/x-protobuf")
    assert status == 400 and b"not an ExportTraceServiceRequest" in body
    status, body = _post(f"{url}/v1/traces", b"[1, 2]", "application/json")
    assert status == 400 and json.loads(body)["message"] == "the body is not a JSON object"
    status, body = _post(f"{url}/v1/traces", b"{}", "text/plain")
    assert status == 415 and b"application/x-protobuf" in body
    status, body = _post(f"{url}/v1/traces", b"x" * 5000, "application/json")
    assert status == 413 and b"at most 4096" in body
    bomb = gzip.compress(b" " * 100_000)  # small on the wire, too big once inflated
    status, body = _post(
        f"{url}/v1/traces", bomb, "application/json", **{"Content-Encoding": "gzip"}
    )
    assert status == 413 and b"inflates to more than 4096" in body
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": 1}]}]}]}
    status, body = _post(f"{url}/v1/traces", json.dumps(request).encode(), "application/json")
    assert status == 200
    assert json.loads(body)["partialSuccess"]["rejectedSpans"] == 1
    status, body = _post(f"{url}/v1/traces", b"", "application/x-protobuf")  # an empty request
    assert status == 200 and ExportTraceServiceResponse.FromString(body) == (
        ExportTraceServiceResponse()
    )
    assert receiver.spans == 0


POLICY = """\
policies: support
select:
  agent: orders
rules:
  - name: lookup before refund
    before:
      first: {name: get_order, args: {order_id: {$same: order_id}}}
      then: refund_order
  - name: no cancels
    forbid: cancel_order
"""


def test_the_command_prints_where_it_listens_and_serves_until_sigterm(tmp_path: Any) -> None:
    pytest.importorskip("harness.policies", reason="policy files come with harness.policies")
    import signal
    import subprocess
    import sys

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    with _sink() as sink:
        endpoint = f"http://127.0.0.1:{sink.server_address[1]}"
        command = [sys.executable, "-m", "harness.cli", "serve", "--rules", str(policy)]
        command += ["--port", "0", "--otlp-endpoint", endpoint, "--trace-timeout", "5"]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.startswith("listening on http://127.0.0.1:"), line
            url = line.split()[-1]
            app = TracerProvider()
            app.add_span_processor(
                BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces"))
            )
            run_orders(app, "Refund 10 EUR on ORD-1042", REFUND)
            assert app.force_flush(10_000)
            app.shutdown()
        finally:
            child.send_signal(signal.SIGTERM)
            out, _ = child.communicate(timeout=60)
        assert child.returncode == 0
        assert "received" in out
    labels = {
        _attributes(r)["gen_ai.evaluation.name"]: _attributes(r).get(
            "gen_ai.evaluation.score.label"
        )
        for r in _events(sink)
    }
    assert labels == {"rule:lookup before refund": "fail", "rule:no cancels": "pass"}
