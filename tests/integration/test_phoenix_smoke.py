"""Spans sent over OTLP reach a real Phoenix and read back through its REST API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from harness.redaction import Redactor
from harness.span_export import configure_export
from tests.integration.phoenix import PROJECT_ATTRIBUTE, PhoenixServer, Span


def _by_name(spans: list[Span]) -> dict[str, Span]:
    return {span["name"]: span for span in spans}


def _emit_scenario(provider: TracerProvider, arguments: dict[str, Any]) -> str:
    """A scenario root with one tool span and a failure event, as the runner will write."""
    tracer = provider.get_tracer("toolcall-harness-smoke")
    with tracer.start_as_current_span(
        "scenario weather",
        attributes={
            "harness.suite": "smoke",
            "harness.scenario": "weather",
            "harness.passed": False,
            "harness.score.tool_call_accuracy": 0.5,
        },
    ) as root:
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps(arguments),
            },
        ):
            pass
        root.add_event("harness.failure", {"harness.reason": "missing call get_time"})
    return format(root.get_span_context().trace_id, "032x")


def test_plain_sdk_spans_read_back(phoenix: PhoenixServer, phoenix_project: str) -> None:
    """The plain OTel SDK + OTLP/HTTP exporter: names, attributes and events arrive."""
    resource = Resource.create({"service.name": "smoke", PROJECT_ATTRIBUTE: phoenix_project})
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix.base_url}/v1/traces"))
    )
    trace_id = _emit_scenario(provider, {"city": "Berlin"})
    provider.shutdown()

    spans = _by_name(phoenix.wait_for_spans(phoenix_project, trace_id, count=2))

    assert set(spans) == {"scenario weather", "execute_tool get_weather"}
    root, tool = spans["scenario weather"], spans["execute_tool get_weather"]
    assert tool["parent_id"] == root["context"]["span_id"]
    assert root["parent_id"] is None
    assert root["attributes"]["harness.scenario"] == "weather"
    assert root["attributes"]["harness.passed"] is False
    assert root["attributes"]["harness.score.tool_call_accuracy"] == pytest.approx(0.5)
    assert [event["name"] for event in root["events"]] == ["harness.failure"]
    assert root["events"][0]["attributes"]["harness.reason"] == "missing call get_time"
    assert tool["attributes"]["gen_ai.tool.name"] == "get_weather"
    assert tool["attributes"]["gen_ai.tool.call.id"] == "call_1"
    assert json.loads(tool["attributes"]["gen_ai.tool.call.arguments"]) == {"city": "Berlin"}


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_export_pipeline_redacts_on_the_wire(
    phoenix: PhoenixServer,
    phoenix_project: str,
    monkeypatch: pytest.MonkeyPatch,
    protocol: str,
) -> None:
    """harness.span_export over http and grpc: spans arrive, secrets arrive as "***" only."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"{PROJECT_ATTRIBUTE}={phoenix_project}")
    endpoint = phoenix.otlp_grpc_endpoint if protocol == "grpc" else phoenix.otlp_http_endpoint
    warnings: list[str] = []
    pipeline = configure_export(
        endpoint, protocol, capture_content=True, redactor=Redactor(), warn=warnings.append
    )
    assert pipeline.tracer_provider is not None
    secret = "sk-live-0123456789"
    trace_id = _emit_scenario(
        pipeline.tracer_provider, {"city": "Berlin", "auth": {"API-Key": secret}}
    )
    pipeline.shutdown()

    spans = _by_name(phoenix.wait_for_spans(phoenix_project, trace_id, count=2))

    assert warnings == []
    tool = spans["execute_tool get_weather"]
    arguments = json.loads(tool["attributes"]["gen_ai.tool.call.arguments"])
    assert arguments == {"city": "Berlin", "auth": {"API-Key": "***"}}
    assert secret not in json.dumps(spans)
    assert spans["scenario weather"]["attributes"]["harness.suite"] == "smoke"
