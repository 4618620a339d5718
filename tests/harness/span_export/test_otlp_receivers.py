"""harness.span_export against real OTLP receivers on 127.0.0.1 (an HTTP and a gRPC server)."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from harness.redaction import MASK, Redactor
from harness.span_export import (
    ExportConfigError,
    ExportTarget,
    capture_content_from_env,
    configure_export,
    resolve_target,
)
from tracing.otel.emitter import SpanEmitter

# --- a real OTLP receiver ------------------------------------------------------------------


def _value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


@dataclass
class Received:
    """What a receiver got: decoded spans, request paths and headers."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def add(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        """Flatten a request into one dict per span."""
        for resource_spans in request.resource_spans:
            resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "resource": resource,
                            "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
                            "events": [
                                (e.name, {kv.key: _value(kv.value) for kv in e.attributes})
                                for e in span.events
                            ],
                        }
                    )

    def span(self, name: str) -> dict[str, Any]:
        """The one span called ``name``."""
        matches = [s for s in self.spans if s["name"] == name]
        assert len(matches) == 1, f"{name!r}: {[s['name'] for s in self.spans]}"
        return matches[0]


@pytest.fixture
def http_receiver() -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP protobuf receiver; yields its base URL."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.paths.append(self.path)
            received.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            received.add(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
            reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    """An OTLP/gRPC receiver; yields its URL."""
    import grpc

    received = Received()

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(
            self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
        ) -> trace_service_pb2.ExportTraceServiceResponse:
            received.add(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        server.stop(grace=None)


@pytest.fixture(autouse=True)
def clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start from no OTEL_* variables."""
    import os

    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


@tool
def login(username: str, password: str) -> str:
    """Log a user in."""
    return json.dumps({"user": username, "session_token": "tok-" + password[::-1]})


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- where spans go ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (None, {}, None),
        ("http://h:4318", {}, ExportTarget("http://h:4318/v1/traces", "http", "--otlp-endpoint")),
        ("http://h:4318/", {}, ExportTarget("http://h:4318/v1/traces", "http", "--otlp-endpoint")),
        (
            "http://h:4318/v1/traces",
            {},
            ExportTarget("http://h:4318/v1/traces", "http", "--otlp-endpoint"),
        ),
        (
            None,
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/base/"},
            ExportTarget("http://h:4318/base/v1/traces", "http", "OTEL_EXPORTER_OTLP_ENDPOINT"),
        ),
        (
            None,
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:1",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:9/custom",
            },
            ExportTarget("http://h:9/custom", "http", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        ),
        (
            "http://flag:1",
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:2"},
            ExportTarget("http://flag:1/v1/traces", "http", "--otlp-endpoint"),
        ),
        (
            None,
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            ExportTarget("http://h:4317", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT"),
        ),
        (
            None,
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            },
            ExportTarget("http://h:4318/v1/traces", "http", "OTEL_EXPORTER_OTLP_ENDPOINT"),
        ),
    ],
)
def test_resolve_target(
    flag: str | None, env: dict[str, str], expected: ExportTarget | None
) -> None:
    """The flag wins; the generic variable gets /v1/traces, the traces-specific one is as is."""
    assert resolve_target(flag, None, env) == expected


@pytest.mark.parametrize(
    ("flag", "protocol", "env", "message"),
    [
        ("localhost:4318", None, {}, "--otlp-endpoint='localhost:4318'"),
        (None, None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://x"}, "OTEL_EXPORTER_OTLP_ENDPOINT"),
        ("http://h:1", "thrift", {}, "--otlp-protocol='thrift'"),
        ("http://h:1", None, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "'http/json'"),
    ],
)
def test_bad_settings_name_the_value(
    flag: str | None, protocol: str | None, env: dict[str, str], message: str
) -> None:
    """A bad URL or protocol is a configuration error naming where it came from."""
    with pytest.raises(ExportConfigError, match=message.replace("/", ".")):
        resolve_target(flag, protocol, env)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", False), ("true", True), ("False", False), ("SPAN_ONLY", True), ("NO_CONTENT", False)],
)
def test_capture_content_from_env(raw: str, expected: bool) -> None:
    """The GenAI content-capture variable, old boolean and new enum spellings."""
    env = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": raw}
    assert capture_content_from_env(env) is expected


def test_no_endpoint_no_file_means_no_provider() -> None:
    """Nothing configured: no TracerProvider, and shutdown is a no-op (twice)."""
    pipeline = configure_export()
    assert pipeline.tracer_provider is None
    pipeline.shutdown()
    pipeline.shutdown()


# --- spans on the wire ---------------------------------------------------------------------


def test_real_agent_tool_spans_arrive_redacted(http_receiver: tuple[str, Received]) -> None:
    """A real LangChain tool run through SpanEmitter: arguments arrive, the password does not."""
    url, received = http_receiver
    pipeline = configure_export(url, "http", capture_content=True, redactor=Redactor())
    assert pipeline.tracer_provider is not None
    emitter = SpanEmitter(pipeline.tracer_provider, capture_content=True)

    with emitter.start_scenario("login") as root:
        login.invoke({"username": "ada", "password": "hunter2"}, config=emitter.config)
        root.add_event("harness.failure", {"harness.detail": '{"password": "hunter2"}'})
    pipeline.shutdown()

    assert received.paths == ["/v1/traces"]
    span = received.span("execute_tool login")
    assert json.loads(span["attributes"]["gen_ai.tool.call.arguments"]) == {
        "username": "ada",
        "password": MASK,
    }
    assert json.loads(span["attributes"]["gen_ai.tool.call.result"])  # present, valid JSON
    assert "hunter2" not in json.dumps(received.spans)
    assert "tok-2retnuh" not in json.dumps(received.spans)  # session_token in the result
    scenario = received.span("scenario login")
    assert scenario["resource"]["service.name"] == "toolcall-harness"
    assert scenario["events"] == [("harness.failure", {"harness.detail": '{"password": "***"}'})]


def test_content_is_dropped_when_capture_is_off(http_receiver: tuple[str, Received]) -> None:
    """Capture off: content attributes never leave, whoever set them."""
    url, received = http_receiver
    pipeline = configure_export(url, None, capture_content=False)
    assert pipeline.tracer_provider is not None
    tracer = pipeline.tracer_provider.get_tracer("t")
    with tracer.start_as_current_span(
        "execute_tool x",
        attributes={"gen_ai.tool.name": "x", "gen_ai.tool.call.arguments": '{"a": 1}'},
    ):
        pass
    pipeline.shutdown()

    assert received.span("execute_tool x")["attributes"] == {"gen_ai.tool.name": "x"}


def test_env_variables_configure_endpoint_headers_service_and_capture(
    http_receiver: tuple[str, Received], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no flags, the standard OTEL_* variables decide everything."""
    url, received = http_receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=evals")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "my-agent-tests")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    pipeline = configure_export()
    assert pipeline.tracer_provider is not None
    assert pipeline.capture_content
    with pipeline.tracer_provider.get_tracer("t").start_as_current_span("s"):
        pass
    pipeline.shutdown()

    assert received.paths == ["/v1/traces"]
    assert received.headers[0]["x-team"] == "evals"
    assert received.span("s")["resource"]["service.name"] == "my-agent-tests"


def test_grpc_protocol(grpc_receiver: tuple[str, Received]) -> None:
    """--otlp-protocol grpc exports through the gRPC exporter, redacted the same way."""
    url, received = grpc_receiver
    pipeline = configure_export(url, "grpc", capture_content=True)
    assert pipeline.tracer_provider is not None
    with pipeline.tracer_provider.get_tracer("t").start_as_current_span(
        "execute_tool x", attributes={"gen_ai.tool.call.arguments": '{"token": "abc"}'}
    ):
        pass
    pipeline.shutdown()

    args = received.span("execute_tool x")["attributes"]["gen_ai.tool.call.arguments"]
    assert json.loads(args) == {"token": MASK}


def test_trace_file_is_redacted(tmp_path: Path, http_receiver: tuple[str, Received]) -> None:
    """--trace-file gets the same redacted spans as the wire, as OTLP JSON lines."""
    url, received = http_receiver
    trace_file = tmp_path / "out" / "traces.jsonl"
    pipeline = configure_export(url, "http", capture_content=True, trace_file=trace_file)
    assert pipeline.tracer_provider is not None
    with pipeline.tracer_provider.get_tracer("t").start_as_current_span(
        "execute_tool x", attributes={"gen_ai.tool.call.arguments": '{"api_key": "k-123"}'}
    ):
        pass
    pipeline.shutdown()

    text = trace_file.read_text(encoding="utf-8")
    assert "execute_tool x" in text
    assert "k-123" not in text
    assert "k-123" not in json.dumps(received.spans)
    assert len(received.spans) == 1


# --- a backend that is down ----------------------------------------------------------------


def test_unreachable_endpoint_gives_one_warning_line(caplog: pytest.LogCaptureFixture) -> None:
    """Connection refused on every batch: one warning, no SDK log spam, no exception."""
    port = _closed_port()
    warnings: list[str] = []
    pipeline = configure_export(
        f"http://127.0.0.1:{port}", "http", capture_content=False, warn=warnings.append
    )
    assert pipeline.tracer_provider is not None
    tracer = pipeline.tracer_provider.get_tracer("t")
    caplog.set_level(logging.DEBUG)
    for batch in range(3):
        with tracer.start_as_current_span(f"s{batch}"):
            pass
        assert pipeline.force_flush(timeout_s=30)
    pipeline.shutdown()
    pipeline.shutdown()  # twice is fine

    assert len(warnings) == 1
    assert warnings[0] == (
        f"OTLP export to http://127.0.0.1:{port} failed: connection refused — results and "
        "reports are still written"
    )
    assert pipeline.export_failed
    assert pipeline.guard is not None and pipeline.guard.dropped_spans == 3
    assert [r for r in caplog.records if r.name.startswith("opentelemetry")] == []


def test_default_warning_goes_to_the_harness_logger(caplog: pytest.LogCaptureFixture) -> None:
    """Without a ``warn`` callback the line is a WARNING on ``harness.span_export``."""
    # A short export timeout: the SDK gives up before its first retry backoff.
    pipeline = configure_export(f"http://127.0.0.1:{_closed_port()}", "http", export_timeout_s=0.5)
    assert pipeline.tracer_provider is not None
    with caplog.at_level(logging.WARNING):
        with pipeline.tracer_provider.get_tracer("t").start_as_current_span("s"):
            pass
        pipeline.shutdown()
    lines = [r.getMessage() for r in caplog.records if r.name == "harness.span_export"]
    assert len(lines) == 1 and "connection refused" in lines[0]


def test_spans_after_shutdown_are_ignored_quietly() -> None:
    """A span ending after shutdown (a late tool thread) raises nothing."""
    pipeline = configure_export(f"http://127.0.0.1:{_closed_port()}", "http")
    assert pipeline.tracer_provider is not None
    tracer = pipeline.tracer_provider.get_tracer("t")
    pipeline.shutdown()
    with tracer.start_as_current_span("late"):
        pass
